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

import os
from dataclasses import dataclass

import numpy as np

from . import loader
from . import spec as sp
from .loader import native  # noqa: F401  (leapp.export_formats reads it from here)


class PipelineInputError(ValueError):
    """A step was given an unknown, missing, or misshapen input; nothing was changed."""


@dataclass(frozen=True)
class Port:
    dtype: np.dtype
    shape: tuple  # ints, with "batch" for the free axis of a batched pipeline

    def describe(self):
        return f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"


def load_pipeline(folder, *, trust_code=False, check_hashes=True,
                  max_file_bytes=loader.MAX_FILE_BYTES) -> PipelineRuntime:
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
    def __init__(self, folder, *, trust_code=False, check_hashes=True, max_file_bytes=loader.MAX_FILE_BYTES):
        self.folder = os.fspath(folder)
        loaded = loader.load(self.folder, trust_code=trust_code, check_hashes=check_hashes,
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


def _port(entry):
    return Port(np.dtype(entry["dtype"]), tuple(entry["shape"]))
