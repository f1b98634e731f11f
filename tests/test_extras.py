"""The base install lints without torch or numpy; the rest says which extra to install, up front.

"Not installed" is made real for a process by ``sys.modules[name] = None``: ``import name``
then raises ImportError and ``importlib.util.find_spec(name)`` answers None, as for a
module that is absent.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import leapp
from leapp.cli import main
from leapp.extras import DISTRIBUTION, EXTRAS, MissingExtraError

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _without(modules, code, cwd):
    hide = "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    return subprocess.run([sys.executable, "-c", "import sys\n" + hide + code], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=120)


def test_the_distribution_name_and_extras_are_pyproject_s():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["name"] == DISTRIBUTION
    base = " ".join(project["dependencies"])
    assert "torch" not in base and "numpy" not in base
    extras = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        for module in modules:
            assert any(req.startswith(module) for req in extras[extra]), (extra, module)
    assert f"{DISTRIBUTION}[compile,onnx]" in extras["dev"]  # the README's `-e '.[dev]'` compiles


def test_import_leapp_and_leapp_lint_work_without_torch_and_numpy(tmp_path):
    (tmp_path / "prep.py").write_text(
        "import numpy as np\n\n# leapp: trace\ndef f(x):\n    while x.mean() > 0:\n        x = x - 1.0\n"
        "    return x\n")
    done = _without(["torch", "numpy"], "import leapp\nfrom leapp.cli import main\n"
                    "sys.exit(main(['lint', '--no-cache', 'prep.py']))", tmp_path)
    assert done.returncode == 1, done.stderr
    assert "prep.py:5:11: LP202" in done.stdout


@pytest.mark.parametrize("name", ["compile", "start", "compile_graph"])
def test_leapp_api_without_torch_names_the_extra_and_the_pip_line(tmp_path, name):
    done = _without(["torch"], f"import leapp\nleapp.{name}", tmp_path)
    assert done.returncode == 1
    assert (f"leapp.MissingExtraError: leapp.{name} needs the 'compile' extra (torch not installed): "
            f"pip install '{DISTRIBUTION}[compile]'") in done.stderr.replace("leapp.extras.", "leapp.")


def test_leapp_compile_without_torch_fails_before_any_work(tmp_path):
    done = _without(["torch"], "from leapp.cli import main\nsys.exit(main(['compile', '--out', 'o']))",
                    tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (f"leapp compile: error: leapp compile needs the 'compile' extra "
                           f"(torch not installed): pip install '{DISTRIBUTION}[compile]'\n")
    assert not (tmp_path / "o").exists()


def test_leapp_compile_without_onnx_fails_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    out = tmp_path / "o"
    assert main(["compile", "--out", str(out)]) == 2
    said = capsys.readouterr()
    assert said.out == ""  # no step ran
    assert said.err == ("leapp compile: error: leapp compile --format onnx needs the 'onnx' extra "
                        f"(onnxruntime not installed): pip install '{DISTRIBUTION}[onnx]'\n")
    assert not out.exists()
    # the formats that need no onnx still compile
    assert main(["compile", "--out", str(out), "--format", "torchscript", "--no-graph",
                 "--validate", "1"]) == 0
    assert sorted(os.listdir(out)) == ["step.pt", "step.pt.json"]


def test_cf_export_to_onnx_without_onnx_says_so_before_exporting(tmp_path, monkeypatch):
    @leapp.compile
    def f(x):
        return np.abs(x)

    f(np.ones(3, np.float32))
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(MissingExtraError, match=r"'onnx' extra \(onnx not installed\): "
                                                r"pip install 'leapp-numpy\[onnx\]'"):
        f.export(tmp_path / "f.onnx")
    assert not list(tmp_path.iterdir())
