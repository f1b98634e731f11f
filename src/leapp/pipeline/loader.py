"""Loading a pipeline folder that may come from anyone: every file read once, checked, then used.

What ``load_pipeline`` promises (docs/pipelines.md, "Security"):

- only files the spec names are opened, each through ``folder.Folder``
  (inside the folder, no symbolic link, regular file, size bounded before
  reading) and read once into memory; the sha256 is taken of those bytes
  and the runtime loads those same bytes, never the path again;
- ``pipeline.json`` is parsed strictly and validated (``spec.parse``,
  ``spec.validate``) before any other file is opened;
- ``initial.npz`` is read from its bytes with pickles refused, each member
  checked against the spec before its data is read (``initial.read``);
- ONNX (the default) runs in onnxruntime from bytes, every external-data
  file named by the model handed over from memory (a location the spec
  does not list is refused, so onnxruntime opens no file);
- TorchScript and .pt2 artifacts can run code when loaded and are refused
  unless the caller passes ``trust_code=True``; with it, .pt2's pickled
  members are loaded weights-only.

Every refusal is a ``PipelineError`` (``SpecError``, ``ArtifactError``,
``UntrustedCodeError``) naming the file, and the node where there is one.
No torch is imported for an all-ONNX pipeline.
"""

from __future__ import annotations

import io
import os
import re
import threading
from dataclasses import dataclass

import numpy as np

from . import initial as npz
from . import spec as sp
from .folder import Folder, FolderError
from .onnx_refs import external_locations

MAX_FILE_BYTES = 4 << 30  # an artifact or an external-data file (ONNX protobufs stop at 2 GiB)
MAX_INITIAL_BYTES = 1 << 30


@dataclass
class Loaded:
    spec: dict
    initial: dict
    runners: dict


def load(folder, *, trust_code=False, check_hashes=True, max_file_bytes=MAX_FILE_BYTES) -> Loaded:
    with Folder(folder) as where:
        return _load(where, trust_code, check_hashes, max_file_bytes)


def _load(where, trust_code, check_hashes, max_file_bytes):
    try:
        data = where.read(sp.SPEC_FILE, sp.MAX_SPEC_BYTES)
    except FolderError as exc:
        if exc.missing:
            raise FileNotFoundError(f"no {sp.SPEC_FILE} in {where.path!r}: is it an exported leapp "
                                    f"pipeline (CompiledPipeline.export)?") from None
        raise sp.SpecError(str(exc)) from None
    spec = sp.parse(data)
    sp.validate(spec)
    risky = [(n["name"], n["artifact"], n["format"]) for n in spec["nodes"] if n["format"] != "onnx"]
    if risky and not trust_code:
        raise sp.UntrustedCodeError(
            f"{sp.SPEC_FILE} has TorchScript/.pt2 node(s) {risky}: loading them runs code stored in the "
            f"file (TorchScript and torch.export archives hold pickles and programs), so anyone who "
            f"could write the folder could run code here. Load the folder with "
            f"load_pipeline(folder, trust_code=True) only if you trust where it came from; ONNX "
            f"pipelines need no such trust")
    read = _Reader(where, check_hashes)
    runners = {}
    for i, node in enumerate(spec["nodes"]):
        blob = read(node["artifact"], node["sha256"], max_file_bytes, f"nodes[{i}].artifact")
        external = {e["file"]: read(e["file"], e["sha256"], max_file_bytes, f"nodes[{i}].external_data[{k}]")
                    for k, e in enumerate(node.get("external_data", ()))}
        runners[node["name"]] = (node, blob, external)
    file = spec["initial_values"]["file"]
    blob = read(file, spec["initial_values"]["sha256"], MAX_INITIAL_BYTES, "initial_values.file")
    initial = npz.read(blob, _initial_ports(spec), batch=spec["batch"], file=file)
    for name, (node, blob, external) in runners.items():  # after every check: nothing runs on a bad folder
        runners[name] = _runner(node, blob, external)
    return Loaded(spec, initial, runners)


class _Reader:
    def __init__(self, where, check_hashes):
        self.where, self.check_hashes, self.done = where, check_hashes, {}

    def __call__(self, file, digest, limit, key):
        if file in self.done:
            data = self.done[file]
        else:
            try:
                data = self.where.read(file, limit)
            except FolderError as exc:
                if exc.missing:
                    raise sp.SpecError(f"{file}: listed in {sp.SPEC_FILE} but missing from "
                                       f"{self.where.path!r} (at {key})") from None
                raise sp.SpecError(f"{exc} (named in {sp.SPEC_FILE} at {key})") from None
            self.done[file] = data
        if self.check_hashes and sp.sha256_bytes(data) != digest:
            raise sp.SpecError(f"{file}: its sha256 does not match {sp.SPEC_FILE} (at {key}; the file was "
                               f"changed after export); re-export the pipeline or restore the file")
        return data


def _initial_ports(spec):
    """{initial key: (dtype, shape, port)} from the port each initial value feeds."""
    ports = {sp.port(n["name"], p["name"]): p for n in spec["nodes"] for p in n["inputs"]}
    wanted = {}
    targets = [(f["initial"], f["to"]) for f in spec["feedback"]]
    targets += [(s["initial"], sp.port(s["node"], s["name"])) for s in spec["state"]]
    for key, ref in targets:
        p = ports[ref]
        entry = (np.dtype(p["dtype"]), tuple(p["shape"]), ref)
        if key in wanted and wanted[key][:2] != entry[:2]:
            raise sp.SpecError(f"{sp.SPEC_FILE}: the initial value {key!r} feeds {wanted[key][2]} and {ref}, "
                               f"whose dtypes or shapes differ")
        wanted[key] = entry
    return wanted


# --- one runner per format, each from the bytes read above -----------------------------------------

_BACKEND = {"onnx": "onnxruntime", "torchscript": "torch", "pt2": "torch"}


def _runner(node, blob, external):
    try:
        return _RUNNERS[node["format"]](node, blob, external)
    except ImportError as exc:
        raise ImportError(f"node {node['name']!r} ({node['artifact']}, format {node['format']}) needs "
                          f"{_BACKEND[node['format']]} to run: {exc}") from exc


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _corrupt(node, what, exc):
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    return sp.ArtifactError(f"node {node['name']!r}: {node['artifact']} matches its sha256 but {what} "
                            f"cannot load it ({type(exc).__name__}: {text[0][:300] if text else ''})")


def native(array):
    """``array`` with its values in the machine's byte order, as ONNX Runtime reads every buffer."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def _onnx_runner(node, blob, external):
    import onnxruntime as ort

    try:
        named, unnamed = external_locations(blob)
    except ValueError as exc:
        raise _corrupt(node, "the ONNX reader", exc) from None
    strays = sorted(named - set(external))
    if strays or unnamed:
        raise sp.SpecError(f"node {node['name']!r}: {node['artifact']} keeps tensors in external file(s) "
                           f"{strays or ['(a tensor with no location)']} that {sp.SPEC_FILE} does not list "
                           f"under external_data; onnxruntime would open them outside leapp's checks")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if external:
        names = sorted(external)
        options.add_external_initializers_from_files_in_memory(
            names, [external[n] for n in names], [len(external[n]) for n in names])
    try:
        session = ort.InferenceSession(blob, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own error types; the file is what is wrong
        raise _corrupt(node, "onnxruntime", exc) from None
    names = [i.name for i in session.get_inputs()]  # an input the graph never reads is not in the file
    # Outputs by position: an attached model may name them its own way (attach checked them in order).
    outs = [p["name"] for p in node["outputs"]]

    def run(feed):
        got = session.run(None, {n: native(np.ascontiguousarray(feed[n])) for n in names})
        return dict(zip(outs, got, strict=True))

    return run


_WEIGHTS_ONLY = threading.Lock()


def _load_torchscript(node, blob):
    import torch

    return torch.jit.load(io.BytesIO(blob), map_location="cpu")


def _load_pt2(node, blob):
    """torch.export.load with every torch.load inside it weights-only, and raw pickles refused."""
    import zipfile

    import torch

    try:
        from torch.export.pt2_archive.constants import OPAQUE_OBJ_FILENAME_PREFIX as opaque
    except ImportError:  # an older torch: no such members
        opaque = None
    try:
        members = zipfile.ZipFile(io.BytesIO(blob)).namelist()
    except zipfile.BadZipFile as exc:
        raise _corrupt(node, "torch.export", exc) from None
    raw = [m for m in members if opaque and os.path.basename(m).startswith(opaque)]
    if raw:
        raise sp.ArtifactError(f"node {node['name']!r}: {node['artifact']} holds opaque objects {raw}, "
                               f"which torch.export.load unpickles with no restriction; not loaded")
    with _WEIGHTS_ONLY:  # torch.export.load passes weights_only=False; this variable overrides it
        before = os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
        os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = "1"
        try:
            return torch.export.load(io.BytesIO(blob)).module()
        finally:
            if before is None:
                del os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"]
            else:
                os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = before


def _torch_runner(load, what):
    def make(node, blob, external):
        import torch

        from ..runtime.dtypes import tensor_from_numpy, tensor_to_numpy

        try:
            module = load(node, blob)
        except sp.PipelineError:
            raise
        except Exception as exc:  # torch's errors for a damaged archive are of many types
            raise _corrupt(node, what, exc) from None
        names = [p["name"] for p in node["inputs"]]
        outs = {p["name"]: np.dtype(p["dtype"]) for p in node["outputs"]}

        def run(feed):
            with torch.no_grad():
                got = module(*[tensor_from_numpy(np.ascontiguousarray(feed[n])) for n in names])
            got = got if isinstance(got, (tuple, list)) else (got,)
            return {n: tensor_to_numpy(g, d) for (n, d), g in zip(outs.items(), got, strict=True)}

        return run

    return make


_RUNNERS = {"onnx": _onnx_runner, "torchscript": _torch_runner(_load_torchscript, "torch.jit.load"),
            "pt2": _torch_runner(_load_pt2, "torch.export.load")}
