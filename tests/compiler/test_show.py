"""``cf.show()`` and ``cf.draw()``: the graph as a person reads it, by NumPy call and source line."""

from __future__ import annotations

import inspect
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import leapp
from leapp.errors import LeappError

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=np.float32)
SVG = "{http://www.w3.org/2000/svg}"


def _squash(x):
    return np.clip(x * 2.0, -1.0, 1.0)


def _with_helper(x):
    y = _squash(x)
    return {"y": y + 1.0, "total": np.cross(x, y).sum(axis=-1)}


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _rows(text):
    """The table's rows as {column: cell}, cut at the header's column starts."""
    import re

    lines = text.splitlines()
    names = ["#", "node", "op", "dtype", "shape", "NumPy call", "line", "in", "called at"]
    starts = [m.start() for m in re.finditer(r"-+", lines[2])]  # the rule under the header
    out = []
    for line in lines[3:-1]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        out.append(dict(zip(names, cells, strict=True)))
    return out


def test_show_names_the_helper_s_line_and_the_user_s_calling_line():
    cf = leapp.compile(_with_helper)
    with pytest.raises(LeappError, match="nothing to show"):
        cf.format_show()
    cf(X)
    text = cf.format_show()
    rows = _rows(text)
    helper_line = _line_of(_squash, "np.clip")
    call_line = _line_of(_with_helper, "_squash(x)")
    col = inspect.getsourcelines(_with_helper)[0][call_line - _line_of(_with_helper, "def ")].index("_squash")
    clip = next(r for r in rows if r["NumPy call"] == "numpy.clip")
    assert (clip["op"], clip["dtype"], clip["shape"]) == ("torch.clamp", "float32", "[2, 3]")
    assert (clip["line"], clip["in"]) == (str(helper_line), "_squash")
    assert clip["called at"] == f"{call_line}:{col + 1}"  # columns count from 1, as lint's
    add = next(r for r in rows if r["NumPy call"] == "numpy.add")
    assert add["line"] == str(_line_of(_with_helper, "y + 1.0")) and add["called at"] == ""
    assert next(r for r in rows if r["op"] == "input")["NumPy call"] == "input x"
    # np.cross is several torch ops with no NumPy dtype of their own: the run on the example fills them
    cross = [r for r in rows if r["NumPy call"] == "numpy.cross"]
    assert len(cross) > 3 and all(r["dtype"] != "?" and r["shape"] != "?" for r in cross)
    assert text.splitlines()[-1].startswith("returns: y = ")
    assert "test_show.py" in text.splitlines()[0]


def test_draw_puts_each_source_line_in_one_band_and_no_boxes_overlap(tmp_path):
    cf = leapp.compile(_with_helper)
    cf(X)
    root = ET.parse(cf.draw(tmp_path / "g.svg")).getroot()
    bands = {}
    for g in root.iter(SVG + "g"):
        if g.get("class") == "band":
            rect = g.find(SVG + "rect")
            title = g.find(SVG + "text").text
            bands[title] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
    helper_line, call_line = _line_of(_squash, "np.clip"), _line_of(_with_helper, "_squash(x)")
    assert f"test_show.py:{helper_line} in _squash (called at line {call_line})" in \
        {t.split("/")[-1] for t in bands}, bands
    boxes = []
    for g in root.iter(SVG + "g"):
        if g.get("class") == "node":
            rect = g.find(SVG + "rect")
            boxes.append((g.get("id"), *(float(rect.get(k)) for k in ("x", "y", "width", "height"))))
    assert len(boxes) == sum(1 for n in cf.graphs[0].graph.nodes if n.op not in ("output", "get_attr"))
    for i, (_, x, y, w, h) in enumerate(boxes):
        # inside exactly one band, and apart from every other box
        assert sum(bx <= x and x + w <= bx + bw and by <= y and y + h <= by + bh
                   for bx, by, bw, bh in bands.values()) == 1
        for _, x2, y2, w2, h2 in boxes[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
    dot = cf.draw()
    assert dot.count("subgraph cluster_") == len(bands) and f"_squash (called at line {call_line})" in dot
