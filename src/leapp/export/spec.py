"""``pipeline.json``: the versioned description of an exported pipeline, and its initial values.

One fact in one place: the writer (``CompiledPipeline.export``) and the
loader (``load_pipeline``) both go through this module, which imports
neither torch nor leapp's runtime, so a deployed robot reads it with NumPy
alone. The JSON Schema ``pipeline.schema.json`` next to this file is the
contract; ``validate`` checks a spec against it with the small
interpreter below (the keywords the schema uses, no ``jsonschema`` needed on
a robot; a test runs both on the same specs and finds them agreeing) and
checks what the schema cannot say (every reference resolves, no forward
cycle, dtypes NumPy reads without surprises, paths that stay in the folder).
``parse`` reads the bytes of ``pipeline.json`` strictly: size, encoding,
duplicate keys, nesting and numbers are bounded before ``json`` builds a value.

Names: a port is ``"node/port"``. A state ``s`` of a node is an artifact
input ``s`` and an artifact output ``s.next``, in every format.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import os
import re
import zipfile

import numpy as np

from ..errors import LeappError
from ..fsutil import atomic_write, default_mode
from .folder import path_problem

SPEC_VERSION = 1
SPEC_FILE = "pipeline.json"
INITIAL_FILE = "initial.npz"
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipeline.schema.json")
BATCH = "batch"  # the marker of the batch axis in a port's shape


MAX_SPEC_BYTES = 4 << 20  # pipeline.json: a spec of a thousand nodes is well under 1 MiB
MAX_DEPTH = 32  # nesting of pipeline.json (the schema needs 5)
MAX_DIGITS = 19  # an integer in pipeline.json (a dimension): int64 at most
# the dtypes a port may have: names NumPy reads as one plain scalar type (no object, struct or subarray)
DTYPES = frozenset(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64", "complex64", "complex128"])


class PipelineError(LeappError, ValueError):
    """A pipeline folder that leapp refuses to load; the message names the file (and the node)."""


class SpecError(PipelineError):
    """A pipeline spec that is malformed, inconsistent, or does not match its files."""


class ArtifactError(PipelineError):
    """An artifact whose bytes match its hash but that its runtime cannot load (corrupt or refused)."""


class UntrustedCodeError(PipelineError):
    """A TorchScript or .pt2 artifact, which can run code when loaded, without ``trust_code=True``."""


def untrusted_code(what: str, writer: str, call: str) -> UntrustedCodeError:
    """The one refusal of a TorchScript/.pt2 file without ``trust_code=True`` (load_pipeline, attach):
    ``what`` names the file(s), ``writer`` who could have planted code, ``call`` the opt-in."""
    return UntrustedCodeError(
        f"{what}: loading a TorchScript or .pt2 file runs code stored in it (their archives hold "
        f"pickles and programs), so anyone who could write {writer} could run code here. "
        f"{call} only if you trust where it came from; ONNX models need no such trust")


def state_output(name: str) -> str:
    """The artifact output that carries state ``name`` into the next step."""
    return f"{name}.next"


def port(node: str, name: str) -> str:
    return f"{node}/{name}"


def split(ref: str) -> tuple[str, str]:
    node, _, name = ref.partition("/")
    return node, name


def sha256_bytes(data) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dumps(spec: dict) -> str:
    """The canonical text of a spec: the same spec always gives the same bytes."""
    return json.dumps(spec, indent=2, sort_keys=False) + "\n"


def schema() -> dict:
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


def order(nodes, edges) -> list[str]:
    """Nodes in an order where every forward edge runs forward (ties keep ``nodes``' order).

    ``edges`` are (from_node, to_node) pairs. A forward cycle has no such
    order and is refused, naming the nodes on it.
    """
    nodes = list(nodes)
    index = {n: i for i, n in enumerate(nodes)}
    after: dict = {n: set() for n in nodes}
    before = {n: 0 for n in nodes}
    for a, b in edges:
        if b not in after[a]:
            after[a].add(b)
            before[b] += 1
    ready = collections.deque(n for n in nodes if before[n] == 0)
    out = []
    while ready:
        n = ready.popleft()
        out.append(n)
        for m in sorted(after[n], key=index.__getitem__):
            before[m] -= 1
            if before[m] == 0:
                ready.append(m)
    if len(out) != len(nodes):
        done = set(out)
        stuck = [n for n in nodes if n not in done]
        # drop what only hangs below the cycle (no way back into it): name the nodes on it
        on = set(stuck)
        into: dict = {n: [] for n in stuck}
        for a in stuck:
            for b in after[a]:
                if b in on:
                    into[b].append(a)
        outs = {n: len(after[n] & on) for n in stuck}
        sinks = [n for n in stuck if outs[n] == 0]
        while sinks:
            n = sinks.pop()
            on.discard(n)
            for a in into[n]:
                outs[a] -= 1
                if outs[a] == 0:
                    sinks.append(a)
        stuck = [n for n in stuck if n in on]
        raise SpecError(f"the forward edges form a cycle through {stuck}: no node could run first. "
                        f"A value that goes back to an earlier node must be feedback (it arrives on "
                        f"the next step)")
    return out


def write_initial(path, arrays: dict) -> None:
    """An .npz of ``arrays`` whose bytes depend on the arrays alone (np.savez stamps the time)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for key in sorted(arrays):
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0)), data.getvalue())
    atomic_write(path, buffer.getvalue(), mode=default_mode())


# --- reading pipeline.json strictly ---------------------------------------------------------

def parse(data: bytes, file: str = SPEC_FILE) -> dict:
    """The spec in ``data`` (the bytes of ``pipeline.json``); refuses what a lax reader would guess at.

    Refused, each with a ``SpecError`` naming ``file``: over ``MAX_SPEC_BYTES``,
    a BOM or bytes that are not UTF-8, invalid JSON (with line and column), a key
    twice in one object, nesting deeper than ``MAX_DEPTH``, an integer of more
    than ``MAX_DIGITS`` digits, any fraction, exponent, NaN or Infinity (a spec
    holds none), and a top level that is not an object.
    """
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(f"{file}: {len(data)} bytes, over the limit of {MAX_SPEC_BYTES}; not read")
    if data.startswith(b"\xef\xbb\xbf"):
        raise SpecError(f"{file}: starts with a byte order mark; leapp writes (and reads) UTF-8 without one")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{file}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    deep = f"{file}: nested deeper than {MAX_DEPTH} levels (a spec needs 5); not read"
    try:  # json's C parser bounds its own recursion (RecursionError); the depth is checked after
        spec = json.loads(text, object_pairs_hook=_no_duplicates(file), parse_int=_integer(file),
                          parse_float=_no_fraction(file), parse_constant=_no_fraction(file))
    except json.JSONDecodeError as exc:
        raise SpecError(f"{file}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise SpecError(deep) from None
    stack = [(spec, 1)]
    while stack:  # iteratively: no recursion on what the file holds
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise SpecError(deep)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    if not isinstance(spec, dict):
        raise SpecError(f"{file}: the top level must be a JSON object, not {_json_type(spec)}")
    return spec


def _no_duplicates(file):
    def hook(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise SpecError(f"{file}: the key {key!r} appears twice in one object (a reader would "
                                f"have to guess which one counts)")
            out[key] = value
        return out
    return hook


def _integer(file):
    def hook(text):
        if len(text.lstrip("-")) > MAX_DIGITS:
            raise SpecError(f"{file}: an integer of {len(text.lstrip('-'))} digits (at most {MAX_DIGITS})")
        return int(text)
    return hook


def _no_fraction(file):
    def hook(text):
        raise SpecError(f"{file}: the number {text[:40]} is not an integer; {file} holds integers only")
    return hook


# --- the schema, checked without jsonschema ----------------------------------------------------

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
_ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    for name, kind in _TYPES.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _same(a, b) -> bool:
    """JSON equality: true is not 1."""
    return _json_type(a) == _json_type(b) and a == b


def _where(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out or "(top)"


def _show(value) -> str:
    text = json.dumps(value) if _json_type(value) in ("integer", "string", "boolean", "null") else _json_type(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_schema(spec, schema_: dict | None = None, file: str = SPEC_FILE) -> None:
    """Raise ``SpecError`` at the first place ``spec`` breaks the JSON Schema, naming its key path.

    Interprets the keywords ``pipeline.schema.json`` uses (type, const, enum,
    pattern, minimum, required, properties, additionalProperties, items,
    uniqueItems, anyOf, $ref); a schema using any other keyword is refused, so
    the schema cannot grow a rule this check would silently skip.
    """
    root = schema() if schema_ is None else schema_

    def fail(path, expected, value):
        raise SpecError(f"{file} does not match its schema at {_where(path)}: expected {expected}, "
                        f"got {_show(value)}")

    def ok(value, rule, path):
        try:
            walk(value, rule, path)
            return True
        except SpecError:
            return False

    def walk(value, rule, path):
        unknown = set(rule) - _KEYWORDS - _ANNOTATIONS
        if unknown:
            raise SpecError(f"the pipeline schema uses keyword(s) {sorted(unknown)} the loader does not check")
        if "$ref" in rule:
            ref = rule["$ref"]
            if not ref.startswith("#/$defs/"):
                raise SpecError(f"the pipeline schema refers outside itself: {ref}")
            walk(value, root["$defs"][ref[len("#/$defs/"):]], path)
        if "anyOf" in rule and not any(ok(value, r, path) for r in rule["anyOf"]):
            fail(path, " or ".join(_expects(r, root) for r in rule["anyOf"]), value)
        if "type" in rule:
            kinds = rule["type"] if isinstance(rule["type"], list) else [rule["type"]]
            if _json_type(value) not in kinds:
                fail(path, " or ".join(f"a{'n' if k[0] in 'aeiou' else ''} {k}" for k in kinds), value)
        if "const" in rule and not _same(value, rule["const"]):
            fail(path, f"{_show(rule['const'])}", value)
        if "enum" in rule and not any(_same(value, e) for e in rule["enum"]):
            fail(path, f"one of {', '.join(_show(e) for e in rule['enum'])}", value)
        if "pattern" in rule and isinstance(value, str) and not re.search(rule["pattern"], value):
            fail(path, f"a string matching {rule['pattern']}", value)
        if "minimum" in rule and _json_type(value) in ("integer", "number") and value < rule["minimum"]:
            fail(path, f"a number >= {rule['minimum']}", value)
        if isinstance(value, dict):
            for key in rule.get("required", ()):
                if key not in value:
                    fail(path, f"the key {key!r} (required)", value)
            props = rule.get("properties", {})
            if rule.get("additionalProperties", True) is False:
                extra = sorted(k for k in value if k not in props)
                if extra:
                    raise SpecError(f"{file} does not match its schema at {_where(path)}: unknown key(s) "
                                    f"{extra}; expected only {sorted(props)}")
            for key, sub in props.items():
                if key in value:
                    walk(value[key], sub, [*path, key])
        if isinstance(value, list):
            if rule.get("uniqueItems"):
                seen = set()
                for i, item in enumerate(value):
                    key = (_json_type(item), json.dumps(item, sort_keys=True))
                    if key in seen:
                        fail([*path, i], "items that are all different", item)
                    seen.add(key)
            if "items" in rule:
                for i, item in enumerate(value):
                    walk(item, rule["items"], [*path, i])

    walk(spec, root, [])


_KEYWORDS = {"type", "const", "enum", "pattern", "minimum", "required", "properties",
             "additionalProperties", "items", "uniqueItems", "anyOf", "$ref"}


def _expects(rule, root) -> str:
    if "$ref" in rule:
        return _expects(root["$defs"][rule["$ref"][len("#/$defs/"):]], root)
    if "const" in rule:
        return _show(rule["const"])
    if "type" in rule:
        extra = f" >= {rule['minimum']}" if "minimum" in rule else ""
        return f"a{'n' if rule['type'][0] in 'aeiou' else ''} {rule['type']}{extra}"
    return "a value of another form"


def validate(spec: dict, file: str = SPEC_FILE) -> None:
    """Check ``spec`` against the JSON Schema and for consistency; a ``SpecError`` names the key path."""
    if isinstance(spec, dict) and "spec_version" in spec and not _same(spec["spec_version"], SPEC_VERSION):
        raise SpecError(f"{file} has spec_version {_show(spec['spec_version'])}; this leapp reads version "
                        f"{SPEC_VERSION} only (a newer leapp wrote it? load it with that leapp, or "
                        f"re-export the pipeline with this one)")
    check_schema(spec, file=file)
    _check_names(spec, file)
    _check_refs(spec)


def _check_names(spec, file):
    """What the schema cannot say about names: unique, known dtypes, paths that stay in the folder."""
    def refuse(path, why):
        raise SpecError(f"{file}: at {_where(path)}: {why}")

    seen: dict = {}
    for i, node in enumerate(spec["nodes"]):
        if node["name"] in seen:
            refuse(["nodes", i, "name"], f"the node name {node['name']!r} is also nodes[{seen[node['name']]}]'s")
        seen[node["name"]] = i
        for side in ("inputs", "outputs"):
            names = set()
            for j, entry in enumerate(node[side]):
                if entry["name"] in names:
                    refuse(["nodes", i, side, j, "name"], f"the port name {entry['name']!r} appears twice")
                names.add(entry["name"])
                if entry["dtype"] not in DTYPES:
                    refuse(["nodes", i, side, j, "dtype"], f"expected one of {sorted(DTYPES)}, got "
                           f"{_show(entry['dtype'])}")
        paths = [(["nodes", i, "artifact"], node["artifact"])]
        paths += [(["nodes", i, "external_data", k, "file"], e["file"])
                  for k, e in enumerate(node.get("external_data", ()))]
        for path, name in paths:
            problem = path_problem(name)
            if problem is not None:
                refuse(path, f"{_show_path(name)}: {problem}")
    problem = path_problem(spec["initial_values"]["file"])
    if problem is not None:
        refuse(["initial_values", "file"], f"{_show_path(spec['initial_values']['file'])}: {problem}")
    if spec["batch"]:
        return
    for i, node in enumerate(spec["nodes"]):
        for side in ("inputs", "outputs"):
            for j, entry in enumerate(node[side]):
                if _has_batch(entry["shape"]):
                    refuse(["nodes", i, side, j, "shape"], f"\"{BATCH}\" in a shape, but \"batch\" is false")


def _show_path(name) -> str:
    return repr(name) if len(name) <= 200 else repr(name[:200]) + "..."


def _has_batch(shape) -> bool:
    return any(_same(d, BATCH) for d in shape)


def _check_refs(spec):
    nodes = {n["name"]: n for n in spec["nodes"]}
    ports_in = {port(n, p["name"]) for n, d in nodes.items() for p in d["inputs"]}
    ports_out = {port(n, p["name"]) for n, d in nodes.items() for p in d["outputs"]}

    def need(ref, ports, what):
        if ref not in ports:
            raise SpecError(f"pipeline.json: {what} {ref!r} is not a port of any node")

    for e in spec["edges"]:
        need(e["from"], ports_out, "edge source")
        need(e["to"], ports_in, "edge target")
    for f in spec["feedback"]:
        need(f["from"], ports_out, "feedback source")
        need(f["to"], ports_in, "feedback target")
    for s in spec["state"]:
        need(port(s["node"], s["name"]), ports_in, "state input")
        need(port(s["node"], state_output(s["name"])), ports_out, "state output")
    for ref in spec["inputs"]:
        need(ref, ports_in, "pipeline input")
    for ref in spec["outputs"]:
        need(ref, ports_out, "pipeline output")
    fed = [e["to"] for e in spec["edges"]] + [f["to"] for f in spec["feedback"]] + \
          [port(s["node"], s["name"]) for s in spec["state"]] + list(spec["inputs"])
    counts = collections.Counter(fed)
    doubled = sorted(r for r, k in counts.items() if k > 1)
    unfed = sorted(ports_in - set(fed))
    if doubled or unfed:
        raise SpecError(f"pipeline.json: every node input needs exactly one source; fed twice: {doubled}, "
                        f"never fed: {unfed}")
    pairs = [(split(e["from"])[0], split(e["to"])[0]) for e in spec["edges"]]
    order(list(nodes), pairs)  # refuses a forward cycle, naming it
    pos = {n: i for i, n in enumerate(spec["order"])}
    if sorted(pos) != sorted(nodes) or any(pos[a] >= pos[b] for a, b in pairs):
        raise SpecError(f"pipeline.json: 'order' {spec['order']} is not an order of the nodes "
                        f"{sorted(nodes)} in which every edge runs forward")
