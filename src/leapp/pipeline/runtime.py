"""``load_pipeline(folder)``: run an exported pipeline step by step, NumPy in and out.

::

    rt = leapp.load_pipeline("out/robot")
    rt.inputs                      # {"preprocess/obs": Port(dtype, shape)}
    out = rt.step({"preprocess/obs": obs})   # {"policy/action": array}
    rt.reset()                     # state and feedback back to their initial values

Each step runs the nodes in the spec's order, feeding each input from the
caller, a forward edge, last step's feedback or the node's state; state and
feedback are committed only when the whole step succeeded, so a refused or
failing step leaves them as they were. An all-ONNX pipeline needs NumPy and
onnxruntime only: torch is imported only for a TorchScript or .pt2 node.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from . import spec as sp


class PipelineInputError(ValueError):
    """A step was given an unknown, missing, or misshapen input; nothing was changed."""


@dataclass(frozen=True)
class Port:
    dtype: np.dtype
    shape: tuple  # ints, with "batch" for the free axis of a batched pipeline

    def describe(self):
        return f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"


def load_pipeline(folder, *, check_hashes=True) -> PipelineRuntime:
    """Read ``folder/pipeline.json``, check it and every file's sha256, and load each artifact."""
    return PipelineRuntime(folder, check_hashes=check_hashes)


class PipelineRuntime:
    def __init__(self, folder, *, check_hashes=True):
        self.folder = os.fspath(folder)
        path = os.path.join(self.folder, sp.SPEC_FILE)
        try:
            with open(path, encoding="utf-8") as f:
                self.spec = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"no {sp.SPEC_FILE} in {self.folder!r}: is it an exported leapp "
                                    f"pipeline (CompiledPipeline.export)?") from None
        sp.validate(self.spec)
        self.batch = self.spec["batch"]
        files = [(n["artifact"], n["sha256"]) for n in self.spec["nodes"]]
        files.append((self.spec["initial_values"]["file"], self.spec["initial_values"]["sha256"]))
        for file, digest in files:
            full = os.path.join(self.folder, file)
            if not os.path.exists(full):
                raise sp.SpecError(f"{file}: listed in {sp.SPEC_FILE} but missing from {self.folder!r}")
            if check_hashes and sp.sha256(full) != digest:
                raise sp.SpecError(f"{file}: its sha256 does not match {sp.SPEC_FILE} (the file was "
                                   f"changed after export); re-export the pipeline or restore the file")
        self._initial = sp.read_initial(os.path.join(self.folder, self.spec["initial_values"]["file"]))
        self._nodes = {n["name"]: n for n in self.spec["nodes"]}
        self._ports_in = {sp.port(n, p["name"]): _port(p) for n, d in self._nodes.items() for p in d["inputs"]}
        self._ports_out = {sp.port(n, p["name"]): _port(p) for n, d in self._nodes.items() for p in d["outputs"]}
        self._runners = {name: _runner(d, self.folder) for name, d in self._nodes.items()}
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
        values = {}
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
            if not isinstance(value, (np.ndarray, np.generic)):
                raise PipelineInputError(f"input {ref!r}: expected a NumPy array {port.describe()}, got "
                                         f"{type(value).__name__}")
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
                if batch is not None and value.shape[0] != batch:
                    raise PipelineInputError(f"input {ref!r}: batch of {value.shape[0]}, the other inputs "
                                             f"have {batch}")
                batch = value.shape[0]
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


_BACKEND = {"onnx": "onnxruntime", "torchscript": "torch", "pt2": "torch"}


def _runner(node, folder):
    try:
        return _RUNNERS[node["format"]](os.path.join(folder, node["artifact"]), node)
    except ImportError as exc:
        raise ImportError(f"node {node['name']!r} ({node['artifact']}, format {node['format']}) needs "
                          f"{_BACKEND[node['format']]} to run: {exc}") from exc


def _port(entry):
    return Port(np.dtype(entry["dtype"]), tuple(entry["shape"]))


def native(array):
    """``array`` with its values in the machine's byte order, as ONNX Runtime reads every buffer."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def _onnx_runner(path, node):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]  # an input the graph never reads is not in the file
    # Outputs by position: an attached model may name them its own way (attach checked them in order).
    outs = [p["name"] for p in node["outputs"]]

    def run(feed):
        got = session.run(None, {n: native(np.ascontiguousarray(feed[n])) for n in names})
        return dict(zip(outs, got, strict=True))

    return run


def _torch_runner(load):
    def make(path, node):
        import torch

        from ..runtime.dtypes import tensor_from_numpy, tensor_to_numpy

        module = load(path)
        names = [p["name"] for p in node["inputs"]]
        outs = {p["name"]: np.dtype(p["dtype"]) for p in node["outputs"]}

        def run(feed):
            with torch.no_grad():
                got = module(*[tensor_from_numpy(np.ascontiguousarray(feed[n])) for n in names])
            got = got if isinstance(got, (tuple, list)) else (got,)
            return {n: tensor_to_numpy(g, d) for (n, d), g in zip(outs.items(), got, strict=True)}

        return run

    return make


def _load_torchscript(path):
    import torch

    return torch.jit.load(path)


def _load_pt2(path):
    import torch

    return torch.export.load(path).module()


_RUNNERS = {"onnx": _onnx_runner, "torchscript": _torch_runner(_load_torchscript),
            "pt2": _torch_runner(_load_pt2)}
