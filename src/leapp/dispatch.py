"""The traced dispatcher that ``leapp rewrite`` routes NumPy calls through.

Rewritten source reads ``_leapp.call("prep.py:12:8", np.clip, x, 0.0, 1.0)``
where the original read ``np.clip(x, 0.0, 1.0)``, ``_leapp.method("prep.py:13:8",
x, "sum", axis=0)`` for ``x.sum(axis=0)``, ``_leapp.foreign("prep.py:15:8",
Rotation.from_quat, q)`` for a call into other code given traced data, and ``_leapp.getitem("prep.py:14:8",
TABLE, idx)`` for ``TABLE[idx]`` when the index may be traced and the indexed
value may be a plain array (ndarray's C indexing of a plain array never
reaches leapp's hooks, so the lookup would be frozen). With no tracing session
active this is exactly the original call plus one Python frame. While the
runtime traces, it registers a handler here, so the call site (file, line,
column) lands on the recorded node, and calls that bypass NumPy's dispatch
hooks (``np.asarray``, ``np.zeros``) are routed to the tracer.

The handler is process-wide (installed while any thread traces) and hands
untraced threads straight to NumPy; the current site is per thread, so a call
running in another thread never lends its site to a trace.

This module imports neither torch nor numpy.
"""

from __future__ import annotations

import operator
import threading

_handler = None  # set by leapp.runtime while a session is active


class _PerThread(threading.local):
    site: str | None = None
    loop_cap: bool = False  # the differential check's NumPy run: a bounded `while` stops at its bound
    sides: dict | None = None  # compiler/sides.py: site -> truth values its converted test took


_local = _PerThread()
local = _local  # the runtime's per-call hooks read ``local.site`` (== current_site()) directly


def current_site() -> str | None:
    """The ``file:line:col`` of the rewritten call being dispatched in this thread, if any."""
    return _local.site


def call(site, fn, /, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` as the NumPy call written at ``site``."""
    if _handler is None:
        return fn(*args, **kwargs)
    local = _local
    previous = local.site
    local.site = site
    try:
        return _handler(fn, args, kwargs)
    finally:
        local.site = previous


def method(site, receiver, name, /, *args, **kwargs):
    """Call ``receiver.name(*args, **kwargs)``, the method call written at ``site``."""
    bound = getattr(receiver, name)
    if _handler is None:
        return bound(*args, **kwargs)
    local = _local
    previous = local.site
    local.site = site
    try:
        return bound(*args, **kwargs)
    finally:
        local.site = previous


def array_method(site, receiver, name, /, *args, **kwargs):
    """``receiver.name(...)`` named like an ndarray method, in a converted branch, on a value the
    static pass could not type (``obs["k"].min()``: a dict's value): both arms run while tracing, so
    the receiver must be a NumPy array or scalar, whose method has no side effects; anything else
    is refused at the call (``leapp.runtime.branches.array_method``)."""
    if _handler is not None:
        _branches().array_method(site, receiver, name)
    return method(site, receiver, name, *args, **kwargs)


def foreign(site, fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``: a call into other code given traced data, written at ``site``.

    The runtime checks that the result comes back traced: a plain array computed
    from the inputs (another library, a C extension) would be frozen into the graph.
    """
    if _handler is None:
        return fn(*args, **kwargs)
    return call(site, foreign_call, fn, *args, **kwargs)


def foreign_call(fn, /, *args, **kwargs):
    """What the handler receives for ``foreign``: ``fn(*args, **kwargs)`` to be checked."""
    return fn(*args, **kwargs)


def getitem(site, value, index, /):
    """``value[index]``, the subscript written at ``site``."""
    if _handler is None:
        return value[index]
    return call(site, _getitem, value, index)


_getitem = operator.getitem


def set_handler(handler) -> None:
    """Install (or with None, remove) the runtime's handler. Used by leapp.runtime."""
    global _handler
    _handler = handler


# --- branches on data (``leapp.ast_pass.convert``) ----------------------------
# A converted ``if`` reads ``(y,) = _leapp.if_("prep.py:7:5", test, t, f, (y,))``, where
# ``t`` and ``f`` are the branch bodies as local functions returning the values that
# flow out. Untraced tests branch exactly as Python does; a traced test runs both
# branches and selects (``leapp.runtime.branches``).


def _branches():
    from leapp.runtime import branches  # loaded only while tracing, when torch and NumPy are

    return branches


def _side(site, test):
    """``bool(test)``, noted for ``site`` when the check records the sides its inputs take."""
    taken = bool(test)
    sides = _local.sides
    if sides is not None:
        sides.setdefault(site, set()).add(taken)
    return taken


def if_(site, test, true_fn, false_fn, args, /):
    """The ``if`` statement at ``site``: ``true_fn(*args)`` if ``test`` else ``false_fn(*args)``."""
    if _handler is None:
        return true_fn(*args) if _side(site, test) else false_fn(*args)
    return _branches().if_(site, test, true_fn, false_fn, args)


def ifexp(site, test, true_fn, false_fn, /):
    """The conditional expression ``a if test else b`` at ``site``, its sides as thunks."""
    if _handler is None:
        return true_fn() if _side(site, test) else false_fn()
    return _branches().if_(site, test, true_fn, false_fn, ())


def and_(site, *operands):
    """``a and b and ...`` in a converted test at ``site``, each operand a thunk."""
    if _handler is None:
        value = operands[0]()
        for operand in operands[1:]:
            if not value:
                return value
            value = operand()
        return value
    return _branches().and_(site, operands)


def or_(site, *operands):
    """``a or b or ...`` in a converted test at ``site``, each operand a thunk."""
    if _handler is None:
        value = operands[0]()
        for operand in operands[1:]:
            if value:
                return value
            value = operand()
        return value
    return _branches().or_(site, operands)


def not_(site, value, /):
    """``not value`` in a converted test at ``site``."""
    if _handler is None:
        return not value
    return _branches().not_(site, value)


COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne}


def chain(site, first, *rest):
    """``a < b <= c`` in a converted test at ``site``: thunks and operator strings in turn, each
    operand computed once (as Python does)."""
    if _handler is None:
        left = first()
        for i in range(0, len(rest), 2):
            right = rest[i + 1]()
            result = COMPARISONS[rest[i]](left, right)
            if not result or i == len(rest) - 2:
                return result
            left = right
    return _branches().chain(site, first, rest)


class Pending:
    """An early ``return`` whose test may be traced: taken (a plain true test), or held for a select."""

    __slots__ = ("taken", "value", "test", "site", "path_entry")

    def __init__(self, taken, value, test=None, site=None):
        self.taken, self.value, self.test, self.site = taken, value, test, site
        self.path_entry = None  # runtime.branches: the (test, False) the code after it runs under


_NOT_TAKEN = Pending(False, None)


class Returns(Pending):
    """A converted ``if`` whose arms hold early returns (``if_returns``): taken (an arm returned on a
    plain path, ``value``), or the names the arms hand on (``outputs``) and the early returns they
    hold (``group``, each under its arm's path), merged by the function's later ``return``."""

    __slots__ = ("outputs", "group")

    def __init__(self, taken, value, outputs=None, group=()):
        super().__init__(taken, value)
        self.outputs, self.group = outputs, tuple(group)


class _Exit:
    """An arm's function returning the function's own value (``exit``), not the names it hands on."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Arm:
    """The end of an arm that holds early returns: the names it hands on and those returns."""

    __slots__ = ("held", "outputs")

    def __init__(self, held, outputs):
        self.held, self.outputs = tuple(held), outputs


def exit(pending, value, /):
    """``return value`` inside an arm of a converted ``if`` after the early returns ``pending`` it
    holds: the function returns ``value`` (merged with them)."""
    return _Exit(merge(pending, value))


def arm(pending, outputs, /):
    """The end of an arm of a converted ``if`` that holds the early returns ``pending``."""
    return _Arm(pending, outputs)


def returns(result) -> Returns:
    """One arm's result (the names it hands on, an ``_Exit`` or an ``_Arm``) as a ``Returns``."""
    if isinstance(result, Returns):
        return result
    if isinstance(result, _Exit):
        return Returns(True, result.value)
    if isinstance(result, _Arm):
        return Returns(False, None, result.outputs, _flat(result.held))
    return Returns(False, None, result)


def _flat(pending) -> list:
    out: list = []
    for p in pending:  # a list: the early returns a loop or `with` block held (plan._plan_held)
        out.extend(_flat(p.group) if isinstance(p, Returns) else _flat(p) if isinstance(p, list) else (p,))
    return [p for p in out if p.test is not None]


def if_returns(site, test, true_fn, false_fn, args, /):
    """The ``if`` at ``site`` whose arms hold early returns (``if m: return r`` at an arm's top)."""
    if _handler is None:
        return returns(true_fn(*args) if _side(site, test) else false_fn(*args))
    return _branches().if_returns(site, test, true_fn, false_fn, args)


def early(site, test, body, args, /):
    """``if test: <body ending in return>`` at the top of a function body, at ``site``."""
    if _handler is None:
        return Pending(True, body(*args)) if _side(site, test) else _NOT_TAKEN
    return _branches().early(site, test, body, args)


def arm_early(site, test, body, args, /):
    """``if test: <body ending in return>`` at the top of an arm of an ``if_returns``, at ``site``."""
    if _handler is None:
        return Pending(True, body(*args)) if _side(site, test) else _NOT_TAKEN
    return _branches().early(site, test, body, args, True)


def while_(site, bound, test_fn, body_fn, args, /):
    """The bounded ``while`` at ``site`` (``leapp.ast_pass.convert.loops``): ``args`` are the values it
    carries, ``body_fn(*args)`` one iteration, at most ``bound`` of them once the test is traced."""
    if _handler is None:
        done = 0
        test = _side(site, test_fn(*args))  # the entry test: whether the loop runs at all
        while test:
            past_bound(site, bound, done)
            args = body_fn(*args)
            done += 1
            test = test_fn(*args)
        return args
    from leapp.runtime import loops

    return loops.while_(site, bound, test_fn, body_fn, args)


class LoopBoundExceeded(Exception):
    """A plain run of a bounded ``while`` went past its bound while ``local.loop_cap`` was set."""


def past_bound(site, bound, done) -> None:
    """Stop a plain run of the bounded ``while`` at ``site`` that is about to run iteration ``done + 1``
    of ``bound`` when the differential check asked for it (NumPy's own loop may never end there)."""
    if done >= bound and _local.loop_cap:
        raise LoopBoundExceeded(f"{site}: the `while` loop needs more than its bound of {bound} iterations")


def merge(pending, value, /):
    """A later ``return value`` after early returns ``pending`` (in source order)."""
    held = _flat(pending)  # an `if` whose arms held early returns holds each of them
    if not held:
        return value
    return _branches().merge(held, value)


_IMMUTABLE = (int, float, complex, bool, str, bytes, tuple, frozenset, type(None))


def private(site, value, /):
    """A converted branch's own copy of an array it writes into in place (``q[0] = v``, ``q *= -1``),
    so the branch that runs after it, and every other holder, keeps the original; the copy flows out
    through the select. A number is returned as it is (``n += 1`` rebinds it)."""
    if isinstance(value, _IMMUTABLE):
        return value
    if type(value).__module__ == "numpy" or hasattr(value, "__array_ufunc__"):
        return value.copy()
    raise TypeError(f"{site}: leapp converted this branch to write into a copy of a NumPy array, but the "
                    f"value is a {type(value).__name__}")


class BranchDispatch:
    """The branch dispatchers a converted body's ``_leapp`` offers (``leapp.ast_pass.convert``):
    shared by the user's probe (``compiler.probe.Probe``) and library copies
    (``compiler.library``)."""

    if_ = staticmethod(if_)

    def array_method(self, site, receiver, name, /, *args, **kwargs):
        """``array_method``, the call itself made by this object's ``method`` (the probe notes it)."""
        if _handler is not None:
            _branches().array_method(site, receiver, name)
        return self.method(site, receiver, name, *args, **kwargs)

    method = staticmethod(method)
    ifexp = staticmethod(ifexp)
    and_ = staticmethod(and_)
    or_ = staticmethod(or_)
    not_ = staticmethod(not_)
    chain = staticmethod(chain)
    early = staticmethod(early)
    merge = staticmethod(merge)
    if_returns = staticmethod(if_returns)
    arm_early = staticmethod(arm_early)
    exit = staticmethod(exit)
    arm = staticmethod(arm)
    while_ = staticmethod(while_)
    private = staticmethod(private)
