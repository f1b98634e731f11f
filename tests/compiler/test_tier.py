"""tier="auto": the FX graph first, fused code compiled off the call path once a signature is hot.

Two tests compile for real: in a separate process (AOTInductor, the default way) and, where that
process fails, in the tier's own background thread with inductor. The others replace the compiler
with runners that are wrong in one way each, or that wait for the test's signal, so that what
happens meanwhile is deterministic. The separate process itself (its reasons, its time limit, its
end when the caller goes) is tested at the bottom.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import torch

import leapp
from leapp.compiler import tier
from leapp.runtime import backends, fused_process

X = np.linspace(-3.0, 3.0, 64, dtype=np.float32).reshape(16, 4)


def relu_scale(x):
    return {"y": np.maximum(x, 0.0) * 0.5 + 1.0, "z": np.minimum(x, 0.0)}


def tripled(x):
    return x * 3.0 + 1.0


def chain(x):
    y = x * 1.5 - 0.25
    y = np.abs(y) * y + 2.0
    y = np.minimum(np.maximum(y, -4.0), 4.0) * 0.75
    return y - x * 0.5


@pytest.fixture
def hot_after_5(monkeypatch):
    monkeypatch.setattr(tier, "HOT_CALLS", 5)
    monkeypatch.setattr(tier, "HOT_SECONDS", 1e9)


def _equal(got, want):
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k])


def test_options_and_the_environment_choose_the_tier(monkeypatch):
    monkeypatch.delenv(tier.ENV, raising=False)
    assert leapp.compile(relu_scale).tier == "auto"
    assert leapp.compile(relu_scale, tier="fx").tier == "fx"
    cf = leapp.compile(relu_scale, backend="inductor")
    assert (cf.tier, cf.backend) == ("inductor", "inductor")
    assert leapp.compile(relu_scale, backend="fx").tier == "fx"
    monkeypatch.setenv(tier.ENV, "inductor")
    assert leapp.compile(relu_scale).tier == "inductor"
    monkeypatch.setenv(tier.ENV, "fast")
    with pytest.raises(ValueError, match="LEAPP_TIER must be one of 'auto', 'fx', 'inductor', not 'fast'"):
        leapp.compile(relu_scale)
    with pytest.raises(ValueError, match="tier='fx' and backend='inductor' disagree"):
        leapp.compile(relu_scale, tier="fx", backend="inductor")
    with pytest.raises(ValueError, match="backend must be one of"):
        leapp.compile(relu_scale, backend="tvm")


def _counting(monkeypatch, module, used):
    """``module.compile_runner`` wrapped: which thread compiled, and each call of what it gave."""
    real = module.compile_runner

    def counting(graph_module, example_inputs, *args):
        used.append(threading.current_thread() is not threading.main_thread())
        runner = real(graph_module, example_inputs, *args)

        def run(*tensors):
            used.append("call")
            return runner(*tensors)
        return run

    monkeypatch.setattr(module, "compile_runner", counting)


def _hot_then_fused(cf, x, want, used, where):
    for _ in range(5):
        got = cf(x)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    # while it compiles: this thread traces and runs another function, in a trace of its own
    other = leapp.compile(relu_scale, tier="fx")
    _equal(other(X), relu_scale(X))
    assert cf.wait_for_tier(timeout=900)
    assert used[0] is True  # compiled off the main thread
    assert cf.backends == ["inductor"], cf.format_report()
    assert "tier: inductor" in cf.format_report() and where in cf.format_report()
    before = used.count("call")
    for _ in range(3):
        got = cf(x)  # the repeat call's fast path, after the swap
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert used.count("call") == before + 3
    assert torch.equal(cf(torch.from_numpy(x)), torch.from_numpy(want))  # tensors: the FX graph, as before


def test_a_hot_signature_compiles_in_a_separate_process_and_the_fast_call_uses_it(monkeypatch, hot_after_5):
    """The real AOTInductor compile, in a child process started from the tier's thread; this
    process loads the package without importing inductor."""
    monkeypatch.delenv(tier.ENV, raising=False)
    used: list = []
    _counting(monkeypatch, fused_process, used)
    monkeypatch.setattr(backends, "compile_runner", lambda *a: pytest.fail("compiled in this process"))
    x = np.linspace(-2.0, 2.0, 200_000, dtype=np.float32)
    _hot_then_fused(leapp.compile(chain), x, chain(x), used, "in a separate process (AOTInductor)")


def test_where_the_separate_process_fails_the_compile_runs_here_and_says_why(monkeypatch, hot_after_5, tmp_path):
    """The child really starts and really fails (the graph's code it is given raises); the tier's
    thread then compiles with inductor itself, and the report gives the child's reason. No
    temporary folder is left behind."""
    monkeypatch.delenv(tier.ENV, raising=False)
    monkeypatch.setattr(fused_process, "_serialised", lambda gm: ("raise ValueError('no such op')\n", {}))
    monkeypatch.setattr(fused_process.tempfile, "tempdir", str(tmp_path))
    used: list = []
    _counting(monkeypatch, backends, used)
    x = np.linspace(-2.0, 2.0, 200_000, dtype=np.float32)
    _hot_then_fused(leapp.compile(chain), x, chain(x), used,
                    "in this process (the separate process could not: ValueError: no such op)")
    assert not list(tmp_path.glob("leapp-fused-*"))


def _flip_zero_signs(v):
    return torch.where(v == 0, torch.zeros_like(v).neg(), v)


WRONG = {
    "values": (lambda v: v + 1, "differs from the FX graph's"),
    "zero signs": (_flip_zero_signs, "differs from the FX graph's"),
    "dtype": (lambda v: v.double(), "is torch.float64[16, 4] where the FX graph gives torch.float32[16, 4]"),
}


@pytest.mark.parametrize("how", sorted(WRONG))
def test_fused_code_that_would_change_a_result_is_not_swapped_in(monkeypatch, hot_after_5, how):
    change, reason = WRONG[how]

    def wrong(graph_module, example_inputs):
        return lambda *tensors: {k: change(v) for k, v in graph_module(*tensors).items()}, "in a test"

    monkeypatch.setattr(tier, "compile_fused", wrong)
    monkeypatch.setattr(tier, "measure", lambda fx, fused, tensors: (2.0, 1.0))  # "faster"
    cf = leapp.compile(relu_scale, tier="auto")
    for _ in range(6):
        _equal(cf(X), relu_scale(X))
    assert cf.wait_for_tier(timeout=60)
    assert cf.backends == ["fx"]
    assert "inductor not used: output" in cf.format_report() and reason in cf.format_report()
    _equal(cf(X), relu_scale(X))


def test_a_failed_or_slower_compile_stays_on_fx_and_says_why(monkeypatch, hot_after_5):
    def failing(graph_module, example_inputs):
        raise RuntimeError("no C compiler\nmore")

    monkeypatch.setattr(tier, "compile_fused", failing)
    cf = leapp.compile(relu_scale, tier="auto")
    for _ in range(6):
        cf(X)
    assert cf.wait_for_tier(timeout=60) and cf.backends == ["fx"]
    assert "the inductor compile failed (RuntimeError: no C compiler)" in cf.format_report()

    monkeypatch.setattr(tier, "compile_fused", lambda gm, inputs: (gm, "in a test"))  # the same code
    # timed as equal (a real timing of the same code twice is noise on a loaded machine: a test
    # that timed it failed when the second run happened to be faster)
    monkeypatch.setattr(tier, "measure", lambda fx, fused, tensors: (1.0, 1.0))
    cf = leapp.compile(relu_scale, tier="auto")
    for _ in range(6):
        cf(X)
    assert cf.wait_for_tier(timeout=60) and cf.backends == ["fx"]
    assert "not faster than the FX graph" in cf.format_report()


def test_calls_never_wait_for_the_compile_and_threads_see_one_result(monkeypatch, hot_after_5):
    """The compile is held until the test lets it go: calls from several threads meanwhile run
    the FX graph; after the swap the same fast-path objects reach the fused code."""
    release, compiled_calls = threading.Event(), []

    def held(graph_module, example_inputs):
        assert release.wait(60)

        def run(*tensors):
            compiled_calls.append(1)
            return graph_module(*tensors)
        return run, "in a test"

    monkeypatch.setattr(tier, "compile_fused", held)
    monkeypatch.setattr(tier, "measure", lambda fx, fused, tensors: (2.0, 1.0))
    cf = leapp.compile(relu_scale, tier="auto")
    want = relu_scale(X)
    errors = []

    def caller(n):
        try:
            for _ in range(n):
                _equal(cf(X), want)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=caller, args=(40,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and "compiling fused code in the background" in cf.format_report()
    assert cf.tiers == ["compiling"]
    assert cf.backends == ["fx"] and not compiled_calls  # 160 calls ran while the compile waited
    threads = [threading.Thread(target=caller, args=(200,)) for _ in range(4)]
    for t in threads:
        t.start()
    release.set()
    assert cf.wait_for_tier(timeout=60)
    for t in threads:
        t.join(60)
    assert not errors and cf.backends == ["inductor"] and cf.tiers == ["inductor"]
    n = len(compiled_calls)
    caller(5)
    assert not errors and len(compiled_calls) == n + 5


def test_hot_signatures_compile_one_at_a_time_and_a_dropped_one_never(monkeypatch, hot_after_5):
    """Each fused compile is a process of several cores and ~400 MB: many hot functions (or a loop
    compiling one function after another) queue for one slot instead of starting one each."""
    import gc

    release, running, most, compiled = threading.Event(), [0], [0], []
    lock = threading.Lock()

    def held(graph_module, example_inputs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            assert release.wait(60)
            compiled.append(graph_module)
            return graph_module, "in a test"
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(tier, "compile_fused", held)
    monkeypatch.setattr(tier, "measure", lambda fx, fused, tensors: (2.0, 1.0))
    monkeypatch.setattr(tier, "_POLL_S", 0.02)
    first, second = leapp.compile(relu_scale, tier="auto"), leapp.compile(chain, tier="auto")
    dropped = leapp.compile(tripled, tier="auto")
    try:
        for cf in (first, second, dropped):
            for _ in range(6):
                cf(X)
        for _ in range(100):  # the first to take the slot holds it until released
            if running[0]:
                break
            threading.Event().wait(0.01)
        queued = [cf for cf in (first, second, dropped) if "waits for another signature's" in cf.format_report()]
        assert running[0] == 1 and len(queued) == 2
        waiting_for_nothing = dropped in queued
        del cf, queued
        if waiting_for_nothing:
            del dropped
            gc.collect()  # a graph and its tier refer to each other
    finally:
        release.set()  # the slot is the process's: a failure here must not hold it for the next test
    assert first.wait_for_tier(timeout=60) and second.wait_for_tier(timeout=60)
    assert first.backends == ["inductor"] and second.backends == ["inductor"]
    assert most[0] == 1
    threading.Event().wait(0.2)  # a queued thread of the dropped function would have taken the slot by now
    assert len(compiled) == (2 if waiting_for_nothing else 3)


def test_only_numpy_calls_count_and_tier_fx_never_compiles(monkeypatch, hot_after_5):
    compiled = []
    monkeypatch.setattr(tier, "compile_fused", lambda gm, inputs: (compiled.append(1) or gm, "in a test"))
    cf = leapp.compile(relu_scale, tier="auto")
    t = torch.from_numpy(X)
    for _ in range(10):
        cf(t)  # tensors run the FX graph on their device: they do not make the CPU code hot
    assert cf.wait_for_tier(timeout=5) and not compiled
    assert "tier: fx (auto; 0 NumPy call(s)" in cf.format_report() and cf.tiers == ["cold"]
    cf = leapp.compile(relu_scale, tier="fx")
    for _ in range(10):
        cf(X)
    assert cf.wait_for_tier(timeout=5) and not compiled and "tier: fx (no fused backend)" in cf.format_report()
    assert cf.tiers == [None]


def _payload_folder(tmp_path, source):
    torch.save({"source": source, "constants": {}, "inputs": [torch.zeros(2)]}, tmp_path / fused_process.PAYLOAD)
    return tmp_path


SLOW_SOURCE = "import time\ntime.sleep(120)\n"  # a compile that takes long: the child sits in it


def test_the_compile_process_ends_when_its_caller_goes(tmp_path):
    """The child's lifeline: when the caller's end of its standard input closes (the caller exited
    or was killed), the child ends at once instead of compiling on for nobody."""
    import subprocess
    import sys

    folder = _payload_folder(tmp_path, SLOW_SOURCE)
    child = subprocess.Popen([sys.executable, "-m", "leapp.runtime.fused_process", str(folder)],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(3)  # it is compiling (sleeping in the graph's code)
        child.stdin.close()
        assert child.wait(30) == 70
    finally:
        child.kill()
        child.wait()


def test_the_compile_process_is_killed_at_its_time_limit_and_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(fused_process, "_serialised", lambda gm: (SLOW_SOURCE, {}))
    monkeypatch.setattr(fused_process.tempfile, "tempdir", str(tmp_path))
    started = []
    real_popen = fused_process.subprocess.Popen
    monkeypatch.setattr(fused_process.subprocess, "Popen", lambda *a, **k: started.append(real_popen(*a, **k)) or started[-1])
    cf = leapp.compile(relu_scale, tier="fx")
    cf(X)
    with pytest.raises(fused_process.Unavailable, match="took more than 3 s"):
        fused_process.compile_runner(cf.graphs[-1], [torch.from_numpy(X)], timeout=3)
    assert started and started[0].poll() is not None  # killed, and reaped
    assert not fused_process._live and not list(tmp_path.glob("leapp-fused-*"))


def test_a_ctrl_c_while_the_child_compiles_leaves_no_process_and_no_folder(tmp_path):
    """The program ends (here by a KeyboardInterrupt in its main thread) while the tier's daemon
    thread waits for a compile: the child is killed and its folder removed at exit."""
    import subprocess
    import sys

    script = (
        "import sys, threading, time, tempfile, torch\n"
        "from leapp.runtime import fused_process\n"
        f"tempfile.tempdir = {str(tmp_path)!r}\n"
        f"fused_process._serialised = lambda gm: ({SLOW_SOURCE!r}, {{}})\n"
        "threading.Thread(target=fused_process.compile_runner, args=(None, [torch.zeros(2)]), daemon=True).start()\n"
        "while not fused_process._live:\n"
        "    time.sleep(0.05)\n"
        "print(next(iter(fused_process._live)).pid, flush=True)\n"
        "raise KeyboardInterrupt\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "KeyboardInterrupt" in done.stderr
    pid = int(done.stdout.split()[0])
    assert list(tmp_path.glob("leapp-fused-*")) == []
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive
