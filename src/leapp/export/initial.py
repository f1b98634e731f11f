"""Reading ``initial.npz`` from its bytes, each member checked against the spec before it is allocated.

leapp writes the file uncompressed (``spec.write_initial``), as ``np.savez``
does, so a compressed member is refused: nothing is inflated, and a member
can be no bigger than the bytes it takes in the file (no zip bomb). Each
member's ``.npy`` header (read with ``numpy.lib.format``, pickles refused)
must give the dtype and the shape the spec declares for the port it feeds,
and its size must be what the header says, before its data is read. The
keys must be exactly the ones the spec names, each once.
"""

from __future__ import annotations

import collections
import io
import math
import zipfile
from typing import Any

import numpy as np

from .spec import BATCH, SpecError

MAX_HEADER = 10_000  # numpy's own default bound on a .npy header


def read(data: bytes, wanted: dict, *, batch: bool, file: str) -> dict:
    """``{key: array}`` from the bytes of the .npz; ``wanted`` is ``{key: (dtype, shape, port)}``."""
    def refuse(why):
        raise SpecError(f"{file}: {why}")

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        refuse(f"not a readable .npz (zip) file: {exc}")
    names = [i.filename for i in infos]
    doubled = sorted(n for n, k in collections.Counter(names).items() if k > 1)
    if doubled:
        refuse(f"the member(s) {doubled} appear twice; a reader would have to guess which one counts")
    keys = {n[:-4]: i for n, i in zip(names, infos, strict=True) if n.endswith(".npy")}
    strays = sorted(n for n in names if not n.endswith(".npy"))
    unknown, missing = sorted(set(keys) - set(wanted)), sorted(set(wanted) - set(keys))
    if strays or unknown or missing:
        refuse(f"its keys do not match pipeline.json: unknown {unknown + strays}, missing {missing}")
    batches = {}
    out = {}
    for key, (dtype, shape, port) in wanted.items():
        info = keys[key]
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            refuse(f"the member {info.filename!r} is compressed; leapp reads initial values uncompressed "
                   f"(as it writes them), so that nothing is inflated")
        if info.flag_bits & 0x1:
            refuse(f"the member {info.filename!r} is encrypted")
        try:
            with archive.open(info) as f:
                version = np.lib.format.read_magic(f)
                reader: Any = {(1, 0): np.lib.format.read_array_header_1_0,
                          (2, 0): np.lib.format.read_array_header_2_0}.get(version)
                if reader is None:
                    refuse(f"key {key!r}: .npy format version {version} is not read")
                got_shape, fortran, got_dtype = reader(f, max_header_size=MAX_HEADER)
                header = f.tell()
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            refuse(f"key {key!r}: not a readable .npy member: {exc}")
        if got_dtype.hasobject or got_dtype.fields is not None or got_dtype.subdtype is not None:
            refuse(f"key {key!r}: dtype {got_dtype} holds objects or fields; only plain arrays are read")
        if got_dtype.newbyteorder("=") != dtype.newbyteorder("="):
            refuse(f"key {key!r} (the initial value of {port}): dtype {got_dtype}, where the port is {dtype}")
        fits = len(got_shape) == len(shape) and all(
            w == g or (batch and i == 0 and w == BATCH) for i, (w, g) in enumerate(zip(shape, got_shape,
                                                                                    strict=True)))
        if not fits:
            refuse(f"key {key!r} (the initial value of {port}): shape {list(got_shape)}, where the port is "
                   f"{list(shape)}")
        if batch and shape and shape[0] == BATCH:
            batches[key] = got_shape[0]
        size = header + math.prod(got_shape) * got_dtype.itemsize
        if size != info.file_size:
            refuse(f"key {key!r}: the member holds {info.file_size} bytes where its header declares {size}")
        try:
            with archive.open(info) as f:  # from the bytes in memory; CRC-32 checked at the end
                value = np.lib.format.read_array(f, allow_pickle=False, max_header_size=MAX_HEADER)
                if f.read(1):
                    refuse(f"key {key!r}: bytes after the array's data")
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            refuse(f"key {key!r}: its data cannot be read: {exc}")
        out[key] = value
    if len(set(batches.values())) > 1:
        refuse(f"the initial values have different batch sizes {batches}; they come from one traced batch")
    return out
