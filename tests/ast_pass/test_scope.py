"""What is traced: decorators in any spelling, annotate regions, comments, config."""

from __future__ import annotations

from textwrap import dedent

import pytest

from leapp.ast_pass import analyze_source

BODY = "def f(x):\n    return float(x.mean())\n"


def codes(src, **kw):
    return [d.code for d in analyze_source(dedent(src), "m.py", **kw).diagnostics]


@pytest.mark.parametrize("header,decorator", [
    ("import leapp", "@leapp.compile"),
    ("import leapp", "@leapp.compile(strict=False)"),
    ("import leapp as lp", "@lp.compile"),
    ("from leapp import compile as lc", "@lc"),
    ("from leapp import compile", "@compile(strict=True)"),
])
def test_decorator_spellings(header, decorator):
    assert codes(f"{header}\n{decorator}\n{BODY}") == ["LP201"]


@pytest.mark.parametrize("src", [
    BODY,  # no scope
    "import leapp\n@other.compile\n" + BODY,
    "compile = lambda f: f\n@compile\n" + BODY,  # not leapp's
    "import leapp\n@leapp.compile\ndef g(x):\n    return x\n" + BODY,  # f itself is not traced
])
def test_untraced_code_is_not_checked(src):
    assert codes(src) == []


def test_trace_comment_on_function_and_file():
    assert codes("# leapp: trace\n" + BODY) == ["LP201"]  # file-level (before any statement)
    assert codes("x = 1\n\n# leapp: trace\n" + BODY) == ["LP201"]  # just above the def
    assert codes("x = 1\ndef f(x):  # leapp: trace\n    return float(x.mean())\n") == ["LP201"]
    assert codes("'''doc'''\n# leapp: trace\nx = 1\n" + BODY) == ["LP201"]


def test_annotate_region():
    src = """
        import numpy as np
        from leapp import annotate

        def run(x, y):
            a = float(y.mean())  # before the region: not traced
            annotate.input_tensors(x)
            z = np.abs(x)
            if z.sum() > 0:
                z = -z
            annotate.output_tensors(z)
            return float(np.abs(y).sum())  # after: not traced
        """
    result = analyze_source(dedent(src), "m.py")
    assert [(d.code, d.line) for d in result.diagnostics] == [("LP202", 9)]


def test_include_functions_from_config():
    src = "class Prep:\n    def norm(self, x):\n        return float(x.mean())\n" + BODY
    assert codes(src, include_functions=["Prep.*"]) == ["LP201"]
    assert codes(src, include_functions=["f"]) == ["LP201"]
    assert codes(src, include_functions=["nothing"]) == []


def test_scope_all_for_one_function_keeps_file_positions():
    src = "    def norm(self, x):\n        return float(x.mean())\n"  # a method's source
    result = analyze_source(src, "prep.py", scope="all", first_line=40)
    (d,) = result.diagnostics
    assert (d.code, d.line, d.col) == ("LP201", 41, 16)


def test_non_array_parameters():
    src = """
        # leapp: trace
        def f(x, n: int, eps=1e-6, *args, scale: float = 2.0, **kw):
            if n > 2 and eps < 1 and scale:
                return x
            return float(x.sum())
        """
    assert codes(src) == ["LP201"]


def test_noqa_line_and_file():
    base = "# leapp: trace\ndef f(x):\n    return float(x.mean()){}\n"
    assert codes(base.format("  # noqa")) == []
    assert codes(base.format("  # noqa: LP201")) == []
    assert codes(base.format("  # noqa: LP2")) == []
    assert codes(base.format("  # noqa: E501")) == ["LP201"]
    assert codes("# leapp: noqa\n" + base.format("")) == []
    assert codes("# leapp: noqa: LP201\n" + base.format("")) == []
    assert codes("# leapp: noqa: LP101\n" + base.format("")) == ["LP201"]
    # a file-wide noqa for every code stays so after a later file-wide list (it used to narrow to it)
    assert codes("# leapp: noqa\n# leapp: noqa: LP101\n" + base.format("")) == []
    assert codes("# leapp: noqa: LP101\n# leapp: noqa: LP201\n" + base.format("")) == []
    assert codes(base.format("") + "s = '# noqa'\n") == ["LP201"]  # a string is not a comment


def test_select_and_ignore_prefixes():
    src = "# leapp: trace\n" + "def f(x):\n    return float(x.mean()) + max(x)\n"
    assert codes(src) == ["LP201", "LP205"]
    assert codes(src, select=["LP20"], ignore=["LP205"]) == ["LP201"]


def test_precision_static_values_are_not_flagged():
    src = """
        import numpy as np
        # leapp: trace
        def f(x):
            n = float(x.shape[0])
            k = len(x) + x.ndim
            if x.shape[-1] == 3 or x.dtype == np.float32:
                pass
            m = x > 0
            idx = np.nonzero(m)
            return x[m], x[idx], n, k, max(x.shape)
        """
    assert codes(src) == []


def test_dataflow_meets_branches():
    src = """
        import numpy as np
        # leapp: trace
        def f(x, flag: bool):
            if flag:
                y = np.abs(x)
            else:
                y = [1, 2]
            return float(y[0])  # y may be a list: not provably an array
        """
    assert codes(src) == []
