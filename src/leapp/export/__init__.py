"""Export: writing artifacts and pipeline folders, lowering graphs for export, checking what was
written, and loading it again on a robot.

    export_node(node, "out/preprocess.onnx")            # + out/preprocess.onnx.json
    export_pipeline(pipeline, "out", format="onnx")     # one artifact per node + pipeline.json
    leapp.load_pipeline("out")                          # loader.load_pipeline: no torch for ONNX

The modules are floors; a module imports only modules on its own floor or below
(tests/export/test_layering.py parses them and checks it), and nothing here is
imported eagerly, so ``import leapp.export.loader`` loads no writer:

0. ``folder``, ``onnx_refs``, ``sidecar``; then ``spec`` and ``initial``: the
   ``pipeline.json`` format, its schema and strict parser, reading files of a
   hostile folder, ``initial.npz``. Standard library and NumPy only.
1. ``torch_artifacts``: TorchScript and .pt2 from bytes (torch, imported
   lazily), for a caller who passed ``trust_code=True``.
2. ``loader``: ``load_pipeline`` and ``PipelineRuntime``, what a robot runs.
   Standard library, NumPy, onnxruntime and floor 0 at the top; floor 1 only
   inside the function that loads a trusted torch node.
3. ``lowering``, ``batch``: graph passes for export (ONNX decompositions, a
   free batch axis); torch.
4. ``prep``: the export-ready copy of a graph (runs floor 3's passes).
5. ``formats``: one writer and one loader per format (onnx, onnxruntime,
   torch, imported lazily).
6. ``write``: ``export_node`` and ``export_pipeline``: prepare, write to a
   staging file, load it back, check it against NumPy, commit.

Outside the package, ``leapp.pipeline`` (``CompiledPipeline.export``,
``attach``) sits above it and calls floor 6; ``leapp.runtime`` (dtypes,
passes) sits below it.
"""

from __future__ import annotations

_WRITE = ("export_node", "export_pipeline", "FORMATS", "mismatch", "casts_undefined_values")

__all__ = list(_WRITE)


def __getattr__(name):
    if name not in _WRITE:
        raise AttributeError(f"module 'leapp.export' has no attribute {name!r}")
    from . import write

    return getattr(write, name)
