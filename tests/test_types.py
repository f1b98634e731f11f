"""The package type-checks clean under the pyproject.toml mypy config, and a user's code sees real types.

One mypy run (the slow part: it reads torch's and NumPy's stubs; about 45 s of CPU on a cold
cache) checks ``src/leapp`` and a small user file together; the cache goes to a temporary folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USER_CODE = '''\
import numpy as np

import leapp
from leapp import annotate


@leapp.compile
def preprocess(state: np.ndarray, scale: float = 2.0) -> np.ndarray:
    return np.clip(state * scale, -1.0, 1.0)


@leapp.compile(strict=False, validate=2)
def other(x: np.ndarray) -> np.ndarray:
    return x


reveal_type(preprocess)
reveal_type(other)
reveal_type(preprocess(np.zeros(3)))
reveal_type(preprocess.graphs)
reveal_type(leapp.load_pipeline("out"))
reveal_type(leapp.compile_graph())
preprocess.exportt("pre.onnx")
preprocess(np.zeros(3), scale="2")
annotate.input_tensor("n", {})
leapp.compilee
'''


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("mypy")
    user = tmp / "user_code.py"
    user.write_text(USER_CODE)
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp / "cache"), "--no-color-output", "--no-error-summary",
         "src/leapp", str(user)],
        cwd=ROOT, capture_output=True, text=True, env=env)
    assert result.returncode in (0, 1), result.stdout + result.stderr  # 2: mypy itself failed
    return result.stdout


def test_mypy_finds_no_error_in_the_package(mypy_output: str) -> None:
    errors = [line for line in mypy_output.splitlines()
              if re.match(r"src[/\\]leapp[/\\].*: error:", line)]
    assert errors == [], f"{len(errors)} mypy error(s) in src/leapp:\n" + "\n".join(errors)


def _user_lines(output: str, kind: str) -> dict[int, str]:
    found = {}
    for line in output.splitlines():
        m = re.match(rf".*user_code\.py:(\d+): {kind}: (.*)", line)
        if m:
            found[int(m.group(1))] = m.group(2)
    return found


def _at(statement: str) -> int:
    """The line of ``statement`` in USER_CODE."""
    return USER_CODE.splitlines().index(statement) + 1


def test_the_public_api_has_real_types_for_a_user(mypy_output: str) -> None:
    notes = _user_lines(mypy_output, "note")
    ndarray = "numpy.ndarray[tuple[Any, ...], numpy.dtype[Any]]"
    # the decorated function keeps its parameters (names, types, defaults) and its result
    assert notes[_at('reveal_type(preprocess)')] == ('Revealed type is "leapp.compiler.function.CompiledFunction[[state: '
                         f'{ndarray}, scale: float =], {ndarray}]"')
    assert notes[_at('reveal_type(other)')] == ('Revealed type is "leapp.compiler.function.CompiledFunction[[x: '
                         f'{ndarray}], {ndarray}]"')
    assert notes[_at('reveal_type(preprocess(np.zeros(3)))')] == f'Revealed type is "{ndarray}"'
    assert notes[_at('reveal_type(preprocess.graphs)')] == 'Revealed type is "list[torch.fx.graph_module.GraphModule]"'
    # the module may move (leapp.pipeline -> leapp.export); the class is what counts
    assert re.fullmatch(r'Revealed type is "leapp(\.\w+)+\.PipelineRuntime"',
                        notes[_at('reveal_type(leapp.load_pipeline("out"))')])
    assert re.fullmatch(r'Revealed type is "leapp(\.\w+)+\.CompiledPipeline"',
                        notes[_at('reveal_type(leapp.compile_graph())')])


def test_typos_and_wrong_arguments_are_type_errors(mypy_output: str) -> None:
    errors = _user_lines(mypy_output, "error")
    assert 'has no attribute "exportt"' in errors[_at('preprocess.exportt("pre.onnx")')]
    assert 'Argument "scale" to "__call__" of "CompiledFunction" has incompatible type "str"' in errors[_at('preprocess(np.zeros(3), scale="2")')]
    assert '"_Annotate" has no attribute "input_tensor"' in errors[_at('annotate.input_tensor("n", {})')]
    assert 'Module has no attribute "compilee"' in errors[_at('leapp.compilee')]
    assert len(errors) == 4, errors
