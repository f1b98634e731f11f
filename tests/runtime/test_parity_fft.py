"""Parity of np.fft.fft/ifft/rfft/irfft with NumPy: n=, axis=, norm=, and NumPy 2's dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from parity import check
from records import F16, F32, F64, I32, I64, B, Rec, cases, covered, run

from leapp.runtime.tracing import trace_function

DTYPES = (F32, F64, I32, I64, B, F16)
SHAPES = (((8,),), ((3, 6),), ((2, 3, 5),), ((1,),))

FFTS = {"fft": np.fft.fft, "ifft": np.fft.ifft, "rfft": np.fft.rfft, "irfft": np.fft.irfft}

FFT_RECORDS = [
    *[Rec("numpy.fft." + n, FFTS[n], SHAPES, DTYPES, full=2) for n in ("fft", "ifft", "rfft", "irfft")],
    *[Rec("numpy.fft." + n, (lambda a, f=FFTS[n], norm=norm: f(a, norm=norm)), SHAPES[:2], (F32, F64, F16),
          label=f"norm={norm}") for n in ("fft", "ifft", "rfft", "irfft") for norm in ("ortho", "forward", "backward")],
    *[Rec("numpy.fft." + n, (lambda a, f=FFTS[n], k=k: f(a, n=k)), SHAPES[:2], (F32, F64, I64),
          label=f"n={k}") for n in ("fft", "ifft", "rfft", "irfft") for k in (4, 11)],
    *[Rec("numpy.fft." + n, (lambda a, f=FFTS[n]: f(a, axis=0)), (((6, 3),), ((4, 2, 3),)),
          (F32, F64), label="axis=0") for n in ("fft", "ifft", "rfft", "irfft")],
    Rec("numpy.fft.irfft", lambda a: np.fft.irfft(np.fft.rfft(a), n=a.shape[-1]), (((9,),), ((2, 8),)),
        (F32, F64), label="round trip", also=("numpy.fft.rfft",)),
    Rec("numpy.fft.ifft", lambda a: np.real(np.fft.ifft(np.fft.fft(a, axis=0), axis=0)), (((6, 3),),), (F32, F64),
        label="round trip", also=("numpy.fft.fft", "numpy.real")),
    Rec("numpy.fft.rfft", lambda a: np.abs(np.fft.rfft(a, norm="ortho")) ** 2, (((3, 16),),), (F32, F64),
        label="power spectrum", also=("numpy.absolute",)),
]

RECORDS = FFT_RECORDS
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_fft_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)


def test_float32_stays_single_precision():
    x = np.arange(8, dtype=np.float32)
    traced = trace_function(lambda a: np.fft.rfft(a), (x,), {}, names=["a"], strict=True)
    out = traced.node(a=x)[traced.node.output_names[0]]
    assert out.dtype == np.complex64 == np.fft.rfft(x).dtype


def test_out_keyword_writes_the_transform():
    def fn(a):
        out = np.empty(8, np.complex128)
        np.fft.fft(a, out=out)
        return out * 2

    check(fn, np.arange(8.0))


def _magnitudes(frames):
    return np.abs(np.fft.rfft(frames, 64))


def _first_bins(frames):
    return np.fft.fft(frames, n=3)


def test_a_transform_fed_inf_or_nan_is_nan_throughout_at_every_batch(tmp_path):
    # NumPy's inf/NaN pattern there is pocketfft's; torch's changes with the batch (row 0 alone
    # and row 0 among four came out differently), so the graph makes such a row NaN everywhere
    import leapp
    from leapp.errors import ProblemsError

    finite = np.random.default_rng(0).normal(size=(4, 40))
    frames = finite.copy()
    frames[0, 0], frames[2, 7] = np.inf, np.nan
    cf = leapp.compile(_magnitudes)
    for batch in (1, 4):
        cf(finite[:batch])  # traced on finite frames
        got = cf(frames[:batch])
        assert np.isnan(got[0]).all()
        np.testing.assert_allclose(got[1:], _magnitudes(frames[:batch])[1:])
    assert np.isnan(got[2]).all() and np.isfinite(got[[1, 3]]).all()
    path = tmp_path / "spec.pt"
    cf.export(str(path), "torchscript")
    import torch

    module = torch.jit.load(str(path))
    out = module(torch.from_numpy(frames))
    value = out if isinstance(out, torch.Tensor) else next(iter(out.values()))
    np.testing.assert_array_equal(np.isnan(value.numpy()), np.isnan(got))
    # an example that holds inf is refused, naming the transform and why (not "a leapp bug")
    with pytest.raises(ProblemsError, match=r"numpy\.fft\.rfft at .*holding inf or NaN") as info:
        leapp.compile(_magnitudes)(frames)
    assert "leapp bug" not in str(info.value)
    # what lies beyond n is dropped, as NumPy drops it: that row stays finite
    short = leapp.compile(_first_bins)
    row = finite[:1, :12].copy()
    short(row.copy())
    row[0, 10] = np.inf
    np.testing.assert_allclose(short(row), _first_bins(row))
