"""Messages name the library line as a chain (the user's call, then the library's line) and the library
function as it is spelled where it lives (``scipy.special.erf``, not ``numpy.erf``), once per site."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import leapp
from leapp.errors import ProblemsError

from . import rotations_lib as lib


@leapp.compile
def through_library(x):
    return lib.normalise_by_first(x)


@leapp.compile
def erf_of(x):
    return scipy.special.erf(x) * 2.0


@leapp.compile
def in_a_loop(x):
    out = x
    for _ in range(5):
        out = lib.normalise_by_first(out) + 1.0
    return out


def test_an_escape_inside_a_library_names_the_users_call_then_the_librarys_line():
    with pytest.raises(ProblemsError) as info:
        through_library(np.arange(1.0, 4.0))
    text = str(info.value)
    user_line = through_library.fn.__code__.co_firstlineno + 2
    lib_line = lib.normalise_by_first.__code__.co_firstlineno + 1
    assert f"test_messages_chain.py:{user_line}:" in text
    # the library's line, in the function it is in, and the user's line that called it
    assert f"rotations_lib.py:{lib_line} (in normalise_by_first, called at " in text
    assert f"test_messages_chain.py:{user_line}:12)" in text


def test_a_foreign_ufunc_is_named_where_it_lives():
    with pytest.raises(ProblemsError) as info:
        erf_of(np.linspace(-1, 1, 4))
    assert "scipy.special.erf" in str(info.value) and "numpy.erf" not in str(info.value)


def test_a_problem_in_a_loop_is_listed_once():
    with pytest.raises(ProblemsError) as info:
        in_a_loop(np.ones(3))
    assert str(info.value).count("float() of a traced array") == 1  # not 5
