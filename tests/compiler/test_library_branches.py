"""Branches on data in library code (``leapp.compiler.library``), through ``@leapp.compile``.

The library is ``tests/compiler/branchy_lib``, a package leapp does not rewrite. Each
compiled function is traced once, then its graph runs on inputs on both sides of the
library's test and must agree with NumPy; with ``convert_libraries=False`` every one of
these is refused (the tests check both).
"""

from __future__ import annotations

import importlib
import linecache
import sys

import numpy as np
import pytest

import leapp
from leapp.compiler import library
from leapp.errors import ProblemsError

from .branchy_lib import denied
from .branchy_lib import geometry as geo


def _line(fn, text):
    """The file line of ``fn``'s source line that contains ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def guard(x):
    return geo.positive_part(x) + 1.0


def near_zero(v):
    return geo.unit_or_zero(v, 2.0)  # the guard is in safe_normalise, one call further


def elif_chain(R):
    return geo.quaternion_from_matrix(R)


def raise_guard(R):
    return geo.checked_rotation(R)


def method(x):
    return geo.Filter(1.0).step(x)


def static_and_closure(x):
    return geo.Limits.floor_at_zero(x, scale=2.0) + LIMITER(x)


LIMITER = geo.make_limiter(1.0)


def helper_test(v):
    return geo.direction(v)


def deny(x):
    return denied.positive_part(x)


def _refused_without_conversion(fn, x):
    with pytest.raises(ProblemsError, match="bool\\(\\) of a traced array"):
        leapp.compile(fn, convert_libraries=False)(x)


def _agrees(cf, fn, inputs):
    for x in inputs:
        got, want = cf(x), fn(x)
        np.testing.assert_array_equal(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


def test_guard_branch_in_library_is_one_graph_for_both_sides():
    x = np.array([1.0, -0.5, 2.0])
    cf = leapp.compile(guard)
    _agrees(cf, guard, [x, -x, np.zeros(3)])
    assert len(cf.graphs) == 1
    report = cf.format_report()
    assert "branches on data in library code: 1" in report
    assert f"geometry.py (positive_part) line {_line(geo.positive_part, 'if s > 0')}: `if` statement " \
           f"converted to a select (y selected)" in report
    _refused_without_conversion(guard, x)


def test_near_zero_guard_two_calls_deep():
    v = np.array([3.0, 4.0, 0.0])
    cf = leapp.compile(near_zero)
    _agrees(cf, near_zero, [v, np.zeros(3), v * 1e-12])
    assert "(safe_normalise) line" in cf.format_report()
    _refused_without_conversion(near_zero, v)


def test_a_test_the_static_pass_cannot_type_is_converted_once_seen_on_data():
    v = np.array([3.0, 4.0, 0.0])
    cf = leapp.compile(helper_test)
    _agrees(cf, helper_test, [v, np.zeros(3)])
    assert f"(direction) line {_line(geo.direction, 'if near_zero')}: early `return` converted" in cf.format_report()
    _refused_without_conversion(helper_test, v)


def test_elif_chain_in_library_takes_every_arm():
    rotations = [np.eye(3), np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0])]
    cf = leapp.compile(elif_chain)
    _agrees(cf, elif_chain, rotations)
    assert len(cf.graphs) == 1
    _refused_without_conversion(elif_chain, np.eye(3))


def test_method_of_a_library_object_is_converted():
    x = np.array([1.0, -0.5, 2.0])
    cf = leapp.compile(method)
    _agrees(cf, method, [x, x / 10])
    _refused_without_conversion(method, x)


def test_staticmethod_keyword_default_and_closure_are_kept():
    x = np.array([1.0, -0.5, 2.0])
    cf = leapp.compile(static_and_closure)
    _agrees(cf, static_and_closure, [x, np.abs(x) / 10, -x])
    report = cf.format_report()
    assert "(Limits.floor_at_zero) line" in report and "(make_limiter.<locals>.limiter) line" in report
    _refused_without_conversion(static_and_closure, x)


def test_raise_guard_in_library_is_refused_naming_its_line():
    line = _line(geo.checked_rotation, "if np.abs")
    with pytest.raises(ProblemsError) as info:
        leapp.compile(raise_guard)(np.eye(3))
    text = str(info.value)
    assert f"geometry.py:{line}" in text
    assert f"leapp did not convert this branch in library code (checked_rotation, geometry.py line {line}): " \
           f"the `if` branch raises" in text


def test_deny_list_refuses_and_says_so(tmp_path):
    x = np.array([1.0, -0.5, 2.0])
    assert np.array_equal(leapp.compile(deny)(x), deny(x))  # converted by default
    with pytest.raises(ProblemsError, match=f"module {denied.__name__} is denied by "
                                            "leapp.compile\\(convert_libraries=...\\)"):
        leapp.compile(deny, convert_libraries=[f"!{denied.__name__}"])(x)
    with pytest.raises(ProblemsError, match=f"module {denied.__name__} is not in "):
        leapp.compile(deny, convert_libraries=[geo.__name__])(x)


def test_pyproject_lists_decide_which_modules(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.leapp]\nlibrary-allow = ["pkg", "other.*"]\n'
                                             'library-deny = ["pkg.unsafe"]\n')
    policy = library.policy_for(str(tmp_path / "prep.py"))
    assert policy.refuses("pkg.sub") is None and policy.refuses("other.x") is None
    assert "denied by [tool.leapp]" in policy.refuses("pkg.unsafe.deep")
    assert "is not in [tool.leapp]" in policy.refuses("elsewhere")
    assert "NumPy, torch or leapp" in policy.refuses("numpy.linalg")
    assert not library.policy_for(str(tmp_path / "prep.py"), convert_control_flow=False).enabled


def test_library_objects_are_untouched_and_other_calls_run_the_original():
    code, attr = geo.positive_part.__code__, geo.positive_part
    x = np.array([1.0, -0.5, 2.0])
    leapp.compile(guard)(x)
    assert geo.positive_part is attr and geo.positive_part.__code__ is code
    assert np.array_equal(geo.positive_part(-x), x)  # untraced: the library as it is


def test_edited_source_is_not_converted(tmp_path, monkeypatch):
    path = tmp_path / "edited_lib.py"
    path.write_text("def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_lib")
    try:
        assert library.convert(module.f).code is not None
        path.write_text("def f(x):\n    if x.sum() > 0:\n        return x * 3\n    return -x\n")
        linecache.checkcache(str(path))
        got = library.convert(module.f)
        assert got.code is None and "does not compile to the code that runs" in got.reason
    finally:
        sys.modules.pop("edited_lib", None)


def clamp_in_library(v):
    return geo.clamp_length(v, 5.0)


def signed_unit_in_library(v):
    return geo.signed_unit(v)


@pytest.mark.parametrize("fn,text", [(clamp_in_library, "if n < 1e-9"), (signed_unit_in_library, "if s > 0")])
def test_library_early_returns_in_a_chain_and_inside_an_arm_convert(fn, text):
    v = np.array([3.0, 4.0, 0.0])
    cf = leapp.compile(fn)
    _agrees(cf, fn, [v, np.zeros(3), v * 10, -v, v * 0.1])
    assert len(cf.graphs) == 1
    inner = geo.clamp_length if fn is clamp_in_library else geo.signed_unit
    assert f"line {_line(inner, text)}: " in cf.format_report()
    _refused_without_conversion(fn, v)
