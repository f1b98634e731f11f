"""Reading and writing the user's files without damaging them.

Every file leapp writes for the user (a fixed or rewritten source file, an
exported artifact's sidecar, the lint cache) goes through ``atomic_write``:
the bytes go to a new temporary file in the target's folder (a random name
created with ``O_EXCL``, which never follows a planted symlink), are flushed
to disk, take the file's mode, and are renamed over the target in one step.
A kill at any point leaves the old file or the new one, never a truncated
one; an error that Python sees removes the temporary file. What a kill
leaves (a ``.<name>.<pid>.<random>.leapp-tmp`` file, an export's
``.leapp-export-<pid>-*`` staging folder) is removed by ``sweep_stale`` on
the next write to that folder, once its process is gone.

Reading goes through ``read_regular``: FIFOs, devices and sockets are
refused before they are opened, and the size limit is checked before a byte
is read. This module imports neither torch nor numpy.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import time

from .errors import FileTooLargeError, NotARegularFileError, ReadOnlyFileError

TMP_SUFFIX = ".leapp-tmp"
STALE_AFTER_S = 3600  # a leftover whose process still runs is stale only after this long
UTF8_BOM = b"\xef\xbb\xbf"


def current_umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no way to read it without setting it elsewhere
    os.umask(mask)
    return mask


def default_mode() -> int:
    """The mode a new file gets: ``0o666`` less the user's umask, as ``open()`` would give."""
    return 0o666 & ~current_umask()


def file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file; refuses anything else before opening it, and big files before reading.

    Raises ``NotARegularFileError``, ``FileTooLargeError`` or the ``OSError`` of the failing call.
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFileError(errno.EINVAL, f"{file_kind(st.st_mode)}, not a regular file", path)
    if limit is not None and st.st_size > limit:
        raise FileTooLargeError(path, st.st_size, limit)
    # O_NONBLOCK: if a FIFO was swapped in after the stat, opening it does not wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFileError(errno.EINVAL, f"{file_kind(st.st_mode)}, not a regular file", path)
        cap = st.st_size + 1 if limit is None else limit + 1
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, max(cap - size, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                raise FileTooLargeError(path, max(size, st.st_size), limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def refuse_read_only(path: str) -> None:
    """Raise ``ReadOnlyFileError`` if ``path`` has no write bit: its owner marked it not to be changed.

    The mode bits decide, not ``os.access``: root may write anything, and a rename over the file
    (``atomic_write``) needs only the folder's permission, so neither would stop leapp. ruff leaves
    such a file alone too.
    """
    st = os.stat(path)
    if not st.st_mode & 0o222:
        raise ReadOnlyFileError(errno.EACCES, f"read-only (mode {stat.S_IMODE(st.st_mode):04o}); left as it was",
                                path)


def decode_source(data: bytes) -> tuple[str, bool]:
    """(text, had a UTF-8 BOM). Raises ``UnicodeDecodeError``."""
    bom = data.startswith(UTF8_BOM)
    return data[len(UTF8_BOM):].decode("utf-8") if bom else data.decode("utf-8"), bom


def encode_source(text: str, bom: bool) -> bytes:
    return (UTF8_BOM if bom else b"") + text.encode("utf-8")


def atomic_write(path: str, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` in one step (see the module docstring).

    ``mode`` defaults to the existing file's permission bits, or for a new
    file to what the umask gives. A symlink at ``path`` is replaced, not followed:
    pass ``os.path.realpath(path)`` to write through it.
    """
    path = os.path.abspath(path)
    folder, base = os.path.split(path)
    if mode is None:
        try:
            st = os.lstat(path)
            mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else default_mode()
        except FileNotFoundError:
            mode = default_mode()
    if os.path.isdir(path) and not os.path.islink(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    sweep_stale(folder, f".{base}.")
    fd, tmp_name = _open_temp(folder, base)
    tmp: str | None = tmp_name
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp_name, path)
        tmp = None
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    _fsync_folder(folder)


def _temp_name(folder: str, base: str) -> str:
    return os.path.join(folder, f".{base}.{os.getpid()}.{secrets.token_hex(6)}{TMP_SUFFIX}")


def _open_temp(folder: str, base: str) -> tuple[int, str]:
    """A new file under a random name; ``O_EXCL`` (with ``O_NOFOLLOW``) never opens a planted link."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    for _ in range(100):
        name = _temp_name(folder, base)
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", folder)


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (where the OS lets a folder be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def sweep_stale(folder: str, prefix: str, *, max_age_s: float = STALE_AFTER_S) -> int:
    """Remove leapp's leftovers named ``<prefix><pid>...`` in ``folder``: ours, and stale.

    Stale means: the process that made it is gone, or it is older than ``max_age_s``.
    Only entries owned by this user are touched; symlinks are never followed. Returns the count.
    """
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return 0
    removed, now, uid = 0, time.time(), os.getuid() if hasattr(os, "getuid") else None
    for name in names:
        rest = name[len(prefix):]
        is_temp = name.endswith(TMP_SUFFIX)
        if not (is_temp or prefix.startswith(".leapp-export-")):
            continue
        pid_text = rest.replace("-", ".").split(".", 1)[0]
        full = os.path.join(folder, name)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if uid is not None and st.st_uid != uid:
            continue
        dead = pid_text.isdigit() and not _pid_alive(int(pid_text))
        if not (dead or now - st.st_mtime > max_age_s):
            continue
        try:
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(full)
            elif stat.S_ISREG(st.st_mode):
                os.unlink(full)
            else:
                continue
            removed += 1
        except OSError:
            pass
    return removed
