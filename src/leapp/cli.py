"""The ``leapp`` command: ``leapp lint`` and ``leapp rewrite`` (``leapp compile`` joins later).

Each subcommand is a registrar in ``SUBCOMMANDS``: it adds its parser and
returns the function that runs it. Exit status as ruff: 0 clean, 1 findings,
2 usage or internal error. No traceback reaches the user unless
``LEAPP_DEBUG=1`` is set. This module imports neither torch nor numpy.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from leapp.ast_pass.config import Settings
    from leapp.ast_pass.diagnostics import Diagnostic


def _codes(value: str) -> list[str]:
    from leapp.ast_pass import RULES_BY_CODE

    codes = [c.strip().upper() for c in value.split(",") if c.strip()]
    for c in codes:
        if c != "ALL" and not any(code.startswith(c) for code in RULES_BY_CODE):
            raise argparse.ArgumentTypeError(f"unknown rule selector {c!r}")
    return ["LP" if c == "ALL" else c for c in codes]


def _path(value: str) -> str:
    if not value:
        raise argparse.ArgumentTypeError("empty path")
    return value


def _register_lint(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lint", help="flag NumPy code that leapp cannot trace",
                       description="Check Python files for code that leapp cannot trace.")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH", type=_path)
    p.add_argument("--output-format", choices=["text", "json", "github"], default="text")
    p.add_argument("--select", type=_codes, help="comma-separated code prefixes to report")
    p.add_argument("--ignore", type=_codes, default=[], help="comma-separated code prefixes to skip")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes")
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff; change nothing")
    p.add_argument("--scope", choices=["auto", "all"], default=None,
                   help="'all' checks every function as if traced (default: auto)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the lint cache")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="where the lint cache lives (default: $LEAPP_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/leapp or ~/.cache/leapp)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--config", default=None, help="pyproject.toml to read [tool.leapp] from")
    p.add_argument("--generate-docs", action="store_true",
                   help="print the lint-code reference (docs/lint-codes.md) and exit")
    p.set_defaults(run=_run_lint)


def _settings(args: argparse.Namespace) -> Settings:
    from leapp.ast_pass.config import load_settings

    start = args.paths[0] if args.paths else "."
    settings = load_settings(start, args.config)
    if args.scope:
        settings.scope = args.scope
    return settings


def _run_lint(args: argparse.Namespace) -> int:
    from leapp.ast_pass import output
    from leapp.ast_pass.runner import lint_paths

    if args.generate_docs:
        from leapp.ast_pass.docs import render

        sys.stdout.write(render())
        return 0
    settings = _settings(args)
    select = args.select if args.select is not None else settings.select
    ignore = [*settings.ignore, *args.ignore]
    stats: dict[str, Any] = {}

    def run() -> list[Diagnostic]:
        return lint_paths(args.paths, settings, use_cache=not args.no_cache, jobs=args.jobs,
                          select=select, ignore=ignore, cache_dir=args.cache_dir, stats=stats)

    diagnostics = run()
    failed = 0
    if args.fix or args.diff:
        changed, failed = _apply_fixes(diagnostics, settings, select, ignore, write=not args.diff)
        if args.diff:
            return 2 if failed else (1 if changed else 0)
        diagnostics = run()
    if not stats["files"]:  # a hook or CI job pointed at the wrong folder must be told
        print(f"leapp lint: warning: no Python file was checked in {' '.join(args.paths)}",
              file=sys.stderr)
        if not diagnostics and args.output_format == "text":
            return 0  # and not told "All checks passed!"
    sys.stdout.write(output.FORMATS[args.output_format](diagnostics))
    if failed or any(d.code == "LP999" for d in diagnostics):
        return 2
    return 1 if diagnostics else 0


def _apply_fixes(diagnostics: list[Diagnostic], settings: Settings, select: list[str] | None,
                 ignore: list[str], write: bool) -> tuple[int, int]:
    """Fix (or, without ``write``, print the diff of) each file with fixable findings.

    (files changed, files that could not be fixed). A file that cannot be read or written
    is reported on stderr and left as it was; the others are still fixed.
    """
    from leapp.ast_pass.fix import fix_source, unified_diff
    from leapp.fsutil import (
        atomic_write,
        decode_source,
        encode_source,
        read_regular,
        refuse_read_only,
    )

    changed, total, failed = 0, 0, 0
    for path in sorted({d.path for d in diagnostics if d.fix is not None}):
        try:
            before, bom = decode_source(read_regular(path, settings.max_file_size))
            scope, functions = settings.file_options(path)
            after, n = fix_source(before, path, scope=scope, include_functions=functions,
                                  select=select, ignore=ignore)
            if after != before and write:
                refuse_read_only(path)
                atomic_write(os.path.realpath(path), encode_source(after, bom))
        except (OSError, UnicodeDecodeError) as e:
            print(f"{path}: cannot fix: {_reason(e)}", file=sys.stderr)
            failed += 1
            continue
        if after == before:
            continue
        changed, total = changed + 1, total + n
        if not write:
            sys.stdout.write(unified_diff(before, after, path))
    if total:
        verb = "Fixed" if write else "Would fix"
        print(f"{verb} {total} error{'s' if total != 1 else ''} in {changed} file(s).", file=sys.stderr)
    return changed, failed


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def _register_rewrite(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("rewrite", help="show NumPy calls routed through leapp's traced dispatcher",
                       description="Print the source that leapp.compile runs: every NumPy call "
                                   "in scope routed through leapp.dispatch.call.")
    p.add_argument("paths", nargs="+", metavar="PATH", type=_path)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff")
    mode.add_argument("--in-place", action="store_true", help="rewrite the files")
    p.add_argument("--no-convert-control-flow", dest="convert", action="store_false",
                   help="leave branches on data as written (as leapp.compile(convert_control_flow=False))")
    p.add_argument("--scope", choices=["auto", "all"], default=None)
    p.add_argument("--config", default=None)
    p.set_defaults(run=_run_rewrite)


def _run_rewrite(args: argparse.Namespace) -> int:
    """Exit 0 when every file was rewritten, 1 when some could not be (each named on stderr),
    2 when leapp itself failed on one (the other files are still rewritten)."""
    from leapp.ast_pass import rewrite_source
    from leapp.ast_pass.fix import unified_diff
    from leapp.ast_pass.runner import discover, display, read_file
    from leapp.fsutil import atomic_write, decode_source, encode_source, refuse_read_only

    settings = _settings(args)
    files, missing = discover(args.paths, settings)
    status = 0
    for d in missing:
        print(f"{d.path}: {d.message}", file=sys.stderr)
        status = max(status, 1)
    for path in files:
        shown = display(path)
        data, problem = read_file(path, settings.max_file_size)
        if problem is not None:
            print(f"{shown}: cannot rewrite: {problem.message}", file=sys.stderr)
            status = max(status, 1)
            continue
        try:
            before, bom = decode_source(cast(bytes, data))  # read_file gives the data or a problem
            scope, functions = settings.file_options(path)
            after = rewrite_source(before, shown, scope=scope, include_functions=functions,
                                   convert=args.convert)
            if args.in_place and after != before:
                refuse_read_only(path)
                atomic_write(os.path.realpath(path), encode_source(after, bom))
        except (OSError, UnicodeDecodeError, SyntaxError) as e:
            print(f"{shown}: cannot rewrite: {_reason(e)}", file=sys.stderr)
            status = max(status, 1)
            continue
        except Exception as e:  # a leapp bug on this file: report it, go on with the others
            if os.environ.get("LEAPP_DEBUG"):
                raise
            print(f"{shown}: cannot rewrite: internal error: {type(e).__name__}: {e}", file=sys.stderr)
            status = 2
            continue
        if args.in_place:
            pass
        elif args.diff:
            sys.stdout.write(unified_diff(before, after, shown))
        else:
            if len(files) > 1:
                sys.stdout.write(f"# leapp rewrite: {shown}\n")
            sys.stdout.write(after)
    return status


def _register_compile(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from leapp.main_job import register  # imports neither torch nor numpy until it runs

    register(sub)


SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = {"lint": _register_lint, "rewrite": _register_rewrite, "compile": _register_compile}


def build_parser() -> argparse.ArgumentParser:
    from leapp import __version__

    parser = argparse.ArgumentParser(prog="leapp", description="Capture NumPy preprocessing as PyTorch graphs.")
    parser.add_argument("--version", action="version", version=f"leapp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for register in SUBCOMMANDS.values():
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: usage errors are status 2, --help is 0
        return e.code if isinstance(e.code, int) else 2
    from leapp.ast_pass.config import ConfigError

    try:
        return args.run(args)
    except ConfigError as e:
        print(f"leapp: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 2
    except Exception as e:
        if os.environ.get("LEAPP_DEBUG"):
            raise
        print(f"leapp: internal error: {type(e).__name__}: {e} (set LEAPP_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
