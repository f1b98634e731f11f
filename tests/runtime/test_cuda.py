"""The compiled graph on CUDA tensors: the same values as NumPy. Runs only where CUDA is present."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leapp
from leapp.examples import robot_obs

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


def test_robot_example_on_cuda_tensors_matches_numpy():
    cf = leapp.compile(robot_obs.step)
    inputs = robot_obs.example_inputs(batch=64, seed=3)
    want = robot_obs.step(**inputs)
    got = cf(**{k: torch.from_numpy(v).cuda() for k, v in inputs.items()})
    for key, expected in want.items():
        assert got[key].device.type == "cuda"
        value = got[key].cpu().numpy()
        assert value.dtype == expected.dtype and value.shape == expected.shape
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(value, expected)


def test_a_graph_traced_on_numpy_runs_on_cuda():
    cf = leapp.compile(robot_obs.step)
    inputs = robot_obs.example_inputs(batch=8)
    cf(**inputs)  # traced on NumPy arrays
    node = cf._latest().node
    out = node.run_torch(**{k: torch.from_numpy(v).cuda() for k, v in inputs.items()})
    want = robot_obs.step(**inputs)
    np.testing.assert_allclose(out["history"].cpu().numpy(), want["history"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["upright"].cpu().numpy(), want["upright"])
