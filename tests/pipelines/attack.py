"""Crafting hostile pipeline folders, and loading them in a watched child process.

``craft(base, root, name, edit)`` copies an exported folder and lets ``edit``
damage it (``edit(folder, spec)``; the spec is written back unless ``edit``
returns ``False``). ``run(cases)`` loads each folder with
``leapp.load_pipeline`` in one child process that records, through an audit
hook, every path opened and every process started while loading, bounds each
load with an alarm (a blocking open would be reported as a hang, not wait for
ever), and reports the exception, its classes and its message.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import leapp

PAYLOAD_MARKER = "PAYLOAD_RAN"


class Payload:
    """A pickle that creates ``path`` when unpickled (what an attacker's code would do)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def payload_bytes(marker) -> bytes:
    return pickle.dumps(Payload(marker), protocol=2)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def craft(base, root, name, edit):
    folder = Path(root) / name
    shutil.copytree(base, folder)
    spec = json.loads((folder / "pipeline.json").read_text())
    if edit(folder, spec) is not False:
        (folder / "pipeline.json").write_text(json.dumps(spec, indent=2))
    return folder


def rehash(folder, spec):
    """Make every hash in the spec match the (changed) files, as anyone who can write the folder can."""
    for node in spec["nodes"]:
        path = folder / node["artifact"]
        if path.is_file() and not path.is_symlink():
            node["sha256"] = sha(path.read_bytes())
    path = folder / spec["initial_values"]["file"]
    if path.is_file() and not path.is_symlink():
        spec["initial_values"]["sha256"] = sha(path.read_bytes())


def replace_member(archive: bytes, pick, data: bytes) -> bytes:
    """The zip ``archive`` with every member for which ``pick(name)`` holds replaced by ``data``."""
    src = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, data if pick(info.filename) else src.read(info))
    return out.getvalue()


_CHILD = r"""
import json, os, signal, sys, time
cases = json.load(open(sys.argv[1]))
block = sys.argv[2].split(",") if sys.argv[2] else []
if block:
    import importlib.abc
    class _Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in block:
                raise ImportError(f"{name} is blocked in this process")
    sys.meta_path.insert(0, _Block())
events = None
def hook(event, args):
    if events is None:
        return
    if event == "open" and isinstance(args[0], (str, bytes)):
        events.append(["open", os.fsdecode(args[0])])
    elif event in ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"):
        events.append([event, repr(args)[:200]])
sys.addaudithook(hook)
import leapp
for name in sys.argv[3].split(","):  # what the backends open when imported is not the loader's doing
    if name:
        __import__(name)
class Hang(BaseException):
    pass
def alarm(*_):
    raise Hang()
signal.signal(signal.SIGALRM, alarm)
out = []
for case in cases:
    events = []
    result = {"id": case["id"]}
    signal.alarm(case.get("alarm", 20))
    start = time.monotonic()
    try:
        if case.get("control") == "open":  # what an unchecked loader does
            open(case["folder"], "rb").read()
        elif case.get("control") == "pt2":
            import io, torch
            torch.export.load(io.BytesIO(open(case["folder"], "rb").read()))
        else:
            rt = leapp.load_pipeline(case["folder"], **case.get("kwargs", {}))
        result["loaded"] = True
    except Hang:
        result["hang"] = True
    except BaseException as exc:
        result["error"] = [c.__name__ for c in type(exc).__mro__]
        result["message"] = str(exc)
    finally:
        signal.alarm(0)
        result["seconds"] = time.monotonic() - start
        result["events"], events = events, None
    out.append(result)
print(json.dumps(out))
"""


def run(cases, *, cwd, block=(), preload=("onnxruntime",), timeout=300):
    """``{id: result}`` for ``cases`` (``[{"id", "folder", "kwargs"?}]``), loaded in one child process.

    ``block``: packages the child cannot import; ``preload``: imported before the watch starts.
    """
    spec_file = Path(cwd) / f"cases-{os.getpid()}-{len(cases)}.json"
    spec_file.write_text(json.dumps([{**c, "folder": str(c["folder"])} for c in cases]))
    env = dict(os.environ, PYTHONPATH=str(Path(leapp.__file__).parent.parent))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(spec_file), ",".join(block),
                           ",".join(preload)],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return {r["id"]: r for r in json.loads(done.stdout.strip().splitlines()[-1])}


def outside_opens(result, folder, bait):
    """Paths opened while loading that are not the folder's own files nor Python's installation."""
    folder = os.path.realpath(folder)
    allowed = [folder, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix),
               os.path.realpath(Path(leapp.__file__).parent)]
    bad = []
    for kind, path in result["events"]:
        if kind != "open":
            bad.append(f"{kind} {path}")
            continue
        if str(bait) in path or os.path.basename(str(bait)) in path:
            bad.append(path)
        elif os.path.isabs(path) and not any(os.path.realpath(path).startswith(a) for a in allowed):
            bad.append(path)
        elif not os.path.isabs(path) and (".." in path.split("/") or "/" in path):
            bad.append(path)
    return bad
