"""``load_pipeline(folder)``: what a robot runs. Loads a pipeline folder that may come from anyone
and steps it, NumPy in and out::

    rt = leapp.load_pipeline("out/robot")
    rt.inputs                      # {"preprocess/obs": Port(dtype, shape)}
    out = rt.step({"preprocess/obs": obs})   # {"policy/action": array}
    rt.reset()                     # state and feedback back to their initial values

This module is kept small so that it can be audited: it imports the standard
library, NumPy, onnxruntime and leapp's torch-free ``spec``, ``folder``,
``initial`` and ``onnx_refs`` only (a test checks it, and loads an ONNX folder
with torch made unimportable). A TorchScript or .pt2 node is loaded by
``torch_artifacts``, imported only after the caller passed ``trust_code=True``.

Each step runs the nodes in the spec's order, feeding each input from the
caller, a forward edge, last step's feedback or the node's state; state and
feedback are committed only when the whole step succeeded, so a refused or
failing step leaves them as they were.

What ``load_pipeline`` promises (docs/pipelines.md, "Security"): every file read once, checked, then used:

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

import os
import re
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
        raise sp.untrusted_code(f"{sp.SPEC_FILE} has TorchScript/.pt2 node(s) {risky}", "the folder",
                                "Load the folder with load_pipeline(folder, trust_code=True)")
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
    wanted: dict = {}
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
        if node["format"] == "onnx":
            return _onnx_runner(node, blob, external)
        from . import torch_artifacts  # reached only with trust_code=True (checked in _load)

        return torch_artifacts.runners(_corrupt)[node["format"]](node, blob, external)
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


# --- the runtime: stepping a loaded pipeline -------------------------------------------------------


class PipelineInputError(ValueError):
    """A step was given an unknown, missing, or misshapen input; nothing was changed."""


@dataclass(frozen=True)
class Port:
    dtype: np.dtype
    shape: tuple  # ints, with "batch" for the free axis of a batched pipeline

    def describe(self):
        return f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"


def load_pipeline(folder, *, trust_code=False, check_hashes=True,
                  max_file_bytes=MAX_FILE_BYTES) -> PipelineRuntime:
    """Read ``folder/pipeline.json``, check it and every file's sha256, and load each artifact.

    The folder is treated as hostile (see "Security" in docs/pipelines.md): a
    file that is outside it, a link, not a regular file, over ``max_file_bytes``,
    or does not match the spec is refused with a ``PipelineError`` naming it.
    TorchScript and .pt2 nodes run code stored in their files and load only with
    ``trust_code=True``.
    """
    return PipelineRuntime(folder, trust_code=trust_code, check_hashes=check_hashes,
                           max_file_bytes=max_file_bytes)


class PipelineRuntime:
    def __init__(self, folder, *, trust_code=False, check_hashes=True, max_file_bytes=MAX_FILE_BYTES):
        self.folder = os.fspath(folder)
        loaded = load(self.folder, trust_code=trust_code, check_hashes=check_hashes,
                             max_file_bytes=max_file_bytes)
        self.spec = loaded.spec
        self.batch = self.spec["batch"]
        self._initial = loaded.initial
        self._runners = loaded.runners
        self._nodes = {n["name"]: n for n in self.spec["nodes"]}
        self._ports_in = {sp.port(n, p["name"]): _port(p) for n, d in self._nodes.items() for p in d["inputs"]}
        self._ports_out = {sp.port(n, p["name"]): _port(p) for n, d in self._nodes.items() for p in d["outputs"]}
        self._source = {e["to"]: e["from"] for e in self.spec["edges"]}
        self._carried_keys = {f["to"]: f["initial"] for f in self.spec["feedback"]}
        for s in self.spec["state"]:
            self._carried_keys[sp.port(s["node"], s["name"])] = s["initial"]
        self._next_of = {f["to"]: (f["from"], f["cast"]) for f in self.spec["feedback"]}
        for s in self.spec["state"]:
            self._next_of[sp.port(s["node"], s["name"])] = (sp.port(s["node"], sp.state_output(s["name"])), False)
        self._carried = None  # port -> value the next step feeds it (None: initial values, at the first step)

    # --- what it takes and gives ----------------------------------------------

    @property
    def inputs(self) -> dict:
        """``{"node/port": Port}`` the caller feeds at each step."""
        return {r: self._ports_in[r] for r in self.spec["inputs"]}

    @property
    def outputs(self) -> dict:
        """``{"node/port": Port}`` each step returns."""
        return {r: self._ports_out[r] for r in self.spec["outputs"]}

    @property
    def state(self) -> dict:
        """The values the next step starts from (state and feedback), by target port; copies."""
        return {k: v.copy() for k, v in (self._carried or {}).items()}

    def reset(self, envs=None) -> None:
        """State and feedback back to their initial values (with ``envs``: only those rows of the batch)."""
        if envs is None or self._carried is None:
            self._carried = None
            return
        rows = np.asarray(envs)
        batch = next(iter(self._carried.values())).shape[0] if self._carried else 0
        initial = self._initial_values(batch)
        for key in self._carried:
            self._carried[key][rows] = initial[key][rows]

    # --- stepping -----------------------------------------------------------------

    def step(self, inputs: dict) -> dict:
        batch = self._check(inputs)
        carried = self._carried if self._carried is not None else self._initial_values(batch)
        if self._carried is not None and self.batch and carried:
            have = next(iter(carried.values())).shape[0]
            if have != batch:
                raise PipelineInputError(f"a batch of {batch} where the carried state holds {have} "
                                         f"environments; call reset() to start over with another batch")
        values: dict = {}
        for name in self.spec["order"]:
            node = self._nodes[name]
            feed = {}
            for p in node["inputs"]:
                ref = sp.port(name, p["name"])
                if ref in inputs:
                    feed[p["name"]] = np.asarray(inputs[ref])
                elif ref in self._source:
                    feed[p["name"]] = values[self._source[ref]]
                else:
                    feed[p["name"]] = carried[ref]
            for out, value in self._runners[name](feed).items():
                values[sp.port(name, out)] = value
        new = {}
        for ref, (source, cast) in self._next_of.items():
            value = values[source]
            port = self._ports_in[ref]
            new[ref] = np.array(value.astype(port.dtype) if cast else value, copy=True)
        self._carried = new
        return {r: values[r] for r in self.spec["outputs"]}

    def _check(self, inputs):
        """Refuse unknown, missing and misshapen inputs before anything runs; returns the batch size."""
        if not isinstance(inputs, dict):
            raise PipelineInputError(f"step() takes a dict {{'node/port': array}}; got {type(inputs).__name__}")
        expected = self.inputs
        unknown = sorted(set(inputs) - set(expected))
        missing = sorted(set(expected) - set(inputs))
        if unknown or missing:
            parts = []
            if unknown:
                parts.append(f"unknown input(s) {unknown}")
            if missing:
                parts.append(f"missing input(s) {missing}")
            raise PipelineInputError(f"{' and '.join(parts)}; the pipeline's inputs are "
                                     f"{ {k: p.describe() for k, p in expected.items()} }")
        batch = None
        for ref, port in expected.items():
            value = inputs[ref]
            if type(value) in (bool, int, float, complex) and port.shape == ():
                value = np.asarray(value)  # a scalar argument as Python passes it: float64, int64, bool
            if not isinstance(value, (np.ndarray, np.generic)):
                raise PipelineInputError(f"input {ref!r}: expected a NumPy array {port.describe()}, got "
                                         f"{type(value).__name__}")
            if isinstance(value, np.ma.MaskedArray):  # its mask would be dropped without a word
                raise PipelineInputError(f"input {ref!r}: a masked array; the pipeline runs on plain arrays "
                                         f"and would ignore the mask. Pass value.filled(fill) or "
                                         f"np.asarray(value) if the masked entries may take their raw values")
            if value.dtype.newbyteorder("=") != port.dtype.newbyteorder("="):  # byte order: converted below
                raise PipelineInputError(f"input {ref!r}: expected dtype {port.dtype}, got {value.dtype} "
                                         f"(shape {value.shape}); convert it with .astype({str(port.dtype)!r})")
            want = port.shape
            ok = len(value.shape) == len(want) and all(
                w == sp.BATCH or w == g for w, g in zip(want, value.shape, strict=True))
            if not ok:
                raise PipelineInputError(f"input {ref!r}: expected shape {port.describe()}, got "
                                         f"{value.dtype}{list(value.shape)}")
            if self.batch and want and want[0] == sp.BATCH:
                rows = int(np.shape(value)[0])
                if batch is not None and rows != batch:
                    raise PipelineInputError(f"input {ref!r}: batch of {rows}, the other inputs "
                                             f"have {batch}")
                batch = rows
        return batch

    def _initial_values(self, batch):
        out = {}
        for ref, key in self._carried_keys.items():
            value = self._initial[key]
            if self.batch and batch is not None and value.ndim and value.shape[0] != batch:
                if not (value == value[:1]).all():  # one initial value per traced environment
                    raise PipelineInputError(f"{ref!r}: its initial value differs between the {value.shape[0]} "
                                             f"traced environments; step a batch of {value.shape[0]}")
                value = np.repeat(value[:1], batch, axis=0)
            out[ref] = np.array(value, copy=True)
        return out


def _port(entry):
    return Port(np.dtype(entry["dtype"]), tuple(entry["shape"]))
