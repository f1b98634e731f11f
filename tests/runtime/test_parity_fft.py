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
