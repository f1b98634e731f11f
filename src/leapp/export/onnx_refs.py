"""The external-data files an ONNX model names, read from its protobuf bytes without the onnx package.

ONNX Runtime, given a model as bytes, opens every tensor's external
``location`` relative to the working directory. The loader hands it every
such file from memory instead, so it first needs the full list: this walks
the protobuf wire format down every message that can hold a tensor (graphs,
nodes, attributes, functions, sparse tensors, training graphs) and returns
each ``location`` named, plus whether a tensor is marked external without
one. A malformed message raises ``ValueError``.
"""

from __future__ import annotations

MAX_NESTING = 64  # graphs inside attributes inside graphs...

# message -> {field number: message it holds}; fields not listed are skipped
_MODEL, _GRAPH, _NODE, _ATTR, _FUNC, _TENSOR, _SPARSE, _TRAIN, _ENTRY = range(9)
_HOLDS = {
    _MODEL: {7: _GRAPH, 25: _FUNC, 20: _TRAIN},
    _TRAIN: {1: _GRAPH, 2: _GRAPH},
    _GRAPH: {1: _NODE, 5: _TENSOR, 15: _SPARSE},
    _NODE: {5: _ATTR},
    _ATTR: {5: _TENSOR, 6: _GRAPH, 10: _TENSOR, 11: _GRAPH, 22: _SPARSE, 23: _SPARSE},
    _FUNC: {7: _NODE},
    _SPARSE: {1: _TENSOR, 2: _TENSOR},
    _TENSOR: {13: _ENTRY},
    _ENTRY: {},
}
_TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION = 13, 14
_EXTERNAL = 1


def _varint(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data, start, end):
    """(field number, wire type, value or (start, end) of a length-delimited field)."""
    pos = start
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > end:
                raise ValueError("a field runs past its message")
            yield number, wire, (pos, pos + length)
            pos += length
        else:
            raise ValueError(f"wire type {wire} (groups are not part of ONNX)")
        if pos > end:
            raise ValueError("a field runs past its message")


def external_locations(data: bytes) -> tuple[set, bool]:
    """(every external-data ``location`` named in the model, whether a tensor is external without one)."""
    view = memoryview(data)
    found, unnamed = set(), False
    stack = [(_MODEL, 0, len(view), 0)]
    while stack:
        kind, start, end, depth = stack.pop()
        if depth > MAX_NESTING:
            raise ValueError(f"messages nested deeper than {MAX_NESTING}")
        external, located = False, False
        for number, wire, value in _fields(view, start, end):
            if kind == _TENSOR and number == _TENSOR_DATA_LOCATION and wire == 0:
                external = value == _EXTERNAL
            elif kind == _TENSOR and number == _TENSOR_EXTERNAL_DATA and wire == 2:
                entry = dict(_entry(view, *value))
                if entry.get("location") is not None:
                    found.add(entry["location"])
                    located = True
            elif wire == 2 and number in _HOLDS[kind]:
                stack.append((_HOLDS[kind][number], value[0], value[1], depth + 1))
        if external and not located:
            unnamed = True
    return found, unnamed


def _entry(view, start, end):
    key = value = None
    for number, wire, span in _fields(view, start, end):
        if wire == 2 and number in (1, 2):
            text = bytes(view[span[0]:span[1]]).decode("utf-8", "replace")
            key, value = (text, value) if number == 1 else (key, text)
    return [(key, value)] if key is not None else []
