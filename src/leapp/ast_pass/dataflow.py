"""What the pass can prove about a value in traced code, by forward dataflow.

Precision over recall: a name is an *array* only when every path to the use
made it one (a NumPy call, a traced input, arithmetic on those); branches
meet by intersection, and anything unknown is left to the runtime.
"""

from __future__ import annotations

import ast
import builtins
from functools import lru_cache
from typing import TYPE_CHECKING

from leapp import table

if TYPE_CHECKING:
    from .resolve import Scope

# Table entries whose result is not an array (they return lists or tuples of arrays).
NON_ARRAY_RESULTS = frozenset({"numpy.split", "numpy.array_split", "numpy.nonzero"})
NON_ARRAY_METHODS = frozenset({"nonzero", "fill", "sort", "item", "tolist", "tobytes"})
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
# Results whose length follows the data (fine inside the graph; see LP303 for escapes).
DATA_DEPENDENT = frozenset({"numpy.unique", "numpy.nonzero", "numpy.flatnonzero",
                            "numpy.argwhere", "numpy.extract", "numpy.compress"})
_RANDOM_NON_ARRAYS = frozenset({"seed", "default_rng", "get_state", "set_state"})
_BOOL_NUMERIC = ("bitwise", "invert", "left_shift", "right_shift", "maximum", "minimum",
                 "fmax", "fmin")


_BUILTINS = frozenset(dir(builtins))


@lru_cache(maxsize=4096)
def lookup(name: str):
    return table.lookup(name)


@lru_cache(maxsize=4096)
def returns_array(qualname: str) -> bool:
    if qualname.startswith("numpy.random."):
        last = qualname.rsplit(".", 1)[1]
        return last[:1].islower() and last not in _RANDOM_NON_ARRAYS
    entry = lookup(qualname)
    if not isinstance(entry, table.Entry) or entry.kind == "static":
        return False
    return table.canonical(qualname) not in NON_ARRAY_RESULTS


@lru_cache(maxsize=4096)
def returns_mask(qualname: str) -> bool:
    entry = lookup(qualname)
    if not isinstance(entry, table.Entry) or entry.category != "Comparison and logic":
        return False
    short = entry.name.rsplit(".", 1)[1]
    return not short.startswith(_BOOL_NUMERIC)


class State:
    """Names known to hold arrays, boolean masks, data-sized arrays, Python
    numbers computed from array data (``tainted``), or the caller's own
    arguments (``arguments``: parameters not rebound yet, so writing into them
    changes the caller's objects)."""

    __slots__ = ("arrays", "masks", "dds", "tainted", "arguments", "foreign", "consts")

    def __init__(self, arrays=(), masks=(), dds=(), tainted=(), arguments=(), foreign=(), consts=()):
        self.arrays, self.masks = set(arrays), set(masks)
        self.dds, self.tainted = set(dds), set(tainted)
        self.arguments = set(arguments)
        self.foreign = set(foreign)  # objects made by other code from array data (see is_foreign)
        self.consts = set(consts)  # arrays computed from literals only (see is_fixed)

    def copy(self) -> State:
        return State(self.arrays, self.masks, self.dds, self.tainted, self.arguments, self.foreign,
                     self.consts)

    def meet(self, other: State) -> None:
        self.arrays &= other.arrays
        self.masks &= other.masks
        self.dds &= other.dds
        self.tainted &= other.tainted
        self.arguments &= other.arguments
        self.consts &= other.consts
        self.foreign |= other.foreign  # routing one call too many is harmless; one too few is not

    def kill(self, name: str) -> None:
        self.arrays.discard(name)
        self.masks.discard(name)
        self.dds.discard(name)
        self.tainted.discard(name)
        self.arguments.discard(name)
        self.foreign.discard(name)
        self.consts.discard(name)


class Facts:
    """Expression predicates over the current scope and state (mixed into the walker)."""

    scope: Scope  # set by the walker
    state: State

    def call_name(self, call: ast.Call) -> str | None:
        return self.scope.qualname(call.func)

    def builtin(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Name) and self.scope.is_builtin(func.id):
            return func.id
        return None

    def is_array(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.state.arrays
        if isinstance(e, ast.Call):
            q = self.call_name(e)
            if q is not None:
                if _is_input_annotation(q):
                    return True
                if not q.startswith("numpy."):
                    return False
                if table.canonical(q) == "numpy.where" and len(e.args) == 1:
                    return False
                return returns_array(q)
            f = e.func
            if isinstance(f, ast.Attribute) and f.attr not in NON_ARRAY_METHODS and self.is_array(f.value):
                return isinstance(lookup("ndarray." + f.attr), table.Entry)
            if self.builtin(f) in ("abs", "pow") and any(self.is_array(a) for a in e.args):
                return True  # abs(a), pow(a, 2) of an array: np.absolute, np.power
            return self._helper_returns_array(e)
        if isinstance(e, ast.Attribute):
            return e.attr in ARRAY_ATTRIBUTES and self.is_array(e.value)
        if isinstance(e, ast.Subscript):
            # cfg["scale"]: a string key means a mapping (a config, an observation dict), whose
            # values the static pass cannot type; the runtime still sees them if they are arrays
            if isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str):
                return False
            # indexed by an array, anything is one: a module table looked up by a traced index
            # (``TABLE[idx]``, routed by the walker) is a traced array, whose helper calls are routed
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            return self.is_array(e.value) or any(not isinstance(p, ast.Slice) and self.is_array(p) for p in parts)
        if isinstance(e, ast.BinOp):
            return self.is_array(e.left) or self.is_array(e.right)
        if isinstance(e, ast.UnaryOp):
            return not isinstance(e.op, ast.Not) and self.is_array(e.operand)
        if isinstance(e, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
                return False
            return self.is_array(e.left) or any(self.is_array(c) for c in e.comparators)
        if isinstance(e, ast.IfExp):
            return self.is_array(e.body) and self.is_array(e.orelse)
        if isinstance(e, ast.NamedExpr):
            return self.is_array(e.value)
        return False

    def _helper_returns_array(self, call: ast.Call) -> bool:
        """A function of the user's file (or library code) given array data, whose every
        ``return`` is an array (``convert.helpers.returns_array``)."""
        if getattr(self, "helpers", None) is None or isinstance(call.func, ast.Attribute):
            return False
        operands = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
        operands += [k.value for k in call.keywords]
        if not any(self.is_array(a) for a in operands):
            return False
        from .convert import helpers

        return helpers.returns_array(call, self)

    def is_mask(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.state.masks
        if isinstance(e, ast.Compare):
            return self.is_array(e)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return (self.is_mask(e.left) and self.is_array(e.right)) or (
                self.is_mask(e.right) and self.is_array(e.left))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
            return self.is_mask(e.operand)
        if isinstance(e, ast.Call):
            q = self.call_name(e)
            return q is not None and q.startswith("numpy.") and returns_mask(q) and any(
                self.is_array(a) for a in e.args)
        return False

    def is_dds(self, e: ast.expr) -> bool:
        """An array whose length follows the data (``np.unique(x)``, ``x[mask]``)."""
        if isinstance(e, ast.Name):
            return e.id in self.state.dds
        if isinstance(e, ast.Call):
            q = self.call_name(e)
            if q is not None:
                q = table.canonical(q)
                return q in DATA_DEPENDENT or (q == "numpy.where" and len(e.args) == 1)
            f = e.func
            return isinstance(f, ast.Attribute) and f.attr == "nonzero" and self.is_array(f.value)
        if isinstance(e, ast.Subscript):
            return self.is_dds(e.value) or (self.is_array(e.value) and (
                self.is_mask(e.slice) or self.is_dds(e.slice)))
        if isinstance(e, ast.BinOp):
            return self.is_dds(e.left) or self.is_dds(e.right)
        if isinstance(e, ast.UnaryOp):
            return self.is_dds(e.operand)
        return False

    def is_escape(self, e: ast.expr) -> bool:
        """A Python number computed from array data, right here."""
        if type(e) is ast.Call:
            name = self.builtin(e.func)
            if name in ("int", "float", "bool", "round") and e.args:
                return self.is_array(e.args[0]) and not self.is_static_call(e.args[0]) \
                    and not self.is_fixed(e.args[0])
            if name == "len" and e.args:
                return self.is_dds(e.args[0])
            f = e.func
            return isinstance(f, ast.Attribute) and f.attr == "item" and self.is_array(f.value)
        if type(e) is ast.Attribute:
            return e.attr == "size" and self.is_dds(e.value)
        if type(e) is ast.Subscript:
            v = e.value
            return isinstance(v, ast.Attribute) and v.attr == "shape" and self.is_dds(v.value)
        return False

    def _returns_arrays(self, call: ast.Call) -> bool:
        """A NumPy call on array data whose result unpacks into arrays (a tuple or list of them)."""
        q = self.call_name(call)
        if q is None or not q.startswith("numpy.") or q.startswith("numpy.random."):
            return False
        entry = lookup(q)
        if not isinstance(entry, table.Entry) or entry.kind == "static":
            return False
        return any(self.is_array(a) for a in call.args)

    def is_static_call(self, e: ast.expr) -> bool:
        """A NumPy call on shapes and constants only (``np.prod(x.shape)``): its value is fixed."""
        if type(e) is not ast.Call:
            return False
        q = self.call_name(e)
        if q is None or not q.startswith("numpy."):
            return False
        operands = [a.value if isinstance(a, ast.Starred) else a for a in e.args]
        operands += [k.value for k in e.keywords]
        return not any(self.is_array(a) or isinstance(a, ast.Name) and a.id in self.state.tainted
                       for a in operands)

    def is_fixed(self, e: ast.expr) -> bool:
        """A value computed from literals only (``np.ones(3).sum()``): the same on every call.

        Names count only when bound to such a value in this scope (``consts``); a parameter, a
        global or anything unknown does not.
        """
        if isinstance(e, ast.Constant):
            return True
        if isinstance(e, ast.Name):
            return e.id in self.state.consts
        if isinstance(e, (ast.Tuple, ast.List)):
            return all(self.is_fixed(v) for v in e.elts)
        if isinstance(e, ast.UnaryOp):
            return self.is_fixed(e.operand)
        if isinstance(e, ast.BinOp):
            return self.is_fixed(e.left) and self.is_fixed(e.right)
        if isinstance(e, ast.Attribute):  # np.float32, a dtype: a constant name
            return e.attr not in ARRAY_ATTRIBUTES and (q := self.scope.qualname(e)) is not None \
                and q.startswith("numpy.") or (
                    e.attr in ARRAY_ATTRIBUTES and self.is_fixed(e.value))
        if isinstance(e, ast.Subscript):
            return self.is_fixed(e.value) and self.is_fixed(e.slice)
        if not isinstance(e, ast.Call) or any(isinstance(a, ast.Starred) for a in e.args):
            return False
        operands = [*e.args, *(k.value for k in e.keywords)]
        if not all(self.is_fixed(a) for a in operands):
            return False
        q = self.call_name(e)
        if q is not None:
            return q.startswith("numpy.") and not q.startswith("numpy.random.") and returns_array(q)
        f = e.func
        return isinstance(f, ast.Attribute) and f.attr in NDARRAY_METHODS and self.is_fixed(f.value)

    def is_foreign(self, e: ast.expr) -> bool:
        """A value other code (a helper, another library) computed from array data."""
        if isinstance(e, ast.Name):
            return e.id in self.state.foreign
        if isinstance(e, ast.Call):
            return self.foreign_call(e)
        if isinstance(e, ast.Subscript):
            # obs["observation.state"] of a dict input: is_array leaves a mapping's values untyped,
            # and the runtime traces them all the same
            # and a table indexed with such a value or an array (TABLE[i], TABLE[np.argmax(s)]) is
            # traced data too
            return self.is_foreign(e.value) or self.is_array(e.value) or self.is_foreign(e.slice) \
                or self.is_array(e.slice)
        if isinstance(e, (ast.Attribute, ast.NamedExpr, ast.Starred)):
            return self.is_foreign(e.value)
        # arithmetic on it, or a container holding it, is still what the other code computed
        # (``f(z * 1.0)`` after ``z = helper(x)``: the call is given array data all the same)
        if isinstance(e, ast.BinOp):
            return self.is_foreign(e.left) or self.is_foreign(e.right)
        if isinstance(e, ast.UnaryOp):
            return self.is_foreign(e.operand)
        if isinstance(e, ast.IfExp):
            return self.is_foreign(e.body) or self.is_foreign(e.orelse)
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return any(self.is_foreign(v) for v in e.elts)
        if isinstance(e, ast.Dict):
            return any(v is not None and self.is_foreign(v) for v in e.values)
        return False

    def foreign_call(self, call: ast.Call) -> bool:
        """A call into code leapp does not rewrite, given array data (``Rotation.from_quat(q)``).

        Not NumPy, leapp or torch, not a Python builtin, not a method of an array.
        Its result must come back traced: a plain array is a value computed from
        the inputs that the graph would freeze.
        """
        q = self.call_name(call)
        if q is not None and q.split(".")[0] in ("numpy", "leapp", "torch"):
            return False
        f = call.func
        if isinstance(f, ast.Name) and f.id in _BUILTINS and self.scope.is_builtin(f.id):
            return False
        if isinstance(f, ast.Attribute) and f.attr in NDARRAY_METHODS and self.is_array(f.value):
            return False  # an array's own method (a parameter with any other method is an object)
        operands = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
        operands += [k.value for k in call.keywords]
        if any(self.is_array(a) or self.is_foreign(a) for a in operands):
            return True
        return isinstance(f, ast.Attribute) and self.is_foreign(f.value)

    def is_tainted(self, e: ast.expr) -> bool:
        if type(e) is ast.Name:
            return e.id in self.state.tainted
        if type(e) is ast.BinOp:
            return self.is_tainted(e.left) or self.is_tainted(e.right)
        if type(e) is ast.UnaryOp:
            return self.is_tainted(e.operand)
        return self.is_escape(e)

    def bind(self, target: ast.expr, value: ast.expr | None) -> None:
        """Update the state for ``target = value`` (value None: unknown)."""
        if isinstance(target, ast.Name):
            st, name = self.state, target.id
            facts = (value is not None and self.is_array(value), value is not None and self.is_mask(value),
                     value is not None and self.is_dds(value), value is not None and self.is_tainted(value),
                     value is not None and self.is_foreign(value))
            fixed = value is not None and self.is_fixed(value)
            st.kill(name)
            if fixed:
                st.consts.add(name)
            for flag, names in zip(facts, (st.arrays, st.masks, st.dds, st.tainted, st.foreign), strict=True):
                if flag:
                    names.add(name)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if values is not None and len(values) != len(target.elts):
                values = None
            if values is None and isinstance(value, ast.Call) and _is_input_annotation(self.call_name(value)):
                # ``a, b = annotate.input_tensors("node", {...})``: every name is a traced input
                values = [value] * len(target.elts)
            if values is None and (isinstance(value, ast.Call) and self._returns_arrays(value)
                                   or isinstance(value, ast.Name) and value.id in self.state.arrays):
                # ``w, x, y, z = q`` of an array: its rows (elements), arrays too
                # ``w, v = np.linalg.eigh(m)``, ``a, b = np.split(x, 2)``: every name is an array
                for t in target.elts:
                    if isinstance(t, ast.Name):
                        self.state.kill(t.id)
                        self.state.arrays.add(t.id)
                    else:
                        self.bind(t.value if isinstance(t, ast.Starred) else t, None)
                return
            for i, t in enumerate(target.elts):
                self.bind(t.value if isinstance(t, ast.Starred) else t,
                          values[i] if values and not isinstance(t, ast.Starred) else None)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, None)

def _is_input_annotation(qualname) -> bool:
    return bool(qualname) and qualname.startswith("leapp") and qualname.endswith("annotate.input_tensors")


# ndarray's methods (NumPy 2.x), so that ``cfg.get(...)`` on a parameter is not
# mistaken for an array method the table lacks.
NDARRAY_METHODS = frozenset("""
all any argmax argmin argpartition argsort astype byteswap choose clip compress conj conjugate
copy cumprod cumsum diagonal dot dump dumps fill flatten getfield item max mean min nonzero
partition prod put ravel repeat reshape resize round searchsorted setfield setflags sort squeeze
std sum swapaxes take to_device tobytes tofile tolist trace transpose var view
""".split())
