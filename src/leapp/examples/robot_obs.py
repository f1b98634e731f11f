"""A legged-robot observation pipeline in plain NumPy: the built-in example of ``leapp compile``.

Written the way a robotics engineer writes it for a policy trained in
simulation: every array has a leading batch dimension (one row per robot), so
the same code serves one robot on hardware and 4096 in simulation.

Quaternions are **wxyz** (scalar first, as in Isaac Lab / MuJoCo). The
projected gravity is the world gravity direction ``(0, 0, -1)`` rotated by the
*inverse* base orientation, i.e. gravity as seen from the robot's base frame.

``step`` is the function ``leapp compile`` uses by default:

    leapp compile --out out              # this file, step, example_inputs()
    python -m leapp.examples.robot_obs example.npz   # write example inputs
"""

from __future__ import annotations

import sys

import numpy as np

NUM_JOINTS = 12
HISTORY = 3  # observations kept in the history buffer, oldest first

# Scales and limits from the training configuration.
ANG_VEL_SCALE = 0.25
JOINT_VEL_SCALE = 0.05
COMMAND_LOW = np.array([-1.0, -0.5, -1.0], dtype=np.float32)  # vx, vy, yaw rate
COMMAND_HIGH = np.array([1.5, 0.5, 1.0], dtype=np.float32)
ACTION_SCALE = 0.25
ACTION_CLIP = 100.0
OBS_CLIP = 5.0

GRAVITY_DIR = np.array([0.0, 0.0, -1.0], dtype=np.float32)
DEFAULT_JOINT_POS = np.tile(np.array([0.0, 0.8, -1.5], dtype=np.float32), 4)  # hip, thigh, calf x 4 legs
JOINT_LOWER = np.tile(np.array([-0.8, -1.0, -2.7], dtype=np.float32), 4)
JOINT_UPPER = np.tile(np.array([0.8, 3.5, -0.9], dtype=np.float32), 4)

OBS_DIM = 3 + 3 + 3 + NUM_JOINTS * 3  # ang vel, gravity, command, joint pos, joint vel, last action

# Running statistics saved by the trainer's observation normaliser.
_stats = np.random.default_rng(1234)
OBS_MEAN = (_stats.normal(0.0, 0.1, OBS_DIM)).astype(np.float32)
OBS_VAR = (_stats.uniform(0.5, 2.0, OBS_DIM)).astype(np.float32)
OBS_EPS = 1e-8


def quat_rotate_inverse(q, v):
    """Rotate vectors ``v`` (N, 3) or (3,) by the inverse of unit quaternions ``q`` (N, 4), wxyz."""
    w = q[:, 0:1]
    xyz = q[:, 1:4]
    a = v * (2.0 * w**2 - 1.0)
    b = np.cross(xyz, v) * w * 2.0
    c = xyz * np.sum(xyz * v, axis=-1, keepdims=True) * 2.0
    return a - b + c


def normalize(obs):
    """Whiten with the trainer's running mean/variance, then clip outliers."""
    obs = (obs - OBS_MEAN) / np.sqrt(OBS_VAR + OBS_EPS)
    return np.clip(obs, -OBS_CLIP, OBS_CLIP)


def compute_observation(base_quat, base_ang_vel, joint_pos, joint_vel, commands, last_action,
                        obs_history):
    """One normalised observation per robot, pushed into the history buffer."""
    projected_gravity = quat_rotate_inverse(base_quat, GRAVITY_DIR)
    obs = np.concatenate([
        base_ang_vel * ANG_VEL_SCALE,
        projected_gravity,
        np.clip(commands, COMMAND_LOW, COMMAND_HIGH),
        joint_pos - DEFAULT_JOINT_POS,
        joint_vel * JOINT_VEL_SCALE,
        last_action,
    ], axis=-1)
    obs = normalize(obs)
    # Drop the oldest entry, append the newest: (N, HISTORY, OBS_DIM).
    history = np.concatenate([obs_history[:, 1:], obs[:, None, :]], axis=1)
    return obs, history


def process_action(raw_action):
    """Policy output -> joint position targets: clip, scale, offset, then respect joint limits."""
    action = np.clip(raw_action, -ACTION_CLIP, ACTION_CLIP)
    targets = DEFAULT_JOINT_POS + ACTION_SCALE * action
    return np.clip(targets, JOINT_LOWER, JOINT_UPPER)


def step(base_quat, base_ang_vel, joint_pos, joint_vel, commands, last_action, obs_history,
         raw_action):
    """Everything the robot computes around one policy call, as one function."""
    obs, history = compute_observation(base_quat, base_ang_vel, joint_pos, joint_vel, commands,
                                       last_action, obs_history)
    policy_input = history.reshape(-1, HISTORY * OBS_DIM)
    return {
        "policy_input": policy_input,
        "history": history,
        "joint_targets": process_action(raw_action),
        "upright": projected_gravity_ok(history),
    }


def projected_gravity_ok(history):
    """A safety flag: the newest normalised gravity z still points down (robot not fallen)."""
    gz = history[:, -1, 5] * np.sqrt(OBS_VAR[5] + OBS_EPS) + OBS_MEAN[5]
    return gz < -0.5


def example_inputs(batch=2, seed=0):
    """Inputs of ``step`` for ``batch`` robots (float32, as they come from the robot's drivers)."""
    rng = np.random.default_rng(seed)
    quat = rng.normal(0.0, 0.15, (batch, 4)).astype(np.float32)
    quat[:, 0] += 1.0  # near upright
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)

    def f32(*shape, scale=1.0):
        return (rng.normal(0.0, scale, shape)).astype(np.float32)

    return {
        "base_quat": quat,
        "base_ang_vel": f32(batch, 3, scale=0.5),
        "joint_pos": DEFAULT_JOINT_POS + f32(batch, NUM_JOINTS, scale=0.2),
        "joint_vel": f32(batch, NUM_JOINTS, scale=2.0),
        "commands": f32(batch, 3, scale=1.0),
        "last_action": f32(batch, NUM_JOINTS, scale=0.5),
        "obs_history": f32(batch, HISTORY, OBS_DIM),
        "raw_action": f32(batch, NUM_JOINTS, scale=1.0),
    }


def write_npz(path, batch=2, seed=0):
    """Write ``example_inputs`` to ``path`` (an ``.npz`` for ``leapp compile --inputs``)."""
    np.savez(path, **example_inputs(batch, seed))
    return path


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "robot_obs_inputs.npz"
    print(f"wrote {write_npz(out)}")
