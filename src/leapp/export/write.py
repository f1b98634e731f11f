"""Export a compiled node to ONNX, TorchScript or ``torch.export`` (.pt2), checked against NumPy.

    export_node(node, "out/preprocess.onnx")            # + out/preprocess.onnx.json
    export_pipeline(pipeline, "out", format="onnx")     # one artifact per node + pipeline.json

Every export runs the graph passes on a copy, writes the artifact to a
temporary file in the target folder, loads that file back and runs it on
fresh inputs against the node itself (whose values are NumPy's), and only
then renames it into place: a failed export leaves no file that looks valid.
A kill never leaves a description (``.json``) of another artifact; it
carries the artifact's SHA-256. Staging folders a killed export left are
removed by the next export to that folder; files get the mode the umask
gives; an OS error (a full disk, a folder as target) is an ``ExportError``.
Heavy libraries (onnx, onnxruntime) are imported only inside these functions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile

import numpy as np

from ..errors import ExportError
from ..extras import require
from ..fsutil import atomic_write, default_mode, sweep_stale

FORMATS = ("onnx", "torchscript", "pt2")
STAGING_PREFIX = ".leapp-export-"
_TOL = {"f4": (1e-4, 1e-5), "f8": (1e-9, 1e-12)}


def export_node(node, path, format="onnx", *, dynamic_batch=False, check=True, opset=None,
                exporter="auto", example_inputs=None, optimize=True, edges=None, n_checks=2,
                reference=None):
    """Write ``node`` (a ``CompiledNode``) to ``path`` and ``path + ".json"``; returns the description.

    ``example_inputs`` (name -> array) are what the export is traced with and
    the value ranges fresh check inputs are drawn from; by default inputs of
    the traced shapes and dtypes are drawn at random. ``dynamic_batch`` makes
    the leading dimension of every input free; the check then also runs at a
    different batch size. ``reference`` (inputs dict -> outputs dict, the
    user's NumPy function; ``cf.export`` passes it) is what the artifact is
    compared with; without it, the node's own values are.
    """
    from . import formats as fmt
    from .prep import prepare

    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    path = os.fspath(path)
    if format == "onnx":  # before the work: torch's own message comes only after the export ran
        require("onnx", f"export of {node.name!r} to ONNX ({path})")
    if not node.output_names:
        # every result is a Python value (spatialmath.base.isrot's True): the graph holds nothing;
        # onnxruntime cannot even load such a file
        raise ExportError(f"node {node.name!r} has no array outputs: every result is a Python value that "
                          f"does not depend on the inputs, which an exported file does not hold. Nothing was "
                          f"written; return an array (np.asarray(value)) to export it")
    folder = _target_folder(path, node.name, format)
    specs = _input_specs(node)
    rng = np.random.default_rng(0)
    example = example_inputs or {n: _draw(s, rng, None) for n, s in specs.items()}
    example = {n: np.asarray(example[n], dtype=specs[n]["dtype"]) for n in node.input_names}
    gm = _optimized_copy(node) if optimize else node.graph_module
    graph, dynamic = node, None
    if dynamic_batch:
        gm, graph = _batch_free(node, gm, example)
        dynamic = _dynamic_spec(graph, example, rng)
    args = tuple(_tensor(example[n]) for n in node.input_names)
    try:
        module, notes = prepare(gm, node.output_names, onnx=format == "onnx", example=args)
    except Exception as exc:  # a decomposition that does not run on these inputs: leapp's bug
        failed = getattr(exc, "leapp_fx_node", None)
        where = "" if failed is None else (f" at {failed.meta.get('leapp_call', failed.target)} "
                                           f"({failed.meta.get('leapp_source') or '?'})")
        raise ExportError(f"preparing node {node.name!r} for {format} failed{where} (a leapp bug; "
                          f"please report it): {type(exc).__name__}: {_first_line(exc)}. Nothing was "
                          f"written. Try {_OTHER_FORMAT[format]}") from exc
    # A private folder next to the target, holding a file of the target's own name: formats that
    # are zip archives name their root folder after the file, so the bytes do not depend on a
    # temporary name, and os.replace stays on one file system (atomic).
    staging = _staging_folder(folder)
    tmp = os.path.join(staging, os.path.basename(path))
    try:
        try:
            used = fmt.WRITERS[format](module, args, tmp, input_names=node.input_names,
                                      output_names=node.output_names, dynamic=dynamic,
                                      opset=opset, exporter=exporter)
        except Exception as exc:
            raise _export_failed(exc, node, module, format) from exc
        checked = None
        if check:
            try:
                run = fmt.LOADERS[format](tmp, node.input_names, node.output_names)
            except Exception as exc:
                raise _load_failed(exc, node, module, format) from exc
            blame = _Blame(module, format, node, dynamic, opset, exporter, staging)
            checked = _check(graph, run, example, dynamic, rng, format, n_checks, reference, blame)
        description = _describe(node, format, used, opset, path, specs, dynamic, notes, edges)
        if checked:
            description["checked"] = checked
        _commit(tmp, path, description)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return description


def _target_folder(path, name, format):
    """The target's folder, created; a target that is a folder, or cannot be made, or whose extension
    names another format, is an ExportError (raised before anything is created)."""
    from .formats import ACCEPTED, EXTENSIONS, NAMES

    extension = EXTENSIONS[format]
    for p in (path, path + ".json"):
        if os.path.isdir(p):
            raise ExportError(f"export target {p!r} is a directory; give a file path, e.g. "
                              f"{os.path.join(path, _safe(name) + extension)!r}")
    stem, ext = os.path.splitext(path)
    if ext.lower() not in ACCEPTED[format]:
        owner = next((f for f, exts in ACCEPTED.items() if ext.lower() in exts), None)
        if owner:
            what, fix = f"{ext} is the extension of {NAMES[owner]} files", f", or format={owner!r}"
        else:
            what, fix = (f"{ext} is not an extension leapp writes" if ext else "the name has no extension"), ""
        named = " or ".join("*" + e for e in ACCEPTED[format])
        raise ExportError(f"export to {path!r} as {format}: {what}, and {NAMES[format]} files are "
                          f"named {named}; nothing was written. Use {os.path.basename(stem) + extension!r}{fix}")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot create the export folder {folder!r}: {_os_reason(exc)}") from exc
    return folder


def _staging_folder(folder):
    """A private folder next to the target, named after this process so the next export can tell
    a killed export's leftovers (a dead pid, or old) from a running one's, and remove them."""
    sweep_stale(folder, STAGING_PREFIX)
    try:
        return tempfile.mkdtemp(dir=folder, prefix=f"{STAGING_PREFIX}{os.getpid()}-")
    except OSError as exc:
        raise ExportError(f"cannot write in the export folder {folder!r}: {_os_reason(exc)}") from exc


def _commit(tmp, path, description):
    """Put the checked artifact and its description in place, in an order a kill cannot break.

    The old description goes first, then the artifact is renamed over the old one, then the new
    description is written (atomically). A kill between any two steps leaves an artifact without a
    description, never a description of another artifact; the description also carries the
    artifact's SHA-256, so a reader can check the pair.
    """
    import hashlib

    sidecar = path + ".json"
    try:
        with open(tmp, "rb") as f:
            description["artifact_sha256"] = hashlib.sha256(f.read()).hexdigest()
        os.chmod(tmp, default_mode())
        if os.path.lexists(sidecar):
            os.unlink(sidecar)
        os.replace(tmp, path)
        atomic_write(sidecar, (json.dumps(description, indent=2) + "\n").encode(), mode=default_mode())
    except OSError as exc:
        raise ExportError(f"cannot write {exc.filename or path!r}: {_os_reason(exc)}; "
                          f"the export was not completed") from exc


def _os_reason(exc):
    return exc.strerror or str(exc) or type(exc).__name__


def export_pipeline(pipeline, folder, format="onnx", **options):
    """Export a seed-API ``CompiledPipeline``: ``pipeline.export(folder, format)`` (see docs/pipelines.md)."""
    return pipeline.export(folder, format, **options)


def _optimized_copy(node):
    import copy

    from ..runtime.passes import optimize

    gm = copy.deepcopy(node.graph_module)
    optimize(gm)
    return gm


def _input_specs(node):
    placeholders = {n.meta.get("leapp_input", n.target): n for n in node.graph_module.graph.nodes
                    if n.op == "placeholder"}
    specs = {}
    for name in node.input_names:
        meta = placeholders[name].meta
        specs[name] = {"dtype": np.dtype(meta["leapp_dtype"]), "shape": tuple(meta["leapp_shape"])}
    return specs


def _draw(spec, rng, like, shape=None):
    """Fresh values of an input: the example's (finite) value range, so index inputs stay valid."""
    dtype, shape = spec["dtype"], shape if shape is not None else spec["shape"]
    lo, hi = -3.0, 3.0
    if like is not None and like.size and like.dtype.kind in "iufb":
        finite = like[np.isfinite(like)] if like.dtype.kind == "f" else like
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(np.floor(lo)), int(info.min)), min(int(np.floor(hi)), int(info.max))
        # the generator draws in the machine's byte order only; the input keeps the example's
        return rng.integers(lo, hi, shape, endpoint=True, dtype=dtype.newbyteorder("=")).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


# Edge inputs, one kind per case so one kind cannot mask another (a NaN in a row hides its inf)
# (a NaN with its sign bit set, as x86 makes inf - inf: np.copysign(1.0, -nan) is -1.0, and an
# ONNX file, which cannot read a NaN's sign, gives 1.0)
EDGE_KINDS = {"NaN": np.array([np.nan]), "±inf": np.array([np.inf, -np.inf]),
              "±0.0": np.array([-0.0, 0.0]), "-NaN": np.array([-np.nan])}
EDGE_LABELS = (*(f"inputs with {k}" for k in EDGE_KINDS), "all-zero float inputs", "negative integers",
               "extreme integers", "most negative integers")


def _edge_cases(example, rng, *, no_inf=False):
    """Check inputs at NumPy's edges: NaN (of either sign), ±inf, ±0.0 in float inputs, every float
    input zero; negated integers; integers at their type's extremes.

    Each is the example with some elements replaced, so shapes, index ranges
    and the other inputs stay those of a valid call.
    """
    cases = []
    floats = [n for n, v in example.items() if v.dtype.kind == "f" and v.size]
    for kind, values in EDGE_KINDS.items():
        if not floats:
            break
        if no_inf and kind == "±inf":
            continue  # NumPy itself would not return (table.guards.NUMPY_HANGS_ON_INF)
        case = dict(example)
        for name in floats:
            v = example[name].copy()
            flat = v.reshape(-1)
            # NaN sparse (a reduction that skips it shows), the others dense
            share = 8 if kind == "NaN" else 3
            picks = rng.permutation(flat.size)[: max(1, flat.size // share)]
            flat[picks] = values[np.arange(picks.size) % values.size]
            case[name] = v
        cases.append((f"inputs with {kind}", case))
    if floats:  # a robot at rest: zero angles, velocities, a zero matrix (a singular det, a 0/0)
        cases.append(("all-zero float inputs", {**example, **{n: np.zeros_like(example[n]) for n in floats}}))
    signed = [n for n, v in example.items() if v.dtype.kind == "i" and v.size and np.any(v != 0)]
    if signed:
        case = dict(example)
        for name in signed:
            v = example[name]
            flip = rng.random(v.shape) < 0.5
            case[name] = np.where(flip & (v != np.iinfo(v.dtype).min), -v, v).astype(v.dtype)
        cases.append(("negative integers", case))
    ints = [n for n, v in example.items() if v.dtype.kind in "iu" and v.size]
    # wrap-around and sign bits: uint64 past 2**63, uint8 >> 7, int32 products, INT_MIN. One sign
    # per case: a float sum of 9.2e18 and -9.2e18 cancels, and its value then depends on the order
    # of summation (onnxruntime's is not torch's), which no file can be held to
    for label in ("extreme integers", "most negative integers"):
        case = dict(example)
        for name in ints:
            v = example[name].copy()
            info = np.iinfo(v.dtype)
            top = 2 ** (info.bits - 1)
            if v.dtype.kind == "u" and label != "extreme integers":
                continue
            if v.dtype.kind == "u":
                extremes = [info.max, top, top + 1]
            else:
                extremes = [info.max, info.max - 1] if label == "extreme integers" else [info.min, info.min + 1]
            flat = v.reshape(-1)
            picks = rng.permutation(flat.size)[: max(1, flat.size // 3)]
            flat[picks] = np.array(extremes, dtype=v.dtype)[np.arange(picks.size) % len(extremes)]
            case[name] = v
        if any(case[n] is not example[n] for n in ints):
            cases.append((label, case))
    return cases


def _tensor(array):
    from ..runtime.dtypes import tensor_from_numpy

    return tensor_from_numpy(array)


def _fresh(node, example, rng, batch=None):
    out = {}
    for name in node.input_names:
        like = example[name]
        shape = like.shape if batch is None else (batch, *like.shape[1:])
        out[name] = _draw({"dtype": like.dtype, "shape": shape}, rng, like)
    return out


def _batch_free(node, gm, example):
    """``gm`` with per-row slice assignments freed of the traced batch size, and a node that runs it."""
    import copy

    from .batch import FreeBatchAssignments

    leading = {v.shape[0] for v in example.values() if np.ndim(v)}
    if len(leading) != 1 or any(np.ndim(v) == 0 for v in example.values()):
        return gm, node  # _dynamic_spec says what is wrong
    if gm is node.graph_module:
        gm = copy.deepcopy(gm)
    if not FreeBatchAssignments(leading.pop())(gm).modified:
        return gm, node
    graph = copy.copy(node)
    graph.graph_module = gm
    return gm, graph


def _dynamic_spec(node, example, rng):
    """Which inputs and outputs carry the batch dimension; names the op that pins it otherwise."""
    if any(np.ndim(v) == 0 for v in example.values()):
        scalar = next(k for k, v in example.items() if np.ndim(v) == 0)
        raise ExportError(f"dynamic batch: input {scalar!r} is 0-d and has no leading dimension")
    base = {n: v.shape[0] for n, v in example.items()}
    if len(set(base.values())) != 1:
        raise ExportError(f"dynamic batch: the inputs' leading dimensions differ ({base}); "
                          f"every input must have the batch as its first dimension")
    b = next(iter(base.values()))
    other = _probe(node, _fresh(node, example, rng, batch=b + 3))
    outputs = []
    for name in node.output_names:
        traced, moved = _output_shape(node, name), other[name].shape
        if traced[1:] != moved[1:] or (traced and traced[0] != b and moved[0] != traced[0]):
            raise ExportError(f"dynamic batch: output {name!r} has shape {traced} at batch {b} but "
                              f"{moved} at batch {b + 3}; its shape depends on the data or mixes the "
                              f"batch into other dimensions")
        if traced and moved[0] == b + 3:
            outputs.append(name)
    return {"inputs": list(node.input_names), "outputs": outputs, "batch": b}


def _output_shape(node, name):
    out = next(n for n in node.graph_module.graph.nodes if n.op == "output").args[0][name]
    return tuple(out.meta.get("leapp_shape") or ()) if hasattr(out, "meta") else ()


def _probe(node, inputs):
    """Run the FX graph node by node, so a failure names the op and the user's line."""
    import torch

    class Probe(torch.fx.Interpreter):
        def run_node(self, n):
            try:
                return super().run_node(n)
            except Exception as exc:
                call = n.meta.get("leapp_call", n.target)
                if str(call).endswith("__setitem__"):
                    # leapp records an assignment through flat positions of the traced shape
                    advice = ("leapp records this assignment with the traced shape built in (a leapp "
                              "limitation, not your code); export without dynamic_batch, once per batch size")
                else:
                    advice = ("Write the code so the batch size is not a constant (e.g. reshape(-1, ...)), "
                              "or export without dynamic_batch")
                raise ExportError(
                    f"dynamic batch: {call} at {n.meta.get('leapp_source') or '?'} fixes the batch size "
                    f"(at another batch size it raises: {_first_line(exc)}). {advice}"
                ) from exc

    with torch.no_grad():
        out = Probe(node.graph_module).run(*[_tensor(inputs[n]) for n in node.input_names])
    return {k: v.detach().numpy() for k, v in out.items()}


def _check(node, run, example, dynamic, rng, format, n_checks, reference, blame):
    """Run the artifact on check inputs against NumPy; returns the labels of the inputs it passed.

    Edge inputs (``_edge_cases``) outside the function's domain (NumPy or the
    graph raises, or NumPy casts a NaN to an integer, whose value is undefined)
    are skipped; the example and the fresh inputs are not.
    """
    cases = [("the example", example)]
    cases += [(f"fresh input {k + 1}", _fresh(node, example, rng)) for k in range(n_checks)]
    from ..table.guards import NUMPY_HANGS_ON_INF

    hangs = any(n.meta.get("leapp_call") in NUMPY_HANGS_ON_INF for n in node.graph_module.graph.nodes) or bool(
        NUMPY_HANGS_ON_INF & getattr(node, "recorded_calls", frozenset()))  # a dropped call still runs in NumPy
    cases += _edge_cases(example, rng, no_inf=hangs)
    if dynamic:
        cases.append((f"batch {dynamic['batch'] + 3}", _fresh(node, example, rng, batch=dynamic["batch"] + 3)))
    passed, stood_in = [], {}
    for label, inputs in cases:
        want, why = _expected(node, reference, inputs, label, label in EDGE_LABELS)
        if want is None:
            continue
        try:
            got = run(inputs)
        except Exception as exc:
            raise ExportError(f"the {format} file of node {node.name!r} fails to run on {label}: "
                              f"{_first_line(exc)}; nothing was written") from exc
        if len(got) != len(node.output_names):
            raise ExportError(f"the {format} file of node {node.name!r} returns {len(got)} outputs, "
                              f"the node has {len(node.output_names)}")
        slack = _integer_scale(inputs) if label in ("extreme integers", "most negative integers") else 0.0
        for name, g in zip(node.output_names, got, strict=True):
            problem = mismatch(np.asarray(g), np.asarray(want[name]), scale=slack)
            if problem:
                against = "NumPy" if why is None else "the traced graph (NumPy's values)"
                hint = _HINTS.get(label, "") if format == "onnx" else ""
                raise ExportError(f"the {format} file of node {node.name!r} disagrees with {against} on "
                                  f"output {name!r} ({label}): {problem}{blame(inputs)}; nothing was "
                                  f"written.{hint} Export to another format (torchscript, pt2), or avoid that call")
        passed.append(label)
        if why is not None and reference is not None:
            stood_in[label] = why
    return checked_description(reference is not None, passed, stood_in)


_HINTS = {"inputs with -NaN": " No ONNX op reads the sign bit of a NaN, which np.copysign and np.signbit "
                              "return (x86 makes NaN of inf - inf or 0 * inf with it set)."}


def checked_description(has_reference, passed, stood_in):
    """The description's ``checked``: which inputs the artifact was run on, and against what.

    ``against`` is ``"numpy"`` when every one was compared with the user's function itself,
    ``"graph"`` when there was no function to compare with (the node's own values: NumPy's on
    the traced inputs), and ``"numpy and graph"`` when the graph stood in on some inputs, which
    ``against_graph`` lists with the reason (the same the warning gave).
    """
    if not has_reference:
        return {"against": "graph", "inputs": passed}
    if not stood_in:
        return {"against": "numpy", "inputs": passed}
    if len(stood_in) == len(passed):
        return {"against": "graph", "inputs": passed, "against_graph": stood_in}
    return {"against": "numpy and graph", "inputs": passed, "against_graph": stood_in}


def _expected(node, reference, inputs, label, edge):
    """``(outputs, why)``: NumPy's outputs for ``inputs`` and None, or the graph's and why the graph
    stands in for NumPy (no reference: ``"no reference"``); ``(None, None)`` skips an edge case.

    Where the graph itself differs from NumPy (an unstable sort's ties, or a
    translation that handles NaN otherwise), that is no fault of the artifact:
    a ``LeappWarning`` names the output and the artifact is held to the graph.
    """
    import warnings

    from ..errors import LeappWarning

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # axis 0 free: a dynamic-batch export checks at another batch size too
            graph = {k: np.asarray(v) for k, v in node.call_batched(**inputs).items()}
    except Exception as exc:
        if label != "the example":  # drawn inputs may leave the function's domain (a singular matrix)
            return None, None
        raise ExportError(f"node {node.name!r} fails on {label}: {_first_line(exc)}") from exc
    if edge and casts_undefined_values(node, inputs):
        return None, None  # NaN, inf or out-of-range floats cast to integers: NumPy leaves the value undefined
    if reference is None:
        return graph, "no reference"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.filterwarnings("error", message="invalid value encountered in cast")
            want = {k: np.asarray(v) for k, v in reference(inputs).items()}
    except Exception as exc:
        if edge:
            return None, None
        # the function cannot be re-run here (structure changed, ...): the graph stands in
        why = f"the function could not be re-run on these inputs ({_first_line(exc)})"
        warnings.warn(f"node {node.name!r}: {why}; the exported file is checked against the traced graph "
                      f"on {label}", LeappWarning, stacklevel=4)
        return graph, why
    for name in node.output_names:
        problem = mismatch(graph[name], want[name]) if name in want else "missing"
        if problem:
            why = f"the traced graph differs from NumPy on output {name!r}: {problem}"
            warnings.warn(f"node {node.name!r}: the traced graph differs from NumPy on {label} (output "
                          f"{name!r}: {problem}); the exported file is checked against the graph there",
                          LeappWarning, stacklevel=4)
            return graph, why
    return want, None


_CASTS = ("to", "type", "long", "int", "short", "char", "byte")


def casts_undefined_values(node, inputs):
    """Whether running the graph on ``inputs`` casts a non-finite or out-of-range float to an integer."""
    import torch

    found = []

    class Watch(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            if n.op == "call_method" and n.target in _CASTS and isinstance(v, torch.Tensor) \
                    and not v.is_floating_point() and not v.is_complex() and v.dtype != torch.bool:
                for a in n.args[:1]:
                    src = self.env.get(a) if isinstance(a, torch.fx.Node) else None
                    if isinstance(src, torch.Tensor) and src.is_floating_point() and src.numel():
                        limit = 2.0 ** (torch.iinfo(v.dtype).bits - (0 if v.dtype == torch.uint8 else 1))
                        if not bool(torch.all(src.abs() < limit)):
                            found.append(n)
            return v

    with torch.no_grad():
        Watch(node.graph_module).run(*[_tensor(inputs[n]) for n in node.input_names])
    return bool(found)


class _Blame:
    """After a mismatch: export every intermediate value, find the first op whose value differs."""

    def __init__(self, module, format, node, dynamic, opset, exporter, folder):
        self.args = (module, format, node, dynamic, opset, exporter, folder)

    def __call__(self, inputs):
        try:
            found = self._first_differing(inputs)
        except Exception:  # best effort: the mismatch itself is reported either way
            return ""
        if found is None:
            return ""
        n, problem = found
        return (f"; the first op that differs is {n.meta.get('leapp_call', n.target)} at "
                f"{n.meta.get('leapp_source') or '?'} ({problem})")

    def _first_differing(self, inputs):
        import copy

        import torch

        from . import formats as fmt

        module, format, node, dynamic, opset, exporter, folder = self.args
        args = tuple(_tensor(inputs[n]) for n in node.input_names)

        def record(gm):
            values = {}

            class Record(torch.fx.Interpreter):
                def run_node(self, n):
                    v = super().run_node(n)
                    if n.op in ("call_function", "call_method") and isinstance(v, torch.Tensor):
                        values[n.name] = v.detach().numpy().copy()
                    return v

            with torch.no_grad():
                Record(gm).run(*args)
            return values

        values = record(module)
        # the export form keeps the graph's node names: where one of its decompositions already
        # departs from the graph (the sign of a NaN, which no ONNX op reads), that is the op to name
        graph = record(node.graph_module)
        for n in module.graph.nodes:
            if n.name in values and n.name in graph and values[n.name].shape == graph[n.name].shape:
                problem = mismatch(values[n.name], graph[n.name])
                if problem:
                    return n, f"its {format} form departs from the graph here: {problem}"
        probe = copy.deepcopy(module)
        picked = [n for n in probe.graph.nodes if n.name in values]
        out = next(n for n in probe.graph.nodes if n.op == "output")
        out.args = (tuple(picked),)
        probe.graph.lint()
        probe.recompile()
        names = [f"v{i}" for i in range(len(picked))]
        path = os.path.join(folder, "blame" + fmt.EXTENSIONS[format])
        fmt.WRITERS[format](probe, args, path, input_names=node.input_names, output_names=names,
                            dynamic=None, opset=opset, exporter=exporter)
        got = fmt.LOADERS[format](path, node.input_names)(inputs)
        for n, g in zip(picked, got, strict=True):
            problem = mismatch(np.asarray(g), values[n.name])
            if problem:
                return n, problem
        return None


def _half_differs(got, want):
    """Where float16 ``got`` is not NumPy's ``want`` (NaN matches NaN).

    float16 has 11 bits: a relative tolerance, even one ulp, let a chain of float16 ops rounded
    once (onnxruntime computes them in float32) through, where NumPy rounds after every op.
    NumPy's float16 loops compute each op in float32 and round; so does the file
    (``lowering.HalfPerOp``), so the values are NumPy's bit for bit.
    """
    got = got.astype(np.float16)
    return ~((got == want) | (np.isnan(got) & np.isnan(want)))


def _integer_scale(inputs):
    """The size of a float sum's rounding where integers at their extremes become floats: their
    largest magnitude times the element count. A float sum of 9.2e18 and -9.2e18 with small
    values cancels, and its rounding depends on the order of summation (onnxruntime's is not
    torch's); a wrong conversion (2**63 read as -2**63) is far larger."""
    ints = [np.abs(v.astype(np.float64)) for v in inputs.values() if v.dtype.kind in "iu" and v.size]
    return max((float(v.max()) * v.size for v in ints), default=0.0)


def mismatch(got, want, signed_zeros=False, scale=0.0):
    """Why ``got`` is not NumPy's ``want`` (None if it is): shape, dtype, values, NaN positions.

    ``signed_zeros`` also compares the sign of zeros. The export check leaves it
    off: NumPy's own ``maximum(-0.0, 0.0)`` depends on the element's position
    (vector body or scalar tail), so no artifact can match it everywhere.
    ``scale``: floats may also differ by 64 of their epsilons times it (``_integer_scale``).
    """
    if got.shape != want.shape:
        return f"shape {got.shape} where NumPy gives {want.shape}"
    if got.dtype.newbyteorder("=") != want.dtype.newbyteorder("="):
        # byte order aside: an artifact's outputs are in the machine's order, NumPy keeps a
        # big-endian input's order in its views and copies
        return f"dtype {got.dtype} where NumPy gives {want.dtype}"
    if want.dtype.kind in "fc":
        rtol, atol = _TOL.get(want.dtype.str[1:], (1e-5, 1e-6))
        slack = 64 * float(np.finfo(want.dtype).eps) * scale
        bad = _half_differs(got, want) if want.dtype == np.float16 and not slack else \
            ~np.isclose(got, want, rtol=rtol, atol=atol + slack, equal_nan=True)
        if bad.any():
            with np.errstate(all="ignore"):
                err = np.abs(got.astype(want.dtype) - want)
            where = tuple(int(i) for i in np.argwhere(bad)[0]) if want.ndim else ()
            finite = err[bad & np.isfinite(err)]
            largest = f"largest error {finite.max():.3g}" if finite.size else "NaN/inf where NumPy differs"
            return f"{largest}; at index {where} got {got[where].item()!r}, NumPy {want[where].item()!r}"
        if signed_zeros and want.dtype.kind == "f":
            zeros = (want == 0) & (got == 0)
            flipped = zeros & (np.signbit(got) != np.signbit(want))
            if flipped.any():
                where = tuple(int(i) for i in np.argwhere(flipped)[0]) if want.ndim else ()
                return (f"{int(flipped.sum())} zero(s) of the wrong sign; at index {where} got "
                        f"{got[where].item()!r}, NumPy {want[where].item()!r}")
    elif not np.array_equal(got, want):
        bad = got != want
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if want.ndim else ()
        return f"{int(np.sum(bad))} element(s) differ; at index {where} got {got[where].item()!r}, NumPy {want[where].item()!r}"
    return None


def _describe(node, format, exporter, opset, path, specs, dynamic, notes, edges):
    from .. import __version__
    from . import formats as fmt
    from . import sidecar
    from .formats import DEFAULT_OPSET

    def entry(name, dtype, shape, is_dynamic):
        dims = [0] if is_dynamic and shape else []
        dtype = np.dtype(dtype).newbyteorder("=")  # the artifact's own: values in the machine's byte order
        return {"name": name, "dtype": dtype.str if dtype.kind == "c" else str(dtype),
                "shape": ["batch" if i in dims else int(s) for i, s in enumerate(shape)],
                "dynamic_dims": dims}

    inputs = [entry(n, s["dtype"], s["shape"], bool(dynamic)) for n, s in specs.items()]
    outputs = [entry(n, node.output_dtypes[n], _output_shape(node, n),
                     bool(dynamic) and n in dynamic["outputs"]) for n in node.output_names]
    description = {"leapp_version": __version__, "node": node.name, "format": format,
                   "artifact": os.path.basename(path), "exporter": exporter,
                   "inputs": inputs, "outputs": outputs}
    if format == "onnx":
        description["opset"] = opset or DEFAULT_OPSET
    if format == "onnx":  # the file's own names where ONNX forbids the user's (an output named like an input)
        for entry_, name in zip(outputs, fmt.onnx_output_names(node.input_names, node.output_names), strict=True):
            if name != entry_["name"]:
                entry_["artifact_name"] = name
    notes = sidecar.notes(notes, node.graph_module)
    if notes:
        description["notes"] = notes
    if edges:
        description["edges"] = [_edge(e) for e in edges]
    return description


def _first_line(exc):
    text = str(exc).strip().splitlines()
    line = text[0] if text else ""
    # torch's exporter appends a plea for pull requests; the user can do nothing with it
    line = line.split(" Please feel free to request support")[0]
    return f"{type(exc).__name__}: {line}"


_OTHER_FORMAT = {"onnx": "format='torchscript' or 'pt2' (they run torch's own kernels)",
                 "torchscript": "format='pt2' or 'onnx'", "pt2": "format='torchscript' or 'onnx'"}


def _export_failed(exc, node, module, format):
    """An ExportError that names the NumPy call and the user's line; the exporter's text trails."""
    culprit = _culprit(exc, module)
    detail = _first_line(exc)
    if culprit is None:
        return ExportError(f"{format} export of node {node.name!r} failed: {detail}. "
                           f"Try {_OTHER_FORMAT[format]}")
    call = culprit.meta.get("leapp_call", culprit.target)
    return ExportError(f"{format} export of node {node.name!r} failed: {call} at "
                       f"{culprit.meta.get('leapp_source') or '?'} has no {format} translation. "
                       f"Export with {_OTHER_FORMAT[format]}, or write that step with other NumPy "
                       f"calls (exporter: {detail})")


def _load_failed(exc, node, module, format):
    runner = "onnxruntime" if format == "onnx" else "torch"
    culprit = _culprit(exc, module)
    where = "" if culprit is None else (f": {culprit.meta.get('leapp_call', culprit.target)} at "
                                        f"{culprit.meta.get('leapp_source') or '?'}")
    return ExportError(f"{runner} cannot load the {format} file of node {node.name!r}{where}; nothing was "
                       f"written. Try {_OTHER_FORMAT[format]} ({runner}: {_first_line(exc)})")


def _culprit(exc, module):
    """The graph node an exporter error mentions (by FX name or by the aten op), if any."""
    text = str(exc)
    calls = [n for n in module.graph.nodes if n.op in ("call_function", "call_method")]
    for n in calls:
        if f"%{n.name} " in text:
            return n
    ops = set(re.findall(r"aten::(\w+)", text)) | set(re.findall(r"operator '?([\w.]+)", text))
    ops = {o.replace(".", "_") for o in ops}
    for n in calls:
        name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        bare = name.lstrip("_")
        if len(bare) > 3 and n.meta.get("leapp_call") and any(o == bare or o.endswith("_" + bare)
                                                             or bare.endswith("_" + o) for o in ops):
            return n
    return None


def _edge(e):
    return dict(zip(("from_node", "from_output", "to_node", "to_input"), e, strict=True))


def _safe(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name)) or "node"
