"""``leapp compile FILE:FUNCTION --inputs example.npz --out DIR``: the main job, end to end.

Steps, each printed as one short section: lint the function (and the
functions of its module it calls) with the static pass; compile it with
``leapp.compile`` on the example inputs; print the cross-check report;
validate the graph against NumPy on fresh inputs; run the graph passes;
export ONNX (checked in onnxruntime by ``leapp.export``); print the graph.
Without FILE:FUNCTION it runs the built-in example
``leapp.examples.robot_obs:step`` on its ``example_inputs()``.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import time
import traceback
import types
from typing import cast

DEFAULT_TARGET = "leapp.examples.robot_obs:step"


def register(sub) -> None:
    p = sub.add_parser("compile", help="lint, trace, validate and export a NumPy function",
                       description="Lint, trace, validate and export a NumPy function "
                                   "(default: the built-in robot observation example).")
    p.add_argument("target", nargs="?", default=DEFAULT_TARGET, metavar="FILE:FUNCTION",
                   help=f"a .py file (or module) and function (default: {DEFAULT_TARGET})")
    p.add_argument("--inputs", default=None, metavar="NPZ",
                   help="example inputs, one array per parameter name (default for the built-in "
                        "example: its example_inputs())")
    p.add_argument("--out", default="leapp_out", metavar="DIR", help="where artifacts go")
    p.add_argument("--format", choices=["onnx", "torchscript", "pt2"], default="onnx")
    p.add_argument("--dynamic-batch", action="store_true", help="export with a free leading dimension")
    p.add_argument("--validate", type=int, default=3, metavar="N", help="fresh inputs to validate on")
    p.add_argument("--show", nargs="?", const="table", default="table", choices=["table", "fx", "none"],
                   help="how the graph is printed at the end: a row per node with its NumPy call and source "
                        "line (table, the default), torch.fx's own listing (fx), or not at all (none)")
    p.add_argument("--no-graph", action="store_true", help="do not print the graph (as --show none)")
    p.add_argument("--draw", default=None, metavar="FILE",
                   help="also draw the graph: FILE.svg or FILE.dot (FILE.png needs Graphviz's dot)")
    p.set_defaults(run=run)


def load_function(target):
    """``path/to/file.py:fn`` or ``package.module:fn`` -> (function, module)."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise ValueError(f"expected FILE:FUNCTION, got {target!r}")
    if where.endswith(".py") or os.sep in where:
        if not os.path.isfile(where):
            raise ValueError(f"no such file: {where}")
        module_name = "_leapp_main_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(where))
        spec = importlib.util.spec_from_file_location(module_name, where)
        if spec is None or spec.loader is None:  # not a .py name: Python has no loader for it
            raise ValueError(f"{where} is not a Python source file: leapp compile FILE.py:FUNCTION")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # inspect.getsource needs the module registered
        folder = os.path.dirname(os.path.abspath(where))
        if folder not in sys.path:  # as `python file.py` would: its sibling modules import
            sys.path.insert(0, folder)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ValueError(_import_failure(where, exc)) from exc
    else:
        try:
            module = importlib.import_module(where)
        except ImportError:
            raise
        except Exception as exc:
            raise ValueError(_import_failure(where, exc)) from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ValueError(f"{where} has no function {name!r}")
    from .compiler.function import CompiledFunction

    if isinstance(fn, CompiledFunction):  # README's own pattern: compile the function it wraps
        fn = fn.__wrapped__
    if not isinstance(fn, types.FunctionType):
        raise ValueError(f"{where}:{name} is not a function defined with def")
    return fn, module


def _import_failure(where, exc):
    """What went wrong running the user's module (its error, not leapp's), at the user's line."""
    if isinstance(exc, SyntaxError):
        return f"{exc.filename or where}:{exc.lineno}: cannot import {where}: SyntaxError: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(where)]
    user = own or [f for f in frames if not f.filename.startswith(_PACKAGE_DIR) and "importlib" not in f.filename]
    at = f"{user[-1].filename}:{user[-1].lineno}: " if user else ""
    return f"{at}importing {where} raised {type(exc).__name__}: {exc}"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _called_functions(fn, module):
    """``fn`` and the module-level functions it reaches by name (they run traced too)."""
    seen, stack = [], [fn]
    while stack:
        f = stack.pop()
        if f.__name__ in seen:
            continue
        seen.append(f.__name__)
        for name in f.__code__.co_names:
            g = getattr(module, name, None)
            if isinstance(g, types.FunctionType) and g.__module__ == module.__name__:
                stack.append(g)
    return tuple(seen)


def _in_functions(line, module, names):
    for name in names:
        try:
            lines, start = inspect.getsourcelines(getattr(module, name))
        except (OSError, TypeError):
            return True  # cannot tell: keep the finding
        if start <= line < start + len(lines):
            return True
    return False


def _load_inputs(args, fn, module):
    import numpy as np

    if args.inputs:
        with np.load(args.inputs) as data:
            inputs = {k: data[k] for k in data.files}
    elif hasattr(module, "example_inputs"):
        inputs = module.example_inputs()
    else:
        raise ValueError("--inputs example.npz is needed (the module has no example_inputs())")
    params = list(inspect.signature(fn).parameters)
    missing = [p for p in params if p not in inputs]
    if missing:
        raise ValueError(f"the inputs lack {missing}; they hold {sorted(inputs)}")
    return {p: inputs[p] for p in params}


def _fresh(module, inputs, k):
    """Fresh inputs: the module's example_inputs(seed=k) when it has one, else a perturbed copy."""
    import numpy as np

    if hasattr(module, "example_inputs"):
        try:
            batch = len(next(iter(inputs.values())))
            fresh = module.example_inputs(batch=batch, seed=100 + k)
            if all(np.shape(fresh[n]) == np.shape(v) for n, v in inputs.items()):
                return {n: fresh[n] for n in inputs}
        except TypeError:
            pass
    rng = np.random.default_rng(100 + k)
    out = {}
    for n, v in inputs.items():
        v = np.asarray(v)
        if v.dtype.kind == "f":
            # np.asarray: arithmetic on a 0-d array gives a NumPy scalar, which has no __setitem__
            v = np.asarray(v + rng.normal(0.0, 0.1, v.shape) * (np.abs(v) + 0.1)).astype(v.dtype)
        out[n] = v
    return out


def _step(n, text):
    """Say a step as it starts (flushed: a long step must not sit behind a silent buffer)."""
    print(f"\n[{n}/5] {text}", flush=True)


def _against(checked):
    """What the export check compared with, as the description's ``checked`` says it."""
    graph = checked.get("against_graph", {})
    on_numpy = [k for k in checked["inputs"] if k not in graph]
    if checked["against"] == "graph" and not graph:
        return f"the traced graph on: {', '.join(checked['inputs'])}"
    text = f"NumPy on: {', '.join(on_numpy)}" if on_numpy else ""
    if graph:
        text += ("; " if text else "") + f"the traced graph on: {', '.join(graph)} (it differs from NumPy there)"
    return text


def run(args) -> int:
    """Exit status: 0 every step passed; 1 the function failed a step (lint findings alone do
    not fail it: strict tracing decides); 2 usage error, missing extra, unreadable target or inputs."""
    from .extras import MissingExtraError, require

    try:  # before any work: a missing extra must not surface at the last step
        require("compile", "leapp compile")
        if args.format == "onnx":
            require("onnx", "leapp compile --format onnx")
    except MissingExtraError as exc:
        print(f"leapp compile: error: {exc}", file=sys.stderr)
        return 2

    import leapp

    from .ast_pass import analyze_source
    from .errors import LeappError
    from .progress import Progress

    t0 = time.perf_counter()
    try:
        fn, module = load_function(args.target)
        path = cast(str, inspect.getsourcefile(fn))  # a def that load_function imported from a file
        inputs = _load_inputs(args, fn, module)
    except (ValueError, OSError, ImportError) as exc:
        print(f"leapp compile: error: {exc}", file=sys.stderr)
        return 2
    shapes = ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in inputs.items())
    print(f"leapp compile {module.__name__}:{fn.__name__}  ({path})")
    print(f"inputs: {shapes}")

    functions = _called_functions(fn, module)
    _step(1, f"lint {', '.join(functions)}")
    with open(path, encoding="utf-8") as f:
        analysis = analyze_source(f.read(), path, include_functions=functions)
    # only these functions' findings: another `# leapp: trace` function of the file is not compiled
    findings = [d for d in analysis.diagnostics if _in_functions(d.line, module, functions)]
    sites = [site for site in analysis.sites if _in_functions(site.line, module, functions)]
    print(f"  {len(findings)} finding(s); {len(sites)} NumPy call site(s)")
    for d in findings:
        print(f"  {d.path}:{d.line}:{d.col}: {d.code} {d.message}")

    _step(2, f"compile: trace {fn.__name__} on the example inputs")
    try:
        cf = leapp.compile(fn, strict=True)
        with Progress("tracing"):
            cf.trace(**inputs)
    except LeappError as exc:
        print(f"  FAILED: {exc}")
        return 1
    node = cf._latest().node
    print(f"  {len(node.graph_module.graph.nodes)} FX nodes, outputs {', '.join(node.output_names)}")
    print("  " + cf.format_report().replace("\n", "\n  "))

    _step(3, f"validate against NumPy on {args.validate} fresh input(s)")
    failures = 0
    with Progress("validating", total=args.validate) as progress:
        for k in range(args.validate):
            validation = cf.validate(**_fresh(module, inputs, k))
            failures += len(validation.failures)
            progress.advance()
    if failures:
        print(f"  FAILED ({failures} mismatch(es))")
        print("  " + validation.describe().replace("\n", "\n  "))
        return 1
    print("  passed")

    _step(4, "graph passes")
    report = node.optimize()
    print("  " + report.describe().removeprefix("graph passes: ").replace("\n", "\n  "))

    from .export.formats import EXTENSIONS

    artifact = os.path.join(args.out, f"{fn.__name__}{EXTENSIONS[args.format]}")
    _step(5, f"export {args.format}: {artifact}")
    try:
        # cf.export checks the artifact against the function itself (NumPy), not the graph
        with Progress(f"exporting and checking {args.format}"):
            description = cf.export(artifact, args.format, dynamic_batch=args.dynamic_batch,
                                    example_inputs=inputs)
    except LeappError as exc:
        print(f"  FAILED: {exc}")
        return 1
    checked = "onnxruntime" if args.format == "onnx" else "the loaded artifact"
    print(f"  written (+ .json), {description['exporter']} exporter; "
          f"{checked} agrees with {_against(description['checked'])}")
    if args.draw:
        try:
            print(f"drawing: {cf.draw(args.draw)}")
        except (LeappError, ValueError) as exc:
            print(f"leapp compile: error: {exc}", file=sys.stderr)
            return 2
    if not args.no_graph and args.show == "table":
        print("\ngraph: " + cf.format_show().replace("\n", "\n  "))
    elif not args.no_graph and args.show == "fx":
        print("\ngraph:")
        print(node.graph_module.graph)
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0
