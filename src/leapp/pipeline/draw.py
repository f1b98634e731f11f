"""Drawings of a pipeline (nodes, ports, edges, feedback, state) or of one graph, as DOT, SVG or PNG.

DOT is text and needs nothing. SVG is written here directly (boxes, text and
paths laid out in columns), so it needs nothing either. PNG needs Graphviz's
``dot`` program, which renders the DOT text; without it the error says so and
what to write instead.

Both drawings go through one model: ``Box`` (a node with its port rows) and
``Wire`` (from a box's port to another's, ``kind`` forward, feedback, state,
input or output), so DOT and SVG show the same facts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from html import escape

from ..errors import LeappError


@dataclass
class Box:
    id: str
    title: str
    inputs: list = field(default_factory=list)  # (port, label)
    outputs: list = field(default_factory=list)  # (port, label)
    notes: list = field(default_factory=list)  # extra lines (state)


@dataclass
class Wire:
    src: str  # box id, or "" for the outside (a pipeline input)
    src_port: str
    dst: str  # box id, or "" for the outside (a pipeline output)
    dst_port: str
    kind: str = "forward"  # forward | feedback | state


STYLE = {  # kind -> (colour, dashed)
    "forward": ("#333333", False),
    "feedback": ("#c0392b", True),
    "state": ("#2471a3", True),
    "input": ("#777777", False),
    "output": ("#777777", False),
}


def _label(dtype, shape):
    return f"{dtype}[{', '.join(str(s) for s in shape)}]"


def pipeline_model(p):
    """Boxes and wires of a ``CompiledPipeline``."""
    from ..export.spec import state_output

    boxes, wires = [], []
    for name in p.order:
        node = p.nodes[name]
        example = p.examples.get(name, {})
        outs = node(**example) if example else {}
        state = p.state.get(name, {})
        kind = "attached model" if name in p.attached else "traced"
        box = Box(name, f"{name} ({kind})")
        for i in node.input_names:
            v = example.get(i)
            tag = "state " if i in state else ""
            box.inputs.append((i, f"{tag}{i}: {_label(v.dtype, v.shape)}" if v is not None else i))
        for o in node.output_names:
            v = outs.get(o)
            box.outputs.append((o, f"{o}: {_label(v.dtype, v.shape)}" if v is not None else o))
        for s, initial in state.items():
            box.notes.append(f"state {s}: {_label(initial.dtype, initial.shape)}, {s}.next -> {s}")
            wires.append(Wire(name, state_output(s), name, s, "state"))
        boxes.append(box)
    for a, o, b, i in p.edges:
        wires.append(Wire(a, o, b, i, "forward"))
    for f in p.feedback:
        wires.append(Wire(f.from_node, f.from_port, f.to_node, f.to_port, "feedback"))
    for ref in p.inputs:
        node, port = ref.split("/", 1)
        wires.append(Wire("", ref, node, port, "input"))
    for ref in p.outputs:
        node, port = ref.split("/", 1)
        wires.append(Wire(node, port, "", ref, "output"))
    return boxes, wires


def graph_model(gm, title="graph"):
    """Boxes and wires of one FX graph: a box per placeholder, op and output, a wire per use."""
    boxes, wires = [], []
    for n in gm.graph.nodes:
        dtype, shape = n.meta.get("leapp_dtype"), n.meta.get("leapp_shape")
        value = _label(dtype, shape) if dtype is not None and shape is not None else ""
        if n.op == "placeholder":
            title_ = f"input {n.target}"
        elif n.op == "output":
            title_ = "output"
        elif n.op == "get_attr":
            title_ = f"constant {n.target}"
        else:
            target = n.meta.get("leapp_call") or getattr(n.target, "__name__", str(n.target))
            title_ = str(target)
        box = Box(n.name, title_)
        if n.op == "output":
            outs = n.args[0]
            items = outs.items() if isinstance(outs, dict) else enumerate(outs if isinstance(outs, (list, tuple)) else [outs])
            for k, v in items:
                box.inputs.append((str(k), str(k)))
                if hasattr(v, "name"):
                    wires.append(Wire(v.name, "out", n.name, str(k)))
        else:
            for i, a in enumerate(n.all_input_nodes):
                box.inputs.append((str(i), a.name))
                wires.append(Wire(a.name, "out", n.name, str(i)))
            box.outputs.append(("out", value or "value"))
            source = n.meta.get("leapp_source")
            if source:
                box.notes.append(f"at {os.path.basename(str(source))}")
        boxes.append(box)
    return boxes, wires


# --- DOT ----------------------------------------------------------------------------


def to_dot(boxes, wires, name="pipeline"):
    lines = [f"digraph {_q(name)} {{", "  rankdir=LR;", '  node [shape=plain, fontname="monospace", fontsize=10];']
    for b in boxes:
        rows = [f'<tr><td colspan="2" bgcolor="#e8e8e8"><b>{escape(b.title)}</b></td></tr>']
        n = max(len(b.inputs), len(b.outputs))
        for k in range(n):
            left = b.inputs[k] if k < len(b.inputs) else None
            right = b.outputs[k] if k < len(b.outputs) else None
            lcell = f'<td port="i_{_pid(left[0])}" align="left">{escape(left[1])}</td>' if left else "<td></td>"
            rcell = f'<td port="o_{_pid(right[0])}" align="right">{escape(right[1])}</td>' if right else "<td></td>"
            rows.append(f"<tr>{lcell}{rcell}</tr>")
        rows += [f'<tr><td colspan="2" align="left"><i>{escape(t)}</i></td></tr>' for t in b.notes]
        table = '<table border="1" cellborder="0" cellspacing="2">' + "".join(rows) + "</table>"
        lines.append(f"  {_q(b.id)} [label=<{table}>];")
    for w in wires:
        colour, dashed = STYLE[w.kind]
        attrs = [f'color="{colour}"']
        if dashed:
            attrs.append("style=dashed")
        if w.kind in ("feedback", "state"):
            attrs += ["constraint=false", f'label="{w.kind}"', f'fontcolor="{colour}"']
        if w.src == "":
            lines.append(f'  {_q("in:" + w.src_port)} [shape=plaintext, label={_q(w.src_port)}];')
            src = _q("in:" + w.src_port)
        else:
            src = f"{_q(w.src)}:o_{_pid(w.src_port)}"
        if w.dst == "":
            lines.append(f'  {_q("out:" + w.dst_port)} [shape=plaintext, label={_q(w.dst_port)}];')
            dst = _q("out:" + w.dst_port)
        else:
            dst = f"{_q(w.dst)}:i_{_pid(w.dst_port)}"
        lines.append(f"  {src} -> {dst} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _q(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _pid(port):
    return "".join(c if c.isalnum() else "_" for c in str(port))


# --- SVG ------------------------------------------------------------------------------

_CHAR, _ROW, _PAD, _GAP_X, _GAP_Y, _MARGIN = 7.0, 18, 8, 90, 40, 30


def to_svg(boxes, wires):
    """A standalone SVG: boxes in columns by their longest forward path, wires as curves."""
    ids = {b.id for b in boxes}
    depth = {b.id: 0 for b in boxes}
    forward = [w for w in wires if w.kind == "forward" and w.src in ids and w.dst in ids and w.src != w.dst]
    for _ in range(len(boxes)):  # longest path (forward edges form a DAG)
        changed = False
        for w in forward:
            if depth[w.dst] < depth[w.src] + 1:
                depth[w.dst] = depth[w.src] + 1
                changed = True
        if not changed:
            break
    size = {}
    for b in boxes:
        width_l = max([len(t) for _, t in b.inputs] + [0])
        width_r = max([len(t) for _, t in b.outputs] + [0])
        chars = max(len(b.title), width_l + width_r + 3, *[len(t) for t in b.notes], 8)
        rows = 1 + max(len(b.inputs), len(b.outputs)) + len(b.notes)
        size[b.id] = (chars * _CHAR + 2 * _PAD, rows * _ROW + _PAD)
    columns: dict[int, list] = {}
    for b in boxes:
        columns.setdefault(depth[b.id], []).append(b)
    has_in = any(w.kind == "input" for w in wires)
    x: float = _MARGIN + (140 if has_in else 0)
    pos: dict = {}
    bottom = 0.0
    for col in sorted(columns):
        width = max(size[b.id][0] for b in columns[col])
        y: float = _MARGIN + 20
        for b in columns[col]:
            pos[b.id] = (x, y)
            y += size[b.id][1] + _GAP_Y
        bottom = max(bottom, y)
        x += width + _GAP_X
    anchors: dict = {}
    for b in boxes:
        bx, by = pos[b.id]
        w, _ = size[b.id]
        for k, (p, _) in enumerate(b.inputs):
            anchors[(b.id, "in", p)] = (bx, by + _ROW * (k + 1) + _ROW / 2 + 2)
        for k, (p, _) in enumerate(b.outputs):
            anchors[(b.id, "out", p)] = (bx + w, by + _ROW * (k + 1) + _ROW / 2 + 2)
    loops = [w for w in wires if w.kind in ("feedback", "state")]
    height = bottom + 24 * len(loops) + _MARGIN
    width = x + (120 if any(w.kind == "output" for w in wires) else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">',
           "<defs>"]
    for kind, (colour, _) in STYLE.items():
        out.append(f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
                   f'fill="{colour}"/></marker>')
    out.append("</defs>")
    out.append(f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>')
    for b in boxes:
        bx, by = pos[b.id]
        w, h = size[b.id]
        out.append(f'<g class="node" id="{escape(_pid(b.id))}">')
        out.append(f'<rect x="{bx:.0f}" y="{by:.0f}" width="{w:.0f}" height="{h:.0f}" rx="4" fill="#fbfbfb" '
                   f'stroke="#333333"/>')
        out.append(f'<rect x="{bx:.0f}" y="{by:.0f}" width="{w:.0f}" height="{_ROW + 2}" rx="4" fill="#e8e8e8" '
                   f'stroke="#333333"/>')
        out.append(f'<text x="{bx + _PAD:.0f}" y="{by + 14:.0f}" font-weight="bold">{escape(b.title)}</text>')
        for k, (_, t) in enumerate(b.inputs):
            out.append(f'<text x="{bx + _PAD:.0f}" y="{by + _ROW * (k + 2) - 2:.0f}">{escape(t)}</text>')
        for k, (_, t) in enumerate(b.outputs):
            out.append(f'<text x="{bx + w - _PAD:.0f}" y="{by + _ROW * (k + 2) - 2:.0f}" '
                       f'text-anchor="end">{escape(t)}</text>')
        first = 1 + max(len(b.inputs), len(b.outputs))
        for k, t in enumerate(b.notes):
            out.append(f'<text x="{bx + _PAD:.0f}" y="{by + _ROW * (first + k + 1) - 2:.0f}" '
                       f'fill="#2471a3" font-style="italic">{escape(t)}</text>')
        out.append("</g>")
    lane = bottom
    for w in wires:
        colour, dashed = STYLE[w.kind]
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        if w.kind == "input":
            x2, y2 = anchors[(w.dst, "in", w.dst_port)]
            x1 = _MARGIN + 130
            out.append(f'<text x="{x1 - 4:.0f}" y="{y2 - 4:.0f}" text-anchor="end" fill="{colour}">'
                       f'{escape(w.src_port)}</text>')
            d = f"M {_MARGIN:.0f} {y2:.0f} L {x2:.0f} {y2:.0f}"
        elif w.kind == "output":
            x1, y1 = anchors[(w.src, "out", w.src_port)]
            out.append(f'<text x="{x1 + 8:.0f}" y="{y1 - 6:.0f}" fill="{colour}">{escape(w.dst_port)}</text>')
            d = f"M {x1:.0f} {y1:.0f} L {x1 + 100:.0f} {y1:.0f}"
        elif w.kind == "forward":
            x1, y1 = anchors[(w.src, "out", w.src_port)]
            x2, y2 = anchors[(w.dst, "in", w.dst_port)]
            mid = (x2 - x1) / 2
            d = f"M {x1:.0f} {y1:.0f} C {x1 + mid:.0f} {y1:.0f}, {x2 - mid:.0f} {y2:.0f}, {x2:.0f} {y2:.0f}"
        else:  # feedback and state run back below the boxes, each in its own lane
            x1, y1 = anchors[(w.src, "out", w.src_port)]
            x2, y2 = anchors[(w.dst, "in", w.dst_port)]
            lane += 24
            d = (f"M {x1:.0f} {y1:.0f} C {x1 + 40:.0f} {y1:.0f}, {x1 + 40:.0f} {lane:.0f}, {x1:.0f} {lane:.0f} "
                 f"L {x2:.0f} {lane:.0f} C {x2 - 40:.0f} {lane:.0f}, {x2 - 40:.0f} {y2:.0f}, {x2:.0f} {y2:.0f}")
            label = f"{w.kind}: {w.src}/{w.src_port} -> {w.dst}/{w.dst_port}"
            out.append(f'<text x="{(x1 + x2) / 2:.0f}" y="{lane - 4:.0f}" text-anchor="middle" '
                       f'fill="{colour}">{escape(label)}</text>')
        out.append(f'<path class="{w.kind}" d="{d}" fill="none" stroke="{colour}" stroke-width="1.5"{dash} '
                   f'marker-end="url(#arrow-{w.kind})"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --- writing --------------------------------------------------------------------------


def render(boxes, wires, path, name):
    """Write ``path`` (.dot, .svg or .png) or, without a path, return the DOT text."""
    return render_text(to_dot(boxes, wires, name), lambda: to_svg(boxes, wires), path)


def render_text(dot, svg, path):
    """Write ``path`` from the DOT text ``dot`` (.dot; .png through Graphviz) or ``svg()`` (.svg)."""
    if path is None:
        return dot
    from ..fsutil import atomic_write

    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".dot":
        atomic_write(path, dot.encode())
    elif ext == ".svg":
        atomic_write(path, svg().encode())
    elif ext == ".png":
        exe = shutil.which("dot")
        if exe is None:
            raise LeappError(f"drawing {path!r}: a PNG needs Graphviz's `dot` program, which is not on "
                             f"PATH. Write .svg (no dependency) or .dot instead, or install Graphviz "
                             f"(e.g. `apt-get install graphviz`)")
        done = subprocess.run([exe, "-Tpng"], input=dot.encode(), capture_output=True, check=False)
        if done.returncode != 0:
            raise LeappError(f"drawing {path!r}: dot failed: {done.stderr.decode(errors='replace').strip()}")
        atomic_write(path, done.stdout)
    else:
        raise ValueError(f"drawing {path!r}: write .svg, .dot or .png")
    return path


def draw_pipeline(p, path=None):
    boxes, wires = pipeline_model(p)
    return render(boxes, wires, path, p.name)


def draw_graph(gm, path=None, name="graph"):
    boxes, wires = graph_model(gm, name)
    return render(boxes, wires, path, name)
