"""Pipelines as ``leapp.compile_graph`` returns them: state, feedback, the drawing.

- ``links``: which node output feeds which input, followed between nodes (seed API);
- ``compiled``: ``CompiledPipeline`` (what ``leapp.compile_graph`` returns), its checks and its export
  (written through ``leapp.export``);
- ``draw``: DOT and SVG drawings of a pipeline or a single graph.

The ``pipeline.json`` spec, the folder loader and the runtime live in ``leapp.export`` (``spec``,
``loader``); their public names are here too. Nothing is imported here eagerly, so loading a
pipeline on a robot costs NumPy and onnxruntime only.
"""

from __future__ import annotations

_LAZY = {
    "load_pipeline": "leapp.export.loader",
    "PipelineRuntime": "leapp.export.loader",
    "PipelineInputError": "leapp.export.loader",
    "CompiledPipeline": "leapp.pipeline.compiled",
    "SpecError": "leapp.export.spec",
    "PipelineError": "leapp.export.spec",
    "ArtifactError": "leapp.export.spec",
    "UntrustedCodeError": "leapp.export.spec",
}

__all__ = list(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'leapp.pipeline' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
