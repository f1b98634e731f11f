"""Issue 18: ``leapp.load_pipeline`` on crafted folders, as an attacker would make them.

Each attack is loaded in a child process (``attack.run``) that records every
path opened and every process started, with an alarm on each load. Every
attack must be refused with a ``PipelineError`` naming the file, run no
payload (no marker file, no process), open nothing outside the folder (bait
outside: a copy of a real artifact, whose hash would match, and FIFOs, which
would block if opened), and return within its alarm.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import leapp
from leapp.export import spec as sp
from leapp.export.loader import PipelineInputError

from . import attack, loop


@pytest.fixture(scope="module")
def traced():
    return loop.trace(loop.observations(4))


@pytest.fixture(scope="module")
def world(tmp_path_factory, traced):
    """An exported ONNX loop, a bait folder outside it, and the folder the child runs in."""
    root = tmp_path_factory.mktemp("attacks")
    base = root / "base"
    traced.export(base, "onnx")
    bait = root / "bait-outside"
    bait.mkdir()
    (bait / "bait.onnx").write_bytes((base / "policy.onnx").read_bytes())  # its hash would match
    (bait / "initial.npz").write_bytes((base / "initial.npz").read_bytes())
    (bait / "pipeline.json").write_bytes((base / "pipeline.json").read_bytes())
    os.mkfifo(bait / "fifo")
    cwd = root / "cwd"
    cwd.mkdir()
    os.mkfifo(cwd / "w.bin")  # what onnxruntime would open for a model loaded from bytes
    return {"root": root, "base": base, "bait": bait, "cwd": cwd}


def _policy(spec):
    return next(n for n in spec["nodes"] if n["name"] == "policy")


def _set(path, value):
    """An edit that sets spec[path...] = value (value(spec) when callable) and rehashes the files."""
    def edit(folder, spec):
        attack.rehash(folder, spec)
        *head, last = path
        target = spec
        for key in head:
            target = target[key]
        target[last] = value(spec) if callable(value) else value
    return edit


def _swap_file(name, make):
    """An edit that replaces the folder's file ``name`` by what ``make(folder, path)`` puts there."""
    def edit(folder, spec):
        path = folder / name
        if name != "pipeline.json":
            attack.rehash(folder, spec)
        os.remove(path)
        make(folder, path)
        if name == "pipeline.json":
            return False  # never write through what was put there (a link out, a FIFO)
        attack.rehash(folder, spec)
    return edit


def _raw_spec(data):
    def edit(folder, spec):
        (folder / "pipeline.json").write_bytes(data(spec) if callable(data) else data)
        return False
    return edit


def _npz(members, compress=False):
    buffer = io.BytesIO()
    with warnings.catch_warnings(), \
            zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        warnings.simplefilter("ignore")  # a member twice is the point of one attack
        for name, value in members:
            data = io.BytesIO()
            np.lib.format.write_array(data, value, allow_pickle=True)
            z.writestr(name, data.getvalue())
    return buffer.getvalue()


def _initial(edit_members, compress=False):
    def edit(folder, spec):
        with np.load(folder / "initial.npz") as z:
            members = [(k + ".npy", z[k]) for k in z.files]
        (folder / "initial.npz").write_bytes(_npz(edit_members(members, folder), compress))
        attack.rehash(folder, spec)
    return edit


def _deep(spec):
    return b"[" * 100_000 + b"]" * 100_000


def _nest(n):
    value = []
    for _ in range(n):
        value = [value]
    return value


def _with_version(v):
    return lambda s: json.dumps({**s, "spec_version": v}).encode()


def _external(location):
    """policy.onnx saved with its weights in ``location``, which the spec does not list."""
    def edit(folder, spec):
        import onnx

        model = onnx.load(folder / "policy.onnx")
        onnx.save_model(model, folder / "policy.onnx", save_as_external_data=True, location="w.bin",
                        size_threshold=0)
        os.remove(folder / "w.bin")  # only the reference matters: the loader must not open it
        if location != "w.bin":
            from onnx import external_data_helper as ext

            model = onnx.load(folder / "policy.onnx", load_external_data=False)
            for tensor in ext._get_all_tensors(model):
                for entry in tensor.external_data:
                    if entry.key == "location":
                        entry.value = location
            onnx.save_model(model, folder / "policy.onnx")
        attack.rehash(folder, spec)
    return edit


def _cases(w):
    bait = w["bait"]
    mkfifo = lambda folder, path: os.mkfifo(path)  # noqa: E731
    link = lambda target: lambda folder, path: os.symlink(target, path)  # noqa: E731
    fifo_spec = _swap_file("pipeline.json", mkfifo)

    def link_dir(folder, spec):
        attack.rehash(folder, spec)
        os.symlink(bait, folder / "sub")
        _policy(spec)["artifact"] = "sub/bait.onnx"

    def inside_link(folder, spec):
        os.rename(folder / "policy.onnx", folder / "real.onnx")
        os.symlink("real.onnx", folder / "policy.onnx")
        attack.rehash(folder, spec)

    def directory(folder, spec):
        os.remove(folder / "policy.onnx")
        (folder / "policy.onnx").mkdir()

    def corrupt_onnx(folder, spec):
        data = bytearray((folder / "policy.onnx").read_bytes())
        (folder / "policy.onnx").write_bytes(bytes(data[: len(data) // 2]))
        attack.rehash(folder, spec)

    def bomb(size):  # zeros where the spec declares 8 bytes
        return lambda members, folder: [(n, np.zeros(size, np.float32) if "last_action" in n else v)
                                        for n, v in members]

    def pickled(members, folder):
        return [(n, np.array([attack.Payload(folder.parent / attack.PAYLOAD_MARKER)], dtype=object)
                 if "last_action" in n else v) for n, v in members]

    return {
        # reads outside the folder: the bait's hash is the real artifact's, so following it would load
        "dotdot-artifact": (_set(["nodes", 1, "artifact"], "../bait-outside/bait.onnx"), "../bait-outside"),
        "absolute-artifact": (_set(["nodes", 1, "artifact"], str(bait / "bait.onnx")), "absolute"),
        "absolute-missing": (_set(["nodes", 1, "artifact"], str(bait / "no-such.onnx")), "absolute"),
        "dotdot-initial": (_set(["initial_values", "file"], "../bait-outside/initial.npz"), "leaves the folder"),
        "dotdot-external": (_set(["nodes", 1, "external_data"], lambda s: [{"file": "../bait-outside/fifo",
                                                                          "sha256": "0" * 64}]),
                            "leaves the folder"),
        "symlink-artifact": (_swap_file("policy.onnx", link(bait / "bait.onnx")), "symbolic link"),
        "symlink-inside": (inside_link, "symbolic link"),
        "symlink-spec": (_swap_file("pipeline.json", link(bait / "pipeline.json")), "symbolic link"),
        "symlink-initial": (_swap_file("initial.npz", link(bait / "initial.npz")), "symbolic link"),
        "symlink-folder-part": (link_dir, "symbolic link"),
        "symlink-fifo": (_swap_file("policy.onnx", link(bait / "fifo")), "symbolic link"),
        "symlink-dev-zero": (_swap_file("policy.onnx", link("/dev/zero")), "symbolic link"),
        # hangs and memory
        "fifo-artifact": (_swap_file("policy.onnx", mkfifo), "a FIFO"),
        "fifo-initial": (_swap_file("initial.npz", mkfifo), "a FIFO"),
        "fifo-spec": (fifo_spec, "a FIFO"),
        "directory-artifact": (directory, "a directory"),
        "zip-bomb": (_initial(bomb(32 << 20), compress=True), "compressed"),  # 127 KiB -> 128 MiB
        "zip-bomb-stored": (_initial(bomb(1 << 20)), "shape [1048576]"),
        # the initial values
        "npz-pickle": (_initial(pickled), "holds objects"),
        "npz-wrong-dtype": (_initial(lambda m, f: [(n, v.astype(np.float64)) for n, v in m]), "dtype float64"),
        "npz-wrong-shape": (_initial(lambda m, f: [(n, v[:1]) for n, v in m]), "shape [1]"),
        "npz-extra-key": (_initial(lambda m, f: [*m, ("evil.npy", np.zeros(1))]), "unknown ['evil']"),
        "npz-missing-key": (_initial(lambda m, f: m[:1]), "missing"),
        "npz-twice": (_initial(lambda m, f: [*m, m[0]]), "appear twice"),
        "npz-not-a-zip": (_swap_file("initial.npz", lambda f, p: p.write_bytes(b"\x93NUMPY junk")), "not a readable"),
        # lax parsing
        "json-duplicate-key": (_raw_spec(lambda s: b'{"spec_version": 1, ' + json.dumps(s).encode()[1:]),
                               "'spec_version' appears twice"),
        "json-deep": (_raw_spec(_deep), "nested deeper than 32"),
        "json-40-deep": (_raw_spec(lambda s: json.dumps({**s, "name": _nest(40)}).encode()), "nested deeper than 32"),
        "json-escapes": (_raw_spec(b'{"a": "' + b'\\"' * (1 << 19)), "Unterminated string"),  # no O(n^2) scan
        "json-invalid": (_raw_spec(b'{"spec_version": 1,'), "not valid JSON at line 1"),
        "json-bom": (_raw_spec(lambda s: b"\xef\xbb\xbf" + json.dumps(s).encode()), "byte order mark"),
        "json-latin1": (_raw_spec(lambda s: json.dumps({**s, "name": "caf\xe9"}, ensure_ascii=False)
                                  .encode("latin-1")), "not UTF-8"),
        "json-huge-number": (_raw_spec(lambda s: json.dumps(s).replace('"shape": [3]', '"shape": [' + "9" * 5000 + "]",
                                                                       1).encode()), "5000 digits"),
        "json-float": (_raw_spec(lambda s: json.dumps(s).replace('"shape": [3]', '"shape": [3.0]', 1).encode()),
                       "not an integer"),
        "json-nan": (_raw_spec(lambda s: json.dumps(s).replace('"shape": [3]', '"shape": [NaN]', 1).encode()),
                     "not an integer"),
        "json-top-list": (_raw_spec(b"[]"), "must be a JSON object"),
        "json-too-big": (_raw_spec(lambda s: json.dumps({**s, "name": "x" * (5 << 20)}).encode()),
                         "over the limit"),
        "future-version": (_raw_spec(_with_version(2)), "spec_version 2; this leapp reads version 1"),
        "schema-missing-key": (_raw_spec(lambda s: json.dumps({**s, "nodes": [
            {k: v for k, v in s["nodes"][0].items() if k != "sha256"}, *s["nodes"][1:]]}).encode()),
            "at nodes[0]: expected the key 'sha256'"),
        "schema-bad-type": (_set(["nodes", 0, "inputs", 0, "shape"], "3"), "at nodes[0].inputs[0].shape: expected an array"),
        "schema-object-dtype": (_set(["nodes", 0, "inputs", 0, "dtype"], "object"), "nodes[0].inputs[0].dtype"),
        "schema-unknown-key": (_set(["nodes", 0, "run"], "rm -rf /"), "unknown key(s) ['run']"),
        "schema-duplicate-node": (_set(["nodes", 1, "name"], "preprocess"), "nodes[1].name"),
        # artifacts
        "onnx-external-cwd": (_external("w.bin"), "external file(s) ['w.bin']"),
        "onnx-external-outside": (_external("../bait-outside/fifo"), "external file(s) ['../bait-outside/fifo']"),
        "onnx-corrupt": (corrupt_onnx, "node 'policy': policy.onnx matches its sha256 but"),
        "too-big": (lambda f, s: None, "over the limit of 1000"),
    }


_KWARGS = {"too-big": {"max_file_bytes": 1000}}
_FILES = {"dotdot-artifact": "../bait-outside/bait.onnx", "absolute-artifact": "bait.onnx",
          "absolute-missing": "no-such.onnx", "dotdot-initial": "../bait-outside/initial.npz",
          "dotdot-external": "../bait-outside/fifo", "symlink-folder-part": "sub/bait.onnx",
          "too-big": "preprocess.onnx", "onnx-external-cwd": "policy.onnx"}


def _file_named(name):
    """The file an attack's refusal must name: as pipeline.json names it."""
    if name in _FILES:
        return _FILES[name]
    if name.startswith(("json-", "schema-", "future-", "symlink-spec", "fifo-spec")):
        return "pipeline.json"
    if name.startswith(("npz-", "zip-", "fifo-initial", "symlink-initial")):
        return "initial.npz"
    return "policy.onnx"


@pytest.fixture(scope="module")
def onnx_attacks(world):
    made = {}
    for name, (edit, _) in _cases(world).items():
        made[name] = attack.craft(world["base"], world["root"], name, edit)
    cases = [{"id": n, "folder": f, "kwargs": _KWARGS.get(n, {})} for n, f in made.items()]
    # torch and jsonschema blocked: an ONNX pipeline is checked without either
    return made, attack.run(cases, cwd=world["cwd"], block=("torch", "jsonschema"))


@pytest.mark.parametrize("name", list(_cases({"bait": Path("/b")})))
def test_each_attack_is_refused_naming_the_file_without_reading_outside(world, onnx_attacks, name):
    made, results = onnx_attacks
    result = results[name]
    expected = _cases(world)[name][1]
    assert not result.get("hang"), f"{name}: the load blocked for {result['seconds']:.0f} s"
    assert not result.get("loaded"), f"{name}: the crafted folder loaded"
    assert "PipelineError" in result["error"] and "LeappError" in result["error"], result
    assert expected in result["message"], result["message"]
    assert _file_named(name) in result["message"], result["message"]
    assert attack.outside_opens(result, made[name], world["bait"]) == [], result["events"]
    assert not (world["root"] / attack.PAYLOAD_MARKER).exists()
    assert result["seconds"] < 15


def test_outside_paths_do_not_tell_whether_the_file_exists(onnx_attacks, world):
    _, results = onnx_attacks
    there, absent = results["absolute-artifact"]["message"], results["absolute-missing"]["message"]
    assert there.replace("bait.onnx", "X") == absent.replace("no-such.onnx", "X")
    assert (world["bait"] / "bait.onnx").exists() and not (world["bait"] / "no-such.onnx").exists()


def test_each_file_is_opened_once(world):
    """Read once, hashed, loaded from those bytes: no second open by name (the check-then-use gap)."""
    [result] = attack.run([{"id": "ok", "folder": world["base"]}], cwd=world["cwd"], block=("torch",)).values()
    assert result.get("loaded"), result
    opened = [p for kind, p in result["events"] if kind == "open"]
    for name in ("pipeline.json", "preprocess.onnx", "policy.onnx", "initial.npz"):
        assert opened.count(name) == 1, (name, opened)
    assert attack.outside_opens(result, world["base"], world["bait"]) == []


def test_the_watch_is_live(world):
    """The bait means something: a FIFO blocks a plain open, and the child records an outside open."""
    code = ("import signal, sys\nsignal.signal(signal.SIGALRM, lambda *a: sys.exit(7))\nsignal.alarm(1)\n"
            f"open({str(world['bait'] / 'fifo')!r}, 'rb')\n")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 7
    results = attack.run([{"id": "open", "control": "open", "folder": world["bait"] / "bait.onnx"},
                          {"id": "hang", "control": "open", "folder": world["bait"] / "fifo", "alarm": 1}],
                         cwd=world["cwd"], block=("torch",))
    assert attack.outside_opens(results["open"], world["base"], world["bait"]) != []
    assert results["hang"].get("hang") and results["hang"]["seconds"] < 10


def test_validation_agrees_with_jsonschema(world):
    """The loader's own schema check and jsonschema accept and refuse the same specs."""
    import jsonschema
    good = json.loads((world["base"] / "pipeline.json").read_text())
    edits = [
        lambda s: None,
        lambda s: s.pop("spec_version"), lambda s: s.update(spec_version=True),
        lambda s: s["nodes"][0].pop("sha256"), lambda s: s["nodes"][0].update(sha256="AB"),
        lambda s: s["nodes"][0]["inputs"][0].update(shape=[-1]),
        lambda s: s["nodes"][0]["inputs"][0].update(shape=["batch", 3]),
        lambda s: s["nodes"][0]["inputs"][0].update(shape=[True]),
        lambda s: s["nodes"][0]["inputs"][0].update(shape="3"),
        lambda s: s["nodes"][0].update(format="pickle"), lambda s: s["nodes"][0].update(origin=None),
        lambda s: s["nodes"][0].update(name="a/b"), lambda s: s["nodes"][0].update(extra=1),
        lambda s: s["nodes"][0].update(external_data=[{"file": "w.bin", "sha256": "0" * 64}]),
        lambda s: s["nodes"][0].update(external_data=[{"file": "w.bin"}]),
        lambda s: s["feedback"][0].update(to="no-slash"), lambda s: s["feedback"][0].update(cast=0),
        lambda s: s["state"][0].pop("initial"), lambda s: s.update(order=["policy", "policy"]),
        lambda s: s.update(batch="yes"), lambda s: s["versions"].update(torch=None),
        lambda s: s["versions"].update(torch=1), lambda s: s.update(extra=1),
        lambda s: s.update(inputs="preprocess/obs"), lambda s: s["initial_values"].pop("file"),
        lambda s: s.update(nodes={}), lambda s: s.update(edges=[{"from": "a/b"}]),
    ]
    schema = sp.schema()
    validator = jsonschema.Draft202012Validator(schema)
    agreed = []
    for edit in edits:
        spec = copy.deepcopy(good)
        edit(spec)
        theirs = validator.is_valid(spec)
        try:
            sp.check_schema(spec, schema)
            ours = True
        except sp.SpecError:
            ours = False
        assert ours == theirs, (spec, ours, theirs)
        agreed.append(ours)
    assert agreed.count(True) >= 4 and agreed.count(False) >= 20  # both verdicts were exercised


def test_a_schema_keyword_the_checker_does_not_know_is_refused():
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}}
    with pytest.raises(sp.SpecError, match=r"keyword\(s\) \['maxLength'\]"):
        sp.check_schema({"name": "x"}, schema)


def test_a_masked_step_input_is_refused_naming_the_port(world):
    rt = leapp.load_pipeline(world["base"])
    obs = np.ma.masked_array(np.zeros(3, np.float32), mask=[True, False, False])
    with pytest.raises(PipelineInputError, match=r"input 'preprocess/obs': a masked array"):
        rt.step({"preprocess/obs": obs})
    assert rt.state == {}  # nothing ran


def test_a_huge_hostile_spec_is_checked_in_bounded_time(world):
    """Checks that grow with the spec are linear: 20,000 ports fed twice are refused quickly."""
    import time

    spec = json.loads((world["base"] / "pipeline.json").read_text())
    spec["edges"] = [{"from": "policy/action", "to": "preprocess/obs"}] * 20_000
    t = time.perf_counter()
    with pytest.raises(sp.SpecError, match="fed twice"):
        sp.validate(spec)
    assert time.perf_counter() - t < 5


# --- TorchScript and .pt2: code on load ------------------------------------------------------------

@pytest.fixture(scope="module")
def torch_world(world, traced):
    root = world["root"] / "torch"
    root.mkdir()
    base = root / "base"
    traced.export(base, {"preprocess": "torchscript", "policy": "pt2"})
    return {**world, "root": root, "base": base}


def _member(artifact, pick, data):
    def edit(folder, spec):
        path = folder / artifact
        path.write_bytes(attack.replace_member(path.read_bytes(), pick, data))
        attack.rehash(folder, spec)
    return edit


def _add_member(artifact, name, data):
    def edit(folder, spec):
        path = folder / artifact
        with zipfile.ZipFile(path, "a") as z:
            z.writestr(name, data)
        attack.rehash(folder, spec)
    return edit


def _truncate(artifact):
    def edit(folder, spec):
        path = folder / artifact
        path.write_bytes(path.read_bytes()[:-200])
        attack.rehash(folder, spec)
    return edit


def test_every_zip_leapp_writes_passes_its_crc_check(torch_world):
    names = sorted(os.listdir(torch_world["base"]))
    assert {"preprocess.pt", "policy.pt2", "initial.npz"} <= set(names)
    for name in names:
        if name.endswith((".pt", ".pt2", ".npz")):
            with zipfile.ZipFile(torch_world["base"] / name) as z:
                assert z.testzip() is None, name


def test_pickled_code_in_torch_artifacts_never_runs(torch_world):
    """The .pt2 sample-inputs pickle with a __reduce__ payload, hash updated to match."""
    root, marker = torch_world["root"], torch_world["root"] / attack.PAYLOAD_MARKER
    payload = attack.payload_bytes(marker)
    sample = _member("policy.pt2", lambda n: n.endswith("sample_inputs/model.pt"), payload)
    crafted = {
        "pt2-payload": sample,
        "pt2-weights-payload": _member("policy.pt2", lambda n: n.endswith("sample_inputs/model.pt"),
                                       attack.replace_member(
                                           _sample_inputs(torch_world["base"] / "policy.pt2"),
                                           lambda n: n.endswith("data.pkl"), payload)),
        "ts-payload": _member("preprocess.pt", lambda n: n.endswith("/data.pkl"), payload),
        "pt2-corrupt": _truncate("policy.pt2"),
        "pt2-opaque": _add_member("policy.pt2", "archive/data/constants/opaque_obj_0", payload),
        "ts-corrupt": _truncate("preprocess.pt"),
    }
    folders = {n: attack.craft(torch_world["base"], root, n, e) for n, e in crafted.items()}
    cases = [{"id": "default-" + n, "folder": f} for n, f in folders.items()]
    cases += [{"id": "trusted-" + n, "folder": f, "kwargs": {"trust_code": True}} for n, f in folders.items()]
    cases.append({"id": "control", "control": "pt2", "folder": folders["pt2-payload"] / "policy.pt2"})
    results = attack.run(cases, cwd=torch_world["cwd"], preload=("onnxruntime", "torch"))
    assert results["control"].get("error") and marker.exists()  # the payload is live: torch.export.load ran it
    marker.unlink()
    for n, folder in folders.items():
        refused = results["default-" + n]
        assert "UntrustedCodeError" in refused["error"] and "trust_code=True" in refused["message"], refused
        trusted = results["trusted-" + n]
        assert "ArtifactError" in trusted["error"], trusted
        node, file = ("policy", "policy.pt2") if n.startswith("pt2") else ("preprocess", "preprocess.pt")
        assert f"node {node!r}: {file}" in trusted["message"], trusted["message"]
        assert n != "pt2-opaque" or "opaque objects" in trusted["message"], trusted["message"]
        for result in (refused, trusted):
            assert not result.get("hang") and result["seconds"] < 15
            assert attack.outside_opens(result, folder, torch_world["bait"]) == [], result["events"]
        assert not marker.exists(), n


def test_attach_refuses_torch_files_unless_trusted_and_never_unpickles(traced, torch_world, tmp_path):
    """attach() runs the same rule as load_pipeline: a .pt2 whose sample-inputs pickle carries a
    __reduce__ payload is refused by default before it is opened, and with trust_code=True is loaded
    weights-only, so the payload's marker file is never written either way."""
    from leapp.errors import ExportError

    marker = tmp_path / attack.PAYLOAD_MARKER
    crafted = tmp_path / "policy_model.pt2"
    crafted.write_bytes(attack.replace_member((torch_world["base"] / "policy.pt2").read_bytes(),
                                              lambda n: n.endswith("sample_inputs/model.pt"),
                                              attack.payload_bytes(marker)))
    script = tmp_path / "policy_model.pt"
    script.write_bytes((torch_world["base"] / "preprocess.pt").read_bytes())
    for path in (crafted, script):
        with pytest.raises(sp.UntrustedCodeError, match=r"attach\('policy', .*trust_code=True\) only if you trust"):
            traced.attach("policy", path)
    assert not marker.exists() and traced.attached == {}
    with pytest.raises(ExportError, match=r"attach\('policy', .*policy_model.pt2'\): torch.export \(pt2\) "
                                          r"cannot load the file \(UnpicklingError"):
        traced.attach("policy", crafted, trust_code=True)
    assert not marker.exists() and traced.attached == {}


def _sample_inputs(pt2):
    with zipfile.ZipFile(pt2) as z:
        return z.read(next(n for n in z.namelist() if n.endswith("sample_inputs/model.pt")))


def test_a_trusted_torch_pipeline_still_loads_and_steps(torch_world):
    rt = leapp.load_pipeline(torch_world["base"], trust_code=True)
    obs = loop.observations(3, seed=5)
    for o, w in zip(obs, loop.reference(obs), strict=True):
        np.testing.assert_allclose(rt.step({"preprocess/obs": o})["policy/action"], w, rtol=1e-5, atol=1e-6)
    assert "TORCH_FORCE_WEIGHTS_ONLY_LOAD" not in os.environ  # the override is put back


# --- the guards one by one, in process ------------------------------------------------------------

@pytest.mark.parametrize("path, why", [
    ("", "empty"), ("/etc/hostname", "absolute"), ("C:x.onnx", "absolute"), ("a/../b", "leaves the folder"),
    ("./a", "not normalised"), ("a//b", "not normalised"), ("a/", "not normalised"), ("a\\b", "backslash"),
    ("a\nb", "control character"), ("a" * 300, "over 255"), ("a/" * 600, "characters long"), (3, "string"),
])
def test_a_path_that_could_leave_the_folder_is_refused_from_its_text(path, why):
    from leapp.export.folder import path_problem

    assert why in path_problem(path)
    assert path_problem("sub/policy.onnx") is None and path_problem("policy.onnx") is None


@pytest.mark.parametrize("edit, message", [
    (lambda s: s["nodes"][0]["inputs"].append(dict(s["nodes"][0]["inputs"][0])), r"'obs' appears twice"),
    (lambda s: s["nodes"][0]["inputs"][0].update(shape=["batch"]), r"\"batch\" in a shape, but"),
    (lambda s: s["nodes"][0]["inputs"][0].update(dtype="(2,)f8"), r"nodes\[0\].inputs\[0\].dtype"),
    (lambda s: s["initial_values"].update(file="../x.npz"), r"at initial_values.file"),
])
def test_what_the_schema_cannot_say_is_checked(world, edit, message):
    spec = json.loads((world["base"] / "pipeline.json").read_text())
    edit(spec)
    with pytest.raises(sp.SpecError, match=message):
        sp.validate(spec)


def _npy(value, extra=b""):
    data = io.BytesIO()
    np.lib.format.write_array(data, value, allow_pickle=False)
    return data.getvalue() + extra


def _zip(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name, data)
    return buffer.getvalue()


_F2 = (np.dtype(np.float32), (2,), "a/x")


@pytest.mark.parametrize("members, wanted, batch, message", [
    ([("k.npy", _npy(np.zeros(2, np.float32), b"\0" * 8))], {"k": _F2}, False, "header declares"),
    ([("k.npy", _npy(np.zeros((3, 2), np.float32))), ("j.npy", _npy(np.zeros((4, 2), np.float32)))],
     {"k": (np.dtype(np.float32), ("batch", 2), "a/x"), "j": (np.dtype(np.float32), ("batch", 2), "a/y")},
     True, "different batch sizes"),
    ([("k.npy", b"\x93NUMPY\x09\x00" + b"\0" * 20)], {"k": _F2}, False, "not a readable .npy"),
    ([("k.npy", _npy(np.zeros(2, [("a", np.float32)])))], {"k": _F2}, False, "holds objects or fields"),
    ([("k.npy", _npy(np.zeros(2, np.float32))), ("notes.txt", b"hi")], {"k": _F2}, False, "notes.txt"),
])
def test_initial_values_are_checked_before_their_data_is_read(members, wanted, batch, message):
    from leapp.export import initial

    with pytest.raises(sp.SpecError, match=message) as got:
        initial.read(_zip(members), wanted, batch=batch, file="initial.npz")
    assert str(got.value).startswith("initial.npz: ")
    good = initial.read(_zip([("k.npy", _npy(np.arange(2, dtype=np.float32)))]), {"k": _F2}, batch=False,
                        file="initial.npz")
    np.testing.assert_array_equal(good["k"], [0, 1])


def test_an_attached_onnx_model_with_external_data_is_copied_hashed_and_loaded(traced, tmp_path, monkeypatch):
    import onnx

    from leapp.errors import ExportError

    p = copy.copy(traced)  # attach on a copy: the module's traced pipeline stays as traced
    p.attached = {}
    right = leapp.compile(_policy_fn)
    right(np.zeros(14, np.float32))
    right.export(tmp_path / "plain.onnx")
    (tmp_path / "m").mkdir()
    model = onnx.load(tmp_path / "plain.onnx")
    onnx.save_model(model, tmp_path / "m" / "policy_model.onnx", save_as_external_data=True,
                    location="weights.bin", size_threshold=0)
    p.attach("policy", tmp_path / "m" / "policy_model.onnx")
    spec = p.export(tmp_path / "out", "onnx")
    [entry] = _policy(spec)["external_data"]
    assert entry == {"file": "weights.bin", "sha256": attack.sha((tmp_path / "out" / "weights.bin").read_bytes())}
    assert (tmp_path / "out" / "weights.bin").read_bytes() == (tmp_path / "m" / "weights.bin").read_bytes()
    monkeypatch.chdir(tmp_path / "m")  # the loader hands the data over itself, wherever it runs
    rt = leapp.load_pipeline(tmp_path / "out")
    obs = loop.observations(4, seed=8)
    for o, w in zip(obs, loop.reference(obs), strict=True):
        np.testing.assert_allclose(rt.step({"preprocess/obs": o})["policy/action"], w, rtol=1e-5, atol=1e-6)
    data = bytearray((tmp_path / "out" / "weights.bin").read_bytes())
    data[0] ^= 1
    (tmp_path / "out" / "weights.bin").write_bytes(bytes(data))
    with pytest.raises(sp.SpecError, match=r"weights.bin: its sha256 does not match .*external_data\[0\]"):
        leapp.load_pipeline(tmp_path / "out")
    model = onnx.load(tmp_path / "plain.onnx")  # saving with external data changed the one above
    onnx.save_model(model, tmp_path / "m" / "clash.onnx", save_as_external_data=True,
                    location="initial.npz", size_threshold=0)
    p.attach("policy", tmp_path / "m" / "clash.onnx")
    with pytest.raises(ExportError, match=r"'initial.npz', a name the pipeline folder already uses"):
        p.export(tmp_path / "out2", "onnx")


def _policy_fn(features):
    return np.tanh(features @ loop.W + loop.B)
