"""TracedNpArray: a real ndarray that records what is done to it.

NumPy calls reach the tracer through ``__array_ufunc__`` and
``__array_function__``. ndarray methods are C code that never reach those
hooks, so every public method is overridden here: the ones the table covers
route to their entry; the rest run as NumPy and are reported as untraced.
No result inherits a graph node from its source by accident (there is no
``__array_finalize__`` that copies nodes), so an array whose origin leapp did
not see is known to be untracked, never silently mislabelled.
"""

from __future__ import annotations

import sys
from typing import cast
from weakref import ref as _weakref

import numpy as np

from .. import dispatch, table
from ..errors import EscapeError, EscapeWarning, UnsupportedArgumentError
from ..table.guards import GUARDED_LINALG, INDEX_ARGUMENT
from . import argcheck, constness, library_calls, record, scalar_args, state
from .ir import Node as _Node
from .ir import _frame_locs, _is_internal, frame_location, new_node, user_location
from .names import function_name, resolve, ufunc_name
from .sizes import data_sized as _data_sized

_ndarray = np.ndarray
_plain_view = np.ndarray.view
_trace_of = state.local  # .trace: this thread's trace (the hot paths below read it inline)
_site_of = dispatch.local  # .site: the rewritten call being dispatched in this thread
# Operands the inline fast paths leave to record.node_of_operand: an escaped value (reported and
# frozen there) and an array made as a constant, whose memory C code may have written since.
# A Python-number argument's value (leapp.weak, runtime/scalar_args.py) takes the general path too.
_SLOW_OPS = frozenset({"escaped", "const", "leapp.weak"})


def _recorded(method):
    """The op the table says ``ndarray.<method>`` records (``Entry.recorded_op``).

    The overrides below call the function it names, so the op a method site
    records is the fact the cross-check reads, not a choice made here.
    """
    return cast(table.Entry, table.lookup("ndarray." + method)).recorded_op  # every name asked here is one


_RESHAPE = resolve(_recorded("reshape"))
_TRANSPOSE = resolve(_recorded("transpose"))
_T = resolve(_recorded("T"))
_MT = resolve(_recorded("mT"))
_CONJ = resolve(_recorded("conj"))
_REAL = resolve(_recorded("real"))
_IMAG = resolve(_recorded("imag"))
_SORT = _recorded("sort")


def _loc():
    site = dispatch.current_site()
    if site is not None:
        return _parse_site(site)
    return user_location()


_sites: dict = {}  # "file:line:col" -> loc tuple; a program has few sites, each parsed once


def _parse_site(site):
    loc = _sites.get(site)
    if loc is None:
        path, line, col = site.rsplit(":", 2)
        loc = _sites[site] = (path, int(line), None, int(col))
    return loc




def in_arms(name, args, kwargs):
    """The arguments of NumPy's ``name`` called inside converted arms (the trace's path is not
    empty), where an input that does not take them must not make the graph raise: a solver's matrix
    becomes ``np.where(path, m, I)`` (``branches.guarded``), an index array ``np.where(path, j, 0)``
    (``branches.guarded_index``)."""
    if name in GUARDED_LINALG:
        from .branches import guarded

        return guarded(name, args), kwargs
    at = INDEX_ARGUMENT.get(name)
    if at is not None:
        from .branches import guarded_index

        if len(args) > at:
            return (*args[:at], guarded_index(args[at]), *args[at + 1:]), kwargs
        if "indices" in kwargs:
            return args, {**kwargs, "indices": guarded_index(kwargs["indices"])}
    return args, kwargs


class TracedNpArray(np.ndarray):
    """An ndarray whose operations are recorded into a leapp trace."""

    # Slots, not a __dict__: the hooks below read several of these per traced op, and a slot is
    # read in a third of the time of a dict attribute that falls back to a class default.
    __slots__ = (
        "_lp_node",  # ir.Node of the current value (None: not traced)
        "_lp_parent",  # (base, kind, view_args, loc) when this is a traced view
        "_lp_root",
        "_lp_ver",  # root version this view's node was derived at
        "_lp_version",  # on roots: how many writes so far
        "_lp_plain",  # a plain ndarray view of the same memory, when known
        "_lp_scalar",  # True: NumPy would hold this 0-d value as a NumPy scalar (immutable)
    )

    # --- NumPy's dispatch hooks ---------------------------------------------

    def __array_finalize__(self, obj):
        # Called for every new TracedNpArray, however NumPy made it: the one place every slot
        # gets its default. Of interest beyond that is only an array made from a traced array by
        # NumPy's C code straight from the user's line (a scalar type called on it: np.int64(x)).
        self._lp_node = self._lp_parent = self._lp_root = self._lp_plain = None
        self._lp_ver = self._lp_version = 0
        self._lp_scalar = False
        trace = _trace_of.trace
        if trace is not None:
            made = trace.made
            if made is not None:
                made.append(_weakref(self))
        if type(obj) is TracedNpArray and (obj._lp_node is not None or obj._lp_parent is not None):
            _converted_in_c(self, obj, sys._getframe(1))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        trace = _trace_of.trace
        if trace is not None and method == "__call__" and not kwargs and len(inputs) == 2:
            # The hottest code in tracing (a binary op on traced arrays or Python numbers),
            # written flat: no helper calls, operands unpacked by hand. See _fast_ufunc.
            name = _SUPPORTED_UFUNCS.get(ufunc)
            a, b = inputs
            if name is not None and type(a) is TracedNpArray and a._lp_parent is None \
                    and type(b) is TracedNpArray and b._lp_parent is None:
                na = a._lp_node
                nb = b._lp_node
                if na is not None and nb is not None and na.op not in _SLOW_OPS and nb.op not in _SLOW_OPS:
                    pa = a._lp_plain
                    pb = b._lp_plain
                    result = ufunc(_plain_view(a, _ndarray) if pa is None else pa,
                                   _plain_view(b, _ndarray) if pb is None else pb)
                    site = _site_of.site
                    if site is None:
                        frame = sys._getframe(1)
                        hit = _frame_locs.get((id(frame.f_code), frame.f_lasti))  # frame_location's cache
                        loc = hit[1] if hit is not None else frame_location(frame)
                        if loc is None:
                            loc = user_location()
                    else:
                        loc = _parse_site(site)
                    scalar = type(result) is not _ndarray  # NumPy gave a scalar
                    if scalar:
                        result = np.asarray(result)
                    nodes = trace.nodes  # Trace.add and ir.new_node, inline
                    node = _Node()
                    node.op = name
                    node.args = (na, nb)
                    node.kwargs = None
                    node.dtype = result.dtype
                    node.shape = result.shape
                    node.loc = loc
                    node.index = len(nodes)
                    node.value = None
                    nodes.append(node)
                    out = _plain_view(result, TracedNpArray)
                    out._lp_node = node
                    out._lp_plain = result
                    out._lp_scalar = scalar
                    return out
        if trace is None:
            return getattr(ufunc, method)(
                *[record.plain(x) for x in inputs], **record.plain_kwargs(kwargs)
            )
        if method == "__call__" and not kwargs:
            fast = _fast_ufunc(trace, ufunc, inputs, sys._getframe(1))
            if fast is not None:
                return fast
        name = ufunc_name(ufunc, method)
        if "out" in kwargs:
            out = kwargs["out"]
            if isinstance(out, tuple) and len(out) == 1:
                kwargs["out"] = out[0]
        return record.record_call(name, getattr(ufunc, method), inputs, kwargs, _loc())

    def __array_function__(self, func, types, args, kwargs):
        if state.current() is None:
            return func(*[record.plain(a) for a in args], **record.plain_kwargs(kwargs))
        name = function_name(func)
        if getattr(state.current(), "path", None):
            args, kwargs = in_arms(name, args, kwargs)
        base = args[0] if args and isinstance(args[0], TracedNpArray) else None
        return record.record_call(name, func, args, kwargs, _loc(), view_base=base)

    # --- indexing -------------------------------------------------------------

    def __getitem__(self, index):
        trace = _trace_of.trace
        if trace is None:
            return _ndarray.__getitem__(_plain_view(self, _ndarray), record.plain(index))
        if self._lp_parent is None and (type(index) is slice and type(index.start) in _BOUNDS
                                        and type(index.stop) in _BOUNDS and type(index.step) in _BOUNDS
                                        or type(index) is int or _is_static_basic(index)):
            # the common case inline: a basic index of an unwritten array (a view, one node)
            node = self._lp_node
            if node is not None and node.op not in _SLOW_OPS:
                p = self._lp_plain
                result = (p if p is not None else _plain_view(self, _ndarray))[index]  # p is a plain ndarray
                site = _site_of.site  # _frame_loc, inline
                if site is None:
                    frame = sys._getframe(1)
                    hit = _frame_locs.get((id(frame.f_code), frame.f_lasti))  # frame_location's cache
                    loc = hit[1] if hit is not None else frame_location(frame)
                    if loc is None:
                        loc = user_location()
                else:
                    loc = _parse_site(site)
                nodes = trace.nodes
                if type(result) is not _ndarray:
                    result = np.asarray(result)
                    out = _plain_view(result, TracedNpArray)
                    out._lp_scalar = True
                else:
                    out = _plain_view(result, TracedNpArray)
                    out._lp_parent = (self, "index", index, loc)  # record.make_view, inline
                    out._lp_root = self
                    out._lp_ver = self._lp_version
                fresh = _Node()  # ir.new_node, inline
                fresh.op = "ndarray.__getitem__"
                fresh.args = (node, index)
                fresh.kwargs = None
                fresh.dtype = result.dtype
                fresh.shape = result.shape
                fresh.loc = loc
                fresh.index = len(nodes)
                fresh.value = None
                nodes.append(fresh)
                out._lp_node = fresh
                out._lp_plain = result
                return out
        if _is_static_basic(index):
            fast = _fast_getitem(trace, self, index, sys._getframe(1))
            if fast is not None:
                return fast
        loc = _loc()
        index = _static_index(trace, index, loc)
        if getattr(trace, "path", None):  # inside converted arms: a traced integer index under the path
            from .branches import guarded_index

            index = guarded_index(index)
        ir_self = record.node_of_operand(trace, self, loc, "indexing")
        ir_index = record.to_ir(trace, index, loc, "indexing")
        result = _ndarray.__getitem__(_plain_view(self, _ndarray), record.plain(index))
        out = record.wrap_results(trace, "ndarray.__getitem__", (ir_self, ir_index), None, result, loc, None)
        if isinstance(result, _ndarray) and _is_basic(index):
            record.make_view(out, self, "index", index, loc)
        return out

    def __setitem__(self, index, value):
        trace = state.current()
        if trace is None:
            return _ndarray.__setitem__(
                _plain_view(self, _ndarray), record.plain(index), record.plain(value)
            )
        loc = _loc()
        index = _static_index(trace, index, loc)
        if getattr(trace, "path", None):  # inside converted arms: a traced integer index under the path
            from .branches import guarded_index

            index = guarded_index(index)
        ir_self = record.node_of(self)
        if ir_self is None or ir_self.op in _SLOW_OPS:
            ir_self = record.node_of_operand(trace, self, loc, "indexed assignment")
        ir_index = record.to_ir(trace, index, loc, "indexed assignment")
        ir_value = record.to_ir(trace, value, loc, "indexed assignment")
        _ndarray.__setitem__(_plain_view(self, _ndarray), record.plain(index), record.plain(value))
        node = trace.add(
            "ndarray.__setitem__", (ir_self, ir_index, ir_value), None, self.dtype, self.shape, loc
        )
        record.write(trace, self, node, loc)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        _size_read(self, "iterating over")
        return (self[i] for i in range(_shape_of(self)[0]))

    # --- sizes read into Python: data when they came from data (runtime/sizes.py) ----

    @property
    def shape(self):
        _size_read(self, ".shape of")
        return _shape_of(self)

    @shape.setter
    def shape(self, value):
        _ndarray.shape.__set__(self, value)  # type: ignore[attr-defined]  # numpy's stubs: a plain property

    @property
    def flat(self):  # ndarray's C iterator would hand out plain scalars (runtime/flat.py)
        if _trace_of.trace is None:
            return _ndarray.flat.__get__(self)
        from .flat import TracedFlat

        return TracedFlat(self)

    @flat.setter
    def flat(self, value):
        if _trace_of.trace is None:
            return _ndarray.flat.__set__(self, value)  # type: ignore[attr-defined]
        from .flat import TracedFlat

        TracedFlat(self)[...] = value

    @property
    def size(self):
        _size_read(self, ".size of")
        return _ndarray.size.__get__(self)

    def __len__(self):
        _size_read(self, "len() of")
        return _ndarray.__len__(self)

    # --- methods the table covers by name ------------------------------------

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        kwargs = {"order": order} if order != "C" else {}
        if copy is not None:
            kwargs["copy"] = copy
        return _RESHAPE(self, shape, **kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]  # type: ignore[assignment]  # x.transpose((1, 0)) or x.transpose(None)
        return _TRANSPOSE(self, axes or None)

    @property
    def T(self):
        return _T(self)

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return _MT(self, -1, -2)

    @property  # type: ignore[misc]  # read-only here (NumPy's .real is settable)
    def real(self):
        # NumPy's own .real of a real array is the array itself
        return _REAL(self) if np.iscomplexobj(self) else self

    @property  # type: ignore[misc]  # read-only here (NumPy's .imag is settable)
    def imag(self):
        return _IMAG(self)

    def conj(self):
        # for real dtypes NumPy returns the array itself (np.conj of bool would be int8)
        return _CONJ(self) if np.iscomplexobj(self) else self

    def conjugate(self):
        return self.conj()

    def flatten(self, order="C"):
        kwargs = {"order": order} if order != "C" else {}
        return record.record_call("ndarray.flatten", _ndarray.flatten, (self,), kwargs, _loc())

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return record.record_call("ndarray.astype", _ndarray.astype, (self, dtype), {"casting": casting}, _loc())

    def copy(self, order="C"):
        return record.record_call("ndarray.copy", _ndarray.copy, (self,), None, _loc())

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def view(self, *args, **kwargs):
        if (not args and not kwargs) or _same_view(self, args, kwargs):
            trace = state.current()
            out = _plain_view(self, TracedNpArray)
            if trace is not None:
                node = record.node_of(self)
                out._lp_node = node
                if node is not None:
                    record.make_view(out, self, "shape", tuple(self.shape), _loc())
            return out
        if state.current() is not None and (self._lp_node is not None or self._lp_parent is not None):
            # x.view(dtype) reinterprets the bytes: no graph op reproduces that across formats,
            # so it is the user's argument form to change (as the table entry says), not an untraced call
            target = kwargs.get("type", args[0] if args else None)
            if isinstance(target, type) and issubclass(target, np.ma.MaskedArray):
                # a library wrapped traced data in np.ma (pykalman: np.ma.asarray(observation)):
                # NumPy's masked arithmetic skips masked elements, which no graph does
                raise UnsupportedArgumentError(
                    f"{record.format_loc(_loc())}: a masked array (numpy.ma) computed on traced data "
                    "cannot be traced: the code wrapped the value in np.ma.asarray/np.ma.array (or "
                    "np.ma.atleast_2d) on the way, and a graph has no mask (NumPy skips masked elements). "
                    "Call the code's plain-array functions, or unwrap with np.ma.getdata(x) before the call.")
            kind = args[0] if args else kwargs.get("type", kwargs.get("dtype"))
            if isinstance(kind, type) and issubclass(kind, _ndarray):
                # scikit-spatial's Vector(v): np.asarray(v).view(Vector)
                raise UnsupportedArgumentError(
                    f"{record.format_loc(_loc())}: ndarray.view{_args_text(args, kwargs)} cannot be traced: "
                    f"it makes an ndarray subclass ({kind.__name__}), whose own methods and NumPy hooks "
                    "leapp does not trace (a graph is traced for plain arrays); compute with plain "
                    "arrays (np.asarray) instead of the subclass.")
            raise UnsupportedArgumentError(
                f"{record.format_loc(_loc())}: ndarray.view{_args_text(args, kwargs)} cannot be traced: "
                "reinterpreting an array's bytes (view with a dtype) has no graph equivalent; "
                "use x.astype(dtype) to convert values, or x.view() for a plain view.")
        return _plain_view(self, _ndarray).view(*args, **kwargs)

    def fill(self, value):
        trace = state.current()
        if trace is None:
            return _ndarray.fill(_plain_view(self, _ndarray), value)
        loc = _loc()
        ir_value = record.to_ir(trace, value, loc, "ndarray.fill")
        _ndarray.fill(_plain_view(self, _ndarray), record.plain(value))
        base = record.node_of(self) or trace.const(_plain_view(self, _ndarray), loc)
        node = trace.add("ndarray.fill", (base, ir_value), None, self.dtype, self.shape, loc)
        record.write(trace, self, node, loc)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        trace = state.current()
        if trace is None:
            return _ndarray.sort(_plain_view(self, _ndarray), axis=axis, kind=kind, order=order)
        loc = _loc()
        base = record.node_of_operand(trace, self, loc, "ndarray.sort")
        _ndarray.sort(_plain_view(self, _ndarray), axis=axis, kind="stable", order=order)
        node = trace.add(_SORT, (base, axis), None, self.dtype, self.shape, loc)
        record.write(trace, self, node, loc)

    # --- printing: formatting reads the values, which must not record or escape --

    def __repr__(self):
        text = repr(_plain_view(self, _ndarray))
        return "Traced" + text if text.startswith("array(") else text

    def __str__(self):
        return str(_plain_view(self, _ndarray))

    def __format__(self, spec):
        return format(_plain_view(self, _ndarray), spec)

    # --- values leaving the graph ------------------------------------------------

    def __bool__(self):
        advice = "the branch taken is fixed into the graph; keep both branches with np.where(cond, a, b)"
        if library_calls._local.active is not None:  # library code: converted and traced again
            advice = library_calls.branch(self, sys._getframe(1), advice)
        _escape(self, "bool() of a traced array (an if/while/assert test, `and`/`or`/`not`)", advice)
        if library_calls._local.user is not None and library_calls._local.active is None:
            # the function's own test (not a scalar argument's, which _escape traces as a constant):
            # converted and traced again
            library_calls.user_branch(self, sys._getframe(1))
        return bool(_plain_view(self, _ndarray))

    def __float__(self):
        if _ndarray.size.__get__(self) != 1:
            # NumPy raises TypeError: no value leaves. NumPy's scalar types call this first and
            # take the array on that error (`np.double(v)` of a (1, 3) array is `v`)
            return float(_plain_view(self, _ndarray))
        _escape(self, "float() of a traced array (also math.* functions)",
                "the value is frozen into the graph; use NumPy functions (np.sqrt, ...) and "
                "keep the 0-d array")
        try:
            return float(_plain_view(self, _ndarray))
        except TypeError as error:  # an array with ndim > 0 (NumPy 2.4: also of one element)
            raise EscapeError(not_a_number("float()", self, "NumPy functions on the array")) from error

    def __int__(self):
        if _ndarray.size.__get__(self) != 1:
            return int(_plain_view(self, _ndarray))  # NumPy raises TypeError: no value leaves
        _escape(self, "int() of a traced array", "the value is frozen into the graph; keep the "
                "0-d array, or .astype(np.int64) to convert; if it sets a size or slice bound, keep "
                "the shape fixed with np.where(mask, x, fill)")
        try:
            return int(_plain_view(self, _ndarray))
        except TypeError as error:  # an array with ndim > 0 (NumPy 2.4: also of one element)
            raise EscapeError(not_a_number("int()", self, "NumPy functions on the array")) from error

    def __complex__(self):
        if _ndarray.size.__get__(self) != 1:
            return complex(_plain_view(self, _ndarray))  # NumPy raises TypeError: no value leaves
        _escape(self, "complex() of a traced array", "keep the array")
        try:
            return complex(_plain_view(self, _ndarray))
        except TypeError as error:  # an array with ndim > 0 (NumPy 2.4: also of one element)
            raise EscapeError(not_a_number("complex()", self, "NumPy functions on the array")) from error

    def __round__(self, ndigits=None):
        # ndarray has no __round__ (round(array) is a TypeError); a NumPy scalar's is np.round with
        # ndigits, and a Python int without
        if not self._lp_scalar:
            raise TypeError(f"type {_ndarray.__module__}.ndarray doesn't define __round__ method")
        if ndigits is not None:
            return np.round(self, ndigits)
        _escape(self, "round(x) (a Python int)", "keep the array: np.round(x) or np.rint(x)")
        return round(_plain_view(self, _ndarray)[()])  # type: ignore[call-overload]  # [()] of 0-d: a NumPy scalar

    def __index__(self):
        _escape(self, "a traced value used as a Python integer (a size, slice bound or range)",
                "sizes must not depend on the data; use a fixed size with np.where(mask, x, fill)")
        return _plain_view(self, _ndarray).__index__()

    def item(self, *args):
        _escape(self, ".item()", "keep the 0-d array (x[()] or x.reshape(()))")
        return _ndarray.item(_plain_view(self, _ndarray), *args)

    def tolist(self):
        _escape(self, ".tolist()", "keep the array and use NumPy operations")
        return _ndarray.tolist(_plain_view(self, _ndarray))


def not_a_number(call, a, instead) -> str:
    """Why ``call`` (``float()``, ``math.cos``) of a traced array that NumPy will not convert to a
    number is refused (a TypeError in NumPy too): named at its line and the lines that called it."""
    from . import where

    loc = _loc()
    return (f"{call} at {where.chain(loc, where.library_line(loc))}{where.callers(loc)} was given a "
            f"traced array of shape {a.shape}: NumPy converts only a 0-d array to a number "
            f"(TypeError). Where NumPy would have passed a NumPy scalar here, the code on the way "
            f"told it from an array by its type: leapp holds NumPy scalars as 0-d arrays so that "
            f"they stay traced, and a test such as isinstance(x, Iterable), isinstance(x, float) "
            f"or np.isscalar(x) takes its array path for them (one that made this {a.shape} "
            f"array). Use {instead}, or call this code outside the traced region")


_SUPPORTED_UFUNCS: dict = {}


def _fast_ufunc(trace, ufunc, inputs, frame):
    """The common case (a supported ufunc on traced arrays and Python scalars), kept cheap.

    Returns None to fall back to the general path (``record.record_call``). This
    is the hottest code in tracing (one call per arithmetic op), so it is written
    flat: no helper calls on the way, operands unpacked by hand.
    """
    name = _SUPPORTED_UFUNCS.get(ufunc)
    if name is None:
        if ufunc in _SUPPORTED_UFUNCS:
            return None
        name = _supported(ufunc)
        if name is None:
            return None
    if len(inputs) == 2:
        a, b = inputs
        if type(a) is TracedNpArray:
            na = a._lp_node if a._lp_parent is None else record.node_of(a)
            if na is None or na.op in _SLOW_OPS:
                return None
            pa = a._lp_plain
            if pa is None:
                pa = _plain_view(a, _ndarray)
        elif type(a) is float or type(a) is int:
            na = pa = a
        else:
            return None
        if type(b) is TracedNpArray:
            nb = b._lp_node if b._lp_parent is None else record.node_of(b)
            if nb is None or nb.op in _SLOW_OPS:
                return None
            pb = b._lp_plain
            if pb is None:
                pb = _plain_view(b, _ndarray)
        elif type(b) is float or type(b) is int:
            nb = pb = b
        else:
            return None
        args = (na, nb)
        result = ufunc(pa, pb)
    else:
        ir_args = []
        plains = []
        for x in inputs:
            if type(x) is TracedNpArray:
                node = x._lp_node if x._lp_parent is None else record.node_of(x)
                if node is None or node.op in _SLOW_OPS:
                    return None
                ir_args.append(node)
                p = x._lp_plain
                plains.append(p if p is not None else _plain_view(x, _ndarray))
            elif type(x) is float or type(x) is int:
                ir_args.append(x)
                plains.append(x)
            else:
                return None
        args = tuple(ir_args)
        result = ufunc(*plains)
    site = _site_of.site
    if site is None:
        loc = frame_location(frame) or user_location()
    else:
        loc = _parse_site(site)
    scalar = type(result) is not _ndarray  # NumPy gave a scalar
    if scalar:
        result = np.asarray(result)
    nodes = trace.nodes  # Trace.add, inline
    node = new_node(name, args, None, result.dtype, result.shape, loc, len(nodes))
    nodes.append(node)
    out = _plain_view(result, TracedNpArray)
    out._lp_node = node
    out._lp_plain = result
    out._lp_scalar = scalar
    return out


def _supported(ufunc):
    """The table name of ``ufunc`` if the fast paths may record it (a table entry, one output), else
    None; remembered in ``_SUPPORTED_UFUNCS``."""
    name = ufunc_name(ufunc, "__call__")
    entry = table.lookup(name)
    fast = isinstance(entry, table.Entry) and ufunc.nout == 1
    _SUPPORTED_UFUNCS[ufunc] = name if fast else None
    return name if fast else None


# --- operators ------------------------------------------------------------------
# ``x + y`` on ndarrays runs ndarray.__add__, which calls np.add, which finds
# __array_ufunc__: two layers of NumPy's override machinery (about 0.25 us of a
# 1.8 us traced add). TracedNpArray's own operators take the common case (the
# other operand a traced array or a Python number) straight to the record the
# hook would make, and hand every other case to ndarray's operator unchanged.
# ``**`` is not among them: ndarray.__pow__ runs x**2, x**0.5, x**-1 as square,
# sqrt, reciprocal, and the record must be what NumPy ran (NumPy versions differ
# on whether np.power itself agrees with sqrt at -0.0 and -inf).

_BINARY_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift,
}
_COMPARISONS = {"lt": np.less, "le": np.less_equal, "eq": np.equal, "ne": np.not_equal,
                "gt": np.greater, "ge": np.greater_equal}


def _operator(ufunc, reflected, fallback):
    def operator(self, other):
        trace = _trace_of.trace
        if trace is None or self._lp_parent is not None:
            return fallback(self, other)
        name = _SUPPORTED_UFUNCS.get(ufunc, False)
        if name is False:
            name = _supported(ufunc)
        t = type(other)
        if name is None or not (t is TracedNpArray or t is float or t is int):
            return scalar_args.binary(ufunc, reflected, fallback, self, other)
        na = self._lp_node
        if na is None or na.op in _SLOW_OPS:
            return scalar_args.binary(ufunc, reflected, fallback, self, other)
        if t is TracedNpArray:
            if other._lp_parent is not None:
                return fallback(self, other)
            nb = other._lp_node
            if nb is None or nb.op in _SLOW_OPS:
                return fallback(self, other)
            pb = other._lp_plain
            if pb is None:
                pb = _plain_view(other, _ndarray)
        else:
            nb = pb = other
        pa = self._lp_plain
        if pa is None:
            pa = _plain_view(self, _ndarray)
        if reflected:
            result = ufunc(pb, pa)
            args = (nb, na)
        else:
            result = ufunc(pa, pb)
            args = (na, nb)
        site = _site_of.site  # from here on as in __array_ufunc__'s inline path
        if site is None:
            frame = sys._getframe(1)
            hit = _frame_locs.get((id(frame.f_code), frame.f_lasti))
            loc = hit[1] if hit is not None else frame_location(frame)
            if loc is None:
                loc = user_location()
        else:
            loc = _parse_site(site)
        scalar = type(result) is not _ndarray  # NumPy gave a scalar
        if scalar:
            result = np.asarray(result)
        nodes = trace.nodes
        node = _Node()
        node.op = name
        node.args = args
        node.kwargs = None
        node.dtype = result.dtype
        node.shape = result.shape
        node.loc = loc
        node.index = len(nodes)
        node.value = None
        nodes.append(node)
        out = _plain_view(result, TracedNpArray)
        out._lp_node = node
        out._lp_plain = result
        out._lp_scalar = scalar
        return out

    operator.__doc__ = fallback.__doc__
    return operator


def _in_place(short):
    """``s += o`` on a value NumPy holds as a scalar rebinds ``s`` to ``s + o`` (NumPy scalars are
    immutable); on the 0-d array that stands for it here it would write through every alias."""
    in_place = getattr(_ndarray, f"__i{short}__")
    binary = f"__{short}__"

    def operator(self, other):
        if self._lp_scalar:
            return getattr(self, binary)(other)
        return in_place(self, other)

    operator.__doc__ = in_place.__doc__
    return operator


def _power(self, other, mod=None):
    """``**``. ndarray's takes np.square for ``x ** 2`` (bool ** 2 is int8) and np.sqrt for
    ``x ** 0.5`` (sqrt(-0.0) is -0.0). Between NumPy scalars it is NumPy's scalar math: np.power's
    types (bool ** 2 is int64) and C's pow, without the sqrt (pow(-0.0, 0.5) is 0.0, of -inf
    inf). The 0-d array standing for a scalar does the latter (``_scalar_power``)."""
    if mod is None and scalar_args.weak_power(self, other):
        return scalar_args.binary(np.power, False, _ndarray.__pow__, self, other)
    if mod is None and self._lp_scalar and _scalar_operand(other):
        return _scalar_power(self, other, reflected=False)
    return _ndarray.__pow__(self, other) if mod is None else _ndarray.__pow__(self, other, mod)


def _rpower(self, other, mod=None):
    if mod is None and scalar_args.weak_power(self, other):
        return scalar_args.binary(np.power, True, _ndarray.__rpow__, self, other)
    if mod is None and self._lp_scalar and _scalar_operand(other):
        return _scalar_power(self, other, reflected=True)
    return _ndarray.__rpow__(self, other) if mod is None else _ndarray.__rpow__(self, other, mod)


def _scalar_operand(x):
    if type(x) is TracedNpArray:
        return x._lp_scalar
    return type(x) in (int, float, bool, complex) or isinstance(x, np.generic)


def _scalar_power(self, other, reflected):
    """``self ** other`` (or ``other ** self``) as NumPy's scalar math, recorded as np.power.

    A Python number becomes a 0-d constant of the dtype NEP 50 gives it next to ``self``, so the
    graph raises a tensor to a tensor (torch's C pow: torch.pow(x, 0.5) of a Python 0.5 is sqrt)."""
    if type(other) is not TracedNpArray:
        other = np.asarray(other, dtype=np.result_type(self.dtype, other))
    args = (other, self) if reflected else (self, other)
    # recorded with scalar_math=True: the numpy.power adapter lowers it as C's pow, where the
    # ufunc (np.power(a, b), even of two NumPy scalars) takes sqrt for an exponent of 0.5
    return record.record_call("numpy.power", _c_pow, args, {"scalar_math": True}, _loc())


def _c_pow(a, b, scalar_math=True):
    return a[()] ** b[()]  # two NumPy scalars: NumPy's scalar math


def _install_operators():
    for short in (*_BINARY_OPERATORS, "pow", "matmul"):
        op = _in_place(short)
        op.__name__ = op.__qualname__ = f"__i{short}__"
        setattr(TracedNpArray, op.__name__, op)
    TracedNpArray.__pow__, TracedNpArray.__rpow__ = _power, _rpower  # type: ignore[method-assign]  # as the operators above
    _power.__name__ = _power.__qualname__ = "__pow__"
    _rpower.__name__ = _rpower.__qualname__ = "__rpow__"
    for short, ufunc in _BINARY_OPERATORS.items():
        for dunder, reflected in ((f"__{short}__", False), (f"__r{short}__", True)):
            op = _operator(ufunc, reflected, getattr(_ndarray, dunder))
            op.__name__ = op.__qualname__ = dunder
            setattr(TracedNpArray, dunder, op)
    for short, ufunc in _COMPARISONS.items():
        dunder = f"__{short}__"
        op = _operator(ufunc, False, getattr(_ndarray, dunder))
        op.__name__ = op.__qualname__ = dunder
        setattr(TracedNpArray, dunder, op)
    TracedNpArray.__hash__ = None  # as ndarray's (defining __eq__ would otherwise leave it unset)


def _frame_loc(frame):
    site = _site_of.site
    if site is not None:
        return _parse_site(site)
    return frame_location(frame) or user_location()


def _is_static_basic(index) -> bool:
    """Ints, slices with int bounds, None and Ellipsis: a view, with nothing traced inside."""
    for i in (index if type(index) is tuple else (index,)):
        t = type(i)
        if t is int or i is None or i is Ellipsis:
            continue
        if t is slice and type(i.start) in _BOUNDS and type(i.stop) in _BOUNDS and type(i.step) in _BOUNDS:
            continue
        return False
    return True


_BOUNDS = frozenset((int, type(None)))


def _fast_getitem(trace, arr, index, frame):
    node = arr._lp_node if arr._lp_parent is None else record.node_of(arr)
    if node is None or node.op in _SLOW_OPS:
        return None
    p = arr._lp_plain
    result = _ndarray.__getitem__(p if p is not None else _plain_view(arr, _ndarray), index)
    if type(result) is not _ndarray:
        result = np.asarray(result)
        is_view = False
    else:
        is_view = True
    loc = _frame_loc(frame)
    out = _plain_view(result, TracedNpArray)
    out._lp_node = trace.add("ndarray.__getitem__", (node, index), None, result.dtype, result.shape, loc)
    out._lp_plain = result
    out._lp_scalar = not is_view  # NumPy gave a scalar
    if is_view:
        record.make_view(out, arr, "index", index, loc)
    return out


def _converted_in_c(arr, source, frame):
    """``np.float32(x)`` in code leapp did not rewrite (the seed API): NumPy's scalar types convert
    in C with no dispatch hook, but a dtype-changing conversion makes its result through
    ``__array_finalize__``. An array result is recorded as the cast; a 0-d one becomes a NumPy
    scalar after this returns, so it is reported as an escape at the user's line.

    A conversion that keeps the dtype calls no hook at all: ``np.float32(x)`` of a float32 array
    returns ``x`` itself (exact), of a 0-d float32 value a NumPy scalar that validation catches.
    """
    trace = state.current()
    if trace is None or arr.dtype == source.dtype or arr.shape != source.shape:
        return
    code = frame.f_code
    if _is_internal(code):
        return
    name = "numpy." + arr.dtype.type.__name__
    entry = table.lookup(name)
    if not (isinstance(entry, table.Entry) and entry.kind == "scalar_type"):
        return
    loc = _frame_loc(frame)
    node = record.node_of_operand(trace, source, loc, name)
    if arr.ndim:
        arr._lp_node = trace.add(name, (node,), None, arr.dtype, arr.shape, loc)
        return
    short = "np." + arr.dtype.type.__name__
    scalar_args.check_read(trace, source, f"{short}()", loc)  # of a scalar argument: specialised
    message = (f"{short}(...) of a traced value at {record.format_loc(loc)}: NumPy returns a NumPy "
               f"scalar, which leaves the graph (its value is frozen into the graph); write "
               f"x.astype({short}) to keep it traced (leapp.compile traces {short}(x) itself).")
    record.report(trace, "escape", short + "()", loc, message, EscapeError, EscapeWarning)


_shape_of = _ndarray.shape.__get__


def _size_read(arr, how):
    """Python reads a size: refused when the data decided it (a mask, np.nonzero, np.where(c))."""
    node = arr._lp_node
    if node is None or not node.shape or node.op in _SLOW_OPS:
        return
    trace = _trace_of.trace
    if trace is None or not _data_sized(trace, node) or _is_internal(sys._getframe(2).f_code):
        return
    _escape(arr, f"{how} an array whose size comes from the data (a boolean mask, np.nonzero, "
                 f"np.where(cond)) read into Python", "the number is frozen into the graph and wrong "
            "for other inputs; keep the shape fixed with np.where(mask, x, fill) and reduce with "
            "masks (np.sum(mask) stays in the graph as a 0-d array)")


def _escape(arr, construct, advice):
    trace = state.current()
    if trace is None or arr._lp_parent is None and arr._lp_node is None \
            or not constness.value_depends_on_inputs(trace, arr):
        return  # untraced, or computed from constants only: its value is the same on every call
    loc = _loc()
    scalar_args.check_read(trace, arr, construct, loc)  # a scalar argument's value: specialised
    where = record.format_loc(loc)
    message = f"{construct} at {where}: the value leaves the graph; {advice}."
    record.report(trace, "escape", construct, loc, message, EscapeError, EscapeWarning)


def _same_view(arr, args, kwargs) -> bool:
    """``x.view(np.ndarray)`` or ``x.view(x.dtype)``: a plain view, nothing reinterpreted."""
    given = list(args) + [kwargs[k] for k in ("dtype", "type") if k in kwargs]
    if len(given) != 1 or len(args) + len(kwargs) != 1:
        return False
    (what,) = given
    if isinstance(what, type) and issubclass(what, np.ndarray):
        return what is np.ndarray or what is TracedNpArray
    try:
        return np.dtype(what) == arr.dtype
    except TypeError:
        return False


def _args_text(args, kwargs) -> str:
    parts = [getattr(a, "__name__", None) or repr(a) for a in args]
    parts += [f"{k}={getattr(v, '__name__', None) or repr(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _untraced_method(arr, name, eager):
    trace = state.current()
    result = eager(_plain_view(arr, _ndarray))
    if trace is None or (arr._lp_node is None and arr._lp_parent is None):
        return result
    return record.untraced(trace, "ndarray." + name, _loc(), result, table.lookup("ndarray." + name))


def _is_basic(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    for i in items:
        if not (i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer))) or isinstance(i, bool):
            return False
    return True


def _static_index(trace, index, loc):
    """Slice bounds must be Python ints; a traced bound is a data-dependent size."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(i, slice) for i in items):
        return index
    fixed = []
    for i in items:
        if isinstance(i, slice):
            i = slice(*(_bound(trace, b, loc) for b in (i.start, i.stop, i.step)))
        fixed.append(i)
    return tuple(fixed) if isinstance(index, tuple) else fixed[0]


def _bound(trace, b, loc):
    if isinstance(b, TracedNpArray):
        return b.__index__()
    return b


# --- every other public ndarray method: run as NumPy, report as untraced -----

_IN_PLACE = {"partition", "put", "itemset", "setfield", "byteswap", "resize"}


def _install_fallbacks():
    for entry in table.TABLE.values():
        if isinstance(entry, table.Entry) and entry.kind == "method" and entry.same_as:
            method = entry.name.split(".", 1)[1]
            if method not in TracedNpArray.__dict__:
                setattr(TracedNpArray, method, _delegating(method, entry.recorded_op))
    for method in dir(np.ndarray):
        if method.startswith("_") or method in TracedNpArray.__dict__:
            continue
        attr = getattr(np.ndarray, method)
        if callable(attr):
            setattr(TracedNpArray, method, _fallback(method))


# Reductions whose bare call (``x.sum()``) records exactly what ``np.sum(x)`` records:
# the common case skips NumPy's Python wrapper and the general recording path.
_BARE_REDUCTIONS = {"sum", "prod", "mean", "max", "min", "any", "all", "std", "var"}


# ndarray.all/any take dtype= (NumPy has a loop for bool only); np.all/np.any have no such keyword
_BOOL_DTYPE_ONLY = {"all", "any"}


def _without_bool_dtype(method, kwargs):
    dtype = kwargs["dtype"]
    if dtype is not None and np.dtype(dtype) != np.bool_:
        raise UnsupportedArgumentError(
            f"{record.format_loc(_loc())}: ndarray.{method}(dtype={dtype!r}): NumPy has no {method} loop for "
            "that dtype (only bool); drop dtype= or cast the result with .astype(...)")
    return {k: v for k, v in kwargs.items() if k != "dtype"}


def _delegating(method, same_as):
    func = np
    for part in same_as.split(".")[1:]:
        func = getattr(func, part)
    if method in _BOOL_DTYPE_ONLY:
        inner = _delegating_call(method, same_as, func)

        def delegate_bool(self, *args, **kwargs):
            if "dtype" in kwargs:
                kwargs = _without_bool_dtype(method, kwargs)
            return inner(self, *args, **kwargs)

        delegate_bool.__name__ = method
        delegate_bool.__doc__ = inner.__doc__
        return delegate_bool
    return _delegating_call(method, same_as, func)


def _delegating_call(method, same_as, func):
    if method in _BARE_REDUCTIONS and same_as == "numpy." + method and not argcheck.special(same_as):
        return _bare_reduction(method, same_as, func)

    def delegate(self, *args, **kwargs):
        return func(self, *args, **kwargs)

    delegate.__name__ = method
    delegate.__doc__ = f"Traced ndarray.{method}: recorded as {same_as}."
    return delegate


def _bare_reduction(method, name, func):
    unbound = getattr(np.ndarray, method)

    def delegate(self, *args, **kwargs):
        trace = _trace_of.trace
        if trace is None or args or kwargs or self._lp_parent is not None:
            return func(self, *args, **kwargs)
        node = self._lp_node
        if node is None or node.op in _SLOW_OPS:
            return func(self, *args, **kwargs)
        p = self._lp_plain
        result = unbound(p if p is not None else _plain_view(self, _ndarray))
        scalar = type(result) is not _ndarray  # NumPy gave a scalar
        if scalar:
            result = np.asarray(result)
        loc = _frame_loc(sys._getframe(1))
        nodes = trace.nodes
        node = new_node(name, (node,), None, result.dtype, result.shape, loc, len(nodes))
        nodes.append(node)
        out = _plain_view(result, TracedNpArray)
        out._lp_node = node
        out._lp_plain = result
        out._lp_scalar = scalar
        return out

    return delegate


def _fallback(method):
    unbound = getattr(np.ndarray, method)

    def fallback(self, *args, **kwargs):
        trace = state.current()
        result = unbound(_plain_view(self, _ndarray), *[record.plain(a) for a in args],
                         **record.plain_kwargs(kwargs))
        if trace is None or (self._lp_node is None and self._lp_parent is None):
            return result
        if isinstance(result, (np.ndarray, np.generic)) or method in _IN_PLACE:
            loc = _loc()
            out = record.untraced(trace, "ndarray." + method, loc, result, table.lookup("ndarray." + method))
            if method in _IN_PLACE:
                node = trace.add("escaped", ("ndarray." + method,), None, self.dtype, self.shape, loc)
                record.write(trace, self, node, loc)
            return out
        return result

    fallback.__name__ = method
    return fallback


_install_fallbacks()
_install_operators()
scalar_args.install(TracedNpArray)
record.set_array_class(TracedNpArray)
