"""The main job, end to end: ``leapp compile`` on the built-in example and on a FILE:FUNCTION."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest

from leapp.cli import main
from leapp.examples import robot_obs


def test_leapp_compile_runs_the_built_in_example(tmp_path):
    out = tmp_path / "out"
    leapp_bin = os.path.join(os.path.dirname(sys.executable), "leapp")
    done = subprocess.run([leapp_bin, "compile", "--out", str(out)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    for step in ("[1/5] lint step", "  0 finding(s)", "[2/5] compile: trace step", "0 disagreement(s)",
                 "[3/5] validate against NumPy on 3 fresh input(s)\n  passed", "[4/5] graph passes\n",
                 f"[5/5] export onnx: {out / 'step.onnx'}\n", "onnxruntime agrees with NumPy",
                 "torch.clamp"):
        assert step in text, text
    assert sorted(os.listdir(out)) == ["step.onnx", "step.onnx.json"]
    described = json.loads((out / "step.onnx.json").read_text())
    assert [i["name"] for i in described["inputs"]][:2] == ["base_quat", "base_ang_vel"]
    assert [o["name"] for o in described["outputs"]] == ["policy_input", "history", "joint_targets", "upright"]
    # it ends with the per-node table, not torch.fx's listing: the helper's NumPy calls at their lines
    graph = text[text.index("\ngraph: step:"):]
    assert "NumPy call" in graph and "placeholder[target=" not in text
    clip = [line for line in graph.splitlines() if "numpy.clip" in line and "normalize" in line]
    lines, first = inspect.getsourcelines(robot_obs.step)
    at = next(f"{first + i}:{line.index('compute_observation') + 1}" for i, line in enumerate(lines)
              if "= compute_observation(" in line)
    assert len(clip) == 1 and clip[0].split()[-1] == at, graph  # called at step's line


def test_leapp_compile_file_function_with_npz_and_dynamic_batch(tmp_path, capsys):
    npz = robot_obs.write_npz(str(tmp_path / "inputs.npz"), batch=4)
    target = f"{robot_obs.__file__}:step"
    status = main(["compile", target, "--inputs", npz, "--out", str(tmp_path / "o"),
                   "--dynamic-batch", "--format", "torchscript", "--no-graph"])
    assert status == 0, capsys.readouterr().out
    described = json.loads((tmp_path / "o" / "step.pt.json").read_text())
    assert described["inputs"][0]["shape"] == ["batch", 4]


def test_leapp_compile_reports_a_bad_target(capsys):
    assert main(["compile", "no_such_file.py:fn"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_leapp_compile_refuses_a_file_python_cannot_import(tmp_path, capsys):
    # no loader for the suffix: was an internal AttributeError (found by mypy)
    (tmp_path / "prog.txt").write_text("def f(x):\n    return x\n")
    assert main(["compile", f"{tmp_path / 'prog.txt'}:f"]) == 2
    assert "prog.txt is not a Python source file" in capsys.readouterr().err


@pytest.mark.parametrize("body, said", [
    ("def f(x):\n    return x +\n", ":2: cannot import bad_module.py: SyntaxError: invalid syntax"),
    ("import numpy as np\nW = np.load('missing.npy')\ndef f(x):\n    return x\n",
     ":2: importing bad_module.py raised FileNotFoundError"),
])
def test_leapp_compile_reports_an_error_in_the_user_s_module_as_the_user_s(tmp_path, monkeypatch, capsys,
                                                                           body, said):
    # The module's own error, at its line: not "leapp: internal error"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad_module.py").write_text(body)
    assert main(["compile", "bad_module.py:f", "--inputs", "x.npz"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"leapp compile: error: {tmp_path / 'bad_module.py'}{said}"), err
    assert "internal error" not in err
    assert "_leapp_main_" + "".join(c if c.isalnum() else "_" for c in str(tmp_path / "bad_module.py")) \
        not in sys.modules


def test_leapp_compile_exit_1_names_the_failed_step(tmp_path, capsys):
    # docs/cli.md: 1 when the function fails a step; lint findings alone do not fail it
    import numpy as np

    (tmp_path / "prep.py").write_text("def f(x):\n    return x * float(x.sum())\n")
    np.savez(tmp_path / "x.npz", x=np.ones(3, np.float32))
    status = main(["compile", f"{tmp_path / 'prep.py'}:f", "--inputs", str(tmp_path / "x.npz"),
                   "--out", str(tmp_path / "o"), "--format", "torchscript"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "  1 finding(s)" in out and "LP201" in out
    assert "[2/5] compile: trace f on the example inputs\n  FAILED: " in out
    assert "[3/5]" not in out and not (tmp_path / "o").exists()


def test_leapp_compile_exit_2_for_inputs_that_do_not_fit(tmp_path, capsys):
    import numpy as np

    (tmp_path / "prep.py").write_text("def f(x):\n    return x\n")
    np.savez(tmp_path / "y.npz", y=np.ones(3))
    assert main(["compile", f"{tmp_path / 'prep.py'}:f", "--inputs", str(tmp_path / "y.npz")]) == 2
    said = capsys.readouterr()
    assert said.out == "" and "the inputs lack ['x']; they hold ['y']" in said.err
