"""Loading TorchScript and .pt2 artifacts from bytes; only for a caller who passed ``trust_code=True``.

``loader`` imports this module only after that check, and only for a folder
that has such a node: an all-ONNX pipeline never reaches it, and never
imports torch. TorchScript archives hold programs and pickles, so loading one
runs what it holds; ``.pt2`` archives are loaded with every ``torch.load``
inside weights-only and their raw-pickle members (opaque objects) refused.
"""

from __future__ import annotations

import io
import os
import threading

import numpy as np

from . import spec as sp

_WEIGHTS_ONLY = threading.Lock()


def load_torchscript(blob):
    """The TorchScript module in ``blob`` (runs the program it holds: trusted callers only)."""
    import torch

    return torch.jit.load(io.BytesIO(blob), map_location="cpu")


def load_pt2(blob, who):
    """The module of the torch.export archive ``blob``, with every torch.load inside it weights-only
    and raw pickles (opaque objects) refused with an ``ArtifactError`` naming ``who`` (the file)."""
    import zipfile

    import torch

    try:
        from torch.export.pt2_archive.constants import OPAQUE_OBJ_FILENAME_PREFIX as opaque
    except ImportError:  # an older torch: no such members
        opaque = None  # type: ignore[assignment]
    members = zipfile.ZipFile(io.BytesIO(blob)).namelist()  # BadZipFile: the caller's ArtifactError
    raw = [m for m in members if opaque and os.path.basename(m).startswith(opaque)]
    if raw:
        raise sp.ArtifactError(f"{who} holds opaque objects {raw}, "
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


def _torch_runner(load, what, corrupt):
    def make(node, blob, external):
        import torch

        from ..runtime.dtypes import tensor_from_numpy, tensor_to_numpy

        try:
            module = load(node, blob)
        except sp.PipelineError:
            raise
        except Exception as exc:  # torch's errors for a damaged archive are of many types
            raise corrupt(node, what, exc) from None
        names = [p["name"] for p in node["inputs"]]
        outs = {p["name"]: np.dtype(p["dtype"]) for p in node["outputs"]}

        def run(feed):
            with torch.no_grad():
                got = module(*[tensor_from_numpy(np.ascontiguousarray(feed[n])) for n in names])
            if isinstance(got, dict):  # leapp's own files return {output name: tensor}
                got = [got[n] for n in outs] if set(got) == set(outs) else list(got.values())
            got = got if isinstance(got, (tuple, list)) else (got,)  # else by position, as attach checked
            return {n: tensor_to_numpy(g, d) for (n, d), g in zip(outs.items(), got, strict=True)}

        return run

    return make


def runners(corrupt):
    """``{format: make(node, blob, external) -> run}`` for the torch formats; ``corrupt(node, what,
    exc)`` makes the loader's ``ArtifactError`` for a file its loader cannot read."""
    return {"torchscript": _torch_runner(lambda node, blob: load_torchscript(blob), "torch.jit.load", corrupt),
            "pt2": _torch_runner(lambda node, blob: load_pt2(blob, f"node {node['name']!r}: {node['artifact']}"),
                                 "torch.export.load", corrupt)}

