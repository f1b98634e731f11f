"""Fused code compiled in a separate process, so that no call of the caller's process waits for it.

``tier="auto"`` compiles a hot signature off the call path. Compiled in a
thread of the caller's process, inductor's Python (imports, lowering, code
generation) shares the interpreter lock with the calls: on the robot example a
call that takes 0.08 ms stalled for up to 0.9 s while the compile ran, and a
compile thread at a lower priority holding that lock made it worse on a busy
machine (``benchmarks/bench_compile.py`` prints the calls' latencies during the
compile beside those with none running).

Here the graph's code and constants go to a child Python process, which
exports them (``torch.export``) and compiles them ahead of time with
AOTInductor into a package; this process then only loads the package's shared
library (tens of milliseconds of CPU) and calls it. The child:

- runs ``python -m leapp.runtime.fused_process FOLDER`` with this
  interpreter and ``sys.path``, in a session of its own (a Ctrl-C at the
  terminal reaches the caller, not the compile), at a lower priority;
- reads only what this process wrote into ``FOLDER`` (a private temporary
  folder: the graph's Python source, which torch.fx generated, and its tensors,
  read with ``torch.load(weights_only=True)``) and writes the package there;
- exits when this process goes (its standard input is a pipe this process
  holds: end of file means the caller is gone), and is killed at its time
  limit or at the caller's exit. The folder is removed when the package is
  loaded or the compile fails.

Anything that goes wrong raises ``Unavailable`` with the child's reason; the
caller (``compiler/tier.py``) then compiles in its own process as before and
says so in ``cf.report()``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PAYLOAD = "graph.pt"
PACKAGE = "fused.pt2"
REASON = "reason.txt"
TIMEOUT_S = 900.0  # a busy machine's first AOTInductor compile, gcc included, takes tens of seconds
_REASON_BYTES = 2000

_live: dict = {}  # child -> its folder, while it compiles: killed and removed at the interpreter's exit
_live_lock = threading.Lock()


class Unavailable(RuntimeError):
    """The separate process did not give a runner; the message says why."""


def compile_runner(graph_module, example_inputs, timeout=TIMEOUT_S):
    """``runner(*tensors) -> {output name: tensor}`` for ``graph_module``, compiled by a child process
    for the shapes, dtypes and (contiguous) layouts of ``example_inputs``, as ``backends.compile_runner``
    compiles it in this one."""
    import torch

    source, constants = _serialised(graph_module)
    folder = Path(tempfile.mkdtemp(prefix="leapp-fused-"))  # 0700: only this user reads or writes it
    try:
        torch.save({"source": source, "constants": constants,
                    "inputs": [t.detach().contiguous() for t in example_inputs]}, folder / PAYLOAD)
        _run_child(folder, timeout)
        package = folder / PACKAGE
        if not package.is_file():
            raise Unavailable("the compile process wrote no package")
        return _load(package, _output_names(graph_module))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _serialised(graph_module):
    """(Python source of the graph's ``forward`` with its imports, {attribute path: tensor})."""
    import torch

    constants = {}
    for node in graph_module.graph.nodes:
        if node.op == "get_attr":
            value = graph_module
            for part in node.target.split("."):
                value = getattr(value, part)
            if not isinstance(value, torch.Tensor):
                raise Unavailable(f"the graph holds a {type(value).__name__} constant ({node.target})")
            constants[node.target] = value.detach()
        elif node.op == "call_module":
            raise Unavailable(f"the graph calls a submodule ({node.target})")
    _, (body, import_block) = graph_module.__reduce__()[:2]
    return import_block + body["_code"], constants


def _output_names(graph_module) -> list:
    """The names of the graph's outputs in the order its ``forward`` returns them (a dict's order,
    which is the order the exported program flattens them in)."""
    output = next(n for n in reversed(graph_module.graph.nodes) if n.op == "output")
    returned = output.args[0]
    if not isinstance(returned, dict):
        raise Unavailable("the graph does not return a dict of outputs")
    return list(returned)


def _run_child(folder, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # leapp and torch as this process has them
    try:
        child = subprocess.Popen([sys.executable, "-m", "leapp.runtime.fused_process", str(folder)],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=env, start_new_session=True, close_fds=True)
    except OSError as exc:
        raise Unavailable(f"no compile process could start ({exc})") from None
    with _live_lock:
        _live[child] = folder
    try:
        code = child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        raise Unavailable(f"the compile process took more than {timeout:.0f} s") from None
    finally:
        with _live_lock:
            _live.pop(child, None)
        if child.stdin is not None:
            child.stdin.close()
    if code != 0:
        raise Unavailable(_reason(folder, code))


def _reason(folder, code) -> str:
    try:
        with open(folder / REASON, "rb") as f:
            text = f.read(_REASON_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or f"the compile process exited with status {code}"


def _load(package, names):
    """The package's runner behind ``{name: tensor}``. Loaded through torch's C++ loader itself:
    ``torch._inductor.aoti_load_package`` would first import inductor, seconds of Python holding
    the interpreter lock in the caller's process (the stalls this module exists to avoid)."""
    import torch

    try:
        loader = torch._C._aoti.AOTIModelPackageLoader(str(package), "model", False, 1, -1)
    except (AttributeError, RuntimeError) as exc:
        raise Unavailable(f"the package could not be loaded ({type(exc).__name__}: {exc})") from None
    run_flat = loader.boxed_run

    def run(*tensors):
        outputs = run_flat(list(tensors))  # boxed: it takes the list it is given
        return dict(zip(names, outputs, strict=True))

    return run


@atexit.register
def _kill_live():
    """At the interpreter's exit (a Ctrl-C included) while a compile runs: the tier's thread, a
    daemon, will not run its cleanup, so the child is killed and its folder removed here."""
    with _live_lock:
        live = list(_live.items())
    for child, folder in live:
        try:
            child.kill()
            child.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(folder, ignore_errors=True)


# --- the child ------------------------------------------------------------------


def _child(folder: Path) -> int:
    threading.Thread(target=_lifeline, daemon=True).start()
    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    try:
        _compile(folder)
    except BaseException as exc:  # noqa: BLE001 - the reason goes to the caller, whatever it is
        first = (str(exc).strip().splitlines() or ["no message"])[0][:300]
        (folder / REASON).write_text(f"{type(exc).__name__}: {first}", encoding="utf-8")
        return 1
    return 0


def _lifeline():
    """End this process when the caller's end of the standard input closes (the caller is gone)."""
    try:
        while os.read(0, 1):  # the file descriptor itself: sys.stdin's buffer has a lock that
            pass              # the interpreter's shutdown would wait for
    finally:
        os._exit(70)


def _compile(folder: Path) -> None:
    import torch
    from torch._inductor import aoti_compile_and_package, config

    torch.set_num_threads(1)
    payload = torch.load(folder / PAYLOAD, weights_only=True)
    namespace: dict = {}
    exec(compile(payload["source"], "<leapp graph>", "exec"), namespace)  # noqa: S102 - torch.fx's own code

    class Graph(torch.nn.Module):
        forward = namespace["forward"]

    module = Graph()
    for path, tensor in payload["constants"].items():
        owner = module
        *parents, leaf = path.split(".")
        for part in parents:
            if not hasattr(owner, part):
                setattr(owner, part, torch.nn.Module())
            owner = getattr(owner, part)
        setattr(owner, leaf, tensor)
    with config.patch(compile_threads=1), torch.no_grad():
        program = torch.export.export(module, tuple(payload["inputs"]), strict=False)
        aoti_compile_and_package(program, package_path=str(folder / PACKAGE))


if __name__ == "__main__":
    sys.exit(_child(Path(sys.argv[1])))
