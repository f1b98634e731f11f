"""Lint many files: discover, read, consult the cache, check in parallel.

Work per file is independent, so misses are spread over a process pool
(``fork`` where available: the workers inherit the loaded table and rules).
Results are cached (``cache.py``) by a hash of the file's bytes, its per-file
options, leapp's version and the analyzer's own source, so editing a rule or
the table invalidates them. A file that cannot be read, is not a regular file
or is too large gets a diagnostic of its own, and the run goes on.
"""

from __future__ import annotations

import hashlib
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any, cast

from leapp.errors import FileTooLargeError
from leapp.fsutil import read_regular
from leapp.progress import Progress

from .analyze import _diag, check_bytes, selected
from .cache import Cache
from .config import DEFAULT_EXCLUDE, Settings
from .diagnostics import Diagnostic

_PARALLEL_MIN_BYTES = 256 * 1024


def discover(paths: list[str], settings: Settings) -> tuple[list[str], list[Diagnostic]]:
    """Files to check, and an LP905 for each path or folder that cannot be listed."""
    files, errors, seen = [], [], set()

    def unreadable(e: OSError) -> None:
        errors.append(_diag("LP905", display(e.filename or path), error=e.strerror or str(e)))

    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirnames, filenames in os.walk(path, onerror=unreadable):
                dirnames[:] = sorted(d for d in dirnames if d not in DEFAULT_EXCLUDE
                                     and not settings.is_excluded(os.path.join(dirpath, d, "x")))
                for name in sorted(filenames):
                    if name.endswith((".py", ".pyi")):
                        full = os.path.join(dirpath, name)
                        if not settings.is_excluded(full) and full not in seen:
                            seen.add(full)
                            files.append(full)
        elif os.path.lexists(path):
            if not settings.is_excluded(path) and path not in seen:
                seen.add(path)
                files.append(path)
        else:
            errors.append(_diag("LP905", display(path), error="No such file or directory"))
    return files, errors


def read_file(path: str, limit: int) -> tuple[bytes | None, Diagnostic | None]:
    """(bytes, None), or (None, LP904/LP905) for a file that is too large or cannot be read.

    FIFOs and devices are never opened; the size is checked before reading.
    """
    try:
        return read_regular(path, limit), None
    except FileTooLargeError as e:
        return None, _diag("LP904", display(path), size=e.size, limit=e.limit)
    except OSError as e:
        return None, _diag("LP905", display(path), error=e.strerror or str(e))


def display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def fingerprint() -> str:
    """Changes whenever the analyzer or the table changes."""
    from leapp import __version__

    h = hashlib.sha256(f"{sys.version} leapp {__version__}".encode())
    here = os.path.dirname(os.path.abspath(__file__))
    table_dir = os.path.join(os.path.dirname(here), "table")
    for d in (here, os.path.join(here, "rules"), table_dir):
        for name in sorted(os.listdir(d)):
            if name.endswith(".py"):
                with open(os.path.join(d, name), "rb") as f:
                    h.update(name.encode() + f.read())
    return h.hexdigest()


def _check(items):
    out = []
    for path, data, scope, functions, max_size in items:
        analysis = check_bytes(data, path, max_file_size=max_size, scope=scope,
                               include_functions=functions)
        out.append([d.to_dict() for d in analysis.diagnostics])
    return out


def project_root(paths: list[str], settings: Settings) -> str:
    """The folder the cache is kept for: the config's folder, else the first path's repository."""
    if settings.config_path:
        return settings.root
    first = os.path.abspath(paths[0] if paths else ".")
    d = first if os.path.isdir(first) else os.path.dirname(first)
    probe = d
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in (".git", ".hg", "pyproject.toml")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return d
        probe = parent


def lint_paths(paths: list[str], settings: Settings, *, use_cache: bool = True,
               jobs: int | None = None, select=None, ignore=None,
               cache_dir: str | None = None, stats: dict | None = None) -> list[Diagnostic]:
    """Diagnostics for ``paths``, sorted; ``stats``, when given, receives ``files``: how many
    files were found to check (0 tells the caller that nothing was checked)."""
    files, diagnostics = discover(paths, settings)
    if stats is not None:
        stats["files"] = len(files)
    salt = fingerprint() if use_cache else ""
    cache = Cache(project_root(paths, settings), salt, use_cache, cache_dir)
    use_cache = cache.enabled
    results: dict[int, list[dict]] = {}
    misses, keys = [], {}
    for i, path in enumerate(files):
        shown = display(path)
        data, problem = read_file(path, settings.max_file_size)
        if problem is not None:
            diagnostics.append(problem)
            continue
        data = cast(bytes, data)  # read_file gives the data or a problem
        scope, functions = settings.file_options(path)
        item = (shown, data, scope, functions, settings.max_file_size)
        if use_cache:
            key = hashlib.sha256(repr((salt, shown.endswith("__init__.py"), scope, functions,
                                       settings.max_file_size)).encode() + data).hexdigest()
            keys[i] = key
            cached = cache.get(key)
            if cached is not None:
                results[i] = [{**d, "path": shown} for d in cached]
                continue
        misses.append((i, item))
    if misses:
        items = [item for _, item in misses]
        total = sum(len(item[1]) for item in items)
        jobs = jobs or os.cpu_count() or 1
        if jobs > 1 and len(items) >= 2 * jobs and total >= _PARALLEL_MIN_BYTES:
            chunks = [items[k::jobs * 4] for k in range(jobs * 4)]
            ctx = _mp_context()
            with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
                pending = pool.map(_check, chunks)  # forks the workers before the progress thread runs
                per_chunk = []
                with Progress("checking files", total=len(items)) as progress:
                    for chunk_result in pending:
                        per_chunk.append(chunk_result)
                        progress.advance(len(chunk_result))
            checked: list[Any] = [None] * len(items)
            for k, chunk_result in enumerate(per_chunk):
                for j, r in enumerate(chunk_result):
                    checked[k + j * jobs * 4] = r
        else:
            with Progress("checking files", total=len(items)) as progress:
                checked = []
                for item in items:
                    checked.extend(_check([item]))
                    progress.advance()
        for (i, _), found in zip(misses, checked, strict=True):
            results[i] = found
            if use_cache:
                cache.put(keys[i], found)
    cache.save()
    for i in sorted(results):
        diagnostics.extend(Diagnostic.from_dict(d) for d in results[i])
    diagnostics = [d for d in diagnostics if d.code == "LP999" or selected(d.code, select, ignore)]
    return sorted(diagnostics, key=lambda d: (d.path, d.line, d.col, d.code))


def _mp_context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")
