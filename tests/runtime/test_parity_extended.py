"""Parity of the extended table (statistics, signal, layout, selection) with NumPy.

One record per case: a function of the traced inputs and its sample inputs;
``check`` traces it once and compares the graph with NumPy on the sample and
on fresh random inputs (values and dtypes).
"""

from __future__ import annotations

import numpy as np
import pytest
from parity import check

rng = np.random.default_rng(1)
X = rng.standard_normal((4, 5))
X32 = X.astype(np.float32)
XI = rng.integers(-9, 9, (4, 5))
X16 = X.astype(np.float16)


def _nan(a, cut=0.8):
    return np.where(a > cut, np.nan, a)


def _pal(a):
    b = a.copy()
    np.put_along_axis(b, np.argsort(a, axis=1)[:, :2], -1.0, axis=1)
    return b


def _pal_none(a):
    b = a.copy()
    np.put_along_axis(b, np.array([0, -1, 3]), a[0, :3] * 2, axis=None)
    return b


def _copyto(a):
    b = np.zeros_like(a)
    np.copyto(b, a[0], where=a > 0)
    return b


def _copyto_all(a):
    b = np.ones_like(a, dtype=np.float32)
    np.copyto(b, a, casting="unsafe")
    return b


def _putmask(a):
    b = a.copy()
    np.putmask(b, a > 0, [10, 20, 30])
    return b


def _filld(a):
    b = a.copy()
    np.fill_diagonal(b, a[0, :2])
    return b


def _filld_wrap(a):
    b = np.concatenate([a, a]).copy()
    np.fill_diagonal(b, 0, wrap=True)
    return b


CASES = {
    # statistics
    "median": (lambda a: np.median(a), X),
    "median_axis_keepdims_int": (lambda a: np.median(a, axis=1, keepdims=True), XI),
    "median_f32_axis0": (lambda a: np.median(a, axis=0), X32),
    "median_odd_tuple_axis": (lambda a: np.median(a[:3], axis=(0, 1)), X),
    "median_f16": (lambda a: np.median(a, axis=1), X16),
    "median_nan": (lambda a: np.median(_nan(a), axis=1), X),
    "percentile_scalar_f32": (lambda a: np.percentile(a, 30), X32),
    "percentile_list_axis": (lambda a: np.percentile(a, [0, 10.0, 50, 99, 100], axis=1), X32),
    "percentile_keepdims": (lambda a: np.percentile(a, [25, 75], axis=0, keepdims=True), X),
    "percentile_nan": (lambda a: np.percentile(_nan(a), 40, axis=0), X),
    "quantile_f32_q": (lambda a: np.quantile(a, np.array([0.25, 0.5], dtype=np.float32)), X32),
    "quantile_int": (lambda a: np.quantile(a, 0.3, axis=0), XI),
    "quantile_int_q1": (lambda a: np.quantile(a, 1), XI),
    "quantile_int8_wrap": (lambda a: np.quantile((a * 15).astype(np.int8), 0.5), XI),
    "average": (lambda a: np.average(a), XI),
    "average_weights_axis": (lambda a: np.average(a, axis=1, weights=np.arange(5.0)), X32),
    "average_weights_full": (lambda a: np.average(a, weights=np.abs(a) + 1), XI),
    "average_returned": (lambda a: np.average(a, axis=0, returned=True), XI),
    "average_weights_returned": (lambda a: np.average(a, axis=0, weights=a[:, 0] ** 2 + 1, returned=True), X),
    "nansum": (lambda a: np.nansum(_nan(a), axis=1), X32),
    "nansum_int": (lambda a: np.nansum(a), XI),
    "nanprod": (lambda a: np.nanprod(_nan(a), axis=0), X),
    "nanmean": (lambda a: np.nanmean(_nan(a, 0.0), axis=0), X),
    "nanmean_int": (lambda a: np.nanmean(a, axis=1), XI),
    "nanmax": (lambda a: np.nanmax(_nan(a, 0.0), axis=1), X),
    "nanmin_all": (lambda a: np.nanmin(_nan(a)), X32),
    "nanmin_int": (lambda a: np.nanmin(a, axis=0, keepdims=True), XI),
    "nancumsum": (lambda a: np.nancumsum(_nan(a), axis=1), X),
    "nancumprod": (lambda a: np.nancumprod(_nan(a)), X32),
    # signal
    "interp": (lambda a: np.interp(a, [-1.0, 0.0, 0.5, 2.0], [3.0, 1.0, 1.0, -2.0]), X32),
    "interp_left_right": (lambda a: np.interp(a, [-1, 0, 1], [5, 6, 7], left=-9.0, right=a[0, 0]), X),
    "interp_traced_xp": (lambda a: np.interp([0.1, 0.5, 2.0], np.sort(a[0]), a[1]), X),
    "interp_nan_x": (lambda a: np.interp(_nan(a), [-1.0, 0.0, 1.0], [1.0, 1.0, 1.0]), X),
    "unwrap": (lambda a: np.unwrap(np.cumsum(a, axis=1) * 3), X),
    "unwrap_axis0_f32": (lambda a: np.unwrap(np.cumsum(a, axis=0) * 4, axis=0, discont=4.0), X32),
    "unwrap_period": (lambda a: np.unwrap(np.cumsum(a, axis=1) * 2, period=3.0), X),
    "diff": (lambda a: np.diff(a), X32),
    "diff_n_axis_prepend_append": (lambda a: np.diff(a, n=2, axis=0, prepend=0, append=a[:1]), XI),
    "diff_bool": (lambda a: np.diff(a > 0), X),
    "diff_uint8_wraps": (lambda a: np.diff(a.astype(np.uint8), axis=1), XI),
    "ediff1d": (lambda a: np.ediff1d(a, to_begin=[-1, -2], to_end=99), XI),
    "pad_constant": (lambda a: np.pad(a, ((1, 2), (0, 3)), constant_values=7.5), XI),
    "pad_constant_pairs": (lambda a: np.pad(a, 1, constant_values=((1, 2), (3, 4))), X32),
    "pad_constant_traced": (lambda a: np.pad(a, 2, constant_values=a.max()), X),
    "pad_edge": (lambda a: np.pad(a, 2, mode="edge"), X32),
    "pad_reflect": (lambda a: np.pad(a, (3, 1), mode="reflect"), X32),
    "pad_reflect_long": (lambda a: np.pad(a[0], (9, 11), mode="reflect"), X),
    "pad_wrap": (lambda a: np.pad(a, ((5, 1), (2, 7)), mode="wrap"), X32),
    "pad_symmetric": (lambda a: np.pad(a, 3, mode="symmetric"), XI),
    # layout
    "fliplr_flipud_rot90": (lambda a: (np.fliplr(a), np.flipud(a), np.rot90(a), np.rot90(a, 3), np.rot90(a, -1, (1, 0))), X),
    "flip_variants": (lambda a: (np.flip(a), np.flip(a, 0), np.flip(a, (0, 1))), XI),
    "kron": (lambda a: np.kron(a[:2, :2], a[2:, 3:]), XI),
    "kron_mixed_ndim": (lambda a: np.kron(a[0], a[:2, :2].astype(np.float32)), XI),
    "diag_diagonal": (lambda a: (np.diag(a), np.diag(a[0], -1), np.diagonal(a, 1), a.diagonal(-2)), X),
    "diagflat": (lambda a: (np.diagflat(a), np.diagflat(a[0], 2), np.diagflat(a[:2, :2], k=-1), np.diagflat(a[0, 0])), X),
    "diagflat_int": (lambda a: np.diagflat(a[1:], 1), XI),
    "meshgrid_xy": (lambda a: np.meshgrid(a[0], a[1, :3]), X),
    "meshgrid_ij_sparse": (lambda a: np.meshgrid(a[0], a[1, :3], a[2, :2], indexing="ij", sparse=True), X),
    "dstack_splits": (lambda a: (np.dstack([a, a]), np.hsplit(a, [1, 3]), np.vsplit(a, 2), np.append(a, 1)), XI),
    "rollaxis": (lambda a: (np.rollaxis(a, 1), np.rollaxis(a[None], 2, 1)), XI),
    "broadcast_arrays": (lambda a: np.broadcast_arrays(a, a[0]), XI),
    "tile_repeat": (lambda a: (np.tile(a, 2), np.tile(a[0], (2, 1, 2)), np.repeat(a, 2), np.repeat(a, [1, 0, 2, 1], axis=0)), XI),
    "ravel_atleast": (lambda a: (np.ravel(a), np.atleast_1d(a[0, 0]), np.atleast_2d(a[0]), np.atleast_3d(a)), X),
    "broadcast_to": (lambda a: np.broadcast_to(a[0], (3, 5)), X),
    # selection
    "searchsorted": (lambda a: np.searchsorted(np.sort(a[0]), a, side="right"), X),
    "searchsorted_sorter": (lambda a: np.searchsorted(a[0], a[1:3], sorter=np.argsort(a[0])), XI),
    "searchsorted_scalar": (lambda a: a[0].searchsorted(0.0), X),
    # NaN sorts last, after +inf: in the sorted array and among the values searched for
    "searchsorted_nan": (lambda a: (np.searchsorted(np.sort(_nan(a[0], 0.3)), _nan(a, 1.0)),
                                    np.searchsorted(np.sort(_nan(a[0], 0.3)), np.where(a > 1.5, np.inf, a), side="right"),
                                    np.searchsorted(np.array([-1.0, np.inf, np.nan, np.nan]), _nan(a, 1.0), side="right")), X),
    "digitize": (lambda a: (np.digitize(a, [-1, 0, 1]), np.digitize(a, [1, 0, -1], right=True)), X),
    # values on the edges, bins increasing and decreasing, both sides (decreasing used to swap them)
    "digitize_edges": (lambda a: tuple(np.digitize(a, b, right=r) for b in ([-2, 0, 1, 3], [3, 1, 0, -2])
                                       for r in (False, True)), XI),
    "isin": (lambda a: (np.isin(a, [1, 2, -3]), np.isin(a, a[0], invert=True)), XI),
    "argpartition": (lambda a: np.argpartition(a, 2, axis=1), X),
    "take_variants": (lambda a: (np.take(a, [0, -1, 3]), np.take(a, [[1, 0]], axis=1), np.take_along_axis(a, np.argsort(a, 0), 0)), X),
    "put_along_axis": (_pal, X),
    "put_along_axis_none": (_pal_none, XI),
    "copyto_where": (_copyto, X),
    "copyto_cast": (_copyto_all, XI),
    "putmask": (_putmask, XI),
    "fill_diagonal": (_filld, X),
    "fill_diagonal_wrap": (_filld_wrap, XI),
    "count_nonzero": (lambda a: (np.count_nonzero(a), np.count_nonzero(a, axis=1)), XI),
    # elementwise and math
    "fix_angle": (lambda a: (np.fix(a), np.fix(a // 2), np.angle(a), np.angle(a, deg=True)), X),
    "angle_int": (lambda a: np.angle(a), XI),
    "inf_tests": (lambda a: (np.isneginf(a / 0.0), np.isposinf(a / 0.0), np.isreal(a), np.iscomplex(a)), X),
    # complex values made in the graph: the parts, the angle and the properties (.real / .imag)
    "complex_parts": (lambda a: (np.angle(a + 1j * a[::-1]), np.angle(a - 1j * a, deg=True),
                                 (a + 2j * a).real, (a + 2j * a).imag, np.real(a * 1j), np.imag(a * 1j),
                                 a.imag, a.real * 2, np.abs(a + 1j)), X),
    "real_imag_tri": (lambda a: (np.real(a), np.imag(a), np.tri(3, 4, 1), np.tri(2, dtype=int)), XI),
    "ufuncs_listed": (lambda a: (np.deg2rad(a), np.rad2deg(a), np.hypot(a, 2), np.arctan2(a, a[0]), np.log1p(np.abs(a)),
                                 np.expm1(a), np.log2(np.abs(a) + 1), np.log10(np.abs(a) + 1), np.exp2(a), np.cbrt(a),
                                 np.logaddexp(a, 1.0), np.heaviside(a, 0.5), np.sinc(a), np.sign(a),
                                 np.copysign(2.0, a), np.reciprocal(a)), X),
    "ufuncs_int": (lambda a: (np.fmod(a, 3), np.fmod(a, a[0]), np.fmax(a, 0), np.fmin(a, a[1]), np.reciprocal(a),
                              np.hypot(a, a), np.arctan2(a, 3), np.sign(a), np.ptp(a, axis=0)), XI),
    "fmax_nan": (lambda a: (np.fmax(_nan(a), a[0]), np.fmin(_nan(a), 0.5)), X),
    "prod_cumprod": (lambda a: (np.prod(a, axis=1), np.cumprod(a.astype(np.int32), axis=0), np.ptp(a)), XI),
    "isclose_nan_to_num": (lambda a: (np.isclose(a, a * 1.0000001), np.nan_to_num(_nan(a) / 0.0, nan=-1.0, posinf=9.0)), X),
    "vdot": (lambda a: (np.vdot(a, a), np.vdot(a[0], a[1].astype(np.float32))), XI),
    "outer_cross": (lambda a: (np.outer(a[0], a[1]), np.cross(a[:, :3], a[1:2, :3])), XI),
    # scalar types on arrays in code leapp did not rewrite (0-d values: test_scalar_types.py)
    "scalar_casts": (lambda a: (np.float32(a) * a, np.int64(a), np.float16(a[0]), np.bool_(a)), X),
    "scalar_cast_int32": (lambda a: np.int32(a * 0.5) + a, XI),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    fn, arr = CASES[name]
    check(fn, arr)


COVERED = {
    "numpy." + n for n in (
        "median percentile quantile average nansum nanprod nanmean nanmax nanmin nancumsum nancumprod interp "
        "unwrap diff ediff1d pad fliplr flipud rot90 flip kron diag diagflat diagonal meshgrid dstack hsplit vsplit "
        "append rollaxis broadcast_arrays tile repeat ravel atleast_1d atleast_2d atleast_3d broadcast_to "
        "searchsorted digitize isin argpartition take take_along_axis put_along_axis copyto putmask fill_diagonal "
        "count_nonzero fix angle isneginf isposinf isreal iscomplex real imag tri deg2rad rad2deg hypot arctan2 "
        "log1p expm1 log2 log10 exp2 cbrt logaddexp heaviside sinc sign copysign reciprocal fmod fmax fmin ptp "
        "prod cumprod isclose nan_to_num outer cross vdot float32 int64 float16 bool int32"
    ).split()
} | {"ndarray.diagonal", "ndarray.searchsorted", "ndarray.real", "ndarray.imag"}
