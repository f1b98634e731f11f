"""Writers and loaders for each artifact format; ``leapp.export.write`` drives them.

Each writer takes the export-ready module (tuple outputs, see
``leapp.export.prep``), example tensors and the dynamic-batch choice,
and writes one file; each loader returns a function from NumPy inputs to a
list of NumPy outputs, used to check the written file. onnx, onnxscript and
onnxruntime are imported here, lazily, only when that format is asked for.

ONNX exporter: ``auto`` uses torch's TorchScript-based exporter
(``dynamo=False``) while this torch still ships it: measured here it is about
20x faster (0.03-0.5 s against 2-12 s per graph) and, like the dynamo
exporter, byte-deterministic. ``dynamo`` selects ``torch.export`` + onnxscript;
``auto`` takes it too for a graph with an empty tensor on the example inputs,
where the TorchScript-based exporter's shape helpers divide by the element
count (a floating point exception that would end the process).
"""

from __future__ import annotations

import io
import os
import re
import sys
import types
import warnings

import numpy as np

DEFAULT_OPSET = 18
# What exporter="auto" uses for ONNX (the one flag to switch once torch drops the other; docs/export.md
# compares the two); graphs with an empty tensor take "dynamo" either way.
AUTO_ONNX_EXPORTER = "torchscript"
EXTENSIONS = {"onnx": ".onnx", "torchscript": ".pt", "pt2": ".pt2"}
# what a file of each format may be called (EXTENSIONS' first); another is refused before writing
ACCEPTED = {"onnx": (".onnx",), "torchscript": (".pt", ".pth", ".torchscript"), "pt2": (".pt2",)}
NAMES = {"onnx": "ONNX", "torchscript": "TorchScript", "pt2": "torch.export (pt2)"}


def onnx_output_names(input_names, output_names) -> list:
    """The file's output names: the user's, except where ONNX forbids it. A value name is assigned
    once in an ONNX graph, so an output named like an input (``{"x": x * 2}``) is ``output_x``."""
    taken, names = set(input_names), []
    for name in output_names:
        base = name if name not in taken else f"output_{name}"
        candidate, k = base, 1
        while candidate in taken:
            k += 1
            candidate = f"{base}_{k}"
        taken.add(candidate)
        names.append(candidate)
    return names


# Elementwise ops whose Python float operand the dynamo exporter stores as a float32 constant
# (onnxscript builds it with ONNX's value_float, then casts it to the other operand's type).
_SCALAR_OPERAND_OPS = frozenset(
    "mul add sub rsub div true_divide where maximum minimum pow remainder fmod atan2 arctan2 eq ne lt le "
    "gt ge clamp clip copysign hypot fmax fmin floor_divide __mul__ __rmul__ __add__ __radd__ __sub__ "
    "__rsub__ __truediv__ __rtruediv__ __pow__ __rpow__ __floordiv__ __rfloordiv__ __mod__ __rmod__ "
    "__eq__ __ne__ __lt__ __le__ __gt__ __ge__".split())


def _float64_scalars_exact():
    """A torch function mode, active while the dynamo exporter traces: a Python float operand that
    float32 cannot hold, next to float64 tensors only, becomes a float64 0-d tensor (a constant the
    exporter keeps in float64). onnxscript writes a Python float as a float32 constant and casts it,
    so ``x * (4 / pi)`` of float64 came out of the file 4e-8 off (the float64 sin/cos/atan
    lowerings' coefficients, a user's ``x * 0.1``), which the export check then refused. A 0-d
    float64 tensor promotes as the Python float does where every floating operand is float64."""
    import math

    import torch
    from torch.overrides import TorchFunctionMode

    torch_dir = os.path.dirname(torch.__file__) + os.sep
    wrappers = (os.path.join(torch_dir, "overrides.py"), os.path.join(torch_dir, "_tensor.py"))
    interpreter = os.path.join(torch_dir, "fx", "interpreter.py")  # runs the graph's nodes

    def lossy(v):
        return type(v) is float and math.isfinite(v) and float(np.float32(v)) != v

    def from_graph_code() -> bool:
        """Whether the op was called by leapp's graph (a node) or lowering code, not by torch's own
        decompositions run while exporting (a constant made inside those upsets torch.export's
        bookkeeping: a KeyError in fx.traceback.annotate after many exports in one process)."""
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None and (frame.f_code.co_filename in wrappers or (  # Tensor.__mul__ and such,
                frame.f_code.co_name == "__torch_function__" and frame.f_code.co_filename.startswith(torch_dir))):
            frame = frame.f_back  # and torch.export's own mode, stacked above this one
        if frame is None:
            return False
        filename = frame.f_code.co_filename
        return filename.startswith("<eval_with_key>") or filename == interpreter or (
            not filename.startswith(torch_dir) and frame.f_globals.get("__name__", "").startswith("leapp."))

    class Float64Scalars(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if (name == "full_like" or name in _SCALAR_OPERAND_OPS) and not from_graph_code():
                return func(*args, **kwargs)
            if name == "full_like" and len(args) == 2 and lossy(args[1]) and isinstance(args[0], torch.Tensor) \
                    and kwargs.get("dtype", args[0].dtype) == torch.float64:
                return torch.zeros_like(args[0], dtype=torch.float64) + torch.tensor(args[1], dtype=torch.float64)
            if name in _SCALAR_OPERAND_OPS and any(lossy(a) for a in args):
                floats = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
                if floats and all(d == torch.float64 for d in floats):
                    args = tuple(torch.tensor(a, dtype=torch.float64) if lossy(a) else a for a in args)
            return func(*args, **kwargs)

    return Float64Scalars()


def write_onnx(module, args, path, *, input_names, output_names, dynamic, opset, exporter):
    import torch

    renamed = dict(zip(output_names, onnx_output_names(input_names, output_names), strict=True))
    output_names = list(renamed.values())

    opset = opset or DEFAULT_OPSET
    if exporter == "auto":
        # the TorchScript-based exporter crashes the process (SIGFPE) on empty tensors
        exporter = "dynamo" if getattr(module, "leapp_has_empty", False) else AUTO_ONNX_EXPORTER
    elif exporter == "torchscript" and getattr(module, "leapp_has_empty", False):
        raise ValueError("the graph holds an empty tensor on the example inputs, on which the "
                         "TorchScript-based ONNX exporter ends the process (a floating point exception "
                         "in its shape helpers); use exporter='dynamo' or 'auto'")
    unsigned = getattr(module, "leapp_unsigned", None)
    if unsigned:
        from .lowering import WIDE

        args = tuple(a.to(torch.int64).to(WIDE[a.dtype]) if a.dtype in WIDE else a for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "dynamo":
            shapes = None
            if dynamic:
                batch = torch.export.Dim("batch")
                shapes = {n: ({0: batch} if n in dynamic["inputs"] else None) for n in input_names}
            with _float64_scalars_exact():
                torch.onnx.export(module, args, path, dynamo=True, input_names=input_names,
                                  output_names=output_names, opset_version=opset, external_data=False,
                                  dynamic_shapes=shapes, verbose=False, optimize=False)
        elif exporter == "torchscript":
            axes = None
            if dynamic:
                axes = {n: {0: "batch"} for n in [*dynamic["inputs"], *(renamed[o] for o in dynamic["outputs"])]}
            torch.onnx.export(module, args, path, dynamo=False, input_names=input_names,
                              output_names=output_names, opset_version=opset, dynamic_axes=axes)
        else:
            raise ValueError(f"exporter must be 'auto', 'torchscript' or 'dynamo', not {exporter!r}")
    if unsigned:
        _restore_unsigned(path, {"inputs": unsigned["inputs"],
                                 "outputs": {renamed.get(n, n): d for n, d in unsigned["outputs"].items()}})
    scalars = [renamed[n] for n in getattr(module, "leapp_scalar_outputs", ()) if n in renamed]
    if scalars:
        _restore_scalars(path, scalars)
    _restore_int_dtypes(path, {renamed.get(n, n): d for n, d in getattr(module, "leapp_output_dtypes", {}).items()})
    return exporter


_ONNX_INTS = {"int8": 3, "int16": 5, "int32": 6, "int64": 7, "uint8": 2}


def _restore_int_dtypes(path, dtypes):
    """Integer outputs the file computes in a wider type (0-d int32 as int64): Cast to NumPy's type.

    Exact: integer addition, subtraction and multiplication wrap alike in the
    wider type and after the cast. Float outputs are left alone (float64
    computed as float32 is not exact; the check then refuses it).
    """
    import onnx
    from onnx import helper

    model = onnx.load(path)
    graph = model.graph
    fixes = []
    for value in graph.output:
        want = _ONNX_INTS.get(dtypes.get(value.name, ""))
        have = value.type.tensor_type.elem_type
        if want is None or have == want or have not in _ONNX_INTS.values():
            continue
        inner = value.name + "__wide_int"
        for n in graph.node:
            n.output[:] = [inner if o == value.name else o for o in n.output]
            n.input[:] = [inner if i == value.name else i for i in n.input]
        fixes.append(helper.make_node("Cast", [inner], [value.name], to=want, name=f"leapp_int_{value.name}"))
        value.type.tensor_type.elem_type = want
    if fixes:
        graph.node.extend(fixes)
        onnx.save(model, path)


def _restore_scalars(path, names):
    """Outputs NumPy gives as 0-d that the file declares (or computes) with shape (1,): reshape to ()."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(path)
    graph = model.graph
    fixes = []
    for value in graph.output:
        dims = value.type.tensor_type.shape.dim
        if value.name not in names or (value.type.tensor_type.HasField("shape") and len(dims) == 0):
            continue
        inner = value.name + "__ranked"
        for n in graph.node:
            n.output[:] = [inner if o == value.name else o for o in n.output]
            n.input[:] = [inner if i == value.name else i for i in n.input]
        shape = value.name + "__scalar_shape"
        graph.initializer.append(numpy_helper.from_array(np.zeros((0,), np.int64), shape))
        fixes.append(helper.make_node("Reshape", [inner, shape], [value.name], name=f"leapp_0d_{value.name}"))
        del dims[:]
    if fixes:
        graph.node.extend(fixes)
        onnx.save(model, path)


def _restore_unsigned(path, unsigned):
    """Give the file the user's uint16/32/64 inputs and outputs: a Cast at each boundary value."""
    import onnx
    from onnx import TensorProto, helper

    code = {"uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64}
    model = onnx.load(path)
    graph = model.graph
    casts_in, casts_out = [], []
    for value in graph.input:
        if value.name in unsigned["inputs"]:
            wide, inner = value.type.tensor_type.elem_type, value.name + "__wide"
            for n in graph.node:
                n.input[:] = [inner if i == value.name else i for i in n.input]
            for out in graph.output:
                if out.name == value.name:  # an input returned as is: the output keeps the input's type
                    inner = value.name
            casts_in.append(helper.make_node("Cast", [value.name], [inner], to=wide,
                                             name=f"leapp_widen_{value.name}"))
            value.type.tensor_type.elem_type = code[unsigned["inputs"][value.name]]
    for value in graph.output:
        if value.name in unsigned["outputs"] and value.name not in unsigned["inputs"]:
            inner = value.name + "__wide"
            for n in graph.node:
                n.output[:] = [inner if o == value.name else o for o in n.output]
                n.input[:] = [inner if i == value.name else i for i in n.input]
            casts_out.append(helper.make_node("Cast", [inner], [value.name],
                                              to=code[unsigned["outputs"][value.name]],
                                              name=f"leapp_narrow_{value.name}"))
            value.type.tensor_type.elem_type = code[unsigned["outputs"][value.name]]
    nodes = [*casts_in, *graph.node, *casts_out]
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.save(model, path)


def load_onnx(path, input_names, output_names=None):
    import onnx
    import onnxruntime as ort

    from .loader import native

    onnx.checker.check_model(onnx.load(path), full_check=True)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    if output_names is not None:  # the user's names, as onnx_output_names gives them
        want, got = onnx_output_names(input_names, output_names), [o.name for o in session.get_outputs()]
        if got != want:
            raise ValueError(f"the file's outputs are named {got}, not {want}")

    def run(inputs):
        # An input the graph never reads is dropped from the ONNX file; feed only the kept ones.
        # (np.ascontiguousarray would make a 0-d input 1-d, and every result with it.)
        return session.run(None, {n: native(np.asarray(inputs[n], order="C")) for n in names})

    return run


def named_outputs(module, output_names):
    """A copy of the export-ready ``module`` whose forward returns ``{user's name: tensor}`` in
    ``output_names`` order instead of a tuple: how TorchScript and .pt2 files keep the names (a
    ``Dict[str, Tensor]`` result in TorchScript, the dict's keys in torch.export's output spec)."""
    import torch.fx

    graph = torch.fx.Graph()
    values = graph.graph_copy(module.graph, {})
    values = values if isinstance(values, (tuple, list)) else (values,)
    graph.output(dict(zip(output_names, values, strict=True)))
    return torch.fx.GraphModule(module, graph)


def write_torchscript(module, args, path, *, output_names, **_):
    import torch

    module = named_outputs(module, output_names)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        # A fresh compilation unit: the global one mangles class names with a counter that
        # grows with every export in the process, and the names end up in the file.
        # strict=False: the result is a dict (the output names), which strict tracing refuses.
        scripted = torch.jit.trace(module, args, check_trace=False, strict=False,
                                   _compilation_unit=torch._C.CompilationUnit())
        buffer = io.BytesIO()  # torch's own file writer aborts the process on a full disk
        torch.jit.save(scripted, buffer)
    _write_bytes(path, _normalize_torchscript(buffer.getvalue()))
    return "torch.jit.trace"


def _write_bytes(path, data):
    """Through Python, so a full disk is an ``OSError`` (torch's C++ writer would abort instead)."""
    with open(path, "wb") as f:
        f.write(data)


_MANGLE = re.compile(rb"[./]___torch_mangle_\d+(?=[.\n])")


def _normalize_torchscript(data):
    """Make the archive's bytes a function of the graph alone.

    TorchScript names a class ``___torch_mangle_<n>`` with a counter that grows
    with every export in the process, keeps debug tables that name
    ``<eval_with_key>.<n>`` (another counter), and writes a random
    ``serialization_id``. The archive is rewritten without those: mangling
    suffixes dropped (each load uses its own compilation unit, so the plain
    name is free), debug tables dropped (only error messages use them), the
    id derived from the contents.
    """
    import zipfile
    import zlib

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        records = [(i.filename, archive.read(i)) for i in archive.infolist()
                   if not i.filename.endswith(".debug_pkl")]
    records = [(_MANGLE.sub(b"", n.encode()).decode(), _MANGLE.sub(b"", data)) for n, data in records]
    digest = 0
    for name, data in records:
        if not name.endswith(".data/serialization_id"):
            digest = zlib.crc32(data, zlib.crc32(name.encode(), digest))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in records:
            if name.endswith(".data/serialization_id"):
                data = f"{digest:0{len(data)}d}".encode()[: len(data)]
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return out.getvalue()


def load_torchscript(path, input_names, output_names=None):
    import torch

    loaded = torch.jit.load(path)
    return _torch_runner(loaded, input_names, output_names)


def write_pt2(module, args, path, *, input_names, output_names, dynamic, **_):
    import torch

    module = named_outputs(module, output_names)
    shapes = None
    if dynamic:
        # keyed by forward()'s parameters, which are the input names made identifiers
        # ("depth.raw" is the placeholder depth_raw): in placeholder order, as the names are
        batch = torch.export.Dim("batch")
        params = [n.target for n in module.graph.nodes if n.op == "placeholder"]
        shapes = {p: ({0: batch} if n in dynamic["inputs"] else None)
                  for p, n in zip(params, input_names, strict=True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(module, args, dynamic_shapes=shapes, strict=False)
        for node in program.graph.nodes:
            # provenance records id()s and memory addresses: the bytes would change every run
            node.meta.pop("from_node", None)
        buffer = io.BytesIO()  # as for TorchScript: no C++ file writer
        torch.export.save(program, buffer)
    _write_bytes(path, _pin_serialization_id(buffer.getvalue()))
    return "torch.export"


def _pin_serialization_id(data):
    """Replace the archive's random ``serialization_id`` with one derived from its contents.

    The record is patched in place (same length), so the zip layout and the
    alignment torch relies on stay; its CRC-32 is fixed where the archive
    keeps it: the local header (or the data descriptor after the data) and
    the archive's own central directory, found from its end record. (A
    .pt2 nests other torch archives as stored members, each with a central
    directory entry of the same name: searching the bytes for one patched
    the nested record and broke the CRC of the member holding it.)
    """
    import struct
    import zipfile
    import zlib

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        end = archive.start_dir  # where the outer central directory starts
    target = next((i for i in infos if i.filename.endswith(".data/serialization_id")), None)
    if target is None or target.compress_type != zipfile.ZIP_STORED:
        return data
    digest = 0
    for info in infos:
        if info is not target:
            digest = zlib.crc32(f"{info.filename}:{info.CRC}".encode(), digest)
    new = f"{digest:0{target.file_size}d}"[: target.file_size].encode()
    crc = zlib.crc32(new)
    data = bytearray(data)
    off = target.header_offset
    name_len, extra_len = struct.unpack_from("<HH", data, off + 26)
    start = off + 30 + name_len + extra_len
    data[start:start + len(new)] = new
    if struct.unpack_from("<I", data, off + 14)[0]:
        struct.pack_into("<I", data, off + 14, crc)
    if target.flag_bits & 0x08:  # a data descriptor after the data repeats the CRC
        after = start + len(new)
        struct.pack_into("<I", data, after + 4 if data[after:after + 4] == b"PK\x07\x08" else after, crc)
    pos = end
    for _ in infos:  # the outer central directory, entry by entry
        if data[pos:pos + 4] != b"PK\x01\x02":
            raise ValueError("unexpected central directory layout in a torch.export archive")
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        if struct.unpack_from("<I", data, pos + 42)[0] == off:  # this entry's local header offset
            struct.pack_into("<I", data, pos + 16, crc)
            break
        pos += 46 + n + m + k
    out = bytes(data)
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        bad = archive.testzip()
    if bad is not None:
        raise ValueError(f"pinning the serialization id broke the CRC of {bad}")
    return out


def load_pt2(path, input_names, output_names=None):
    """Weights-only, as the pipeline loader does: no pickle in the file runs (attach reads users' files)."""
    from .torch_artifacts import load_pt2 as load

    with open(path, "rb") as f:
        data = f.read()
    return _torch_runner(load(data, path), input_names, output_names)


def _torch_runner(fn, input_names, output_names=None):
    """NumPy in, a list of NumPy outputs out. A file that returns a dict (leapp's own, see
    ``named_outputs``) must hold exactly ``output_names`` when they are given, in that order."""
    import torch

    from ..runtime.dtypes import tensor_from_numpy

    def run(inputs):
        with torch.no_grad():
            out = fn(*[tensor_from_numpy(inputs[n]) for n in input_names])
        if isinstance(out, dict):
            if output_names is not None and list(out) != list(output_names):
                raise ValueError(f"the file's outputs are named {list(out)}, not {list(output_names)}")
            out = tuple(out.values())
        out = out if isinstance(out, (tuple, list)) else (out,)
        return [o.detach().cpu().numpy() for o in out]

    return run


WRITERS = {"onnx": write_onnx, "torchscript": write_torchscript, "pt2": write_pt2}
LOADERS = {"onnx": load_onnx, "torchscript": load_torchscript, "pt2": load_pt2}
