"""Lint speed: ``leapp lint`` end to end vs ``ruff check`` vs a plain LibCST visitor.

    .venv/bin/python benchmarks/bench_lint.py [--lines 100000] [--keep DIR]

Generates a corpus (>= 100k lines) mixing in-scope files (``@leapp.compile``
functions, some with findings), NumPy files with no leapp scope, and plain
Python, then reports lines/s for:
  - ``leapp lint`` cold (``--no-cache``) and warm (second run with the cache),
  - ``ruff check --no-cache --isolated`` on the same files,
  - a LibCST visitor resolving every name with ``QualifiedNameProvider``,
    run over all files with a process pool of the same size leapp uses.
Figures only; nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

BIN = os.path.dirname(sys.executable)

IN_SCOPE = '''
import math
import numpy as np
import leapp

STATE_MEAN = np.zeros(6)


@leapp.compile
def normalize_{i}(x, velocity):
    """Centre, scale and clip one observation."""
    y = (x - STATE_MEAN) / (np.std(x, axis=0) + 1e-6)
    y = np.clip(y, -5.0, 5.0)
    z = np.concatenate([y, velocity], axis=-1)
    if z.mean() > 0:  # finding: LP202
        z = z - z.mean()
    scale = math.sqrt(x.var())  # finding: LP204
    return z * scale + np.abs(velocity).sum()


def helper_{i}(values, k=3):
    out = []
    for v in values:
        if v > k:
            out.append(v * 2)
        else:
            out.append(v)
    return out
'''

NUMPY_ONLY = '''
import numpy as np
from numpy import linalg as la


def features_{i}(x, w):
    z = np.dot(x, w)
    z = np.maximum(z, 0.0)
    n = la.norm(z, axis=-1, keepdims=True)
    if float(n.max()) > 1.0:
        z = z / n
    return np.median(z, axis=0), np.percentile(z, 90)


class Scaler{i}:
    def __init__(self, mean, std):
        self.mean = np.asarray(mean)
        self.std = np.asarray(std)

    def __call__(self, x):
        return (x - self.mean) / self.std
'''

PLAIN = '''
import json
import os
from dataclasses import dataclass


@dataclass
class Config{i}:
    name: str
    size: int = 3

    def path(self, root):
        return os.path.join(root, self.name + ".json")


def load_{i}(root, names):
    out = {{}}
    for name in names:
        with open(os.path.join(root, name)) as f:
            out[name] = json.load(f)
    return out
'''


def generate(root: str, min_lines: int) -> tuple[int, int]:
    lines = files = 0
    i = 0
    kinds = [IN_SCOPE, NUMPY_ONLY, NUMPY_ONLY, PLAIN, PLAIN]
    while lines < min_lines:
        # each file repeats its template a few times so files have realistic lengths
        text = "".join(kinds[i % len(kinds)].format(i=f"{i}_{k}") for k in range(6))
        path = os.path.join(root, f"pkg{i % 10}", f"mod_{i}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        lines += text.count("\n")
        files += 1
        i += 1
    return lines, files


def timed(cmd: list[str], cwd: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def _libcst_one(path: str) -> int:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, QualifiedNameProvider

    class NumpyNames(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (QualifiedNameProvider,)

        def __init__(self):
            self.found = 0

        def visit_Call(self, node):
            names = self.get_metadata(QualifiedNameProvider, node.func, set())
            self.found += any(n.name.startswith("numpy.") for n in names)

    with open(path, encoding="utf-8") as f:
        module = cst.parse_module(f.read())
    visitor = NumpyNames()
    MetadataWrapper(module).visit(visitor)
    return visitor.found


def libcst_visitor(paths: list[str], jobs: int) -> float:
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(_libcst_one, paths, chunksize=8))
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--lines", type=int, default=100_000)
    p.add_argument("--keep", help="write the corpus here and keep it")
    args = p.parse_args()
    root = args.keep or tempfile.mkdtemp(prefix="leapp-bench-")
    try:
        lines, files = generate(root, args.lines)
        jobs = os.cpu_count() or 1
        print(f"corpus: {lines} lines in {files} files ({root}); {jobs} cores")
        cache = os.path.join(root, ".bench-cache")  # a cache of this corpus only, cold at first
        leapp = [os.path.join(BIN, "leapp"), "lint", "--cache-dir", cache]
        cold = timed([*leapp, "--no-cache", "."], root)
        shutil.rmtree(cache, ignore_errors=True)
        timed([*leapp, "."], root)  # fills the cache
        warm = timed([*leapp, "."], root)
        ruff = timed([os.path.join(BIN, "ruff"), "check", "--no-cache", "--isolated", "."], root)
        paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
        cst_s = libcst_visitor(paths, jobs)
        rows = [("leapp lint (cold, --no-cache)", cold), ("leapp lint (warm cache)", warm),
                ("ruff check --no-cache", ruff), ("LibCST + QualifiedNameProvider", cst_s)]
        print(f"{'':34} {'seconds':>8} {'lines/s':>10}")
        for name, s in rows:
            print(f"{name:34} {s:8.2f} {lines / s:10.0f}")
        print(f"leapp cold vs LibCST visitor: {cst_s / cold:.1f}x faster; "
              f"warm: {cst_s / warm:.1f}x")
        print(f"leapp cold vs ruff: {ruff / cold:.2f}x (ruff is {cold / ruff:.1f}x faster); "
              f"warm: {ruff / warm:.2f}x")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
