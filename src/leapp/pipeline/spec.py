"""``pipeline.json``: the versioned description of an exported pipeline, and its initial values.

One fact in one place: the writer (``CompiledPipeline.export``) and the
loader (``load_pipeline``) both go through this module, which imports
neither torch nor leapp's runtime, so a deployed robot reads it with NumPy
alone. The JSON Schema ``pipeline.schema.json`` next to this file is the
contract; ``validate`` checks a spec against it when ``jsonschema`` is
installed and always checks what the schema cannot say (every reference
resolves, no forward cycle).

Names: a port is ``"node/port"``. A state ``s`` of a node is an artifact
input ``s`` and an artifact output ``s.next``, in every format.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile

import numpy as np

from ..fsutil import atomic_write, default_mode

SPEC_VERSION = 1
SPEC_FILE = "pipeline.json"
INITIAL_FILE = "initial.npz"
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipeline.schema.json")
BATCH = "batch"  # the marker of the batch axis in a port's shape


class SpecError(ValueError):
    """A pipeline spec that is malformed, inconsistent, or does not match its files."""


def state_output(name: str) -> str:
    """The artifact output that carries state ``name`` into the next step."""
    return f"{name}.next"


def port(node: str, name: str) -> str:
    return f"{node}/{name}"


def split(ref: str) -> tuple[str, str]:
    node, _, name = ref.partition("/")
    return node, name


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
    after = {n: set() for n in nodes}
    before = {n: 0 for n in nodes}
    for a, b in edges:
        if b not in after[a]:
            after[a].add(b)
            before[b] += 1
    ready = [n for n in nodes if before[n] == 0]
    out = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for m in nodes:
            if m in after[n]:
                before[m] -= 1
                if before[m] == 0:
                    ready.append(m)
    if len(out) != len(nodes):
        stuck = [n for n in nodes if n not in out]
        trimmed = True
        while trimmed:  # drop what only hangs below the cycle: name the nodes on it
            keep = [n for n in stuck if after[n] & set(stuck)]
            trimmed = len(keep) != len(stuck)
            stuck = keep
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


def read_initial(path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def validate(spec: dict) -> None:
    """Check ``spec`` against the JSON Schema (when jsonschema is installed) and for consistency."""
    try:
        import jsonschema
    except ImportError:  # the loader must work on a robot without it; the checks below still run
        jsonschema = None
    if jsonschema is not None:
        try:
            jsonschema.validate(spec, schema())
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
            raise SpecError(f"pipeline.json does not match its schema at {where}: {exc.message}") from None
    if spec.get("spec_version") != SPEC_VERSION:
        raise SpecError(f"pipeline.json has spec_version {spec.get('spec_version')!r}; this leapp reads "
                        f"version {SPEC_VERSION}")
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
    doubled = sorted({r for r in fed if fed.count(r) > 1})
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
