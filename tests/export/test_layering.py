"""The export package's floors (``leapp/export/__init__.py``): imports run one way only.

Each module of ``leapp.export`` is parsed with ``ast``; every import of another
leapp module, at the top or inside a function, is checked against the floor
table below, which mirrors the package docstring and docs/architecture.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import leapp.export

PACKAGE = Path(leapp.export.__file__).parent
FLOORS = {
    "folder": 0, "onnx_refs": 0, "sidecar": 0, "spec": 0, "initial": 0,
    "torch_artifacts": 1,
    "loader": 2,
    "lowering": 3, "batch": 3,
    "prep": 4,
    "formats": 5,
    "write": 6,
    "__init__": 7,  # re-exports write's names, lazily
}
# leapp packages outside export/: those below it may be imported, those above it never
BELOW = {"errors", "fsutil", "extras", "runtime", "table", "__version__"}  # table: pure data, imports nothing of leapp
ABOVE = {"pipeline", "compiler", "api", "cli", "main_job", "ast_pass", "dispatch", "examples"}
# what the robot's loader may import, at the top of the module and inside its functions
LOADER_TOP = {"__future__", "os", "re", "dataclasses", "numpy", "leapp.export.initial",
              "leapp.export.spec", "leapp.export.folder", "leapp.export.onnx_refs"}
LOADER_LAZY = {"onnxruntime", "leapp.export.torch_artifacts"}


def _imports(name):
    """[(absolute module or leapp name, at_top_level)] for every import statement in ``name``."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(), filename=f"{name}.py")
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                out.append((node.module, id(node) in top))
                continue
            base = ["leapp", "export"][: 3 - node.level] if node.level <= 2 else []
            parts = [*base, *(node.module.split(".") if node.module else [])]
            if node.module is None or (node.level == 1 and len(parts) == 2) or (node.level == 2 and len(parts) == 1):
                out += [(".".join([*parts, a.name]), id(node) in top) for a in node.names]  # from . import spec
            else:
                out.append((".".join(parts), id(node) in top))
    return out


def _leapp_target(module):
    """('export', 'spec') / ('leapp', 'runtime') / None for a module outside leapp."""
    parts = module.split(".")
    if parts[0] != "leapp":
        return None
    if len(parts) >= 3 and parts[1] == "export":
        return ("export", parts[2])
    return ("leapp", parts[1] if len(parts) > 1 else "__init__")


def test_every_module_of_the_package_has_a_floor():
    assert sorted(p.stem for p in PACKAGE.glob("*.py")) == sorted(FLOORS)


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_no_module_imports_a_higher_floor(name):
    for module, _ in _imports(name):
        target = _leapp_target(module)
        if target is None:
            continue
        kind, what = target
        if kind == "export":
            assert what in FLOORS, f"{name}.py imports {module}, which has no floor"
            assert FLOORS[what] <= FLOORS[name], (
                f"{name}.py (floor {FLOORS[name]}) imports {module} (floor {FLOORS[what]})")
        else:
            assert what not in ABOVE, f"{name}.py imports {module}, which sits above leapp.export"
            assert what in BELOW, f"{name}.py imports {module}: add it to BELOW or ABOVE"


def test_the_loader_imports_only_what_a_robot_has():
    imports = _imports("loader")
    top = {m for m, at_top in imports if at_top}
    lazy = {m for m, at_top in imports if not at_top}
    assert top <= LOADER_TOP, top - LOADER_TOP
    assert lazy <= LOADER_LAZY, lazy - LOADER_LAZY


def test_the_import_parser_sees_imports(tmp_path, monkeypatch):
    """The checks above would pass on a parser that found nothing: plant a wrong import and see it."""
    (tmp_path / "spec.py").write_text("from . import write\nimport torch\ndef f():\n    from ..pipeline import x\n")
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path)
    assert _imports("spec") == [("leapp.export.write", True), ("torch", True), ("leapp.pipeline", False)]
    with pytest.raises(AssertionError, match="floor 0.*imports leapp.export.write"):
        test_no_module_imports_a_higher_floor("spec")
