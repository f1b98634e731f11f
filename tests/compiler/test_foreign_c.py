"""C code that reads traced memory or writes into a traced buffer inside library code is refused by
the mechanism guards alone, with the differential check off (``check=0``) as with the default check,
through ``leapp.compile`` and in the seed API (issue 17).

``scipy.linalg.pinv(a) @ a`` in a library gave a graph holding the trace-time ``pinv`` with
``check=0``: scipy's ``_asarray_validated`` calls ``np.asarray_chkfinite``, NumPy's C ``asarray``
inside it drops the subclass, and the LAPACK routine (f2py) reads the memory; the plain result met
the traced input inside the library, so the library function returned a traced array and the
rewritten call's check (``_leapp.foreign``) was satisfied. ``scipy.linalg.expm`` copies the input
into a scratch array with a traced write and its compiled Pade step overwrites that array in place.
``runtime/unseen_calls.py`` watches every call in the library code: a call given traced data that
returns a plain array, or after which a traced array's memory changed with no write recorded, is
refused at the library's line."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import ProblemsError, UntracedCallWarning

from . import foreign_c_lib as lib

RNG = np.random.default_rng(17)
A = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
B = RNG.normal(size=(3, 3))
LIB = r"\S*foreign_c_lib\.py:\d+"


def pinv(a):
    return lib.pinv(a)


def expm(a):
    return lib.expm(a)


def solve(a, b):
    return lib.solve(a, b)


def chkfinite(a):
    return lib.chkfinite(a)


def expit(a):
    return lib.expit(a)


def smooth(a):
    return lib.smooth(a)


def lfilter(a):
    return lib.lfilter(a)


UNSEEN_READ = r"was given traced data and returned a plain NumPy array"
UNSEEN_WRITE = r"changed the memory of a traced array .* with no write leapp could see"
CASES = [  # (function, what the refusal says)
    (pinv, r"asarray_chkfinite at .*_util\.py:\d+ \(called from .*pinv.*" + LIB + r" in pinv.*" + UNSEEN_READ),
    (expm, r"expm at " + LIB + r".*" + UNSEEN_WRITE),
    (solve, r"asarray_chkfinite at .*_util\.py:\d+ \(called from .*solve.*" + LIB + r" in solve.*" + UNSEEN_READ),
    (chkfinite, r"asarray_chkfinite at " + LIB + r".*" + UNSEEN_READ),
    (expit, r"No torch equivalent for numpy function scipy\.special\.expit"),
    (smooth, r"written by code leapp does not see"),
    (lfilter, r"No torch equivalent for numpy function apply_along_axis"),
]


def _args(fn):
    return (A, B) if fn is solve else (A,)


def test_numpy_runs_them():
    for fn, _ in CASES:
        assert np.all(np.isfinite(fn(*_args(fn))))


# With the default check on, leapp.compile leaves the call watch off (it tripled the recording):
# the check refuses the frozen value, naming the library's line it was made at
# (expm's is scipy's own line: its C step overwrote a scratch array, and the retrace took another path)
BY_CHECK = r"disagrees with NumPy on a generated input.*(" + LIB + r"|_matfuncs\.py:\d+)"


@pytest.mark.parametrize("check", [0, 3])
@pytest.mark.parametrize("fn, says", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_compile_refuses_at_the_library_line(fn, says, check):
    if check and fn in (pinv, expm, solve, chkfinite):
        says = BY_CHECK
    cf = leapp.compile(fn, check=check)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ProblemsError, match=says):
            cf(*_args(fn))
    assert not cf._graphs


@pytest.mark.parametrize("fn, says", CASES[:4], ids=[fn.__name__ for fn, _ in CASES[:4]])
def test_seed_api_warns_at_the_library_line(fn, says):
    names = ["a", "b"][:len(_args(fn))]
    leapp.start("foreign_c")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            traced = annotate.input_tensors("n", dict(zip(names, _args(fn), strict=True)))
            traced = traced if isinstance(traced, tuple) else (traced,)
            annotate.output_tensors("n", {"y": fn(*traced)})
    finally:
        leapp.api.reset()
    assert any(issubclass(w.category, UntracedCallWarning) and re.search(says, str(w.message), re.S)
               for w in caught), [str(w.message)[:300] for w in caught]


def test_seed_api_strict_raises():
    leapp.start("foreign_c", strict=True)
    try:
        with pytest.raises(leapp.errors.UntracedCallError, match=UNSEEN_READ):
            lib.pinv(annotate.input_tensors("n", {"a": A}))
    finally:
        leapp.api.reset()


def test_only_calls_given_traced_data_count():
    # a library function given only constants may return plain arrays: they are constants
    cf = leapp.compile(_constant_pinv, check=0)
    np.testing.assert_allclose(cf(A), _constant_pinv(A))


def _constant_pinv(a):
    return lib.pinv(np.eye(3) * 2.0) + a


def test_each_thread_watches_its_own_calls():
    # the watch is per thread (sys.setprofile is): a refusal in one thread and an exact graph in
    # another, at the same time, each get their own verdict
    import threading

    results: dict = {}

    def refused(i):
        try:
            leapp.compile(pinv, check=0)(A)
            results[i] = "graph"
        except ProblemsError as error:
            results[i] = "refused" if re.search(UNSEEN_READ, str(error)) else str(error)

    def exact(i):
        cf = leapp.compile(_constant_pinv, check=0)
        results[i] = "exact" if np.allclose(cf(A), _constant_pinv(A)) else "wrong"

    threads = [threading.Thread(target=refused if i % 2 else exact, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: "exact", 1: "refused", 2: "exact", 3: "refused"}


def _factor_in_place(a):
    from scipy.linalg import lapack

    lu = np.zeros((3, 3), order="F")
    lu[...] = a
    lapack.dgetrf(lu, overwrite_a=1)  # C straight from the user's line: no Python frame to watch
    return lu * 2.0


def test_c_writing_in_place_from_the_users_line_is_refused():
    assert not np.allclose(_factor_in_place(A), A * 2.0)  # LAPACK wrote the factors into lu
    with pytest.raises(ProblemsError, match=r"test_foreign_c\.py:\d+:\d+ .*" + UNSEEN_WRITE):
        leapp.compile(_factor_in_place, check=0)(A)
