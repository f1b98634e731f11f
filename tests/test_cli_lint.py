"""``leapp lint`` end to end: golden output, exit codes, formats, noqa, config, fixes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from leapp.cli import main

PREP = dedent('''
    import math
    import numpy as np
    import leapp

    BUF = np.zeros(4)

    @leapp.compile
    def prep(x):
        y = x / math.sqrt(x.var())
        if y.mean() > 0:
            BUF[:] = y
        return max(y, 0.0) + np.random.normal(size=y.shape)


    def untraced(x):
        return float(x.mean())
    ''').lstrip()

GOLDEN = dedent('''
    prep.py:9:13: LP204 `math.sqrt(x.var())` applies `math.sqrt` to an array: it converts to a Python float and leaves the graph.
    prep.py:10:8: LP202 `if` test on an array expression `y.mean() > 0`: the branch taken while tracing is frozen into the graph. leapp cannot convert it: the `if` branch writes into `BUF[:]`, and `BUF` is not a local of the function (a global or a name of an enclosing function): code outside it would see the write (line 11). Use `np.where(cond, a, b)` to select values, or decide outside the traced code.
    prep.py:11:9: LP302 `BUF[:]` writes into the module-level array `BUF` from traced code: the graph cannot see writes into arrays it did not create. Return the new values instead.
    prep.py:12:12: LP205 `max(y, 0.0)` uses Python's `max` on an array: it compares arrays with `bool()`. Use `np.maximum` instead.
    prep.py:12:26: LP301 `numpy.random.normal` in traced code: random numbers drawn while tracing would be frozen into the graph as a constant: every later call would reuse the same noise. Instead: draw noise outside the traced function and pass it in as an input.
    Found 5 errors.
    [*] 2 fixable with `leapp lint --fix`.
    ''').lstrip()


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prep.py").write_text(PREP)
    (tmp_path / "clean.py").write_text("import numpy as np\n\ndef f(x):\n    return float(np.max(x))\n")
    return tmp_path


def lint(capsys, *args):
    code = main(["lint", "--no-cache", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def codes_of(out):
    return [(line.split(":")[0], line.split()[1]) for line in out.splitlines() if ": LP" in line]


def test_golden_text_output_and_exit_status(project, capsys):
    code, out, _ = lint(capsys, ".")
    assert out == GOLDEN
    assert code == 1
    assert lint(capsys, "clean.py")[:2] == (0, "All checks passed!\n")


def test_usage_errors_exit_2(project, capsys):
    assert lint(capsys, "--select", "XYZ", ".")[0] == 2
    assert lint(capsys, "--output-format", "xml", ".")[0] == 2
    assert main([]) == 2


def test_json_and_github_formats(project, capsys):
    code, out, _ = lint(capsys, "--output-format", "json", "prep.py")
    records = json.loads(out)
    assert code == 1
    assert [r["code"] for r in records] == ["LP204", "LP202", "LP302", "LP205", "LP301"]
    first = records[0]
    assert first["name"] == "math-on-array" and first["location"] == {"row": 9, "column": 13}
    assert first["fix"]["edits"][0]["content"] == "np.sqrt"
    _, out, _ = lint(capsys, "--output-format", "github", "prep.py")
    assert out.splitlines()[0].startswith(
        "::error title=leapp (LP204),file=prep.py,line=9,col=13,endLine=9,endColumn=31::"
        "prep.py:9:13: LP204")


def test_select_and_ignore(project, capsys):
    _, out, _ = lint(capsys, "--select", "LP2", "--ignore", "LP205", "prep.py")
    assert [c for _, c in codes_of(out)] == ["LP204", "LP202"]


def test_noqa_comments(project, capsys):
    (project / "prep.py").write_text(
        PREP.replace("if y.mean() > 0:", "if y.mean() > 0:  # noqa: LP202")
        .replace("import math\n", "# leapp: noqa: LP3\nimport math\n"))
    _, out, _ = lint(capsys, "prep.py")
    assert [c for _, c in codes_of(out)] == ["LP204", "LP205"]


def test_config_in_pyproject(project, capsys):
    (project / "pyproject.toml").write_text(dedent('''
        [tool.leapp]
        ignore = ["LP3"]
        include = ["clean.py:f"]
        exclude = ["skipped/*"]
        '''))
    (project / "skipped").mkdir()
    (project / "skipped" / "bad.py").write_text("def f(:\n")
    _, out, _ = lint(capsys, ".")
    found = codes_of(out)
    assert ("clean.py", "LP201") in found  # opted in by include
    assert not any(c.startswith("LP3") for _, c in found)
    assert not any(p.startswith("skipped") for p, _ in found)
    (project / "pyproject.toml").write_text("[tool.leapp]\nselct = ['LP1']\n")
    code, _, err = lint(capsys, ".")
    assert code == 2 and "unknown [tool.leapp] key" in err


def test_fix_and_diff(project, capsys):
    code, out, _ = lint(capsys, "--diff", "prep.py")
    assert code == 1
    assert "-    y = x / math.sqrt(x.var())\n+    y = x / np.sqrt(x.var())" in out
    assert "+    return np.maximum(y, 0.0) + np.random.normal(size=y.shape)" in out
    assert (project / "prep.py").read_text() == PREP  # --diff writes nothing
    code, out, _ = lint(capsys, "--fix", "prep.py")
    fixed = (project / "prep.py").read_text()
    assert fixed == PREP.replace("math.sqrt", "np.sqrt").replace("max(y, 0.0)", "np.maximum(y, 0.0)")
    assert code == 1 and "LP204" not in out and "LP205" not in out and "LP202" in out
    assert lint(capsys, "--diff", "prep.py")[0] == 0  # nothing left to fix


def test_bad_input_is_reported_and_the_run_goes_on(project, capsys):
    (project / "bad.py").write_text("def f(:\n    pass\n")
    (project / "latin.py").write_bytes(b"x = '\xe9'\n")
    (project / "empty.py").write_text("")
    (project / "__init__.py").write_text("")
    (project / "huge.py").write_text("x = 1\n" * 200_000)
    (project / "pyproject.toml").write_text("[tool.leapp]\nmax-file-size = 1000000\n")
    code, out, err = lint(capsys, ".", "missing.py")
    assert code == 1 and "Traceback" not in out + err
    found = dict(codes_of(out)[::-1])  # first finding per file
    assert found["bad.py"] == "LP901"
    assert found["latin.py"] == "LP902"
    assert found["empty.py"] == "LP903"
    assert found["huge.py"] == "LP904"
    assert found["missing.py"] == "LP905"
    assert "__init__.py" not in found
    assert found["prep.py"] == "LP204"  # the other files were still checked


def test_internal_error_is_contained(project, capsys, monkeypatch):
    import leapp.ast_pass.analyze as analyze

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(analyze, "analyze_source", broken)
    code, out, err = lint(capsys, "--jobs", "1", ".")
    assert code == 2
    assert "LP999 leapp failed on this file (RuntimeError: boom)" in out
    assert "Traceback" not in out + err


def test_cache_reuses_results(project, capsys, monkeypatch):
    import leapp.ast_pass.runner as runner

    assert main(["lint", "."]) == 1
    first = capsys.readouterr().out
    folder = os.environ["LEAPP_CACHE_DIR"]
    assert len(os.listdir(folder)) == 1 and not (project / ".leapp_cache").exists()
    with monkeypatch.context() as m:
        m.setattr(runner, "_check", lambda items: pytest.fail("cache miss"))
        assert main(["lint", "."]) == 1
        assert capsys.readouterr().out == first
    (project / "prep.py").write_text(PREP.replace("math.sqrt(x.var())", "x.std()"))
    assert main(["lint", "."]) == 1  # new content: checked again
    assert "LP204" not in capsys.readouterr().out


def test_parallel_matches_serial(project, capsys):
    for i in range(40):
        (project / f"m{i}.py").write_text(PREP.replace("def prep", f"def prep{i}") + "#" * 8000 + "\n")
    serial = lint(capsys, "--jobs", "1", ".")
    parallel = lint(capsys, "--jobs", "2", ".")
    assert serial == parallel and serial[1].count("LP204") == 41


def test_python_dash_m_entry_point(project):
    proc = subprocess.run([sys.executable, "-m", "leapp", "lint", "--no-cache", "prep.py"],
                          capture_output=True, text=True, cwd=project,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert (proc.returncode, proc.stdout) == (1, GOLDEN)


def test_generate_docs_matches_checked_in_page(capsys):
    assert main(["lint", "--generate-docs"]) == 0
    page = Path(__file__).resolve().parents[1] / "docs" / "lint-codes.md"
    assert capsys.readouterr().out == page.read_text(), (
        "docs/lint-codes.md is stale: run `python -m leapp.ast_pass.docs > docs/lint-codes.md`")
