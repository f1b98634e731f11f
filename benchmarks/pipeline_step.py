"""Per-step cost of a loaded pipeline: the closed loop of tests/pipelines/loop.py, per format.

    PYTHONPATH=src python benchmarks/pipeline_step.py [--steps 2000]

Prints, per format, the median time of ``rt.step`` and of the same loop in
plain NumPy, and the largest difference from NumPy over the steps.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))


def main():
    from pipelines import loop

    import leapp

    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    p = loop.trace(loop.observations(4))
    obs = loop.observations(args.steps, seed=1)
    t = time.perf_counter()
    want = loop.reference(obs)
    numpy_us = (time.perf_counter() - t) / args.steps * 1e6
    print(f"numpy loop: {numpy_us:.1f} us/step")
    for format in ("onnx", "torchscript", "pt2"):
        with tempfile.TemporaryDirectory() as folder:
            p.export(folder, format)
            rt = leapp.load_pipeline(folder, trust_code=format != "onnx")
            times, err = [], 0.0
            for o, w in zip(obs, want, strict=True):
                t = time.perf_counter()
                got = rt.step({"preprocess/obs": o})["policy/action"]
                times.append(time.perf_counter() - t)
                err = max(err, float(np.max(np.abs(got - w))))
            print(f"{format}: median {np.median(times) * 1e6:.1f} us/step over {args.steps} steps, "
                  f"largest difference from NumPy {err:.2e}")


if __name__ == "__main__":
    main()
