"""``p.export`` where it cannot write: an ``ExportError`` naming the path, never a raw OSError."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import ExportError


@pytest.fixture(scope="module")
def pipeline():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with leapp.session("p"):
            for seed in range(2):
                x = annotate.input_tensors("n", {"x": np.random.default_rng(seed).normal(size=3)})
                annotate.output_tensors("n", {"y": x * 2})
        return leapp.compile_graph()


def test_export_through_a_file_is_an_export_error(pipeline, tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(ExportError, match="afile") as info:
        pipeline.export(tmp_path / "afile" / "out")
    assert not isinstance(info.value, OSError)


def test_export_into_a_read_only_folder_is_an_export_error(pipeline, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(folder, 0o555)
    as_root = os.geteuid() == 0
    if as_root:  # root writes anywhere: check as an unprivileged user, as on a robot
        os.seteuid(65534)
    try:
        with pytest.raises(ExportError, match="ro"):
            pipeline.export(folder / "new")
        with pytest.raises(ExportError, match="ro"):
            pipeline.export(folder)
    finally:
        if as_root:
            os.seteuid(0)
    assert os.listdir(folder) == []
