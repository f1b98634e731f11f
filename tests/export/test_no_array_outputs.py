"""A function whose every result is a Python value (spatialmath.base.isrot: ``isinstance(R, np.ndarray)
and R.shape == (3, 3)``) has a graph with no outputs. Its ONNX file was written and onnxruntime failed
to load it, an internal error with no line; now the export is refused up front, naming the function."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import ExportError
from leapp.export import export_node


@leapp.compile
def is_rotation_shaped(m):
    return isinstance(m, np.ndarray) and m.shape == (3, 3)


def test_exporting_a_function_with_only_python_results_is_refused_naming_it(tmp_path):
    assert is_rotation_shaped(np.eye(3)) is True
    line = is_rotation_shaped.fn.__code__.co_firstlineno
    for fmt in ("onnx", "torchscript"):
        path = tmp_path / f"r.{'onnx' if fmt == 'onnx' else 'pt'}"
        with pytest.raises(ExportError, match=f"test_no_array_outputs.py:{line}.*no array outputs"):
            is_rotation_shaped.export(path, fmt)
        assert not path.exists()
    node = list(is_rotation_shaped._graphs.values())[-1].node
    with pytest.raises(ExportError, match="no array outputs"):
        export_node(node, tmp_path / "n.onnx")
    assert not (tmp_path / "n.onnx").exists()
