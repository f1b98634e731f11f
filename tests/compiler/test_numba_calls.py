"""A function compiled by numba (``@numba.jit``) given a traced array is refused at its call, naming
it and the line, in user code and inside a library (robosuite's ``transform_utils``).

numba runs machine code on the array's memory, so a graph could only freeze its result. Before the
guard (``runtime/numba_guard.py``) a numba function compiled inside a trace was typed against
leapp's wrappers on NumPy's and ``math``'s attributes: numba raised its own ``TypingError``
("unsupported NumPy function 'numpy.dot'"), or on the process's first compile an
``AttributeError`` ("module 'leapp.runtime.patches' has no attribute 'exp'"), out of ordinary code.
"""

from __future__ import annotations

import numba  # noqa: F401  (in the dev extra: this suite never skips; jit_lib compiles with it)
import numpy as np
import pytest

import leapp
from leapp.errors import LeappError

from . import jit_lib as lib

Q = np.array([0.1, 0.2, 0.3, 0.9])
P = np.array([1.0, 2.0, 3.0])


def user_calls_numba(q):
    return lib.normalised(q) * 2.0


def library_calls_numba(p, q):
    return lib.pose(p, q)


@pytest.fixture(autouse=True, scope="module")
def registries_loaded():
    lib.warm_up(np.ones(2))  # the warm process: a new numba function compiled inside the trace


def test_a_numba_function_given_a_traced_array_is_refused_at_the_users_call():
    with pytest.raises(LeappError, match=r"jit_lib\.normalised called at \S*test_numba_calls\.py:\d+ "
                                         r".*compiled by numba"):
        leapp.compile(user_calls_numba)(Q)
    np.testing.assert_allclose(lib.normalised(Q), Q * np.sqrt(2.0 / Q.dot(Q)))  # numba still works


def test_a_numba_function_inside_a_library_is_refused_at_the_librarys_line():
    with pytest.raises(LeappError, match=r"jit_lib\.outer_of called at \S*jit_lib\.py:\d+ \(in pose, "
                                         r"called from \S*test_numba_calls\.py:\d+"):
        leapp.compile(library_calls_numba)(P, Q)
    want = library_calls_numba(P, Q)
    assert want.dtype == np.float64 and np.allclose(want[:3, :3], np.outer(Q, Q)[:3, :3])


def test_a_numba_function_compiled_before_the_trace_is_refused_too():
    lib.normalised(Q)  # compiled for float64 arrays: numba would run it on the traced memory
    with pytest.raises(LeappError, match="compiled by numba"):
        leapp.compile(user_calls_numba)(Q * 0.5)
