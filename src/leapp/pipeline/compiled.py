"""``CompiledPipeline``: what ``leapp.compile_graph`` returns, and how it is exported.

``p["node"]`` is a ``CompiledNode``; ``p.edges`` the forward edges,
``p.feedback`` the values fed back to an earlier node on the next step,
``p.state`` each node's state and initial value. ``p.export(folder, format)``
writes one checked artifact per node (``leapp.export.export_node``), the
initial values and ``pipeline.json``; ``leapp.load_pipeline(folder)`` runs it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import ExportError, LeappError
from ..export import spec as sp
from ..fsutil import atomic_write, default_mode


@dataclass(frozen=True)
class Feedback:
    """``from_node/from_port`` of one step feeds ``to_node/to_port`` of the next (``initial`` on step 0)."""

    from_node: str
    from_port: str
    to_node: str
    to_port: str
    initial: np.ndarray
    cast: bool = False


class Attached:
    """An existing model file standing in for a traced node (``p.attach``)."""

    def __init__(self, name, path, format, node):
        self.name = name
        self.path = os.fspath(path)
        self.format = format
        self.input_names = list(node.input_names)
        self.output_names = list(node.output_names)
        self.output_dtypes = dict(node.output_dtypes)
        self.traced = node  # the traced node it replaces: its ports and shapes


class CompiledPipeline:
    """The nodes of a seed-API session, compiled, and how they connect."""

    def __init__(self, name, nodes, edges, feedback=(), state=None, examples=None, samples=None,
                 save_path="."):
        self.name = name
        self.nodes = nodes
        self.edges = list(edges)
        self.feedback = list(feedback)
        self.state = dict(state or {})  # node -> {state name: initial}
        self.examples = dict(examples or {})  # node -> first-pass inputs
        self.samples = dict(samples or {})  # node -> [(inputs, NumPy's outputs)] of the later passes
        self.save_path = save_path
        self.attached: dict[str, Attached] = {}
        self.order = sp.order(list(nodes), [(a, b) for a, _, b, _ in self.edges])

    def __getitem__(self, name):
        try:
            return self.nodes[name]
        except KeyError:
            raise KeyError(f"no traced node {name!r}; traced: {sorted(self.nodes)}") from None

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return len(self.nodes)

    def __contains__(self, name):
        return name in self.nodes

    # --- ports ----------------------------------------------------------------

    def _fed(self):
        fed = {sp.port(b, i) for _, _, b, i in self.edges}
        fed |= {sp.port(f.to_node, f.to_port) for f in self.feedback}
        fed |= {sp.port(n, s) for n, names in self.state.items() for s in names}
        return fed

    @property
    def inputs(self) -> list[str]:
        """The ports the caller feeds at each step (``"node/port"``), in node order."""
        fed = self._fed()
        return [sp.port(n, i) for n in self.order for i in self.nodes[n].input_names
                if sp.port(n, i) not in fed]

    @property
    def outputs(self) -> list[str]:
        """The ports returned at each step: every output no forward edge consumes (fed-back ones too)."""
        used = {sp.port(a, o) for a, o, _, _ in self.edges}
        state_outs = {sp.port(n, sp.state_output(s)) for n, names in self.state.items() for s in names}
        return [sp.port(n, o) for n in self.order for o in self.nodes[n].output_names
                if sp.port(n, o) not in used and sp.port(n, o) not in state_outs]

    # --- attaching a model ------------------------------------------------------

    def attach(self, name, path, *, rtol=1e-4, atol=1e-5, trust_code=False):
        """Use the model file ``path`` (.onnx, .pt TorchScript, .pt2) as node ``name``.

        It is run on every traced pass of the node (the first and the
        validation samples) and must give NumPy's outputs there, by name and
        dtype, within ``rtol``/``atol``; otherwise it is refused and the node
        stays as traced. Loading a TorchScript or .pt2 file runs code stored in
        it, so those are refused (``UntrustedCodeError``, before the file is
        opened) unless ``trust_code=True``, as ``load_pipeline`` does.
        """
        from ..export import formats as fmt

        node = self[name]
        path = os.fspath(path)
        format = _format_of(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"attach({name!r}, {path!r}): no such file")
        if format != "onnx" and not trust_code:
            raise sp.untrusted_code(f"attach({name!r}, {path!r}): a {fmt.NAMES[format]} file", "that file",
                                    f"Attach it with attach({name!r}, path, trust_code=True)")
        try:
            run = fmt.LOADERS[format](path, node.input_names)
        except Exception as exc:  # each runtime's own error types; the file is what is wrong
            text = str(exc).strip().splitlines()
            raise ExportError(f"attach({name!r}, {path!r}): {fmt.NAMES[format]} cannot load the file "
                              f"({type(exc).__name__}: {text[0][:300] if text else ''}); the model was "
                              f"not attached") from exc
        cases = [(self.examples[name], node(**self.examples[name]))] + list(self.samples.get(name, []))
        for i, (inputs, want) in enumerate(cases):
            try:
                got = run({k: np.asarray(inputs[k]) for k in node.input_names})
            except Exception as exc:
                raise ExportError(f"attach({name!r}, {path!r}): the model fails on traced pass {i + 1}: "
                                  f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                                  ) from exc
            if len(got) != len(node.output_names):
                raise ExportError(f"attach({name!r}, {path!r}): the model returns {len(got)} outputs, the "
                                  f"traced node has {len(node.output_names)} {node.output_names}")
            for out, g in zip(node.output_names, got, strict=True):
                problem = mismatch(np.asarray(g), np.asarray(want[out]), rtol, atol)
                if problem:
                    raise ExportError(f"attach({name!r}, {path!r}): output {out!r} on traced pass {i + 1}: "
                                      f"{problem}; the model was not attached")
        self.attached[name] = Attached(name, path, format, node)
        return self.attached[name]

    # --- export -------------------------------------------------------------------

    def export(self, folder=None, format="onnx", *, dynamic_batch=False, **options) -> dict:
        """Write every node, the initial values and ``pipeline.json`` into ``folder``; returns the spec.

        ``format`` is one format for all nodes, or ``{node: format}`` (nodes not
        named get ``"onnx"``). ``dynamic_batch=True`` frees axis 0 of every port:
        the runtime then steps a batch of environments at once. The folder's
        default is ``<save_path>/<session name>`` from ``leapp.start``.
        Exporting the same pipeline again writes the same bytes. A file-system error (a read-only
        or missing folder, a path through a file) is an ``ExportError`` naming the path.
        """
        try:
            return self._export(folder, format, dynamic_batch, options)
        except OSError as exc:
            where = exc.filename or folder or os.path.join(self.save_path, self.name)
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ExportError(f"cannot export pipeline {self.name!r}: {where!r}: {reason}; the export "
                              f"was not completed") from exc

    def _export(self, folder, format, dynamic_batch, options):
        from ..export.formats import EXTENSIONS
        from ..export.write import FORMATS, export_node

        if folder in FORMATS and format == "onnx":  # p.export("torchscript"): the old argument order
            folder, format = None, folder
        if folder is None:
            folder = os.path.join(self.save_path, self.name)
        formats = self._formats(format, FORMATS)
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        nodes = []
        taken = {sp.SPEC_FILE, sp.INITIAL_FILE}  # file names in the folder: an external file may not reuse one
        for name in self.order:
            a = self.attached.get(name)
            artifact = f"{_safe(name)}{os.path.splitext(a.path)[1] if a else EXTENSIONS[formats[name]]}"
            taken |= {artifact, artifact + ".json"}  # the artifact and its description
        for name in self.order:
            attached = self.attached.get(name)
            if attached is not None:
                file = f"{_safe(name)}{os.path.splitext(attached.path)[1]}"
                target = os.path.join(folder, file)
                if os.path.abspath(attached.path) != os.path.abspath(target):
                    with open(attached.path, "rb") as f:
                        atomic_write(target, f.read(), mode=default_mode())
                ports = _ports_of_traced(attached.traced, self.examples[name], dynamic_batch)
                entry = self._node_entry(name, attached.format, file, folder, ports, "attached")
                if attached.format == "onnx":
                    external = _copy_external_data(name, attached.path, folder, taken)
                    if external:
                        entry["external_data"] = external
                nodes.append(entry)
                continue
            file = f"{_safe(name)}{EXTENSIONS[formats[name]]}"
            description = export_node(self.nodes[name], os.path.join(folder, file), formats[name],
                                      example_inputs=self.examples.get(name), dynamic_batch=dynamic_batch,
                                      **options)
            ports = {"inputs": [_port(p) for p in description["inputs"]],
                     "outputs": [_port(p) for p in description["outputs"]]}
            nodes.append(self._node_entry(name, formats[name], file, folder, ports, "traced"))
        initial = {}
        for n, names in self.state.items():
            for s, value in names.items():
                initial[f"state/{n}/{s}"] = value
        for f in self.feedback:
            initial[f"feedback/{f.to_node}/{f.to_port}"] = f.initial
        initial_path = os.path.join(folder, sp.INITIAL_FILE)
        sp.write_initial(initial_path, initial)
        spec = {
            "spec_version": sp.SPEC_VERSION,
            "name": self.name,
            "versions": _versions(),
            "batch": bool(dynamic_batch),
            "order": list(self.order),
            "nodes": nodes,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "edges": [{"from": sp.port(a, o), "to": sp.port(b, i)} for a, o, b, i in self.edges],
            "feedback": [{"from": sp.port(f.from_node, f.from_port), "to": sp.port(f.to_node, f.to_port),
                          "cast": f.cast, "initial": f"feedback/{f.to_node}/{f.to_port}"}
                         for f in self.feedback],
            "state": [{"node": n, "name": s, "initial": f"state/{n}/{s}"}
                      for n in self.order for s in self.state.get(n, {})],
            "initial_values": {"file": sp.INITIAL_FILE, "sha256": sp.sha256(initial_path)},
        }
        sp.validate(spec)
        atomic_write(os.path.join(folder, sp.SPEC_FILE), sp.dumps(spec).encode(), mode=default_mode())
        return spec

    def _formats(self, format, known):
        if isinstance(format, str):
            formats = dict.fromkeys(self.nodes, format)
        else:
            unknown = sorted(set(format) - set(self.nodes))
            if unknown:
                raise LeappError(f"format names node(s) {unknown} that the pipeline does not have "
                                 f"(nodes: {list(self.order)})")
            formats = {n: format.get(n, "onnx") for n in self.nodes}
        bad = {n: f for n, f in formats.items() if f not in known}
        if bad:
            raise ValueError(f"format must be one of {known}; got {bad}")
        return formats

    @staticmethod
    def _node_entry(name, format, file, folder, ports, origin):
        return {"name": name, "format": format, "artifact": file,
                "sha256": sp.sha256(os.path.join(folder, file)), "origin": origin, **ports}

    # --- looking at it ----------------------------------------------------------

    def draw(self, path=None):
        """Draw the pipeline to ``path`` (.svg, .dot, or .png when Graphviz's ``dot`` is installed).

        Without ``path`` returns the DOT text.
        """
        from .draw import draw_pipeline

        return draw_pipeline(self, path)

    def report(self) -> str:
        parts = []
        for name, node in self.nodes.items():
            text = node.report()
            check = getattr(node, "crosscheck", None)
            if check is not None:
                text += "\n" + check.format(f"  cross-check of {name!r} ({check.path}:"
                                            f"{check.first_line}-{check.last_line})").replace("\n", "\n  ")
            parts.append(text)
        return "\n\n".join(parts)


def _copy_external_data(name, path, folder, taken):
    """Copy the files an attached ONNX model keeps its weights in; ``[{file, sha256}]`` for the spec.

    The model names them relative to its own folder; each is written at the
    same relative place in the pipeline folder and hashed like an artifact.
    """
    from ..export.folder import path_problem
    from ..export.onnx_refs import external_locations

    with open(path, "rb") as f:
        model = f.read()
    try:
        locations, unnamed = external_locations(model)
    except ValueError as exc:
        raise ExportError(f"attached node {name!r}: {path} is not a readable ONNX file: {exc}") from None
    if unnamed:
        raise ExportError(f"attached node {name!r}: {path} marks a tensor external without naming its file")
    out = []
    for location in sorted(locations):
        problem = path_problem(location)
        if problem is not None:
            raise ExportError(f"attached node {name!r}: {path} keeps weights in {location!r}: {problem}; "
                              f"save the model with its external data next to it")
        if location in taken:
            raise ExportError(f"attached node {name!r}: {path} keeps weights in {location!r}, a name the "
                              f"pipeline folder already uses; save the model with another location")
        source = os.path.join(os.path.dirname(os.path.abspath(path)), *location.split("/"))
        with open(source, "rb") as f:
            data = f.read()
        target = os.path.join(folder, *location.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.abspath(source) != os.path.abspath(target):
            atomic_write(target, data, mode=default_mode())
        taken.add(location)
        out.append({"file": location, "sha256": sp.sha256_bytes(data)})
    return out


def _format_of(path):
    ext = os.path.splitext(path)[1]
    formats = {".onnx": "onnx", ".pt": "torchscript", ".pt2": "pt2"}
    if ext not in formats:
        raise ValueError(f"cannot tell the format of {path!r} from its extension; use .onnx, .pt "
                         f"(TorchScript) or .pt2 (torch.export)")
    return formats[ext]


def _port(entry):
    return {"name": entry["name"], "dtype": entry["dtype"], "shape": list(entry["shape"])}


def _ports_of_traced(node, example, batch):
    def shape(s):
        return [sp.BATCH if batch and i == 0 else int(d) for i, d in enumerate(s)]

    def dtype(d):  # artifacts hold values in the machine's byte order, whatever NumPy's views keep
        return str(np.dtype(d).newbyteorder("="))

    outs = node(**example)
    return {"inputs": [{"name": k, "dtype": dtype(np.asarray(example[k]).dtype), "shape": shape(np.shape(example[k]))}
                       for k in node.input_names],
            "outputs": [{"name": k, "dtype": dtype(outs[k].dtype), "shape": shape(outs[k].shape)}
                        for k in node.output_names]}


def mismatch(got, want, rtol, atol):
    if got.shape != want.shape:
        return f"shape {got.shape} where NumPy gave {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} where NumPy gave {want.dtype}"
    if want.dtype.kind in "fc":
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            return f"largest error {float(np.nanmax(np.abs(got - want)))}"
    elif not np.array_equal(got, want):
        return f"{int(np.sum(got != want))} element(s) differ"
    return None


def _versions():
    import torch

    from .. import __version__

    return {"leapp": __version__, "torch": torch.__version__.split("+")[0], "numpy": np.__version__}


def _safe(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name)) or "node"
