"""``[tool.leapp]`` in the nearest ``pyproject.toml``, merged with command-line options.

    [tool.leapp]
    select = ["LP"]                     # code prefixes, as ruff
    ignore = ["LP205"]
    include = ["pkg/prep.py:normalize", "pkg/features/*.py", "pkg/*.py:Prep.*"]
    exclude = ["tests/fixtures/*"]
    max-file-size = 5242880
    library-allow = ["transforms3d", "mylib.*"]   # library code leapp.compile may convert (default: all)
    library-deny = ["mylib.unsafe"]

``library-allow`` / ``library-deny``: which modules' functions ``leapp.compile``
converts when their branches test traced data (``leapp.compiler.library``);
a name covers its submodules, a pattern is a glob. NumPy, torch and leapp never are.

``include`` puts code in scope without touching it: ``file`` (a glob, relative to
the ``pyproject.toml``) traces the whole file; ``file:function`` traces the
functions whose qualified name matches (``Class.method`` for methods).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from .analyze import DEFAULT_MAX_FILE_SIZE

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

KEYS = {"select", "ignore", "include", "exclude", "max-file-size", "library-allow", "library-deny"}
DEFAULT_EXCLUDE = (".git", ".hg", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist",
                   ".leapp_cache", "node_modules", ".eggs", ".mypy_cache", ".ruff_cache")


class ConfigError(ValueError):
    """Invalid configuration: a usage error (exit status 2)."""


@dataclass
class Settings:
    root: str
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    scope: str = "auto"
    config_path: str | None = None
    library_allow: list[str] | None = None  # None: every library module may be converted
    library_deny: list[str] = field(default_factory=list)

    def relative(self, path: str) -> str:
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return rel.replace(os.sep, "/")

    def is_excluded(self, path: str) -> bool:
        rel = self.relative(path)
        parts = rel.split("/")
        if any(p in DEFAULT_EXCLUDE for p in parts[:-1]):
            return True
        return any(fnmatchcase(rel, pat) or fnmatchcase(parts[-1], pat) or any(
            fnmatchcase("/".join(parts[:i]), pat) for i in range(1, len(parts)))
            for pat in self.exclude)

    def file_options(self, path: str) -> tuple[str, tuple[str, ...]]:
        """(scope, function patterns) for one file, from ``scope`` and ``include``."""
        if self.scope == "all":
            return "all", ()
        rel, functions = self.relative(path), []
        for pattern in self.include:
            file_pat, _, func_pat = pattern.partition(":")
            if fnmatchcase(rel, file_pat):
                if not func_pat:
                    return "all", ()
                functions.append(func_pat)
        return "auto", tuple(functions)


def find_pyproject(start: str) -> str | None:
    """The nearest ``pyproject.toml`` with a ``[tool.leapp]`` table, walking up."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate):
            with open(candidate, "rb") as f:
                if b"[tool.leapp" in f.read():
                    return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _strings(value, key: str, path: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.leapp] {key} must be a list of strings")
    return value


def load_settings(start: str, config_path: str | None = None) -> Settings:
    path = config_path or find_pyproject(start)
    if path is None:
        return Settings(root=os.getcwd())
    if tomllib is None:
        raise ConfigError(f"{path}: reading [tool.leapp] needs Python 3.11 or the tomli package")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: {e}") from e
    conf = data.get("tool", {}).get("leapp", {})
    unknown = set(conf) - KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.leapp] key(s): {', '.join(sorted(unknown))}")
    settings = Settings(root=os.path.dirname(os.path.abspath(path)), config_path=path)
    if "select" in conf:
        settings.select = _strings(conf["select"], "select", path)
    for key in ("ignore", "include", "exclude"):
        if key in conf:
            setattr(settings, key, _strings(conf[key], key, path))
    if "library-allow" in conf:
        settings.library_allow = _strings(conf["library-allow"], "library-allow", path)
    if "library-deny" in conf:
        settings.library_deny = _strings(conf["library-deny"], "library-deny", path)
    if "max-file-size" in conf:
        if not isinstance(conf["max-file-size"], int) or conf["max-file-size"] <= 0:
            raise ConfigError(f"{path}: [tool.leapp] max-file-size must be a positive integer")
        settings.max_file_size = conf["max-file-size"]
    return settings
