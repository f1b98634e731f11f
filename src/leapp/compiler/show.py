"""The graph as a person reads it: ``cf.show()``'s per-node table and ``cf.draw()``'s picture.

Both read the FX nodes' meta that tracing left (``leapp_call``: the NumPy
call; ``leapp_loc``: the user's line, and the line inside a helper when the
call ran in one; ``leapp_dtype``/``leapp_shape``: NumPy's dtype and shape of
the value). The drawing groups the nodes by the source line that made them,
one band per line in the order the lines ran, so a graph of 70 nodes reads
like the 20 lines of code it came from. It is SVG written here (no Graphviz)
or DOT, whose clusters are the same bands.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from html import escape

from ..export.sidecar import project_path


@dataclass
class Row:
    """One FX node as the table shows it."""

    name: str  # the FX node's name
    op: str  # what the graph runs: torch.mul, getitem, input, constant
    dtype: str
    shape: str
    call: str  # the NumPy call that recorded it ("" for inputs and constants made by leapp)
    line: tuple | None  # (file, line, function) of the call: inside the helper when it ran in one
    called_at: tuple | None  # (file, line, col) of the user's line that called the helper, if any
    inputs: tuple = ()  # names of the FX nodes it reads


def rows(gm, example=None) -> list:
    """A ``Row`` per placeholder, constant and op of ``gm``, in graph order (the output excluded).

    A node an adapter made inside one NumPy call (``np.cross`` is a dozen torch ops) has no NumPy
    dtype of its own: with ``example`` (input name -> array) the graph is run once on it and the
    row shows the torch value's dtype and shape.
    """
    seen = _run(gm, example) if example is not None else {}
    out = []
    for n in gm.graph.nodes:
        if n.op == "output":
            continue
        dtype, shape = n.meta.get("leapp_dtype"), n.meta.get("leapp_shape")
        if (dtype is None or shape is None) and n.name in seen:
            dtype, shape = seen[n.name]
        line, called_at = _where(n.meta.get("leapp_loc"))
        call = str(n.meta.get("leapp_call") or "")
        if n.op == "placeholder":
            op, call = "input", f"input {n.meta.get('leapp_input', n.target)}"
        elif n.op == "get_attr":
            op = "constant"
            folded = n.meta.get("leapp_folded_from")
            call = f"{folded} (folded)" if folded else ("a NumPy array" if call in ("", "const") else call)
        else:
            op = _op_name(n)
        out.append(Row(n.name, op, str(dtype) if dtype is not None else "?",
                       f"[{', '.join(str(s) for s in shape)}]" if shape is not None else "?",
                       call, line, called_at, tuple(a.name for a in n.all_input_nodes)))
    return out


def _run(gm, example):
    """node name -> (dtype, shape) of each tensor (or tuple of tensors) the graph computes on ``example``."""
    import torch

    from ..runtime.dtypes import tensor_from_numpy

    seen = {}

    class Watch(torch.fx.Interpreter):
        def run_node(self, n):
            value = super().run_node(n)
            if isinstance(value, torch.Tensor):
                seen[n.name] = (str(value.dtype).replace("torch.", ""), tuple(value.shape))
            elif isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
                seen[n.name] = (f"{len(value)} x {str(value[0].dtype).replace('torch.', '')}", tuple(value[0].shape))
            return value

    names = [n.meta.get("leapp_input", n.target) for n in gm.graph.nodes if n.op == "placeholder"]
    try:
        with torch.no_grad():
            Watch(gm).run(*[tensor_from_numpy(example[k]) for k in names])
    except Exception:  # the table is still right without them: "?" where the graph did not say
        return {}
    return seen


def outputs(gm) -> list:
    """(output name, FX node name) of the graph's result, in order."""
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    items = out.items() if isinstance(out, dict) else enumerate(out if isinstance(out, (list, tuple)) else [out])
    return [(str(k), getattr(v, "name", repr(v))) for k, v in items]


def _op_name(n) -> str:
    if n.op == "call_method":
        return f".{n.target}"
    target = n.target
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", str(target))
    if module.startswith("torch"):
        return f"torch.{name}"
    if module in ("_operator", "operator"):
        return f"operator.{name}"
    return name


def _where(loc):
    """(line, called_at) of a recorded location; see ``leapp.runtime.patches.via``."""
    if loc is None or isinstance(loc, str):
        return None, None
    if len(loc) > 4 and loc[4] is not None:
        helper = loc[4]
        return (helper[0], helper[1], helper[2]), (loc[0], loc[1], loc[3])
    return (loc[0], loc[1], loc[2]), None


# --- the table ----------------------------------------------------------------------


def table(gm, name="graph", example=None) -> str:
    """The per-node table: op, dtype, shape, NumPy call, source line (and the user's calling line)."""
    items = rows(gm, example)
    files = {r.line[0] for r in items if r.line} | {r.called_at[0] for r in items if r.called_at}
    one_file = next(iter(files)) if len(files) == 1 else None

    def place(loc, col=None):
        if loc is None:
            return ""
        text = f"{loc[1]}" if one_file else f"{project_path(loc[0])}:{loc[1]}"
        return text + (f":{col}" if col is not None else "")

    head = ("#", "node", "op", "dtype", "shape", "NumPy call", "line", "in", "called at")
    body = []
    for i, r in enumerate(items, 1):
        fn = r.line[2] if r.line and r.line[2] and r.line[2] != "<module>" else ""
        body.append((str(i), r.name, r.op, r.dtype, r.shape, r.call, place(r.line), fn,
                     place(r.called_at, r.called_at[2]) if r.called_at else ""))
    widths = [max(len(c[k]) for c in (head, *body)) for k in range(len(head))]
    fmt = "  ".join(f"{{:{'>' if k == 0 else '<'}{w}}}" for k, w in enumerate(widths))
    where = f"lines of {project_path(one_file)}" if one_file else "file:line"
    n_fx = len(gm.graph.nodes)  # the output node is the "returns:" line
    lines = [f"{name}: {n_fx} FX nodes ({where}; 'called at' is the user's line that called a helper)",
             fmt.format(*head).rstrip(), fmt.format(*("-" * w for w in widths)).rstrip()]
    lines += [fmt.format(*c).rstrip() for c in body]
    lines.append("returns: " + ", ".join(f"{k} = {v}" for k, v in outputs(gm)))
    return "\n".join(lines)


# --- the drawing --------------------------------------------------------------------


@dataclass
class Band:
    """The nodes one source line made (or the inputs, or the outputs), drawn as one cluster."""

    key: object
    title: str
    code: str
    members: list  # Row


def bands(gm) -> list:
    """Bands in the order their first node ran: inputs, one per source line, outputs."""
    items = [r for r in rows(gm) if r.op != "constant"]  # a constant is a label on its user
    order: list[Band] = []
    by_key: dict[object, Band] = {}
    for r in items:
        key: object
        if r.op == "input":
            key = "inputs"
        elif r.line is None:
            key = ("?",)
        else:
            key = (r.line[0], r.line[1], r.called_at)
        if key not in by_key:
            by_key[key] = Band(key, *_band_title(key, r), [])
            order.append(by_key[key])
        by_key[key].members.append(r)
    order.sort(key=lambda b: b.key != "inputs")  # stable: inputs first, lines as they ran
    return order


def _band_title(key, row) -> tuple[str, str]:
    if key == "inputs":
        return "inputs", ""
    if key == ("?",):
        return "recorded without a source line", ""
    path, line, called_at = key
    fn = row.line[2] if row.line[2] and row.line[2] != "<module>" else ""
    title = f"{project_path(path)}:{line}" + (f" in {fn}" if fn else "")
    if called_at:
        title += f" (called at line {called_at[1]})" if called_at[0] == path else \
            f" (called at {project_path(called_at[0])}:{called_at[1]})"
    return title, linecache.getline(path, line).strip()


_CH, _BOX_H, _BOX_GAP, _BAND_GAP, _HEAD, _M = 7.0, 34, 14, 36, 34, 20


def to_svg(gm, name="graph") -> str:
    """One band per source line, top to bottom in the order the lines ran; wires between ops."""
    groups = bands(gm)
    results = outputs(gm)
    const_users = {}
    for r in rows(gm):
        if r.op == "constant":
            const_users[r.name] = r
    pos, size = {}, {}
    y = _M + 24
    width = 0.0
    frames = []
    for band in groups:
        x: float = _M + 10
        top = y
        y += _HEAD
        for r in band.members:
            label = _box_label(r, const_users)
            w = max(len(label[0]), len(label[1])) * _CH + 16
            pos[r.name], size[r.name] = (x, y), (w, _BOX_H)
            x += w + _BOX_GAP
        head_w = max(len(band.title), len(band.code)) * _CH + 20
        frames.append((band, top, max(x - _M, head_w), _HEAD + _BOX_H + 12))
        width = max(width, _M + max(x - _M, head_w))
        y += _BOX_H + 12 + _BAND_GAP
    out_top = y
    out_w = max([len(f"{k} = {v}") * _CH + 16 for k, v in results] + [60])
    height = out_top + _HEAD + _BOX_H + 2 * _M
    width = max(width, _M + 10 + len(results) * (out_w + _BOX_GAP)) + _M
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555555"/></marker></defs>',
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>',
           f'<text x="{_M}" y="{_M + 4}" font-weight="bold">{escape(name)}: {len(pos)} nodes by source line'
           f'</text>']
    for band, top, w, h in frames:
        fill = "#f1f5fb" if band.key != "inputs" else "#f4f4f4"
        svg.append(f'<g class="band" id="{escape(_pid(str(band.title)))}">')
        svg.append(f'<rect x="{_M:.0f}" y="{top:.0f}" width="{w:.0f}" height="{h:.0f}" rx="6" fill="{fill}" '
                   f'stroke="#9aaccc"/>')
        svg.append(f'<text x="{_M + 8:.0f}" y="{top + 14:.0f}" font-weight="bold">{escape(band.title)}</text>')
        if band.code:
            svg.append(f'<text x="{_M + 8:.0f}" y="{top + 28:.0f}" fill="#2471a3">{escape(band.code)}</text>')
        svg.append("</g>")
    wires = []
    for band in groups:
        for r in band.members:
            for a in r.inputs:
                if a in pos:
                    wires.append((a, r.name))
    out_pos = {}
    x = float(_M + 10)
    svg.append(f'<rect x="{_M:.0f}" y="{out_top:.0f}" width="{width - 2 * _M:.0f}" height="{_HEAD + _BOX_H + 12:.0f}" '
               f'rx="6" fill="#f4f4f4" stroke="#9aaccc"/>')
    svg.append(f'<text x="{_M + 8:.0f}" y="{out_top + 14:.0f}" font-weight="bold">outputs</text>')
    for k, v in results:
        out_pos[k] = (x, out_top + _HEAD)
        svg.append(f'<rect class="output" x="{x:.0f}" y="{out_top + _HEAD:.0f}" width="{out_w:.0f}" '
                   f'height="{_BOX_H}" rx="4" fill="#ffffff" stroke="#333333"/>')
        svg.append(f'<text x="{x + 8:.0f}" y="{out_top + _HEAD + 21:.0f}">{escape(k)}</text>')
        if v in pos:
            wires.append((v, ("out", k, out_w)))
        x += out_w + _BOX_GAP
    x1: float
    y1: float
    x2: float
    y2: float
    for src, dst in wires:
        sx, sy = pos[src]
        sw, sh = size[src]
        if isinstance(dst, tuple):
            dx, dy = out_pos[dst[1]]
            dw = dst[2]
        else:
            dx, dy = pos[dst]
            dw = size[dst][0]
        x1, y1, x2, y2 = sx + sw / 2, sy + sh, dx + dw / 2, dy
        if abs(y2 - sy) < 1:  # same band: a short hop along its row
            x1, y1, x2, y2 = sx + sw, sy + sh / 2, dx, dy + sh / 2
            d = f"M {x1:.0f} {y1:.0f} L {x2:.0f} {y2:.0f}"
        else:
            bend = max(30.0, (y2 - y1) / 2)
            d = f"M {x1:.0f} {y1:.0f} C {x1:.0f} {y1 + bend:.0f}, {x2:.0f} {y2 - bend:.0f}, {x2:.0f} {y2:.0f}"
        svg.append(f'<path class="wire" d="{d}" fill="none" stroke="#555555" stroke-opacity="0.55" '
                   f'stroke-width="1.2" marker-end="url(#arrow)"/>')
    for band in groups:
        for r in band.members:
            bx, by = pos[r.name]
            w, h = size[r.name]
            top, bottom = _box_label(r, const_users)
            svg.append(f'<g class="node" id="{escape(_pid(r.name))}">')
            svg.append(f'<rect x="{bx:.0f}" y="{by:.0f}" width="{w:.0f}" height="{h}" rx="4" fill="#ffffff" '
                       f'stroke="#333333"/>')
            svg.append(f'<text x="{bx + 8:.0f}" y="{by + 14:.0f}" font-weight="bold">{escape(top)}</text>')
            svg.append(f'<text x="{bx + 8:.0f}" y="{by + 28:.0f}" fill="#555555">{escape(bottom)}</text>')
            svg.append("</g>")
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def _box_label(r, consts):
    if r.op == "input":
        return r.call, f"{r.dtype}{r.shape}"
    extra = " +const" if any(a in consts for a in r.inputs) else ""
    return r.call or r.op, f"{r.dtype}{r.shape}{extra}"


def to_dot(gm, name="graph") -> str:
    """The same bands as Graphviz clusters (``dot -Tpng`` lays them out)."""
    groups = bands(gm)
    consts = {r.name: r for r in rows(gm) if r.op == "constant"}
    lines = [f"digraph {_q(name)} {{", "  rankdir=TB;", "  compound=true;",
             '  node [shape=box, fontname="monospace", fontsize=10];']
    for i, band in enumerate(groups):
        label = band.title + (f"\n{band.code}" if band.code else "")
        lines.append(f"  subgraph cluster_{i} {{")
        lines.append(f'    label={_q(label)}; style=rounded; color="#9aaccc";')
        for r in band.members:
            top, bottom = _box_label(r, consts)
            text = f"{top}\n{bottom}"
            lines.append(f"    {_q(r.name)} [label={_q(text)}];")
        lines.append("  }")
    for band in groups:
        for r in band.members:
            for a in r.inputs:
                if a not in consts:
                    lines.append(f"  {_q(a)} -> {_q(r.name)};")
    for k, v in outputs(gm):
        lines.append(f'  {_q("output " + k)} [shape=plaintext, label={_q(k)}];')
        lines.append(f"  {_q(v)} -> {_q('output ' + k)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _q(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _pid(text):
    return "".join(c if c.isalnum() else "_" for c in str(text))


def draw(gm, path=None, name="graph"):
    """Write ``path`` (.svg here; .dot; .png through Graphviz's ``dot``) or return the DOT text."""
    from ..pipeline.draw import render_text

    return render_text(to_dot(gm, name), lambda: to_svg(gm, name), path)
