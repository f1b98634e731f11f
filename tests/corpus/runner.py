"""Run library corpus cases through leapp's three stages and classify each outcome.

Stages: ``compile`` (strict ``@leapp.compile`` on a generated wrapper, then the
graph on fresh and edge inputs against NumPy), ``seed`` (``leapp.start`` /
``annotate`` / ``compile_graph(validate=True)``, then the graph on the same
inputs) and ``onnx`` (``cf.export`` of the compile stage's graph, run in
onnxruntime). Each stage ends in one of ``STATUSES``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import sys
import warnings

import numpy as np

from .cases import CASES, HEADER, Case
from .inputs import edge, edge_names, fresh

EXACT = "exact"
REFUSED = "refused clearly"
NOLINE = "refused, no line named"
WARNED = "warned graph"  # seed API only: a graph returned with an escape warning, exact on every input
SILENT = "SILENTLY WRONG"
WRONG_WARNED = "wrong after a warning"  # seed API: differs from NumPy, but an escape warning named a line
INTERNAL = "InternalError"
CRASH = "crash"
NA = "n/a"
STATUSES = (EXACT, REFUSED, NOLINE, WARNED, WRONG_WARNED, SILENT, INTERNAL, CRASH, NA)
STAGES = ("compile", "seed", "onnx")

RTOL, ATOL = 1e-6, 1e-9
_LINE = re.compile(r"\.py:\d+")
_SELF_CHECK = ("LeappInternalWarning", "ReductionOrderWarning", "RoundingWarning")
_ESCAPE = ("EscapeWarning", "UntracedCallWarning")


@dataclasses.dataclass
class Outcome:
    status: str
    detail: str = ""
    warnings: tuple = ()  # "Category: file:line" of each distinct warning seen in the stage
    library_lines: tuple = ()  # file:line outside leapp that a warning or the error pointed at
    branches: tuple = ()  # compile stage: "input: file:line arm, ..." per converted library branch


def write_module(directory, cases=CASES):
    """The wrappers as one real file (``leapp.compile`` reads source); returns the imported module."""
    lines = [HEADER]
    for case in cases:
        params = ", ".join(name for name, _ in case.args)
        lines.append(f"\n\ndef {case.id}({params}):\n    return {case.call}\n")
    path = os.path.join(str(directory), "corpus_wrappers.py")
    with open(path, "w") as f:
        f.write("".join(lines))
    spec = importlib.util.spec_from_file_location("corpus_wrappers", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_wrappers"] = module
    spec.loader.exec_module(module)
    return module


def inputs_for(case: Case):
    """(example, validation frames for the seed API, [(name, args)] to compare on)."""
    kinds = [kind for _, kind in case.args]

    def draw(seed):
        rng = np.random.default_rng(seed)
        return tuple(fresh(kind, rng) for kind in kinds)

    compare = [("fresh1", draw(11)), ("fresh2", draw(12))]
    rng = np.random.default_rng(13)
    compare += [(name, edge(kinds, name, rng)) for name in edge_names(kinds)]
    return draw(10), [draw(21), draw(22)], compare


def flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in flatten(value[key])]
    return [value]


def _copy(args):
    return tuple(np.array(a, copy=True) for a in args)


def reference(fn, args):
    """NumPy's answer, or None where the library itself raises on this input."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return [np.asarray(v) for v in flatten(fn(*_copy(args)))]
        except Exception:  # the library refuses this input in NumPy too: nothing to compare
            return None


def uses_fft(graph_modules) -> bool:
    """Whether a graph transforms with numpy.fft (whose non-finite rule ``differs`` then applies)."""
    return any((n.meta.get("leapp_call") or "").startswith("numpy.fft.")
               for gm in graph_modules for n in gm.graph.nodes)


# docs/limitations.md: these make every output for a matrix holding inf or NaN NaN
NONFINITE_LINALG = frozenset("numpy.linalg." + f for f in
                             "inv solve det slogdet pinv cholesky qr matrix_power".split())


# NumPy's own call does not return on a matrix holding inf (leapp.table.guards): such inputs are
# not compared.
from leapp.table.guards import NUMPY_HANGS_ON_INF  # noqa: E402


def holds_inf(args) -> bool:
    """Whether any floating argument holds ±inf (NumPy's svd would not return on it)."""
    return any(np.issubdtype(np.asarray(a).dtype, np.inexact) and np.isinf(np.asarray(a)).any()
               for a in flatten(args))


def numpy_hangs_on_inf(graph_modules) -> bool:
    """Whether a graph calls one of NUMPY_HANGS_ON_INF."""
    return any(n.meta.get("leapp_call") in NUMPY_HANGS_ON_INF for gm in graph_modules for n in gm.graph.nodes)


def uses_nonfinite_linalg(graph_modules) -> bool:
    """Whether a graph calls one of NONFINITE_LINALG (whose non-finite rule ``differs`` then applies)."""
    return any(n.meta.get("leapp_call") in NONFINITE_LINALG for gm in graph_modules for n in gm.graph.nodes)


def _nan_for_nonfinite_matrix(g, w):
    """docs/limitations.md: a matrix holding inf or NaN gives NaN in every output of inv, solve...
    for it, where NumPy's LAPACK may give finite values next to NaN. So NaN may stand for any of
    NumPy's values; every value the graph gives that is not NaN must still be NumPy's."""
    stand_in = np.isnan(g)
    return bool(stand_in.any()) and np.allclose(np.where(stand_in, 0, g), np.where(stand_in, 0, w),
                                                rtol=RTOL, atol=ATOL, equal_nan=True)


def _nan_for_nonfinite(g, w):
    """docs/limitations.md: a numpy.fft transform fed inf or NaN is NaN throughout (NumPy's own
    pattern of inf and NaN there is its algorithm's). So NaN may stand where NumPy's value is not
    finite; every value NumPy gives finite must still be the graph's, and no other value may differ."""
    stand_in = np.isnan(g) & ~np.isfinite(w)
    return bool(stand_in.any()) and np.allclose(np.where(stand_in, 0, g), np.where(stand_in, 0, w),
                                                rtol=RTOL, atol=ATOL, equal_nan=True)


def differs(got, want, nonfinite_fft=False, nonfinite_linalg=False):
    """A sentence saying how ``got`` departs from NumPy's ``want``; None when they agree.

    ``nonfinite_fft``: the input holds inf or NaN and the graph transforms with numpy.fft, so
    NaN may stand where NumPy's value is not finite (``_nan_for_nonfinite``).
    ``nonfinite_linalg``: the input holds inf or NaN and the graph calls one of NONFINITE_LINALG,
    so NaN may stand for any value (``_nan_for_nonfinite_matrix``)."""
    got = [np.asarray(v) for v in flatten(got)]
    if len(got) != len(want):
        return f"{len(got)} outputs, NumPy {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.dtype != w.dtype:
            return f"output {i}: dtype {g.dtype}, NumPy {w.dtype}"
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape}, NumPy {w.shape}"
        if w.dtype.kind in "fc":
            ok = np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True) or \
                (nonfinite_fft and _nan_for_nonfinite(g, w)) or \
                (nonfinite_linalg and _nan_for_nonfinite_matrix(g, w))
        else:
            ok = np.array_equal(g, w)
        if not ok:
            return f"output {i}: {_short(g)}, NumPy {_short(w)}"
    return None


def _short(a):
    return np.array2string(np.asarray(a), precision=4, threshold=8, edgeitems=2).replace("\n", "")


def _library_line(filename, lineno):
    if not filename or os.sep + "leapp" + os.sep in filename or filename.endswith("corpus_wrappers.py"):
        return None
    marker = "site-packages" + os.sep
    rel = filename.split(marker, 1)[1] if marker in filename else filename
    return f"{rel}:{lineno}"


class _Watch:
    """Record every warning raised inside (pytest's error filters would turn some into raises)."""

    def __enter__(self):
        self._cm = warnings.catch_warnings(record=True)
        self.seen = self._cm.__enter__()
        warnings.simplefilter("always")
        self._err = np.seterr(all="ignore")
        return self

    def __exit__(self, *exc):
        np.seterr(**self._err)
        self._cm.__exit__(*exc)
        return False

    def summary(self):
        kinds, lines = [], []
        for w in self.seen:
            name = type(w.message).__name__
            if name == "RuntimeWarning":
                continue
            where = _library_line(w.filename, w.lineno)
            entry = f"{name}: {where or os.path.basename(w.filename) + ':' + str(w.lineno)}"
            if entry not in kinds:
                kinds.append(entry)
            if where and name in _ESCAPE + ("EscapeWarning",) and where not in lines:
                lines.append(where)
        return tuple(kinds), tuple(lines)


def _from_error(error):
    from leapp.errors import InternalError, LeappError

    text = f"{type(error).__name__}: {error}".strip()
    lines = tuple(dict.fromkeys(
        found for found in (_library_line(f, int(n)) for f, n in re.findall(r"(/\S+?\.py):(\d+)", text))
        if found))
    if isinstance(error, InternalError):
        return Outcome(INTERNAL, text[:2000], library_lines=lines)
    if isinstance(error, LeappError):
        return Outcome(REFUSED if _LINE.search(text) else NOLINE, text[:2000], library_lines=lines)
    return Outcome(CRASH, text[:2000], library_lines=lines)


def _compare_all(run, compare, plain, fft=False, linalg=False, hangs=False):
    """Run ``run(args)`` on every input NumPy accepts; the first disagreement, or None.
    ``fft``: the graph transforms with numpy.fft; ``linalg``: it calls one of NONFINITE_LINALG
    (see ``differs``)."""
    checked = 0
    for name, args in compare:
        if hangs and holds_inf(args):
            continue  # NumPy itself would not return (NUMPY_HANGS_ON_INF)
        want = reference(plain, args)
        if want is None:
            continue
        got = run(_copy(args))
        nonfinite = any(np.issubdtype(np.asarray(a).dtype, np.inexact) and
                        not np.isfinite(np.asarray(a)).all() for a in flatten(args))
        problem = differs(got, want, nonfinite_fft=fft and nonfinite, nonfinite_linalg=linalg and nonfinite)
        checked += 1
        if problem:
            return f"on {name} input: {problem}", checked
    return None, checked


def stage_compile(case, module):
    import leapp

    plain = getattr(module, case.id)
    example, _, compare = inputs_for(case)
    with _Watch() as watch:
        try:
            cf = leapp.compile(plain)
            out = cf(*_copy(example))
        except Exception as error:  # classified, never hidden
            outcome = _from_error(error)
            outcome.warnings, more = watch.summary()
            outcome.library_lines = tuple(dict.fromkeys(outcome.library_lines + more))
            return outcome, None
        try:
            problem = differs(out, reference(plain, example) or [])
            if problem is None:
                problem, _ = _compare_all(lambda args: cf(*args), compare, plain, uses_fft(cf.graphs),
                                          uses_nonfinite_linalg(cf.graphs), numpy_hangs_on_inf(cf.graphs))
        except Exception as error:
            outcome = _from_error(error)
            outcome.status = CRASH if outcome.status != INTERNAL else INTERNAL
            outcome.detail = "the graph raised on a later input: " + outcome.detail
            outcome.warnings = watch.summary()[0]
            return outcome, cf
    kinds, lines = watch.summary()
    return Outcome(SILENT if problem else EXACT, problem or "", kinds, lines,
                   branches_taken(cf, plain, [("example", example), *compare])), cf


def branches_taken(cf, plain, inputs) -> tuple:
    """Which arm of each library branch leapp converted each input takes (run as NumPy)."""
    conversions = getattr(cf, "_probe", None) and cf._probe.library
    if conversions is None or not any(c is not None and c.arms for c in conversions.wanted.values()):
        return ()
    hangs = numpy_hangs_on_inf(cf.graphs)  # the library runs as NumPy here: no ±inf into its svd
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(f"{name}: {', '.join(conversions.taken(plain, _copy(args)))}" for name, args in inputs
                     if not (hangs and holds_inf(args)))


def stage_seed(case, module):
    import leapp
    from leapp import annotate

    plain = getattr(module, case.id)
    example, frames, compare = inputs_for(case)
    names = [name for name, _ in case.args]
    with _Watch() as watch:
        try:
            leapp.start("corpus")
            for frame in (example, *frames):
                traced = annotate.input_tensors("fn", dict(zip(names, _copy(frame), strict=True)))
                traced = traced if isinstance(traced, tuple) else (traced,)
                outs = flatten(plain(*traced))
                annotate.output_tensors("fn", {f"out{i}": v for i, v in enumerate(outs)})
            leapp.stop()
            pipeline = leapp.compile_graph(validate=True)
        except Exception as error:
            outcome = _from_error(error)
            outcome.warnings, outcome.library_lines = watch.summary()
            return outcome
        finally:
            leapp.api.reset()
        node = pipeline["fn"]

        def run(args):
            got = node(**dict(zip(names, args, strict=True)))
            return [got[k] for k in sorted(got, key=lambda k: int(k[3:]))]

        try:
            problem, _ = _compare_all(run, compare, plain, uses_fft([node.graph_module]),
                                      uses_nonfinite_linalg([node.graph_module]),
                                      numpy_hangs_on_inf([node.graph_module]))
        except Exception as error:
            outcome = _from_error(error)
            outcome.status, outcome.detail = CRASH, "the graph raised on a later input: " + outcome.detail
            return outcome
    kinds, lines = watch.summary()
    escaped = any(k.split(":")[0] in _ESCAPE for k in kinds)
    if problem:
        return Outcome(WRONG_WARNED if escaped else SILENT, problem, kinds, lines)
    return Outcome(WARNED if escaped else EXACT, "", kinds, lines)


def stage_onnx(case, module, cf, directory):
    if cf is None:
        return Outcome(NA)
    plain = getattr(module, case.id)
    _, _, compare = inputs_for(case)
    path = os.path.join(str(directory), f"{case.id}.onnx")
    with _Watch() as watch:
        try:
            cf.export(path)
            import onnxruntime as ort

            session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        except Exception as error:
            outcome = _from_error(error)
            outcome.warnings = watch.summary()[0]
            return outcome
        feeds = [i.name for i in session.get_inputs()]
        names = [name for name, _ in case.args]

        def run(args):
            by_name = dict(zip(names, args, strict=True))
            return session.run(None, {name: by_name[name] for name in feeds})

        try:
            problem, _ = _compare_all(run, compare, plain, uses_fft(cf.graphs), uses_nonfinite_linalg(cf.graphs),
                                      numpy_hangs_on_inf(cf.graphs))
        except Exception as error:
            outcome = _from_error(error)
            outcome.status, outcome.detail = CRASH, "onnxruntime raised: " + outcome.detail
            return outcome
    return Outcome(SILENT if problem else EXACT, problem or "", watch.summary()[0])


def run_case(case, module, directory, stages=STAGES):
    compiled, cf = stage_compile(case, module)
    outcomes = {"compile": compiled}
    if "seed" in stages:
        outcomes["seed"] = stage_seed(case, module)
    if "onnx" in stages:
        outcomes["onnx"] = stage_onnx(case, module, cf, directory)
    return outcomes


# Cases whose ONNX file onnxruntime computes differently from NumPy, caught by the export check
# and refused ("nothing was written"), each with what was measured. Such a case must be refused
# that way; one whose file becomes exact fails until it is taken off (the list only shrinks).
# (rowan's exp family was listed here, 1e-9 to 7e-8 off: the dynamo exporter, taken for a graph holding
# an empty tensor, wrote Python float constants as float32 and ran onnxscript's optimizer, which drops
# an Add of a constant below 1e-8; export/formats.py now keeps both exact.)
ONNX_DISAGREES: dict[str, str] = {}
_ONNX_CHECK_REFUSAL = re.compile(r"the onnx file of node .* disagrees with NumPy .*nothing was written", re.S)


# Cases exact through @leapp.compile and ONNX whose seed-API graph is exact but comes with a warning
# that is true of the code: their seed stage holds its label as a warned graph (and only so; the test
# fails once it is exact). benchmarks/corpus.py and tests/corpus judge them alike.
SEED_WARNS = {
    "filterpy__predict": "exact through @leapp.compile and ONNX (plain arrays handed to library code go "
                         "as traced constants: runtime/library_args.py); the seed API does not rewrite the "
                         "call, so its covariance output (computed from module constants only) comes back "
                         "as a plain array, and it warns that the output does not depend on the inputs "
                         "(true) with the graph exact",
}


def label_holds(case, outcomes):
    """A sentence per stage whose outcome breaks the case's label (empty when the label holds)."""
    broken = []
    for stage in outcomes:
        got = outcomes[stage]
        traces = case.label == "trace" or (case.label == "convert" and stage != "seed")
        if traces and stage == "onnx" and case.id in ONNX_DISAGREES:
            if got.status != NOLINE or not _ONNX_CHECK_REFUSAL.search(got.detail):
                broken.append(f"onnx: {got.status} {got.detail} (listed in ONNX_DISAGREES: "
                              f"{ONNX_DISAGREES[case.id]})")
            continue
        if traces and stage == "seed" and case.id in SEED_WARNS:
            if got.status != WARNED:
                broken.append(f"seed: {got.status} {got.detail} (listed in SEED_WARNS: {SEED_WARNS[case.id]})")
            continue
        if traces:
            # ONNX may refuse an op it has no translation for, naming the line (never silently)
            want = (EXACT, REFUSED) if stage == "onnx" else (EXACT,)
            if stage == "onnx" and outcomes["compile"].status != EXACT:
                want = (EXACT, REFUSED, NA)
            self_checked = [w for w in got.warnings if w.split(":")[0] in _SELF_CHECK + _ESCAPE]
            if got.status not in want or self_checked:
                broken.append(f"{stage}: {got.status} {got.detail} {' '.join(self_checked)}".strip())
        else:
            # the seed API is lenient by default: a warning naming the line is its refusal
            want = {"compile": (REFUSED,), "seed": (REFUSED, WARNED, WRONG_WARNED), "onnx": (NA,)}[stage]
            if stage == "seed" and case.reason == "state":
                # annotate.input_tensors hands the library a copy: no caller's array is written
                want += (EXACT,)
            if got.status not in want:
                broken.append(f"{stage}: {got.status} {got.detail}".strip())
    return broken
