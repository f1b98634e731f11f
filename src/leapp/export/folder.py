"""Reading the files of a pipeline folder that may come from anyone.

A path named in ``pipeline.json`` is checked as text before the file system
is touched (relative, ``/``-separated, no empty, ``.`` or ``..`` part, no
control character, no backslash), so a path that points outside the folder
is refused without a ``stat``: the answer does not tell whether an outside
file exists. It is then opened from a handle on the folder one part at a
time with ``O_NOFOLLOW`` (a symbolic link anywhere below the folder is
refused, even one that points back inside) and ``O_NONBLOCK`` (a FIFO
returns at once instead of waiting for a writer), and ``fstat`` on the open
descriptor says whether it is a regular file and how big, before a byte is
read. The bytes returned are what the caller hashes and loads: nothing is
opened a second time by name.

The folder itself is the caller's choice and may be a link. Imports neither
torch nor NumPy.
"""

from __future__ import annotations

import errno
import os
import stat

from ..fsutil import file_kind

MAX_PATH = 1024
MAX_PART = 255
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def path_problem(path) -> str | None:
    """What is wrong with ``path`` as a file of a pipeline folder, from its text alone (None: nothing)."""
    if not isinstance(path, str):
        return f"a path must be a string, not {type(path).__name__}"
    if not path:
        return "the path is empty"
    if len(path) > MAX_PATH:
        return f"the path is {len(path)} characters long (at most {MAX_PATH})"
    if any(ord(c) < 32 or c in "\\\x7f" for c in path):
        return "the path holds a control character or a backslash"
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return "the path is absolute; it must be relative to the pipeline folder"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return ("the path is not normalised or leaves the folder (an empty, '.' or '..' part); "
                    "it must name a file inside the pipeline folder")
        if len(part) > MAX_PART:
            return f"a part of the path is over {MAX_PART} characters"
    return None


class FolderError(Exception):
    """Why a file of the folder was not read (the loader turns it into a ``SpecError``)."""

    def __init__(self, path, why, missing=False):
        super().__init__(f"{path}: {why}")
        self.path, self.why, self.missing = path, why, missing


class Folder:
    """A pipeline folder; ``read(path, limit)`` returns the bytes of one regular file inside it."""

    def __init__(self, folder):
        self.path = os.fspath(folder)
        self._fd = None  # the folder, opened once: every file comes from the same folder

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read(self, path: str, limit: int) -> bytes:
        problem = path_problem(path)
        if problem is not None:
            raise FolderError(path, problem)
        fd = self._open(path)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FolderError(path, f"{file_kind(st.st_mode)}, not a regular file; not read")
            if st.st_size > limit:
                raise FolderError(path, f"{st.st_size} bytes, over the limit of {limit}; not read")
            chunks, size = [], 0
            while True:  # up to limit + 1: a file that grows after the fstat is still bounded
                chunk = os.read(fd, min(limit + 1 - size, 1 << 24))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise FolderError(path, f"grew past the limit of {limit} bytes while read; not read")
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _open(self, path):
        parts = path.split("/")
        if os.open in os.supports_dir_fd:
            if self._fd is None:
                try:
                    self._fd = os.open(self.path, _FLAGS | _DIRECTORY)
                except OSError as exc:
                    raise FolderError(path, f"the folder {self.path!r} cannot be opened: {exc.strerror}",
                                      missing=exc.errno == errno.ENOENT) from None
            here, owned = self._fd, False
            try:
                for i, part in enumerate(parts):
                    last = i == len(parts) - 1
                    flags = _FLAGS | _NOFOLLOW | (_NONBLOCK if last else _DIRECTORY)
                    if last:  # a device or FIFO is refused before it is opened (opening one can act)
                        _refuse_special(path, part, here)
                    try:
                        fd = os.open(part, flags, dir_fd=here)
                    except OSError as exc:
                        raise _refusal(path, "/".join(parts[:i + 1]), exc, here, part) from None
                    if owned:
                        os.close(here)
                    here, owned = fd, True
                return here
            except BaseException:
                if owned:
                    os.close(here)
                raise
        # no dir_fd (Windows): refuse a link at any part by lstat, then open without following
        for i in range(len(parts)):
            try:
                st = os.lstat(os.path.join(self.path, *parts[:i + 1]))
            except OSError as exc:
                raise _refusal(path, "/".join(parts[:i + 1]), exc) from None
            if stat.S_ISLNK(st.st_mode):
                raise FolderError(path, _LINK.format("/".join(parts[:i + 1])))
        try:
            return os.open(os.path.join(self.path, *parts), _FLAGS | _NOFOLLOW | _NONBLOCK)
        except OSError as exc:
            raise _refusal(path, path, exc) from None


_LINK = ("{} is a symbolic link; a pipeline folder is read without following links "
         "(copy the file in instead)")


def _refusal(path, upto, exc, here=None, part=None):
    if exc.errno == errno.ENOENT:
        return FolderError(path, "missing from the folder", missing=True)
    if exc.errno in (errno.ELOOP, errno.EMLINK) or (exc.errno == errno.ENOTDIR and _is_link(here, part)):
        return FolderError(path, _LINK.format(upto))
    if exc.errno == errno.ENOTDIR:
        return FolderError(path, f"{upto} is not a folder")
    return FolderError(path, f"cannot be opened: {exc.strerror}")


def _refuse_special(path, part, here):
    try:
        mode = os.lstat(part, dir_fd=here).st_mode
    except OSError:
        return  # the open below says why
    if stat.S_ISLNK(mode):
        raise FolderError(path, _LINK.format(path))
    if not stat.S_ISREG(mode):
        raise FolderError(path, f"{file_kind(mode)}, not a regular file; not read")


def _is_link(here, part):
    if here is None:
        return False
    try:
        return stat.S_ISLNK(os.lstat(part, dir_fd=here).st_mode)
    except OSError:
        return False
