"""Tracing belongs to the thread that traces: a plain-NumPy thread running at the same time
sees plain NumPy (plain ndarrays, no escapes), and nothing it does lands in the trace."""

from __future__ import annotations

import threading
import warnings

import numpy as np

import leapp
from leapp import annotate


class _PlainWorker:
    """Runs plain NumPy in a loop, checking every result, until told to stop."""

    def __init__(self):
        self.iterations = 0
        self.errors: list = []
        self.stop = threading.Event()
        self.progress = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            while not self.stop.is_set():
                self._one()
                with self.progress:
                    self.iterations += 1
                    self.progress.notify_all()
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.errors.append(exc)
            with self.progress:
                self.progress.notify_all()

    def _one(self):
        a = np.zeros(3)
        b = np.asarray([1.0, 2.0, 3.0])
        c = np.array(b) * 2 + a
        d = np.ones((2, 2), np.float32)
        total = c.sum()
        if total > 2.5:  # a traced value here would raise EscapeError in strict code, or warn
            e = np.float32(total)
        else:
            e = np.float32(0)
        for name, value in (("zeros", a), ("asarray", b), ("arith", c), ("ones", d)):
            if type(value) is not np.ndarray:
                raise AssertionError(f"{name} gave {type(value).__name__} in a plain thread")
        if type(total) is not np.float64 or type(e) is not np.float32:
            raise AssertionError(f"scalars came back as {type(total)}, {type(e)}")
        if not (np.array_equal(c, [2.0, 4.0, 6.0]) and total == 12.0 and e == np.float32(12.0)):
            raise AssertionError(f"wrong values {c}, {total}, {e}")

    def wait_for(self, n, timeout=10.0):
        """Block until the worker has done ``n`` more iterations (so it ran while we wait here)."""
        with self.progress:
            target = self.iterations + n
            ok = self.progress.wait_for(lambda: self.iterations >= target or self.errors, timeout)
        assert ok, "the worker made no progress"

    def __enter__(self):
        self.thread.start()
        self.wait_for(1)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def _pass(worker, x):
    (x,) = (annotate.input_tensors("prep", {"x": x}),)
    if worker is not None:
        worker.wait_for(50)  # the plain thread runs while this region is open
    y = np.clip((x - x.mean()) / (x.std() + 1e-6), -3.0, 3.0)
    buf = np.zeros(4, np.float32)
    buf[:] = y
    if worker is not None:
        worker.wait_for(50)
    annotate.output_tensors("prep", {"y": buf})


def _session_graph(worker):
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no escape or untraced call may come from the other thread
        with leapp.session("threads"):
            for _ in range(3):
                _pass(worker, rng.normal(size=4).astype(np.float32))
        pipeline = leapp.compile_graph(validate=True)
    node = pipeline["prep"]
    assert node.validation.ok, node.validation.describe()
    assert not node.problems
    return node.graph_module.code


def test_plain_thread_during_a_session_sees_plain_numpy_and_the_trace_is_unaffected():
    alone = _session_graph(None)
    with _PlainWorker() as worker:
        raced = _session_graph(worker)
        worker.wait_for(20)  # and after the session
    assert not worker.errors, worker.errors[0]
    assert worker.iterations > 200
    assert raced == alone  # nothing of the worker's was recorded


_compile_worker = None


@leapp.compile
def _normalise(x):
    if _compile_worker is not None:
        _compile_worker.wait_for(50)
    z = np.zeros_like(x)
    z[...] = (x - x.mean()) / (x.std() + 1e-6)
    if _compile_worker is not None:
        _compile_worker.wait_for(50)
    return np.clip(z, -3.0, 3.0)


def test_plain_thread_during_a_compile_trace_is_not_recorded_and_raises_nothing():
    global _compile_worker
    x = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    alone = _normalise.trace(x)
    code = alone.code
    for _ in range(3):  # the race failed 5 of 5 times before tracing became per thread
        with _PlainWorker() as worker:
            _compile_worker = worker
            try:
                graph = _normalise.trace(x)  # strict: any foreign escape or disagreement raises
            finally:
                _compile_worker = None
        assert not worker.errors, worker.errors[0]
        assert graph.code == code
    expected = np.clip((x - x.mean()) / (x.std() + 1e-6), -3.0, 3.0)
    np.testing.assert_allclose(_normalise(x), expected, rtol=1e-5, atol=1e-6)


def test_a_trace_in_another_thread_leaves_this_threads_trace_alone():
    """Two threads tracing at once (a session here, a compile there): each graph is its own."""
    x = np.random.default_rng(2).normal(size=(5, 3)).astype(np.float32)
    want = _normalise.trace(x).code
    got = {}

    def compile_in_thread():
        got["code"] = _normalise.trace(x).code

    rng = np.random.default_rng(0)
    with leapp.session("two"):
        annotate_x = annotate.input_tensors("prep", {"x": rng.normal(size=4).astype(np.float32)})
        t = threading.Thread(target=compile_in_thread)
        t.start()
        t.join(30)
        annotate.output_tensors("prep", {"y": annotate_x * 2})
    node = leapp.compile_graph(validate=False)["prep"]
    assert got["code"] == want
    assert [n.op for n in node.graph_module.graph.nodes] == ["placeholder", "call_function", "output"]
