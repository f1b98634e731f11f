"""Lint many files: discover, read, consult the cache, check in parallel.

Work per file is independent, so misses are spread over a process pool
(``fork`` where available: the workers inherit the loaded table and rules).
Results are cached by a hash of the file's bytes, its per-file options and
the analyzer's own source, so editing a rule or the table invalidates them.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from .analyze import _diag, check_bytes, selected
from .config import DEFAULT_EXCLUDE, Settings
from .diagnostics import Diagnostic

CACHE_DIR = ".leapp_cache"
CACHE_FILE = "lint-v1.json"
_PARALLEL_MIN_BYTES = 256 * 1024


def discover(paths: list[str], settings: Settings) -> tuple[list[str], list[Diagnostic]]:
    files, errors, seen = [], [], set()
    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in DEFAULT_EXCLUDE
                                     and not settings.is_excluded(os.path.join(dirpath, d, "x")))
                for name in sorted(filenames):
                    if name.endswith((".py", ".pyi")):
                        full = os.path.join(dirpath, name)
                        if not settings.is_excluded(full) and full not in seen:
                            seen.add(full)
                            files.append(full)
        elif os.path.exists(path):
            if not settings.is_excluded(path) and path not in seen:
                seen.add(path)
                files.append(path)
        else:
            errors.append(_diag("LP905", display(path), error="No such file or directory"))
    return files, errors


def display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def fingerprint() -> str:
    """Changes whenever the analyzer or the table changes."""
    h = hashlib.sha256(sys.version.encode())
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


class Cache:
    def __init__(self, root: str, enabled: bool):
        self.enabled = enabled
        self.path = os.path.join(root, CACHE_DIR, CACHE_FILE)
        self.entries: dict = {}
        self.dirty = False
        if enabled:
            try:
                with open(self.path, encoding="utf-8") as f:
                    self.entries = json.load(f)
            except (OSError, ValueError):
                self.entries = {}

    def save(self) -> None:
        if not (self.enabled and self.dirty):
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.entries, f)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only checkout still lints, just without a cache


def lint_paths(paths: list[str], settings: Settings, *, use_cache: bool = True,
               jobs: int | None = None, select=None, ignore=None) -> list[Diagnostic]:
    files, diagnostics = discover(paths, settings)
    cache = Cache(settings.root, use_cache)
    salt = fingerprint() if use_cache else ""
    results: dict[int, list[dict]] = {}
    misses, keys = [], {}
    for i, path in enumerate(files):
        shown = display(path)
        try:
            with open(path, "rb") as f:
                data = f.read(settings.max_file_size + 1)
        except OSError as e:
            diagnostics.append(_diag("LP905", shown, error=e.strerror or str(e)))
            continue
        if len(data) > settings.max_file_size:
            diagnostics.append(_diag("LP904", shown, size=os.path.getsize(path),
                                     limit=settings.max_file_size))
            continue
        scope, functions = settings.file_options(path)
        item = (shown, data, scope, functions, settings.max_file_size)
        if use_cache:
            key = hashlib.sha256(repr((salt, shown.endswith("__init__.py"), scope, functions,
                                       settings.max_file_size)).encode() + data).hexdigest()
            keys[i] = key
            if key in cache.entries:
                results[i] = [{**d, "path": shown} for d in cache.entries[key]]
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
                per_chunk = list(pool.map(_check, chunks))
            checked = [None] * len(items)
            for k, chunk_result in enumerate(per_chunk):
                for j, r in enumerate(chunk_result):
                    checked[k + j * jobs * 4] = r
        else:
            checked = _check(items)
        for (i, _), found in zip(misses, checked, strict=True):
            results[i] = found
            if use_cache:
                cache.entries[keys[i]] = [{k: v for k, v in d.items() if k != "path"} for d in found]
                cache.dirty = True
    cache.save()
    for i in sorted(results):
        diagnostics.extend(Diagnostic.from_dict(d) for d in results[i])
    diagnostics = [d for d in diagnostics if d.code == "LP999" or selected(d.code, select, ignore)]
    return sorted(diagnostics, key=lambda d: (d.path, d.line, d.col, d.code))


def _mp_context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")
