"""The robot observation example lives in the package (``leapp.examples.robot_obs``), so
``leapp compile`` finds it from an installed package; this file re-exports it for readers of
the repository. ``python examples/robot_obs.py inputs.npz`` writes example inputs.
"""

from leapp.examples.robot_obs import *  # noqa: F403
from leapp.examples.robot_obs import example_inputs, step, write_npz  # noqa: F401

if __name__ == "__main__":
    import sys

    print(f"wrote {write_npz(sys.argv[1] if len(sys.argv) > 1 else 'robot_obs_inputs.npz')}")
