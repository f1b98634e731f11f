"""Parity of the shape and layout entries against NumPy: every axis form, 0-d and empty inputs."""

from __future__ import annotations

import numpy as np
import pytest
from records import ALL, F32, F64, I32, I64, U8, B, Const, Rec, cases, covered, run

S2 = (((3, 4),), ((0, 4),))
S3 = (((2, 3, 4),), ((2, 0, 4),))
ANY = (((3, 4),), ((),), ((0,),), ((5,),), ((2, 3, 4),))


def _r(name, fn, shapes, label="", dtypes=ALL, full=1):
    return Rec(name, fn, shapes, dtypes, label=label, full=full)


SHAPE_RECORDS = [
    _r("numpy.reshape", lambda a: np.reshape(a, (4, 3)), S2[:1], "(4,3)"),
    _r("numpy.reshape", lambda a: np.reshape(a, (-1,)), ANY, "(-1,)"),
    _r("numpy.reshape", lambda a: np.reshape(a, (2, -1, 2)), S2[:1], "(2,-1,2)"),
    _r("numpy.reshape", lambda a: np.reshape(a, ()), (((),), ((1, 1),)), "()"),
    _r("numpy.reshape", lambda a: np.reshape(a, (4, 0, 1)), (((0, 4),),), "empty"),
    _r("numpy.ravel", np.ravel, ANY),
    _r("numpy.transpose", np.transpose, ANY),
    _r("numpy.transpose", lambda a: np.transpose(a, (2, 0, 1)), S3, "(2,0,1)"),
    _r("numpy.transpose", lambda a: np.transpose(a, (-1, 0, -2)), S3, "negative"),
    _r("numpy.squeeze", np.squeeze, (((1, 3, 1),), ((1,),), ((),), ((1, 0),)), full=2),
    _r("numpy.squeeze", lambda a: np.squeeze(a, axis=-1), (((3, 1),), ((1, 1),)), "axis=-1"),
    _r("numpy.squeeze", lambda a: np.squeeze(a, axis=(0, 2)), (((1, 3, 1),),), "axis=(0,2)"),
    _r("numpy.expand_dims", lambda a: np.expand_dims(a, 0), ANY, "0"),
    _r("numpy.expand_dims", lambda a: np.expand_dims(a, -1), ANY, "-1"),
    _r("numpy.expand_dims", lambda a: np.expand_dims(a, (0, 2)), ANY, "(0,2)"),
    _r("numpy.expand_dims", lambda a: np.expand_dims(a, (-1, 1)), S2, "(-1,1)"),
    _r("numpy.concatenate", lambda a, b: np.concatenate([a, b]), (((3, 4), (2, 4)), ((0,), (5,)), ((2,), Const((3,)))),
       full=3),
    _r("numpy.concatenate", lambda a, b: np.concatenate((a, b), axis=-1), (((3, 4), (3, 2)),), "axis=-1"),
    _r("numpy.concatenate", lambda a, b: np.concatenate([a, b], axis=None), (((3, 4), (2,)), ((), (2, 2))),
       "axis=None"),
    _r("numpy.concatenate", lambda a, b: np.concatenate([a, b, a]), (((2, 3), (1, 3)),), "mixed",
       dtypes=((I32, F32), (B, I64), (F32, F64), (U8, I32))),
    _r("numpy.stack", lambda a, b: np.stack([a, b]), (((3, 4), (3, 4)), ((), ()), ((0,), (0,))), full=3),
    _r("numpy.stack", lambda a, b: np.stack((a, b), axis=-1), (((3, 4), (3, 4)),), "axis=-1"),
    _r("numpy.stack", lambda a, b: np.stack([a, b], axis=1), (((3, 4), (3, 4)),), "axis=1",
       dtypes=ALL + ((I32, F32),)),
    _r("numpy.hstack", lambda a, b: np.hstack([a, b]), (((3, 4), (3, 2)), ((3,), (2,)), ((), ())), full=3),
    _r("numpy.vstack", lambda a, b: np.vstack([a, b]), (((3, 4), (2, 4)), ((4,), (4,)), ((), ())), full=3),
    _r("numpy.column_stack", lambda a, b: np.column_stack([a, b]), (((3,), (3,)), ((3, 2), (3,))), full=2),
    _r("numpy.block", lambda a, b: np.block([[a, b], [b, a]]), (((3, 3), (3, 3)), ((2,), (2,)), ((), ())), full=3),
    _r("numpy.block", lambda a, b: np.block([a, b, 1.5]), (((2, 3), (2, 2)), ((3,), (1,))), "flat", full=2),
    _r("numpy.block", lambda a, b: np.block([[a], [b]]), (((2, 3), (1, 3)), ((3,), (3,))), "column"),
    _r("numpy.block", lambda a, b: np.block([[[a, b]]]), (((2, 3), (2, 1)),), "depth 3"),
    _r("numpy.block", lambda a, b: np.block(a), (((2, 3), (2, 1)),), "an array"),
    _r("numpy.split", lambda a: np.split(a, 2), (((4, 3),), ((6,),)), "2"),
    _r("numpy.split", lambda a: np.split(a, [1, 3], axis=-1), (((3, 5),),), "[1,3]"),
    _r("numpy.split", lambda a: np.split(a, [2, 10]), (((4, 3),),), "past end"),
    _r("numpy.array_split", lambda a: np.array_split(a, 3), (((5,),), ((7, 2),)), "3"),
    _r("numpy.array_split", lambda a: np.array_split(a, [1], axis=1), (((2, 4),),), "[1]"),
    _r("numpy.swapaxes", lambda a: np.swapaxes(a, 0, -1), (((3, 4),), ((2, 3, 4),), ((0, 2),))),
    _r("numpy.moveaxis", lambda a: np.moveaxis(a, 0, -1), (((2, 3, 4),), ((0, 3),))),
    _r("numpy.moveaxis", lambda a: np.moveaxis(a, [0, 1], [-1, 0]), S3, "lists"),
    _r("numpy.roll", lambda a: np.roll(a, 2), ANY, "2"),
    _r("numpy.roll", lambda a: np.roll(a, -1, axis=0), (((3, 4),), ((5,),), ((0, 2),)), "axis=0"),
    _r("numpy.roll", lambda a: np.roll(a, (1, -2), axis=(0, 1)), S2, "tuple"),
    _r("numpy.flip", np.flip, ANY),
    _r("numpy.flip", lambda a: np.flip(a, -1), (((3, 4),), ((5,),)), "-1"),
    _r("numpy.flip", lambda a: np.flip(a, (0, 2)), S3, "(0,2)"),
    _r("numpy.broadcast_to", lambda a: np.broadcast_to(a, (2, 3, 4)), (((3, 4),), ((),), ((4,),), ((1, 4),))),
    _r("numpy.atleast_1d", np.atleast_1d, ANY),
    _r("numpy.atleast_2d", np.atleast_2d, ANY),
    _r("numpy.atleast_3d", np.atleast_3d, ANY),
    _r("numpy.atleast_1d", lambda a, b: np.atleast_1d(a, b), (((), (3,)),), "two"),
    _r("numpy.tile", lambda a: np.tile(a, 2), ANY, "2"),
    _r("numpy.tile", lambda a: np.tile(a, (2, 1, 3)), (((3, 4),), ((),), ((5,),)), "(2,1,3)"),
    _r("numpy.repeat", lambda a: np.repeat(a, 2), ANY, "2"),
    _r("numpy.repeat", lambda a: np.repeat(a, 3, axis=-1), (((3, 4),), ((5,),)), "axis=-1"),
    _r("numpy.repeat", lambda a: np.repeat(a, [1, 0, 2], axis=0), (((3, 4),), ((3,),)), "counts"),
    # entries of the extended table that its own parity module does not list
    _r("numpy.dsplit", lambda a: np.dsplit(a, 2), (((2, 3, 4),), ((1, 2, 0),))),
    _r("numpy.dsplit", lambda a: np.dsplit(a, [1, 3]), (((2, 3, 4),),), "[1,3]"),
]

RECORDS = SHAPE_RECORDS
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_shape_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)
