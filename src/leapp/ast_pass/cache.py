"""The lint cache: results per file content, in a private folder, trusted only after checking.

Where: ``--cache-dir``, else ``$LEAPP_CACHE_DIR``, else ``$XDG_CACHE_HOME/leapp``
(``~/.cache/leapp``); one file per project root (``lint-<hash of the root>.json``),
never in the current folder. The folder is created ``0700``; a folder that
is a symlink, is not owned by the user, or is writable by others is not used
(the run lints without a cache and says so on stderr). The file is read
without following a symlink and replaced atomically (``leapp.fsutil``).

What is read is validated, not trusted: a file of another leapp version or
rule set, JSON of the wrong shape, or an entry whose fields, types or
checksum do not match is dropped and the file is checked again. A cache can
cost time, never a finding.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import sys

from leapp.fsutil import atomic_write

from .rules import RULES_BY_CODE

FORMAT = 2
MAX_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 20_000
_DIAG_INTS = ("line", "col", "end_line", "end_col")


def default_dir() -> str:
    env = os.environ.get("LEAPP_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "leapp")


def _private_dir(path: str) -> str | None:
    """``path`` created 0700, or None (with the reason on stderr) when it is not safe to use."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as e:
        _refuse(path, e.strerror or str(e))
        return None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        _refuse(path, "not a directory (or a symlink)")
        return None
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        _refuse(path, "owned by another user")
        return None
    if st.st_mode & 0o022:
        _refuse(path, "writable by other users")
        return None
    return path


def _refuse(path: str, why: str) -> None:
    print(f"leapp: not using the lint cache at {path}: {why}", file=sys.stderr)


def _valid_diagnostic(d) -> bool:
    if not isinstance(d, dict) or set(d) != {"code", "message", *_DIAG_INTS, "fix"}:
        return False
    if not (isinstance(d["code"], str) and d["code"] in RULES_BY_CODE and isinstance(d["message"], str)):
        return False
    if not all(type(d[k]) is int and d[k] >= 0 for k in _DIAG_INTS) or d["line"] < 1 or d["col"] < 1:
        return False
    fix = d["fix"]
    if fix is None:
        return True
    if not (isinstance(fix, dict) and set(fix) == {"title", "edits"} and isinstance(fix["title"], str)
            and isinstance(fix["edits"], list) and fix["edits"]):
        return False
    return all(isinstance(e, dict) and set(e) == {*_DIAG_INTS, "text"} and isinstance(e["text"], str)
               and all(type(e[k]) is int and e[k] >= 1 for k in _DIAG_INTS) for e in fix["edits"])


def _checksum(key: str, diagnostics: list) -> str:
    return hashlib.sha256((key + json.dumps(diagnostics, sort_keys=True)).encode()).hexdigest()[:32]


class Cache:
    """Diagnostics (as dicts, without ``path``) by content key, for one project root."""

    def __init__(self, root: str, salt: str, enabled: bool = True, folder: str | None = None):
        self.enabled, self.salt = enabled, salt
        self.entries: dict[str, list] = {}
        self.dirty = False
        self.path = ""  # set below when the cache is used
        if not enabled:
            return
        folder = _private_dir(os.path.abspath(folder or default_dir()))
        if folder is None:
            self.enabled = False
            return
        project = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:24]
        self.path = os.path.join(folder, f"lint-{project}.json")
        self.entries = self._load()

    def _load(self) -> dict:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            if e.errno not in (errno.ENOENT,):
                self.dirty = True  # a symlink or other junk sits there: replace it
            return {}
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
                return {}
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = json.loads(f.read())
        except (OSError, ValueError, RecursionError):
            return {}
        finally:
            os.close(fd)
        if not (isinstance(data, dict) and data.get("format") == FORMAT
                and data.get("salt") == self.salt and isinstance(data.get("entries"), dict)):
            return {}
        entries = {}
        for key, entry in data["entries"].items():
            if (isinstance(entry, dict) and set(entry) == {"diagnostics", "checksum"}
                    and isinstance(entry["diagnostics"], list)
                    and all(_valid_diagnostic(d) for d in entry["diagnostics"])
                    and entry["checksum"] == _checksum(key, entry["diagnostics"])):
                entries[key] = entry["diagnostics"]
        return entries

    def get(self, key: str) -> list | None:
        return self.entries.get(key) if self.enabled else None

    def put(self, key: str, diagnostics: list[dict]) -> None:
        if self.enabled:
            self.entries.pop(key, None)  # newest last: the oldest go first when the file is full
            self.entries[key] = [{k: v for k, v in d.items() if k != "path"} for d in diagnostics]
            self.dirty = True

    def save(self) -> None:
        if not (self.enabled and self.dirty):
            return
        keep = list(self.entries.items())[-MAX_ENTRIES:]
        data = {"format": FORMAT, "salt": self.salt, "entries": {
            k: {"diagnostics": v, "checksum": _checksum(k, v)} for k, v in keep}}
        try:
            atomic_write(self.path, json.dumps(data).encode(), mode=0o600)
        except OSError as e:
            _refuse(self.path, f"cannot write it ({e.strerror or e})")
