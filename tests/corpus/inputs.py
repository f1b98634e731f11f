"""Input kinds for the library corpus: a fresh random draw and named edge inputs per kind.

Every kind is a function of a ``numpy.random.Generator``; edges are the values where
real library code changes behaviour (zeros, signs, identity, angle pi, near-singular,
NaN and inf). Shapes are small so that the whole corpus runs in seconds.
"""

from __future__ import annotations

import numpy as np


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _rot(rng):
    w, x, y, z = _unit(rng.normal(size=4))
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _transform(rng):
    t = np.eye(4)
    t[:3, :3] = _rot(rng)
    t[:3, 3] = rng.normal(size=3)
    return t


def _with(value, index, fill):
    out = np.array(value, dtype=float, copy=True)
    out[index] = fill
    return out


def _generic(shape, scale=1.0):
    """A normal draw with the edges every plain float array gets."""
    def fresh(rng):
        return rng.normal(size=shape) * scale

    edges = {
        "zeros": lambda rng: np.zeros(shape),
        "negative": lambda rng: -np.abs(fresh(rng)),
        "tiny": lambda rng: fresh(rng) * 1e-12,
        "nan": lambda rng: _with(fresh(rng), (0,) * len(shape), np.nan),
        "inf": lambda rng: _with(fresh(rng), (0,) * len(shape), np.inf),
    }
    return fresh, edges


def _quat(shape=(4,)):
    fresh, edges = _generic(shape)
    edges = dict(edges)
    edges["identity"] = lambda rng: np.broadcast_to(np.array([1.0, 0, 0, 0]), shape).copy()
    edges["pi"] = lambda rng: np.broadcast_to(np.array([0.0, 1.0, 0, 0]), shape).copy()
    return (lambda rng: _unit(fresh(rng))), edges


def _unit_quat():
    fresh, edges = _quat()
    return fresh, {k: v for k, v in edges.items() if k in ("identity", "pi", "nan")} | {
        "negative_w": lambda rng: _with(fresh(rng), 0, -0.5) / np.linalg.norm(_with(fresh(rng), 0, -0.5)),
    }


def _rotation():
    c = np.cos(1e-9)
    s = np.sin(1e-9)
    return _rot, {
        "identity": lambda rng: np.eye(3),
        "pi": lambda rng: np.diag([1.0, -1.0, -1.0]),
        "near_identity": lambda rng: np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
        "nan": lambda rng: _with(_rot(rng), (0, 0), np.nan),
    }


def _hom():
    def pi(rng):
        t = np.eye(4)
        t[:3, :3] = np.diag([1.0, -1.0, -1.0])
        return t
    return _transform, {
        "identity": lambda rng: np.eye(4),
        "pure_translation": lambda rng: _with(np.eye(4), (slice(0, 3), 3), 1.5),
        "pi": pi,
        "nan": lambda rng: _with(_transform(rng), (0, 3), np.nan),
    }


def _angles(shape):
    def fresh(rng):
        return rng.uniform(-np.pi, np.pi, size=shape)
    return fresh, {
        "zeros": lambda rng: np.zeros(shape),
        "gimbal": lambda rng: _with(np.zeros(shape), (..., 1) if shape else (), np.pi / 2),
        "negative": lambda rng: -np.abs(fresh(rng)),
        "nan": lambda rng: _with(fresh(rng), (0,) * len(shape), np.nan),
    }


def _degrees(shape):
    """Angles in degrees (scikit-kinematics' sequences): a draw in (-180, 180) and a gimbal lock."""
    def fresh(rng):
        return rng.uniform(-180.0, 180.0, size=shape)
    return fresh, {
        "zeros": lambda rng: np.zeros(shape),
        "gimbal": lambda rng: _with(np.zeros(shape), (..., 1), 90.0),
        "negative": lambda rng: -np.abs(fresh(rng)),
        "nan": lambda rng: _with(fresh(rng), (0,) * len(shape), np.nan),
    }


def _positive(shape, low, high):
    def fresh(rng):
        return rng.uniform(low, high, size=shape)
    return fresh, {
        "low": lambda rng: np.full(shape, float(low)),
        "high": lambda rng: np.full(shape, float(high)),
        "nan": lambda rng: _with(fresh(rng), (0,) * len(shape), np.nan),
    }


def _spd():
    def fresh(rng):
        a = rng.normal(size=(3, 3))
        return a @ a.T + 0.5 * np.eye(3)
    return fresh, {
        "identity": lambda rng: np.eye(3),
        "near_singular": lambda rng: np.diag([1.0, 1.0, 1e-12]),
        "nan": lambda rng: _with(fresh(rng), (0, 0), np.nan),
    }


def _signal(n):
    def fresh(rng):
        return rng.normal(size=n)
    return fresh, {
        "zeros": lambda rng: np.zeros(n),
        "constant": lambda rng: np.full(n, 0.25),
        "negative": lambda rng: -np.abs(fresh(rng)),
        "tiny": lambda rng: fresh(rng) * 1e-12,
    }


def _quat_xyzw():
    """A unit quaternion stored (x, y, z, w), robosuite's order: identity is (0, 0, 0, 1)."""
    fresh, edges = _quat()
    return fresh, {
        "identity": lambda rng: np.array([0.0, 0, 0, 1.0]),
        "pi": lambda rng: np.array([1.0, 0, 0, 0]),
        "negative_w": lambda rng: _unit(np.array([0.3, -0.2, 0.1, -0.9])),
        "nan": lambda rng: _with(fresh(rng), 0, np.nan),
    }


KINDS = {
    "vec3": _generic((3,)),
    "small3": _generic((3,), 0.3),
    "vecs3": _generic((5, 3)),
    "vec2": _generic((2,)),
    "vec4": _generic((4,)),
    "vec6": _generic((6,)),
    "vec7": _generic((7,)),
    "vec8": _generic((8,)),
    "angles4": _angles((4,)),
    "positive3": _positive((3,), 0.1, 10.0),
    "spd_diag": _positive((3, 3), 0.1, 10.0),
    "vecs6": _generic((5, 6)),
    "mat3": _generic((3, 3)),
    "quat": _quat(),
    "quats": _quat((5, 4)),
    "unit_quat": _unit_quat(),
    "rot": _rotation(),
    "hom": _hom(),
    "angle": _angles(()),
    "angles": _angles((5,)),
    "euler": _angles((3,)),
    "joints": _angles((3,)),
    "unit_interval": _positive((), 0.0, 1.0),
    "positive": _positive((4,), 0.1, 10.0),
    "lat": _positive((4,), -89.0, 89.0),
    "lon": _positive((4,), -179.0, 179.0),
    "alt": _positive((4,), 0.0, 3000.0),
    "az": _positive((4,), 0.0, 359.0),
    "el": _positive((4,), 1.0, 89.0),
    "srange": _positive((4,), 10.0, 5000.0),
    "spd": _spd(),
    "signal": _signal(400),
    "frames": _generic((4, 32)),
    "pos_frames": _positive((4, 32), 0.01, 4.0),
    "feat": _generic((6, 5)),
    "vecs2": _generic((5, 2)),
    "small_vecs3": _generic((5, 3), 0.3),
    "degs3": _degrees((3,)),
    "series": _generic((8,)),  # a scalar sensor over 8 steps (a Kalman filter's measurements)
    "series2": _generic((2, 8)),  # two such sensors
    "quat_xyzw": _quat_xyzw(),
    # utm: UTM coordinates inside zone 32 (easting in [100 km, 1000 km), northing in [0, 10000 km]) and
    # latitudes/longitudes inside it (a batch of points in one zone, as utm asks of an array)
    "easting": _positive((4,), 200000.0, 800000.0),
    "northing": _positive((4,), 4000000.0, 7000000.0),
    "lat32": _positive((4,), 40.0, 55.0),
    "lon32": _positive((4,), 6.5, 11.5),
}


def fresh(kind, rng):
    return np.asarray(KINDS[kind][0](rng), dtype=np.float64)


def edge_names(kinds):
    names = []
    for kind in kinds:
        for name in KINDS[kind][1]:
            if name not in names:
                names.append(name)
    return names


def edge(kinds, name, rng):
    """Every argument takes its kind's edge ``name`` where it has one, else a fresh draw."""
    out = []
    for kind in kinds:
        maker = KINDS[kind][1].get(name)
        out.append(np.asarray(maker(rng) if maker else fresh(kind, rng), dtype=np.float64))
    return tuple(out)
