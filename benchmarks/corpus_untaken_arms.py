"""The arms the library corpus never takes: ``python benchmarks/corpus_untaken_arms.py``.

``benchmarks/corpus.py`` prints, per converted library function, the arm of each
converted branch that every fresh and edge input took. For some functions every
input takes one arm of a branch (rowan's ``exp`` never gets a batch mixing zero
and non-zero vector parts; no input of ``vector_vector_rotation`` is
antiparallel). Here each such function is compiled on a fresh input, as the
corpus does, and then called on inputs made to take the other arm; the line
printed per input names the arm it took (run as NumPy) and whether the graph
equals NumPy (rtol 1e-6, atol 1e-9, as tests/corpus/runner.py) with the one graph traced
on the example (no retrace).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

import ahrs.common.orientation  # noqa: E402
import lee  # noqa: E402
import pytransform3d.rotations as pr  # noqa: E402
import pytransform3d.transformations as pt  # noqa: E402
import rowan  # noqa: E402
import rowan.geometry  # noqa: E402
import transforms3d.euler  # noqa: E402
import transforms3d.quaternions  # noqa: E402
import transforms3d.taitbryan  # noqa: E402

import leapp  # noqa: E402

RNG = np.random.default_rng(5)


def rot(axis, angle):
    axis = np.asarray(axis, float)
    return pr.matrix_from_axis_angle(np.r_[axis / np.linalg.norm(axis), angle])


def unit_quat():
    q = RNG.normal(size=4)
    return q / np.linalg.norm(q)


# the corpus cases' calls (tests/corpus/cases.py), as functions with source
def qlog(q):
    return transforms3d.quaternions.qlog(q)


def qpow(q):
    return transforms3d.quaternions.qpow(q, 2.5)


def euler_quat2euler(q):
    return transforms3d.euler.quat2euler(q)


def taitbryan_quat2euler(q):
    return transforms3d.taitbryan.quat2euler(q)


def taitbryan_mat2euler(m):
    return transforms3d.taitbryan.mat2euler(m)


def rowan_exp(q):
    return rowan.exp(q)


def rowan_expb(q):
    return rowan.expb(q, 2.0)


def rowan_exp10(q):
    return rowan.exp10(q)


def riemann_exp_map(a, b):
    return rowan.geometry.riemann_exp_map(a, b)


def vector_vector_rotation(a, b):
    return rowan.vector_vector_rotation(a, b)


def mrp_from_quaternion(q):
    return pr.mrp_from_quaternion(q)


def rotor_apply(r, v):
    return pr.rotor_apply(r, v)


def matrix_from_rotor(r):
    return pr.matrix_from_rotor(r)


def concatenate_rotors(a, b):
    return pr.concatenate_rotors(a, b)


def quaternion_slerp(a, b, t):
    return pr.quaternion_slerp(a, b, t)


def transform_from_dual_quaternion(d):
    return pt.transform_from_dual_quaternion(d)


def sarabandi(r):
    return ahrs.common.orientation.sarabandi(r)


def so_n_log(r):
    return lee.SO_n(r, validate=False).log_map().vee


def se3_log(r, t):
    return lee.SE3(lee.SO_n(r, validate=False), t).Log()


MIXED = np.array([[1.0, 0, 0, 0], [0.5, 0.1, 0.2, 0.3], [2.0, 0, 0, 0]])  # zero and non-zero vector parts
VECS = RNG.normal(size=(4, 3))
ANTI = VECS.copy()
ANTI[1], ANTI[3] = -2.0 * VECS[1], -VECS[3]  # rows 1 and 3 antiparallel to VECS'

# (function, the example it is compiled on, [inputs made to take the arm the corpus never takes])
CASES = [
    (qlog, (unit_quat(),), [(np.zeros(4),)]),
    (qpow, (unit_quat(),), [(np.zeros(4),)]),
    (euler_quat2euler, (unit_quat(),), [(np.zeros(4),)]),
    (taitbryan_quat2euler, (unit_quat(),), [(np.zeros(4),)]),
    (taitbryan_mat2euler, (rot([1, 2, 3], 0.7),), [(rot([0, 1, 0], np.pi / 2),), (rot([0, 1, 0], -np.pi / 2),)]),
    (rowan_exp, (RNG.normal(size=(3, 4)),), [(MIXED,)]),
    (rowan_expb, (RNG.normal(size=(3, 4)),), [(MIXED,)]),
    (rowan_exp10, (RNG.normal(size=(3, 4)),), [(MIXED,)]),
    (riemann_exp_map, (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))), [(MIXED, MIXED * [0, 1, 1, 1])]),
    (vector_vector_rotation, (VECS, RNG.normal(size=(4, 3))), [(VECS, ANTI), (VECS, -VECS)]),
    (mrp_from_quaternion, (unit_quat(),), [(np.zeros(4),)]),
    (rotor_apply, (unit_quat(), RNG.normal(size=3)), [(np.zeros(4), np.ones(3))]),
    (matrix_from_rotor, (unit_quat(),), [(np.zeros(4),)]),
    (concatenate_rotors, (unit_quat(), unit_quat()), [(np.zeros(4), np.zeros(4))]),
    (quaternion_slerp, (unit_quat(), unit_quat(), np.float64(0.3)), [(np.zeros(4), unit_quat(), np.float64(0.3))]),
    (transform_from_dual_quaternion, (np.r_[unit_quat(), RNG.normal(size=4)],), [(np.zeros(8),)]),
    (sarabandi, (rot([1, 2, 3], 0.7),), [(np.diag([-1.0, -1, 1]),), (rot([0.1, 0.2, 1], 2.5),)]),
    (so_n_log, (rot([1, 2, 3], 0.7),), [(rot([-1, 0.2, 0.1], np.pi - 1e-4),), (rot([0.3, -1, 0.2], np.pi - 5e-4),)]),
    (se3_log, (rot([1, 2, 3], 0.7), RNG.normal(size=3)), [(rot([-1, 0.2, 0.1], np.pi - 1e-4), np.array([1.0, 2, 3]))]),
]


def copy(args):
    return [np.array(a, copy=True) for a in args]


def main():
    bad = 0
    for fn, example, targets in CASES:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            cf = leapp.compile(fn)
            cf(*copy(example))
            conversions = cf._probe.library
            for args in targets:
                want, got = fn(*copy(args)), cf(*copy(args))
                w, g = np.asarray(want), np.asarray(got)
                ok = w.shape == g.shape and w.dtype == g.dtype and \
                    np.allclose(g, w, rtol=1e-6, atol=1e-9, equal_nan=True)
                ok = ok and len(cf.graphs) == 1  # the graph traced on the example, not a retrace
                bad += not ok
                print(f"{fn.__name__}: {', '.join(conversions.taken(fn, copy(args)))}: "
                      f"{'exact' if ok else 'DIFFERS from NumPy'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
