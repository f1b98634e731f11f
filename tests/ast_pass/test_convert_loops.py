"""The static half of bounded `while` loops: which loops convert, why the others do not, and the text."""

from __future__ import annotations

from textwrap import dedent, indent

import pytest

from leapp.ast_pass import analyze_source, rewrite_source
from leapp.ast_pass.convert.apply import own_lines


def _source(body: str) -> str:
    return "import numpy as np\nimport leapp\n# leapp: trace\ndef f(x):\n" + indent(dedent(body), "    ")


def loops(body: str):
    return [b for b in analyze_source(_source(body), "t.py").branches if b.construct == "while"]


@pytest.mark.parametrize("body,words", [
    ("""\
    while x.max() > 1:
        x = x / 2
    return x
    """, "no static bound on its number of iterations; add `# leapp: max-iterations=N`"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=many
        x = x / 2
    return x
    """, "its bound `many` is not a whole number"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=0
        x = x / 2
    return x
    """, "outside 1..1024"),
    ("""\
    while leapp.bounded(x.max() > 1, 2.5):
        x = x / 2
    return x
    """, "its bound `2.5` is not a whole number"),
    ("""\
    while leapp.bounded(x.max() > 1, len(x)):
        x = x / 2
    return x
    """, "`leapp.bounded` takes the test and a whole number"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=4
        x /= 2
    return x
    """, "updates `x` in place, which would also change the value kept where the loop has already stopped"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=4
        x = x / 2
        if x.min() < 0:
            break
    return x
    """, "has a `break` out of the branch"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=4
        x = x / 2
    else:
        x = -x
    return x
    """, "has an `else:` block"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=4
        y = x / 2
        x = y
    return y
    """, "`y` is assigned in the loop body and not before the `while`"),
    ("""\
    while np.linalg.inv(x).max() > 1:  # leapp: max-iterations=4
        x = x / 2
    return x
    """, "raises on some inputs (a singular matrix)"),  # a test runs unguarded (its body, guarded)
    ("""\
    while x[np.argmax(x)] > 1:  # leapp: max-iterations=4
        x = x / 2
    return x
    """, "the `while` test indexes"),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=4
        print(x)
        x = x / 2
    return x
    """, "kept for its side effect"),
    ("""\
    global G
    while x.max() > 1:  # leapp: max-iterations=4
        G = x
        x = x / 2
    return x
    """, "the loop body assigns `G`, declared global or nonlocal"),
])
def test_a_refused_loop_names_the_property_that_failed(body, words):
    analysis = analyze_source(_source(body), "t.py")
    (b,) = [b for b in analysis.branches if b.construct == "while"]
    assert not b.converted and words in b.reason, b.reason
    assert any(d.code == "LP202" and words in d.message for d in analysis.diagnostics)


@pytest.mark.parametrize("body,bound,carried", [
    ("""\
    n = x.sum()
    while n > 1:  # leapp: max-iterations=12
        x = x / 2
        t = x.sum()
        n = t
    return x
    """, 12, ("n", "x")),
    ("""\
    while leapp.bounded(x.max() > 1 and not x.min() < -5, 3):
        x = x / 2
    return x
    """, 3, ("x",)),
    ("""\
    while (x.max()
           > 1):  # leapp: max-iterations=5
        x = x / 2
    return x
    """, 5, ("x",)),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=6; halves at most 6 times
        x = x / 2
    return x
    """, 6, ("x",)),
    ("""\
    while x.max() > 1:  # leapp: max-iterations=7, from the sensor's range  # noqa: LP201
        x = x / 2
    return x
    """, 7, ("x",)),
])
def test_a_bounded_loop_converts_and_carries_what_flows_on(body, bound, carried):
    (b,) = loops(body)
    assert b.converted and b.bound == bound and b.outputs == carried
    analysis = analyze_source(_source(body), "t.py")
    assert not [d for d in analysis.diagnostics if d.code == "LP202"]


def test_rewrite_keeps_every_line_and_calls_the_dispatcher():
    source = _source("""\
    while leapp.bounded(x.max() > 1 and x.min() > -9, 3):
        x = x / 2
    return x
    """)
    text = rewrite_source(source, "t.py").split("\n", 1)[1]  # the dispatch import
    assert own_lines(text) == len(source.splitlines())
    assert "_leapp.while_('t.py:5:5', 3, lambda x: _leapp.and_(" in text
    assert "leapp.bounded" not in text
    lines = text.splitlines()
    assert lines[4].lstrip().startswith("def __leapp_while5(x):")
    assert lines[5].strip() == "x = x / 2"


def test_the_rewritten_loop_runs_as_the_original_without_a_trace():
    import numpy as np

    from leapp import dispatch

    source = _source("""\
    n = np.zeros(())
    while x.max() > 1:  # leapp: max-iterations=2
        x = x / 2
        n = n + 1
    return x, n
    """)
    ns_new, ns_old = {"_leapp": dispatch}, {}
    exec(compile(rewrite_source(source, "t.py"), "t.py", "exec"), ns_new)
    exec(compile(source, "t.py", "exec"), ns_old)
    x = np.array([40.0, 3.0])  # more iterations than the bound: plain Python does not stop early
    (a, na), (b, nb) = ns_new["f"](x), ns_old["f"](x)
    assert np.array_equal(a, b) and na == nb == 6


def test_a_bounded_loop_after_an_early_return_converts_both():
    analysis = analyze_source(_source("""\
    if x.sum() < 0:
        return -x
    while leapp.bounded(x.max() > 1, 4):
        x = x / 2
    return x
    """), "t.py")
    assert [(b.construct, b.verdict) for b in analysis.branches] == [("early", "select"), ("while", "loop")]
    assert not [d for d in analysis.diagnostics if d.code == "LP202"]


def test_opt_out_keeps_the_loop_refused():
    analysis = analyze_source(_source("""\
    while x.max() > 1:  # leapp: max-iterations=4
        x = x / 2
    return x
    """), "t.py", convert=False)
    (b,) = analysis.branches
    assert not b.converted and "convert_control_flow=False" in b.reason
