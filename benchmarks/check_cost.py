"""What the trust guards cost a trace, as ratios measured in one run.

    .venv/bin/python benchmarks/check_cost.py        # taskset -c 0 for one core

For the robot example (``leapp.examples.robot_obs.step``) and the seed
example's preprocessing (as a ``leapp.compile`` function), each round makes
the first call of a fresh ``leapp.compile`` (trace, checks, the graph's first
run, which builds the call plan every later call uses) three ways: everything on (the default), the
differential check off (``check=0``), and also the escape watch off. The
check's cost and the escape watch's cost are reported as fractions of the
trace without either (goal, issue 17: at most 0.5 together on the robot
example). Best of the rounds of this process's CPU time, interleaved so a busy
machine slows all alike (its other processes' time is not counted).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import leapp
from leapp.examples import robot_obs, seed
from leapp.runtime import tracing


def seed_preprocess(state, velocity):
    state_norm = np.clip((state - seed.STATE_MEAN) / seed.STATE_STD, -5.0, 5.0)
    return np.concatenate([state_norm, velocity])


def timed(fn, inputs, check, watch):
    tracing.WATCH_ESCAPES = watch
    try:
        cf = leapp.compile(fn, check=check)
        t = time.process_time()
        cf(**inputs)  # the first call: trace, checks, and the graph's first run (its call plan)
        return time.process_time() - t
    finally:
        tracing.WATCH_ESCAPES = True


def measure(fn, inputs, rounds=15):
    best = {"default": float("inf"), "check off": float("inf"), "both off": float("inf")}
    for _ in range(rounds):
        for name, check, watch in (("default", 3, True), ("check off", 0, True), ("both off", 0, False)):
            best[name] = min(best[name], timed(fn, inputs, check, watch))
    base = best["both off"]
    return best, (best["default"] - best["check off"]) / base, (best["check off"] - base) / base


def main():
    frame = next(seed.frames(1))
    cases = {
        "robot example": (robot_obs.step, robot_obs.example_inputs(batch=1)),
        "seed example": (seed_preprocess, {"state": frame["observation.state"],
                                           "velocity": frame["observation.velocity"]}),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, (fn, inputs) in cases.items():
            best, check, watch = measure(fn, inputs)
            print(f"{label}: trace (both off) {best['both off'] * 1e3:.2f} ms, default "
                  f"{best['default'] * 1e3:.2f} ms; differential check {check:.2f}x the trace, "
                  f"escape watch {watch:.2f}x, together {check + watch:.2f}x (goal <= 0.5)")


if __name__ == "__main__":
    main()
