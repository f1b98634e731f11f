"""Deployable pipelines: state, feedback, the ``pipeline.json`` spec, the loader, the drawing.

- ``links``: which node output feeds which input, followed between nodes (seed API);
- ``compiled``: ``CompiledPipeline`` (what ``leapp.compile_graph`` returns) and its export;
- ``spec``: the versioned ``pipeline.json`` and its JSON Schema (no torch);
- ``runtime``: ``load_pipeline(folder)`` and ``PipelineRuntime.step`` (no torch for ONNX);
- ``loader`` (with ``folder``, ``initial``, ``onnx_refs``): reading a folder that may be hostile;
- ``draw``: DOT and SVG drawings of a pipeline or a single graph.

Nothing is imported here eagerly, so loading a pipeline on a robot costs NumPy
and onnxruntime only.
"""

from __future__ import annotations

_LAZY = {
    "load_pipeline": "leapp.pipeline.runtime",
    "PipelineRuntime": "leapp.pipeline.runtime",
    "PipelineInputError": "leapp.pipeline.runtime",
    "CompiledPipeline": "leapp.pipeline.compiled",
    "SpecError": "leapp.pipeline.spec",
    "PipelineError": "leapp.pipeline.spec",
    "ArtifactError": "leapp.pipeline.spec",
    "UntrustedCodeError": "leapp.pipeline.spec",
}

__all__ = list(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'leapp.pipeline' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
