"""What rewritten code calls instead of ``leapp.dispatch`` directly: it also counts.

For the cross-check the runtime must tell "this call ran and recorded
nothing" (a disagreement, or a constant folded from constants) from "this
call never ran" (a branch not taken). The probe notes, per call site, how
often it ran and whether any operand was traced, then hands the call to the
dispatcher, which puts the site's column on every node the call records.
"""

from __future__ import annotations

from .. import dispatch
from ..runtime import constness, record, state


class SiteRun:
    __slots__ = ("calls", "traced", "passthrough", "container")

    def __init__(self):
        self.calls = 0  # times the call ran while tracing
        self.traced = False  # some operand (or the receiver) was a traced value computed from the inputs
        self.passthrough = False  # it returned a traced operand itself (np.asarray(x))
        self.container = None  # a subscript of a Python list/tuple/dict: its type name (no array op)


class Probe(dispatch.BranchDispatch):  # branches on data: nothing to count, calls inside are routed
    def __init__(self):
        self.runs: dict[str, SiteRun] = {}
        self.library = None  # leapp.compiler.library.Conversions: library code converted while traced

    def reset(self):
        self.runs = {}

    def _note(self, site, operands, kwargs):
        run = self.runs.get(site)
        if run is None:
            run = self.runs[site] = SiteRun()
        run.calls += 1
        if run.traced:
            return run
        if record._contains_traced(operands) or (kwargs and record._contains_traced(list(kwargs.values()))):
            # A traced constant (np.ones(4) made while tracing) is not traced *data*: a call on
            # constants only folds them, whatever it records (constness.py)
            trace = state.current()
            run.traced = constness.any_data(trace, operands) or bool(
                kwargs and constness.any_data(trace, kwargs.values()))
        return run

    def call(self, site, fn, /, *args, **kwargs):
        """A routed NumPy function call: ``np.clip(x, 0, 1)`` as written at ``site``."""
        run = self._note(site, args, kwargs)
        result = dispatch.call(site, fn, *args, **kwargs)
        if run.traced and any(result is a for a in args):
            run.passthrough = True
        return result

    def method(self, site, receiver, name, /, *args, **kwargs):
        """A routed method call: ``x.sum(axis=0)`` as written at ``site``."""
        run = self._note(site, (receiver, *args), kwargs)
        result = dispatch.method(site, receiver, name, *args, **kwargs)
        if run.traced and result is receiver:
            run.passthrough = True
        return result

    def foreign(self, site, fn, /, *args, **kwargs):
        """A routed call into other code: ``Rotation.from_quat(q)`` as written at ``site``."""
        self._note(site, (getattr(fn, "__self__", None), *args), kwargs)
        if self.library is not None and state.current() is not None:  # branches in library code
            return self.library.call(site, fn, args, kwargs)
        return dispatch.foreign(site, fn, *args, **kwargs)

    def getitem(self, site, value, index, /):
        """A routed subscript: ``TABLE[idx]`` as written at ``site``."""
        run = self._note(site, (value, index), None)
        if isinstance(value, (list, tuple, dict)):  # Python picks the item: nothing to record (an index
            run.container = type(value).__name__    # from data is refused, one from a scalar specialises)
        return dispatch.getitem(site, value, index)

