"""What library code is handed while tracing, so that its NumPy calls stay in leapp's sight.

Two mechanisms, each independent of the library and of how it names NumPy:

- **Plain arrays passed into a call of other code** (``filterpy.kalman.predict(x, P, F, Q)`` with
  ``P``, ``F``, ``Q`` module constants): the library computes on them with NumPy, which leapp
  only sees for traced operands, so ``dot(dot(F, P), F.T) + Q`` would come back as a plain array
  that leapp cannot tell from one computed out of traced data by C code. Handed in as traced
  constants (views of the same memory, snapshotted), every NumPy call on them is recorded (and
  folded: all its operands are constants), whichever name the library bound (``from numpy import
  dot`` at import is NumPy's own function object and reaches ``__array_function__``). A plain
  array in the result then really means a lost trace. A call that writes into one of those arrays
  changes state that outlives the call, which no graph carries: refused, naming the argument.
- **A Python list of traced values passed where NumPy expects one array**
  (``np.linalg.norm([v[0], v[1], v[2]])``): NumPy asks only the list, not its items, for an
  override, and converts the items in C (``float()`` of each). While a trace is open the NumPy
  functions the table lists are thin wrappers (like the bypass functions in ``patches``): an
  argument that is a list (or tuple) holding traced values is
  converted traced (``np.asarray`` traced), then NumPy's function runs. The functions that take
  a sequence of arrays (``np.concatenate``, ``np.stack``: ``SEQUENCE_OF_ARRAYS``) ask its items
  themselves and are left alone. A name bound before tracing (``from numpy.linalg import norm``)
  is NumPy's original: its list is converted in C and the values are reported as escapes.
"""

from __future__ import annotations

import numpy as np

from .. import table
from ..errors import EscapeError, EscapeWarning
from . import constness, record, state
from .ir import _unchanged

_MODULES = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft}
# NumPy's dispatcher for these looks inside the sequence argument: traced items are seen
SEQUENCE_OF_ARRAYS = frozenset({
    "numpy.concatenate", "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.dstack",
    "numpy.column_stack", "numpy.row_stack", "numpy.block", "numpy.linalg.multi_dot",
})


# --- plain arrays handed to other code -------------------------------------------------


def traced_constants(trace, args, kwargs, loc):
    """``args``/``kwargs`` with each plain ndarray replaced by a traced constant of it, when some
    argument is traced data; returns ``(args, kwargs, handed)`` (``handed``: (array, node, label))."""
    if not constness.any_data(trace, list(args) + list(kwargs.values())):
        return args, kwargs, ()
    handed = []

    def convert(value, label):
        if type(value) is np.ndarray:
            node = trace.const(value, loc)
            handed.append((value, node, label))
            return record.wrap(value, node)
        return value

    args = tuple(convert(a, f"argument {i}") for i, a in enumerate(args))
    kwargs = {k: convert(v, f"argument {k}=") for k, v in kwargs.items()}
    return args, kwargs, handed


def check_unwritten(trace, handed, name, loc):
    """Refuse a call that wrote into a plain array it was given (state that outlives the call)."""
    for value, node, label in handed:
        if not _unchanged(node.value, value):
            message = (f"{name} at {record.format_loc(loc)} wrote into the array passed as its {label} "
                       f"(a {value.dtype}{list(value.shape)} made before tracing): that array outlives "
                       f"the call, and a graph cannot carry state from one call to the next, so what was "
                       f"written is lost from the graph. Return the new value instead, or create the "
                       f"array inside the compiled function")
            record.report(trace, "escape", f"{name} (write into its {label})", loc, message,
                          EscapeError, EscapeWarning)


# --- lists of traced values where NumPy expects one array --------------------------------


def targets():
    """(table name, module, attribute) of each NumPy function wrapped while a trace is open."""
    for name, entry in table.TABLE.items():
        if not (isinstance(entry, table.Entry) and entry.kind == "function") or name in SEQUENCE_OF_ARRAYS:
            continue
        module_name, attr = name.rsplit(".", 1)
        module = _MODULES.get(module_name)
        original = getattr(module, attr, None) if module is not None else None
        if original is not None and not isinstance(original, np.ufunc):
            yield name, module, attr


def wrapper(name, original):
    def wrapper(*args, **kwargs):
        if state.current() is None or not _has_sequence(args, kwargs):
            return original(*args, **kwargs)
        return call(original, args, kwargs)

    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__qualname__ = getattr(original, "__qualname__", name)
    wrapper.__module__ = getattr(original, "__module__", None)  # type: ignore[assignment]
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper._leapp_sequences = name  # type: ignore[attr-defined]
    return wrapper


def is_wrapper(fn) -> bool:
    return getattr(fn, "__code__", None) is _WRAPPER_CODE


def _has_sequence(args, kwargs):
    for a in args:
        if type(a) is list or type(a) is tuple:
            return True
    return bool(kwargs) and any(type(v) is list or type(v) is tuple for v in kwargs.values())


def call(original, args, kwargs):
    """``original(*args, **kwargs)`` with each list (or tuple) of traced values converted traced."""
    from .patches import traced_asarray  # patches imports this module

    def convert(value):
        if (type(value) is list or type(value) is tuple) and value and record._contains_traced(value):
            return traced_asarray(value)
        return value

    return original(*[convert(a) for a in args], **{k: convert(v) for k, v in kwargs.items()})


_WRAPPER_CODE = wrapper("", np.sum).__code__
