"""Kill ``leapp lint --fix`` and exports at random points, and count the damage (issue 12).

    .venv/bin/python benchmarks/fault_injection.py --runs 50 [--seed 0] [--what lint,export]
    .venv/bin/python benchmarks/fault_injection.py --inject     # deterministic, in-process (CI)

Kill mode: each run is a fresh process, SIGKILLed after a random delay drawn
uniformly over the time an uninterrupted run takes. Then the folder is read:

  corrupted     lint: a source file that is neither the original nor the fixed text;
                export: an artifact that is not byte-equal to one of the good exports
  inconsistent  a sidecar (``.json``) whose ``artifact_sha256`` is not its artifact's, or
                a sidecar without an artifact
  leftovers     temporary files (``*.leapp-tmp``) and staging folders (``.leapp-export-*``)
                still there after the next uninterrupted run; those the kill itself left
                (nothing in a SIGKILLed process can remove them) are counted apart

Inject mode: no timing. For k = 1, 2, ... the k-th file-system call of one run
(``os.write``, ``os.fsync``, ``os.replace``, ``os.unlink``, ``os.fchmod``,
``os.chmod``, ``os.mkdir``, a write-mode ``open`` and each ``write`` on such a
file) raises ``OSError`` — a disk that fills (a write lands half its bytes
first) or fails at that exact point — until a run needs fewer calls than k.
The same three counts, plus errors that escaped as something other than the
documented outcome. ``tests/reliability/test_fault_injection.py`` runs it.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import errno
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, *sys.path])}

BODY = '''import math
import numpy as np
import leapp


@leapp.compile
def prep_{i}(x, y):
    a = x / math.sqrt(x.var() + 1.0)
    b = max(a, y) - min(a, 0.5)
    return a + b * math.exp(x.mean())
'''


def lint_sources(n: int = 12) -> dict[str, bytes]:
    """Files with fixable findings; every third with a BOM, every other with CRLF line ends."""
    out = {}
    for i in range(n):
        text = BODY.format(i=i)
        if i % 2:
            text = text.replace("\n", "\r\n")
        data = text.encode()
        if i % 3 == 0:
            data = b"\xef\xbb\xbf" + data
        out[f"prep_{i}.py"] = data
    return out


def _leftovers(*folders) -> list[str]:
    found = []
    for folder in folders:
        if os.path.isdir(folder):
            for dirpath, dirnames, filenames in os.walk(folder):
                found += [os.path.join(dirpath, n) for n in [*dirnames, *filenames]
                          if n.endswith(".leapp-tmp") or n.startswith(".leapp-export-")]
    return found


class Counts(dict):
    def __init__(self):
        super().__init__(runs=0, killed=0, corrupted=0, inconsistent=0, left_by_kill=0,
                         leftovers=0, recovery_failures=0, escaped_errors=0)

    def show(self, title: str) -> None:
        print(f"{title}: " + ", ".join(f"{k} {v}" for k, v in self.items()), flush=True)


# --- lint --fix ---------------------------------------------------------------------------

def _lint_cmd(project: str, cache: str) -> list[str]:
    return [sys.executable, "-m", "leapp", "lint", "--fix", "--cache-dir", cache, project]


def _reset(project: str, sources: dict[str, bytes]) -> None:
    for name, data in sources.items():
        with open(os.path.join(project, name), "wb") as f:
            f.write(data)


def _read(project: str, sources) -> dict[str, bytes]:
    out = {}
    for name in sources:
        with open(os.path.join(project, name), "rb") as f:
            out[name] = f.read()
    return out


def lint_kills(runs: int, rng: random.Random, work: str) -> Counts:
    sources = lint_sources()
    project, cache = os.path.join(work, "lint"), os.path.join(work, "lint-cache")
    os.makedirs(project)
    _reset(project, sources)
    start = time.perf_counter()
    reference = subprocess.run(_lint_cmd(project, cache), capture_output=True, env=ENV)
    span = time.perf_counter() - start
    fixed = _read(project, sources)
    assert all(fixed[n] != sources[n] for n in sources), "the reference run fixed nothing"
    counts = Counts()
    for _ in range(runs):
        _reset(project, sources)
        proc = subprocess.Popen(_lint_cmd(project, cache), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=ENV)
        time.sleep(rng.uniform(0, span))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            counts["killed"] += 1
        proc.wait()
        counts["runs"] += 1
        now = _read(project, sources)
        counts["corrupted"] += sum(now[n] not in (sources[n], fixed[n]) for n in sources)
        counts["left_by_kill"] += len(_leftovers(project, cache))
        again = subprocess.run(_lint_cmd(project, cache), capture_output=True, env=ENV)
        if again.returncode != reference.returncode or _read(project, sources) != fixed:
            counts["recovery_failures"] += 1
        counts["leftovers"] += len(_leftovers(project, cache))
    return counts


# --- exports ------------------------------------------------------------------------------

CHILD = r'''
import os, sys, time
import numpy as np
from leapp.export import export_node
from leapp.runtime.tracing import trace_function

folder, scratch = sys.argv[1], sys.argv[2]
example = (np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),)
nodes = [trace_function(lambda x: np.tanh(x * 2.0 + 1.0), example, {}, names=["x"], strict=True).node,
         trace_function(lambda x: np.clip(x - 0.5, -0.2, 0.2), example, {}, names=["x"],
                        strict=True).node]
FORMATS = (("onnx", ".onnx"), ("torchscript", ".pt"), ("pt2", ".pt2"))
for i, node in enumerate(nodes):  # warm up, and the good bytes of each artifact
    for fmt, ext in FORMATS:
        export_node(node, os.path.join(scratch, f"{i}{ext}"), fmt)
start = time.perf_counter()
for fmt, ext in FORMATS:  # one full cycle into the target: sweeps what a killed export left
    export_node(nodes[0], os.path.join(folder, "n" + ext), fmt)
print("ready", time.perf_counter() - start, flush=True)
sys.stdin.readline()  # the parent inspects the folder first
i = 1
while True:
    for fmt, ext in FORMATS:
        export_node(nodes[i % 2], os.path.join(folder, "n" + ext), fmt)
    i += 1
'''
EXTS = (".onnx", ".pt", ".pt2")


def _sha(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _check_exports(folder: str, good: dict[str, set[bytes]], counts: Counts) -> None:
    for ext in EXTS:
        path = os.path.join(folder, "n" + ext)
        if os.path.exists(path):
            with open(path, "rb") as f:
                counts["corrupted"] += f.read() not in good[ext]
        sidecar = path + ".json"
        if os.path.exists(sidecar):
            try:
                with open(sidecar) as f:
                    described = json.load(f)["artifact_sha256"]
            except (ValueError, KeyError):
                counts["corrupted"] += 1
                continue
            counts["inconsistent"] += not os.path.exists(path) or described != _sha(path)


def export_kills(runs: int, rng: random.Random, work: str) -> Counts:
    folder, scratch = os.path.join(work, "export"), os.path.join(work, "scratch")
    os.makedirs(folder)
    os.makedirs(scratch)
    counts, good = Counts(), None
    for run in range(runs + 1):  # the last child only recovers and is checked
        proc = subprocess.Popen([sys.executable, "-c", CHILD, folder, scratch], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env=ENV)
        line = proc.stdout.readline().split()
        if not line or line[0] != "ready":
            proc.kill()
            proc.wait()
            counts["recovery_failures"] += 1
            continue
        if good is None:
            good = {ext: {open(os.path.join(scratch, f"{i}{ext}"), "rb").read() for i in (0, 1)}
                    for ext in EXTS}
        left = _leftovers(folder)  # after a complete run following a kill
        counts["leftovers"] += len(left)
        if left:
            print("left after a complete run:", *left, file=sys.stderr)
        _check_exports(folder, good, counts)
        if run == runs:
            proc.kill()
            proc.wait()
            break
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(rng.uniform(0, 2 * float(line[1])))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        counts["runs"] += 1
        counts["killed"] += 1
        _check_exports(folder, good, counts)
        counts["left_by_kill"] += len(_leftovers(folder))
    return counts


# --- injected failures (deterministic) ----------------------------------------------------

class _Injector:
    """Make the k-th file-system call fail (a write lands half its bytes first); count calls."""

    NAMES = ("write", "fsync", "replace", "unlink", "fchmod", "chmod", "mkdir")

    def __init__(self, k: int):
        self.k, self.calls, self.fired = k, 0, False

    def _due(self) -> bool:
        self.calls += 1
        self.fired |= self.calls == self.k
        return self.calls == self.k

    @staticmethod
    def _error():
        return OSError(errno.ENOSPC, "No space left on device (injected)")

    @contextlib.contextmanager
    def active(self):
        saved = {n: getattr(os, n) for n in self.NAMES}
        real_open = builtins.open
        injector = self

        def wrap(name, fn):
            def call(*args, **kwargs):
                if injector._due():
                    if name == "write":  # half the bytes land, then the disk is full
                        fn(args[0], bytes(args[1][: len(args[1]) // 2]))
                    raise injector._error()
                return fn(*args, **kwargs)
            return call

        class Writer:
            """A file opened for writing whose writes can fail half way."""

            def __init__(self, f):
                self._f = f

            def write(self, data):
                if injector._due():
                    self._f.write(data[: len(data) // 2])
                    self._f.flush()
                    raise injector._error()
                return self._f.write(data)

            def __getattr__(self, name):
                return getattr(self._f, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self._f.__exit__(*exc)

            def __iter__(self):
                return iter(self._f)

        def guarded_open(file, mode="r", *args, **kwargs):
            if not any(c in mode for c in "wax+"):
                return real_open(file, mode, *args, **kwargs)
            if injector._due():
                raise injector._error()
            return Writer(real_open(file, mode, *args, **kwargs))

        try:
            for n, fn in saved.items():
                setattr(os, n, wrap(n, fn))
            builtins.open = guarded_open
            yield self
        finally:
            for n, fn in saved.items():
                setattr(os, n, fn)
            builtins.open = real_open


def lint_injected(work: str, max_k: int = 500) -> Counts:
    import io

    from leapp.cli import main

    sources = lint_sources(4)
    project, cache = os.path.join(work, "lint"), os.path.join(work, "lint-cache")
    os.makedirs(project)
    _reset(project, sources)
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    with quiet[0], quiet[1]:
        expected = main(["lint", "--fix", "--cache-dir", cache, project])
    fixed = _read(project, sources)
    counts = Counts()
    for k in range(1, max_k):
        _reset(project, sources)
        injector = _Injector(k)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            with injector.active():
                try:
                    code = main(["lint", "--fix", "--cache-dir", cache, project])
                except BaseException:
                    code = None
            counts["escaped_errors"] += code not in (0, 1, 2)
            counts["runs"] += 1
            now = _read(project, sources)
            counts["corrupted"] += sum(now[n] not in (sources[n], fixed[n]) for n in sources)
            counts["left_by_kill"] += len(_leftovers(project, cache))
            again = main(["lint", "--fix", "--cache-dir", cache, project])
        if again != expected or _read(project, sources) != fixed:
            counts["recovery_failures"] += 1
        counts["leftovers"] += len(_leftovers(project, cache))
        if not injector.fired:
            break
    return counts


def export_injected(work: str, formats=("torchscript", "onnx"), max_k: int = 200) -> Counts:
    import numpy as np

    from leapp.errors import ExportError
    from leapp.export import export_node
    from leapp.runtime.tracing import trace_function

    example = (np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),)
    nodes = [trace_function(lambda x: np.tanh(x * 2.0 + 1.0), example, {}, names=["x"],
                            strict=True).node,
             trace_function(lambda x: np.clip(x - 0.5, -0.2, 0.2), example, {}, names=["x"],
                            strict=True).node]
    counts = Counts()
    exts = {"onnx": ".onnx", "torchscript": ".pt", "pt2": ".pt2"}
    for fmt in formats:
        folder = os.path.join(work, "export-" + fmt)
        os.makedirs(folder)
        ext = exts[fmt]
        good = set()
        for i, node in enumerate(nodes):
            export_node(node, os.path.join(work, f"good{i}{ext}"), fmt)
            good.add(open(os.path.join(work, f"good{i}{ext}"), "rb").read())
        target = os.path.join(folder, "n" + ext)
        export_node(nodes[0], target, fmt)
        for k in range(1, max_k):
            injector = _Injector(k)
            with injector.active():
                try:
                    export_node(nodes[k % 2], target, fmt, check=fmt != "pt2")
                except ExportError:
                    pass
                except BaseException:
                    counts["escaped_errors"] += 1
            counts["runs"] += 1
            _check_exports(folder, {e: good for e in EXTS}, counts)
            counts["left_by_kill"] += len(_leftovers(folder))
            export_node(nodes[0], target, fmt)  # recovery
            _check_exports(folder, {e: good for e in EXTS}, counts)
            counts["leftovers"] += len(_leftovers(folder))
            if not injector.fired:
                break
    return counts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=30, help="kills per target (kill mode)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--what", default="lint,export")
    p.add_argument("--inject", action="store_true", help="deterministic failing-write mode")
    args = p.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="leapp-faults-")
    try:
        what = args.what.split(",")
        if args.inject:
            if "lint" in what:
                lint_injected(os.path.join(work, "l")).show("lint --fix, injected failures")
            if "export" in what:
                export_injected(os.path.join(work, "e"), ("onnx", "torchscript", "pt2")).show(
                    "export, injected failures")
        else:
            if "lint" in what:
                lint_kills(args.runs, rng, os.path.join(work, "l")).show("lint --fix, SIGKILL")
            if "export" in what:
                export_kills(args.runs, rng, os.path.join(work, "e")).show("export, SIGKILL")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
