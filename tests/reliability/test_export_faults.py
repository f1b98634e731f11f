"""Export under faults: a full disk, a kill between the two renames, a folder as target, leftovers."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import leapp.export.write as export
from leapp.errors import ExportError, LeappError
from leapp.export import export_node
from leapp.runtime.tracing import trace_function


def _scale(x):
    return np.tanh(x * 2.0 + 1.0)


@pytest.fixture(scope="module")
def node():
    return trace_function(_scale, (np.ones((2, 3), np.float32),), {}, names=["x"], strict=True).node


def _consistent(path):
    """The sidecar, when there is one, describes the artifact next to it."""
    sidecar = path + ".json"
    if not os.path.exists(sidecar):
        return True
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return json.load(open(sidecar))["artifact_sha256"] == digest


def test_sidecar_names_the_artifact_hash(node, tmp_path):
    path = str(tmp_path / "n.pt")
    export_node(node, path, "torchscript")
    assert _consistent(path) and os.path.exists(path + ".json")


def test_target_that_is_a_directory(node, tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(ExportError, match="is a directory; give a file path") as info:
        export_node(node, tmp_path / "out", "onnx")
    assert isinstance(info.value, LeappError)
    assert os.listdir(tmp_path / "out") == [] and sorted(os.listdir(tmp_path)) == ["out"]


def test_kill_between_artifact_and_sidecar_never_leaves_a_stale_sidecar(node, tmp_path, monkeypatch):
    path = str(tmp_path / "n.pt")
    export_node(node, path, "torchscript")
    old = open(path, "rb").read()
    other = trace_function(lambda x: x - 3.0, (np.ones((2, 3), np.float32),), {}, names=["x"],
                           strict=True).node

    def killed(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "atomic_write", killed)  # the artifact is renamed, the sidecar fails
    with pytest.raises(ExportError, match="No space left on device"):
        export_node(other, path, "torchscript")
    assert open(path, "rb").read() != old  # the new artifact is in place...
    assert not os.path.exists(path + ".json")  # ...and no sidecar describes the old one
    assert _consistent(path)
    assert sorted(os.listdir(tmp_path)) == ["n.pt"]


def test_os_errors_become_export_errors(node, tmp_path, monkeypatch):
    path = str(tmp_path / "n.onnx")
    export_node(node, path, "onnx")
    before = open(path, "rb").read()

    def failing(src, dst):
        raise PermissionError(13, "Permission denied", dst)

    monkeypatch.setattr(export.os, "replace", failing)
    with pytest.raises(ExportError, match="Permission denied"):
        export_node(node, path, "onnx")
    monkeypatch.undo()
    assert open(path, "rb").read() == before and _consistent(path)
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []


def test_stale_staging_folders_are_removed(node, tmp_path):
    dead = tmp_path / ".leapp-export-999999999-abc"
    live = tmp_path / f".leapp-export-{os.getpid()}-running"
    old = tmp_path / ".leapp-export-k2j3h4"  # no pid in the name: removed once old
    for d in (dead, live, old):
        d.mkdir()
        (d / "n.onnx").write_bytes(b"half")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    export_node(node, tmp_path / "n.onnx", "onnx")
    assert not dead.exists() and not old.exists() and live.exists()


def test_artifacts_honour_the_umask(node, tmp_path):
    previous = os.umask(0o077)
    try:
        export_node(node, tmp_path / "n.onnx", "onnx")
    finally:
        os.umask(previous)
    for name in ("n.onnx", "n.onnx.json"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600, name


FULL_DISK = r'''
import os, resource, signal, sys
import numpy as np
from leapp.errors import ExportError
from leapp.export import export_node
from leapp.runtime.tracing import trace_function

node = trace_function(lambda x: np.tanh(x * 2.0 + 1.0), (np.ones((2, 3), np.float32),), {},
                      names=["x"], strict=True).node
export_node(node, os.path.join(sys.argv[1], "warm.onnx"), "onnx")  # load everything lazily imported
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over the limit, write() fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (256, resource.RLIM_INFINITY))
for fmt, ext in (("torchscript", ".pt"), ("pt2", ".pt2"), ("onnx", ".onnx")):
    try:
        export_node(node, os.path.join(sys.argv[1], "n" + ext), fmt)
        print(fmt, "written")
    except ExportError as e:
        print(fmt, "ExportError", "File too large" in str(e))
'''


def test_full_disk_is_an_export_error_not_an_abort(tmp_path):
    """RLIMIT_FSIZE makes every write past 256 bytes fail as a full disk would.

    torch's own file writer aborted the process (SIGABRT) on that for TorchScript and .pt2."""
    pytest.importorskip("resource")  # POSIX only
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:3] == ["torchscript ExportError True", "pt2 ExportError True",
                                           "onnx ExportError True"], proc.stdout
    assert sorted(os.listdir(tmp_path)) == ["warm.onnx", "warm.onnx.json"]
