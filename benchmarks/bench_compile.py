"""Compile and run time of the robot example, as ratios measured in one run.

    .venv/bin/python benchmarks/bench_compile.py

compile = static pass + trace + graph passes, against one eager NumPy call;
run = the compiled FX graph and the exported ONNX model in onnxruntime, against
plain NumPy, for one observation and for a batch of 4096.
"""

from __future__ import annotations

import inspect
import os
import tempfile
import time

from leapp.ast_pass import analyze_source
from leapp.examples import robot_obs
from leapp.export import export_node
from leapp.runtime.tracing import trace_function

NAMES = list(inspect.signature(robot_obs.step).parameters)


def best(fn, repeat):
    """Best-of-``repeat`` seconds per call (the least disturbed measurement)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def compile_once(inputs):
    with open(robot_obs.__file__, encoding="utf-8") as f:
        analyze_source(f.read(), robot_obs.__file__, include_functions=("step",))
    traced = trace_function(robot_obs.step, tuple(inputs[n] for n in NAMES), {}, names=NAMES, strict=True)
    traced.node.optimize()
    return traced.node


def main():
    rows = []
    one = robot_obs.example_inputs(batch=1)
    eager = best(lambda: robot_obs.step(**one), 200)
    rows.append(("compile (lint + trace + passes) / one eager call", best(lambda: compile_once(one), 5) / eager))

    import onnxruntime as ort

    folder = tempfile.mkdtemp()
    node = compile_once(robot_obs.example_inputs(batch=2))
    path = os.path.join(folder, "step.onnx")
    export_node(node, path, "onnx", dynamic_batch=True, example_inputs=robot_obs.example_inputs(batch=2))
    options = ort.SessionOptions()
    # ORT's idle worker threads spin by default and would slow whatever is timed next.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for batch, repeat in ((1, 300), (4096, 30)):
        inputs = robot_obs.example_inputs(batch=batch)
        numpy_t = best(lambda inputs=inputs: robot_obs.step(**inputs), repeat)
        fx_t = best(lambda inputs=inputs: node(**inputs), repeat)
        ort_t = best(lambda inputs=inputs: session.run(None, inputs), repeat)
        rows.append((f"FX graph (CompiledNode call) / NumPy, batch {batch}", fx_t / numpy_t))
        rows.append((f"onnxruntime / NumPy, batch {batch}", ort_t / numpy_t))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  ratio")
    for name, ratio in rows:
        print(f"{name:<{width}}  {ratio:8.2f}")
    print(f"(one eager NumPy call, batch 1: {eager * 1e6:.0f} us)")


if __name__ == "__main__":
    main()
