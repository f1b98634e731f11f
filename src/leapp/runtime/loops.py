"""A bounded ``while`` on traced data, as converted source calls it (``leapp.dispatch.while_``).

While the test is plain (a Python bool, an untraced value) the loop runs
exactly as Python's. From the first traced test on, the remaining iterations
are unrolled with the exit condition as a mask: each runs the body on the
values carried so far and keeps the new ones only where the loop is still
running (``np.where(running, new, old)``, through the same select as a branch,
which refuses a change of dtype or shape). After the bound:

- on the input being traced, a loop that would still run is refused
  (``ConversionError``): the example itself needs more iterations;
- inside the body, a call that raises on some inputs (``table.guards``: a solver's matrix, an
  index from data) runs guarded by the running mask, as in an arm of a converted ``if``
  (``branches.guarded``): an iteration that already stopped computes on the values it kept, which
  may be exactly those (a matrix gone singular) the loop stopped on;
- for every other input the graph marks it: each carried float value becomes
  NaN where the loop would still run after the bound (NaN poisoning, in the
  graph, so every export format keeps it). A carried value that cannot hold
  NaN (an integer or boolean array) is refused, since nothing could mark it.
"""

from __future__ import annotations

import numpy as np

from .. import dispatch
from ..errors import ConversionError
from .branches import _bools, _on_path, _test, concrete, not_taken, select, traced, untaken


def while_(site, bound, test_fn, body_fn, args):
    values = tuple(args)
    code = getattr(body_fn, "__code__", None)
    names = code.co_varnames[:code.co_argcount] if code is not None else ()
    done = 0
    test = test_fn(*values)
    while not traced(test):  # exactly Python's loop while nothing decides it from the data
        if not test:
            return values
        dispatch.past_bound(site, bound, done)
        values = tuple(body_fn(*values))
        done += 1
        test = test_fn(*values)
    running = _test(site, test)
    for _ in range(max(bound - done, 0)):
        # an iteration that already stopped may divide by zero or leave math's domain; its values are dropped
        with np.errstate(all="ignore"), untaken(not concrete(running)):
            with _on_path(running, True):  # a solver's matrix, an index: guarded where it stopped
                new = tuple(body_fn(*values))
            values = tuple(select(site, running, a, b, f" `{n}` (in an iteration and where the loop stopped)")
                           for n, a, b in zip(_names(names, values), new, values, strict=True))
            (more,) = _bools(site, [test_fn(*values)])
        running = np.logical_and(running, more)
    if concrete(running) and not not_taken():  # on a side the input does not take, the graph marks it
        raise ConversionError(f"{site}: the `while` loop still runs after its bound of {bound} iterations on "
                              f"the input being traced; raise `max-iterations` (the graph is exact only "
                              f"for inputs that stop within the bound)")
    return tuple(_poison(site, bound, n, v, running) for n, v in zip(_names(names, values), values, strict=True))


def _names(names, values):
    return names if len(names) == len(values) else [f"#{i}" for i in range(len(values))]


def _poison(site, bound, name, value, running):
    if not traced(value):
        return value  # the same in every iteration (the select kept it): right whatever the count
    if value.dtype.kind not in "fc":
        raise ConversionError(f"{site}: the `while` loop carries `{name}` ({value.dtype}); where an input needs "
                              f"more than {bound} iterations leapp marks each carried value with NaN, which "
                              f"{value.dtype} cannot hold. Carry it as a float, or compute it after the loop")
    nan = np.full((), np.nan, dtype=value.dtype)
    out = np.where(running, nan, value)
    if isinstance(value, np.generic) and not isinstance(out, np.ndarray):
        out = out[()]
    return out


def reference(cf):
    """What the differential check runs as NumPy's answer: ``cf.fn`` itself, or, when ``cf`` has a bounded
    ``while``, its converted source run plainly (as Python runs the original) stopping with
    ``dispatch.LoopBoundExceeded`` past a bound. NumPy's own loop may never end on a generated input (a
    Newton iteration on a negated one); an input that needs more iterations than the bound is one the
    graph marks with NaN, so the check skips it."""
    source = getattr(cf, "source", None)
    if source is None or not any(b.construct == "while" and b.converted for b in source.branches):
        return cf.fn

    def run(*args, **kwargs):
        probe = cf._probe
        saved, probe.runs = probe.runs, {}  # the cross-check counts the calls made while tracing only
        dispatch.local.loop_cap = True
        try:
            return cf._traceable(*args, **kwargs)
        finally:
            dispatch.local.loop_cap = False
            probe.runs = saved

    return run
