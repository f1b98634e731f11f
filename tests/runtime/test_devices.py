"""A graph runs on the device of its input tensors: its constants follow them, once per device.

CI has no GPU; torch's ``meta`` device (shapes and dtypes, no data) takes the
same path as CUDA here: a copy of the graph with its constants on the
inputs' device. ``tests/runtime/test_cuda.py`` runs the values on CUDA where
it exists.
"""

from __future__ import annotations

import numpy as np
import torch

import leapp
from leapp.examples import robot_obs

META = torch.device("meta")


def _node():
    cf = leapp.compile(robot_obs.step)
    inputs = robot_obs.example_inputs(batch=4)
    cf(**inputs)
    return cf, cf._latest().node, inputs


def test_run_torch_moves_the_constants_to_the_inputs_device():
    _, node, inputs = _node()
    assert any(b.numel() > 1 for b in node.graph_module.buffers())  # constants that cannot broadcast
    want = robot_obs.step(**inputs)
    out = node.run_torch(**{k: torch.from_numpy(v).to(META) for k, v in inputs.items()})
    for key, expected in want.items():
        value = out[key]
        assert value.device == META
        assert tuple(value.shape) == expected.shape and value.dtype == torch.from_numpy(expected).dtype
    assert all(b.device.type == "cpu" for b in node.graph_module.buffers())  # the CPU graph is untouched
    assert node.module_on(META) is node.module_on(META)  # one copy per device


def test_a_rewritten_graph_is_copied_to_the_device_again():
    _, node, _ = _node()
    before = node.module_on(META)
    gm = node.graph_module
    out = next(n for n in gm.graph.nodes if n.op == "output")
    value = out.args[0]["upright"]
    with gm.graph.inserting_before(out):
        flipped = gm.graph.call_function(torch.logical_not, (value,))
    out.replace_input_with(value, flipped)
    gm.recompile()
    after = node.module_on(META)
    assert after is not before and "logical_not" in after.code


def test_a_compiled_function_runs_each_graph_on_the_tensors_device():
    cf, node, inputs = _node()
    moved = cf._latest().module_on(META)
    assert moved is node.module_on(META)
    assert all(b.device == META for b in moved.buffers())
    assert cf._latest().module_on(torch.device("cpu")) is node.graph_module
    np.testing.assert_array_equal(cf(**inputs)["upright"], robot_obs.step(**inputs)["upright"])
