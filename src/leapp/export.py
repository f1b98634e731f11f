"""Export a compiled node to ONNX, TorchScript or ``torch.export`` (.pt2), checked against NumPy.

    export_node(node, "out/preprocess.onnx")            # + out/preprocess.onnx.json
    export_pipeline(pipeline, "out", format="onnx")     # one artifact per node + pipeline.json

Every export runs the graph passes on a copy, writes the artifact to a
temporary file in the target folder, loads that file back and runs it on
fresh inputs against the node itself (whose values are NumPy's), and only
then renames it into place: a failed export leaves no file that looks valid.
Heavy libraries (onnx, onnxruntime) are imported only inside these functions.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import numpy as np

from .errors import ExportError

FORMATS = ("onnx", "torchscript", "pt2")
_TOL = {"f2": (1e-2, 1e-2), "f4": (1e-4, 1e-5), "f8": (1e-9, 1e-12)}


def export_node(node, path, format="onnx", *, dynamic_batch=False, check=True, opset=None,
                exporter="auto", example_inputs=None, optimize=True, edges=None, n_checks=2):
    """Write ``node`` (a ``CompiledNode``) to ``path`` and ``path + ".json"``; returns the description.

    ``example_inputs`` (name -> array) are what the export is traced with and
    the value ranges fresh check inputs are drawn from; by default inputs of
    the traced shapes and dtypes are drawn at random. ``dynamic_batch`` makes
    the leading dimension of every input free; the check then also runs at a
    different batch size.
    """
    from . import export_formats as fmt
    from .runtime.export_prep import prepare

    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    specs = _input_specs(node)
    rng = np.random.default_rng(0)
    example = example_inputs or {n: _draw(s, rng, None) for n, s in specs.items()}
    example = {n: np.asarray(example[n], dtype=specs[n]["dtype"]) for n in node.input_names}
    dynamic = _dynamic_spec(node, example, rng) if dynamic_batch else None

    gm = _optimized_copy(node) if optimize else node.graph_module
    module, notes = prepare(gm, node.output_names)
    args = tuple(_tensor(example[n]) for n in node.input_names)
    # A private folder next to the target, holding a file of the target's own name: formats that
    # are zip archives name their root folder after the file, so the bytes do not depend on a
    # temporary name, and os.replace stays on one file system (atomic).
    staging = tempfile.mkdtemp(dir=folder, prefix=".leapp-export-")
    tmp = os.path.join(staging, os.path.basename(path))
    try:
        try:
            used = fmt.WRITERS[format](module, args, tmp, input_names=node.input_names,
                                      output_names=node.output_names, dynamic=dynamic,
                                      opset=opset, exporter=exporter)
        except Exception as exc:
            raise ExportError(f"{format} export of node {node.name!r} failed: "
                              f"{_first_line(exc)}{_culprit_hint(exc, module)}") from exc
        if check:
            _check(node, fmt.LOADERS[format](tmp, node.input_names), example, dynamic, rng,
                   format, n_checks)
        description = _describe(node, format, used, opset, path, specs, dynamic, notes, edges)
        os.chmod(tmp, 0o644)
        _atomic_write_text(path + ".json", json.dumps(description, indent=2) + "\n")
        os.replace(tmp, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return description


def export_pipeline(pipeline, folder, format="onnx", **options):
    """Export a seed-API ``CompiledPipeline``: ``pipeline.export(folder, format)`` (see docs/pipelines.md)."""
    return pipeline.export(folder, format, **options)


def _optimized_copy(node):
    import copy

    from .runtime.passes import optimize

    gm = copy.deepcopy(node.graph_module)
    optimize(gm)
    return gm


def _input_specs(node):
    placeholders = {n.target: n for n in node.graph_module.graph.nodes if n.op == "placeholder"}
    specs = {}
    for name in node.input_names:
        meta = placeholders[name].meta
        specs[name] = {"dtype": np.dtype(meta["leapp_dtype"]), "shape": tuple(meta["leapp_shape"])}
    return specs


def _draw(spec, rng, like, shape=None):
    """Fresh values of an input: the example's value range when there is one (index inputs stay valid)."""
    dtype, shape = spec["dtype"], shape if shape is not None else spec["shape"]
    lo, hi = (float(like.min()), float(like.max())) if like is not None and like.size else (-3.0, 3.0)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(int(np.floor(lo)), int(np.floor(hi)) + 1, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def _tensor(array):
    from .runtime.dtypes import tensor_from_numpy

    return tensor_from_numpy(array)


def _fresh(node, example, rng, batch=None):
    out = {}
    for name in node.input_names:
        like = example[name]
        shape = like.shape if batch is None else (batch, *like.shape[1:])
        out[name] = _draw({"dtype": like.dtype, "shape": shape}, rng, like)
    return out


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
                raise ExportError(
                    f"dynamic batch: {n.meta.get('leapp_call', n.target)} at "
                    f"{n.meta.get('leapp_source') or '?'} fixes the batch size "
                    f"(at another batch size it raises: {_first_line(exc)}). Write the code so the "
                    f"batch size is not a constant (e.g. reshape(-1, ...)), or export without "
                    f"dynamic_batch"
                ) from exc

    with torch.no_grad():
        out = Probe(node.graph_module).run(*[_tensor(inputs[n]) for n in node.input_names])
    return {k: v.detach().numpy() for k, v in out.items()}


def _check(node, run, example, dynamic, rng, format, n_checks):
    cases = [example] + [_fresh(node, example, rng) for _ in range(n_checks)]
    if dynamic:
        cases.append(_fresh(node, example, rng, batch=dynamic["batch"] + 3))
    for i, inputs in enumerate(cases):
        want = node(**inputs)
        try:
            got = run(inputs)
        except Exception as exc:
            raise ExportError(f"the {format} file of node {node.name!r} fails to run on check "
                              f"input {i}: {_first_line(exc)}") from exc
        if len(got) != len(node.output_names):
            raise ExportError(f"the {format} file of node {node.name!r} returns {len(got)} outputs, "
                              f"the node has {len(node.output_names)}")
        for name, g in zip(node.output_names, got, strict=True):
            problem = _mismatch(np.asarray(g), np.asarray(want[name]))
            if problem:
                raise ExportError(f"the {format} file of node {node.name!r} disagrees with NumPy on "
                                  f"output {name!r} (check input {i}): {problem}; nothing was written")


def _mismatch(got, want):
    if got.shape != want.shape:
        return f"shape {got.shape} where NumPy gives {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} where NumPy gives {want.dtype}"
    if want.dtype.kind in "fc":
        rtol, atol = _TOL.get(want.dtype.str[1:], (1e-5, 1e-6))
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            return f"largest error {np.nanmax(np.abs(got - want))}"
    elif not np.array_equal(got, want):
        return f"{int(np.sum(got != want))} element(s) differ"
    return None


def _describe(node, format, exporter, opset, path, specs, dynamic, notes, edges):
    from . import __version__
    from .export_formats import DEFAULT_OPSET

    def entry(name, dtype, shape, is_dynamic):
        dims = [0] if is_dynamic and shape else []
        return {"name": name, "dtype": np.dtype(dtype).str if np.dtype(dtype).kind == "c" else str(np.dtype(dtype)),
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
    if notes:
        description["notes"] = notes
    if edges:
        description["edges"] = [_edge(e) for e in edges]
    return description


def _atomic_write_text(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _culprit_hint(exc, module):
    """The graph node an exporter error mentions, with the user's line, when it names one."""
    text = str(exc)
    for n in module.graph.nodes:
        if n.op in ("call_function", "call_method") and f"%{n.name} " in text:
            return f" (at {n.meta.get('leapp_call', n.target)}, {n.meta.get('leapp_source') or '?'})"
    return ""


def _edge(e):
    return dict(zip(("from_node", "from_output", "to_node", "to_input"), e, strict=True))


def _safe(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name)) or "node"
