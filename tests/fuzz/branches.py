"""Programs that branch on data, as source, through ``@leapp.compile`` and against NumPy.

``generate(seed)`` writes a module with one decorated function of two float
arrays ``x`` and ``y``: assignments, ``if``/``elif``/``else`` on a reduction
or an element compared with a constant (nested, with ``and``/``or``/``not`` and
comparison chains), early returns (plain, `if`/`elif` chains of returns with a
fall-through, `if`/`else` with one returning arm, an early return inside an arm of an
`if` on data or of one on a shape, which Python decides, an `if`/`elif` chain whose returning
arms follow one that does not, one inside a ``for`` loop over a ``range`` or a ``with
np.errstate(...)`` block, one two converted `if`s deep),
conditional expressions, bounded ``while``
loops (``# leapp: max-iterations=N`` or ``leapp.bounded``, with a counter in
the test so that NumPy's loop ends within the bound), writes and in-place updates
in a branch into an array the function made before it (converted on a private
copy), arms that bind a name to another's array (`w = t0`, `w = t0[1:]`, in an `if` or a
conditional expression), in-place updates after an `if` of an array the function made, a loop body
whose inner `if` alone assigns a name, `elif` chains and conditional expressions in loop bodies,
module-level helpers with their own `if`s, called at the top, in arms and in loops, ``np.linalg.solve``
in an arm or a loop's body (guarded: converted), and now and then a
branch leapp must refuse (an in-place update of a view the branch made, a write into one, a
``raise``, a ``print``, a dtype that differs between the
branches, an update in place of an array an arm aliased or of the alias after it, a ``while`` on data without a bound, an early return in a ``for`` loop over an array). ``check(seed)`` imports it twice (decorated, and with the decorator
removed as the NumPy reference), traces on one sample and runs the *same*
graph on inputs scaled and shifted so that the tests fall on both sides, and
returns an ``Outcome``:

- ``exact``: values and dtypes equal NumPy's on every input;
- ``refused``: leapp refused a construct the generator planted, naming the
  site's line and the property that failed (``property`` says which);
- ``boundary``: values differ on an input where a test NumPy evaluated lay within the
  value tolerance of its boundary (``_on_boundary``): torch's and NumPy's ``tanh``, ``exp``...
  round within an ulp but not alike (docs/limitations.md), so such a test has no single right
  side at this precision and the branch may go the other way. Counted apart, never as exact;
- ``mismatch``: a value or dtype differs, or a planted construct went through;
- ``numpy_raises``: NumPy raises on every input (a planted ``raise`` on a path all of them
  take), and the compiled function raised the same error on the example, as NumPy does;
- ``internal``: ``InternalError``, or any other exception from leapp;
- ``false_refusal``: leapp refused a program with nothing planted.

``branches`` counts, per program, the tests that took both sides on the inputs
(the rest were never exercised both ways). ``tests/fuzz/test_branches.py``
runs a slice in CI; ``benchmarks/branches.py`` runs any number.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
import tempfile
import warnings
from dataclasses import dataclass, field

import numpy as np

# planted construct -> (the statement, words the refusal must hold)
PLANTED = {
    # a view of an array the other branch may hold (the branch's own copies may be written)
    "inplace": ("{v} = {v}.reshape(-1); {v} *= -1", "in place"),
    "write": ("{v} = {v}.reshape(-1); {v}[0] = 0", "writes into"),
    "raise": ("raise ValueError('bad input')", "raises"),
    "print": ("print('branch')", "side effect"),
    # placed at random like the others, but guarded wherever it lands (table.guards): never refused
    "solve": ("{v} = np.linalg.solve(np.eye({n}, dtype={v}.dtype) + np.outer({v}, {v}), {v})", "raises on some inputs"),
    "dtype": ("{v} = {v}.astype(np.float16)", "dtypes"),
    "unbounded": ("", "no static bound"),  # a `while` on data without `# leapp: max-iterations=N`
    "forarray": ("", "not a `range` of static bounds"),  # an early return in `for v in x:`
    # an arm (or a conditional expression) binds `w` to another name's array (`w = t0`, `w = t0[1:]`)
    # and that array, or `w`, is updated in place after it: NumPy's `w` sees the update, a select's not
    "alias": ("", "updated in place after"),
}
# planted by their own form, never at random in an arm
_PLACED = ("unbounded", "forarray", "alias")


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    property: str = ""
    tests: int = 0
    both_ways: int = 0
    source: str = ""
    seed_api: str = ""  # with check(seed_api=True): what the seed API made of the program (_seed_api)


@dataclass
class _Gen:
    rng: random.Random
    n: int
    names: list = field(default_factory=lambda: ["x", "y"])
    lines: list = field(default_factory=list)
    planted: str = ""
    loops: int = 0  # inside a `while` body: a write into an array made before it is refused there
    params: tuple = ("x", "y")
    # arrays an arm bound another name to (`w = t0`): an update of them in place anywhere after is
    # refused (leapp does not follow whether `w` is still read), so only a planted one updates them
    held: set = field(default_factory=set)
    helpers: list = field(default_factory=list)  # (name, source) of module-level helpers, in order
    tag: str = ""  # a helper's generator names its temporaries apart from the function's

    def own(self) -> list:
        """Arrays the function made (not its parameters) that nothing else holds."""
        return [v for v in self.names if v not in self.params and v not in self.held]

    def fresh(self, stem) -> str:
        return f"{stem}{self.tag}{len(self.lines)}"

    def arr(self) -> str:
        r = self.rng
        a, b = r.choice(self.names), r.choice(self.names)
        return r.choice([f"{a} * 2", f"{a} + {b}", f"-{a}", f"{a} - {b} * 0.5", f"np.abs({a})",
                         f"np.tanh({a})", f"{a} / (np.abs({b}) + 1)", f"np.minimum({a}, {b})",
                         f"np.clip({a}, -1, 1)", f"{a} * {b}", f"np.where({a} > 0, {a}, {b})"])

    def scalar(self) -> str:
        r = self.rng
        a = r.choice(self.names)
        return r.choice([f"{a}.mean()", f"{a}.sum()", f"{a}.max()", f"{a}.min()", f"{a}[0]",
                         f"np.linalg.norm({a})", f"np.abs({a}).mean()", f"{a}[-1]"])

    def test(self) -> str:
        r = self.rng
        s, op, c = self.scalar(), r.choice(["<", ">", "<=", ">="]), r.choice(["0", "0.5", "-0.5", "1"])
        roll = r.random()
        if roll < 0.15:
            return f"{s} {op} {c} and {self.test()}"
        if roll < 0.25:
            return f"{s} {op} {c} or {self.test()}"
        if roll < 0.32:
            return f"not {s} {op} {c}"
        if roll < 0.4:
            v = r.choice(self.names)
            return f"-1 < {v}.mean() < 1"
        return f"{s} {op} {c}"

    def assign(self, indent, target=None) -> None:
        target = target or self.rng.choice([*self.names, self.fresh("t")])
        self.lines.append(f"{indent}{target} = {self.arr()}")
        if target not in self.names:
            self.names.append(target)

    def branch(self, indent, depth, elifs=None, orelse=None) -> None:
        r = self.rng
        flowing = [v for v in self.names]
        outs = r.sample(flowing, min(len(flowing), r.randint(1, 2)))
        self.lines.append(f"{indent}if {self.test()}:")
        self._body(indent + "    ", outs, depth)
        for _ in range(r.choice([0, 0, 1, 2]) if elifs is None else elifs):
            self.lines.append(f"{indent}elif {self.test()}:")
            self._body(indent + "    ", outs, depth)
        if (r.random() < 0.6) if orelse is None else orelse:
            self.lines.append(f"{indent}else:")
            self._body(indent + "    ", outs, depth)

    def _body(self, indent, outs, depth) -> None:
        r = self.rng
        own = self.own()
        if own and not self.loops and r.random() < 0.2:
            # an array the function made before the `if`: the branch writes on its own copy, which
            # flows out through the select (copy-write-select)
            w = r.choice(own)
            self.lines.append(f"{indent}" + r.choice([f"{w} *= -1", f"{w}[0] = {w}[-1] * 0.5",
                                                      f"{w}[1:] = {self.scalar()}", f"{w} /= 2"]))
        for v in outs:
            if not self.tag and r.random() < 0.01:  # a helper with its own `if` on data, in an arm
                self.lines.append(f"{indent}{v} = {self.call_helper()}")
            else:
                self.lines.append(f"{indent}{v} = {self.arr()}")
            if r.random() < 0.1:  # a copy the branch makes is its own: writing into it converts
                self.lines.append(f"{indent}{v} = np.array({v}); {v}[0] = {v}[-1] * 0.5")
        if depth < 2 and r.random() < 0.25:
            self.branch(indent, depth + 1)  # an `if` in a loop's body is still in the loop
        if not self.planted and r.random() < 0.04:
            planted = r.choice(sorted(k for k in PLANTED if k not in _PLACED))
            text = PLANTED[planted][0].format(v=outs[0], n=self.n)
            self.lines.append(f"{indent}{text}")
            # a solver in an arm of an `if` or in a loop's body runs guarded (table.guards): it
            # converts there, so it is planted code the graph must get right, not a refusal
            if planted != "solve":
                self.planted = planted

    def loop(self, indent) -> None:
        """A bounded `while` on data; a counter stops it within its bound, so NumPy's loop ends too."""
        r = self.rng
        k = self.fresh("k")
        limit = r.randint(1, 5)
        bound = limit + r.choice([0, 0, 1, 3])
        v = r.choice(self.names)
        self.lines.append(f"{indent}{k} = np.zeros((), {v}.dtype)")
        test = f"({self.test()}) and {k} < {limit}" if r.random() < 0.8 else f"{k} < {limit} and ({self.test()})"
        if not self.planted and r.random() < 0.05:
            self.planted = "unbounded"
            self.lines.append(f"{indent}while {test}:")
        elif r.random() < 0.3:
            self.lines.append(f"{indent}while leapp.bounded({test}, {bound}):")
        else:
            self.lines.append(f"{indent}while {test}:  # leapp: max-iterations={bound}")
        outs = r.sample(self.names, min(len(self.names), r.randint(1, 2)))
        self.loops += 1
        self._body(indent + "    ", outs, 1)
        self.loop_more(indent + "    ", outs)
        self.loops -= 1
        self.lines.append(f"{indent}    {k} = {k} + 1")

    def loop_more(self, indent, outs) -> None:
        """More of a loop's body, now and then: an `if` whose arm alone assigns a name (one the
        loop had before it, or a temporary the arm reads right after), an `if`/`elif` chain, a
        conditional expression, a helper's call."""
        r = self.rng
        roll = r.random()
        o = outs[0]
        if roll < 0.2:  # `u` assigned only under the `if`: the loop must carry what it held before
            others = [v for v in self.names if v not in outs]
            u = r.choice(others) if others and r.random() < 0.6 else self.fresh("u")
            self.lines.append(f"{indent}if {self.test()}:")
            self.lines.append(f"{indent}    {u} = {self.arr()}")
            self.lines.append(f"{indent}    {o} = " + r.choice([f"np.where({o} > 0, {o}, {u})", f"{o} + {u} * 0.5",
                                                              f"np.minimum({o}, {u})"]))
            if r.random() < 0.4:
                self.lines.append(f"{indent}else:")
                self.lines.append(f"{indent}    {o} = {self.arr()}")
        elif roll < 0.35:  # a mode switch: if / elif [/ elif] / else, each arm its own formula
            self.branch(indent, 2, elifs=r.choice([1, 1, 2]), orelse=r.random() < 0.7)
        elif roll < 0.5:
            self.lines.append(f"{indent}{o} = {self.arr()} if {self.test()} else {self.arr()}")
        elif roll < 0.58 and not self.tag:
            self.lines.append(f"{indent}{o} = {self.call_helper()}")

    def statement(self) -> None:
        r = self.rng
        roll = r.random()
        if roll < 0.28:
            self.assign("    ")
        elif roll < 0.36:
            self.loop("    ")
        elif roll < 0.74:
            self.branch("    ", 0)
        elif roll < 0.83:
            v = r.choice(self.names)
            self.lines.append(f"    {v} = {self.arr()} if {self.test()} else {self.arr()}")
        elif roll < 0.92 or self.tag:
            self.early()
        else:
            form = r.choice(["alias", "alias", "updated", "updated", "helper"])
            if form == "alias":
                self.alias()
            elif form == "updated":
                self.updated_after()
            else:
                v = r.choice(self.names)
                self.lines.append(f"    {v} = {self.call_helper()}")

    def source(self) -> str:
        """An array the function made that nothing else holds (made here if there is none)."""
        own = self.own()
        if own and self.rng.random() < 0.8:
            return self.rng.choice(own)
        t = self.fresh("t")
        self.lines.append(f"    {t} = {self.rng.choice(['np.tanh', 'np.abs', 'np.cos'])}({self.rng.choice(self.params)})")
        self.names.append(t)
        return t

    def alias(self) -> None:
        """An arm that binds `w` to another array: `w = t0` (a reference picked by a test), `w =
        t0[1:]` (a view), or in a conditional expression; then, now and then, an update in place of
        `t0` or of `w` after it, which leapp must refuse (planted: in NumPy `w` and `t0` are one
        array, a select hands on a new one), or of `t0` after `w = t0.copy()`, which converts."""
        r = self.rng
        t0 = self.source()
        w = self.fresh("w")
        view = r.random() < 0.35
        a = r.choice([v for v in self.names if v != w])
        ref = f"{t0}[1:]" if view else t0
        if r.random() < 0.2:
            ref = f"{ref}.copy()"
        other = f"{a}[1:] * 2" if view else self.arr()
        shape = r.random()
        if shape < 0.25:  # a conditional expression
            self.lines.append(f"    {w} = {ref} if {self.test()} else {other}")
        else:
            if shape < 0.55:  # no `else`: the input that takes no branch keeps what `w` held
                self.lines.append(f"    {w} = {a}[1:] - {a}[:-1]" if view else f"    {w} = {self.arr()}")
            self.lines.append(f"    if {self.test()}:")
            self.lines.append(f"        {w} = {ref}")
            if shape >= 0.55:
                self.lines.append("    else:")
                self.lines.append(f"        {w} = {other}")
        shared = not ref.endswith(".copy()")
        roll = r.random()
        if roll < 0.45 and shared and not self.planted:  # NumPy's `w` and `t0` are one array here
            who = r.choice([t0, w])
            self.lines.append(f"    {self.update(who, view and who == w)}")
            self.planted = "alias"
        elif roll < 0.6 and not shared:  # `w` is a copy: updating `t0` converts
            self.lines.append(f"    {self.update(t0, False)}")
        use = r.choice(self.names)
        if view:
            self.lines.append(f"    {use} = {use} + {w}.{r.choice(['mean', 'max', 'sum'])}()")
        else:
            self.lines.append(f"    {use} = {r.choice([f'{use} + {w} * 0.5', f'np.minimum({use}, {w})', f'{w} - {use}'])}")
        if shared:
            self.held.add(t0)

    def update(self, v, short=False) -> str:
        """An update in place of `v` (of length n, or n - 1 when `short`)."""
        r = self.rng
        a = r.choice([n for n in self.names if n != v] or [v])
        return r.choice([f"{v} += {'1.0' if short else self.arr()}", f"{v} *= 0.5", f"{v}[0] = {self.scalar()}",
                         f"{v}[1:] = {self.scalar()}", f"{v} -= {a}.mean()",
                         f"{v}[-1] = {v}[0] * 0.5"])

    def updated_after(self) -> None:
        """An `if` on data, then an update in place of an array the function made: the select hands
        on an array of its own (each arm's, or the one from before the `if`), so NumPy's update
        reaches only it, and leapp converts it exactly."""
        t = self.source()
        self.branch("    ", 0)
        if t in self.own():
            self.lines.append(f"    {self.update(t)}")

    def call_helper(self) -> str:
        """The call of a module-level helper with its own `if` on data (a new one now and then)."""
        r = self.rng
        if not self.helpers or (len(self.helpers) < 2 and r.random() < 0.3):
            self.helpers.append(self.make_helper(f"_h{len(self.helpers)}"))
        name, nparams = r.choice(self.helpers)[:2]
        args = [r.choice(self.names) for _ in range(nparams)]
        if nparams == 2 and r.random() < 0.3:
            args[1] = self.arr()
        return f"{name}({', '.join(args)})"

    def make_helper(self, name) -> tuple:
        """(name, number of parameters, source): a guard a preprocessing author factors out (a
        normalisation with a near-zero guard, a deadband, a clamp), or one written like the
        function, with `if`s, conditional expressions and early returns on its own parameters."""
        r = self.rng
        eps = r.choice(["1e-6", "1e-3", "0.5"])
        templates = [
            (1, [f"def {name}(v):", "    n = np.linalg.norm(v)", f"    if n < {eps}:", "        return v * 0",
                 "    return v / n"]),
            (2, [f"def {name}(v, w):", f"    if np.abs(v).max() < {eps}:", "        return w * 0",
                 "    return v - w"]),
            (1, [f"def {name}(v):", "    n = np.linalg.norm(v)", "    s = 1.0 / n if n > 1 else 1.0 + v[0] * 0",
                 "    return v * s"]),
            (2, [f"def {name}(v, w):", "    d = v - w", "    if d.max() > 1:", "        d = d / d.max()",
                 "    elif d.min() < -1:", "        d = -d / d.min()", "    return w + d"]),
        ]
        if r.random() < 0.5:
            nparams, lines = r.choice(templates)
            return name, nparams, "\n".join(lines)
        sub = _Gen(r, self.n, names=["v", "w"], params=("v", "w"), planted="-", tag="h")
        for _ in range(r.randint(1, 3)):
            sub.statement()
        sub.lines.append(f"    return {sub.arr()}")
        return name, 2, "\n".join([f"def {name}(v, w):", *sub.lines])

    def early(self) -> None:
        """Early returns at the top of the body: a plain one, an `if`/`elif` chain of returns with a
        fall-through (or a non-returning `else`), an `if`/`else` with one returning arm (either),
        an early return inside an arm of an `if` on data, a chain whose returning arms follow one
        that does not, one inside a `for` loop over a `range` or a `with np.errstate(...)` block, and
        one two converted `if`s deep."""
        r = self.rng
        roll = r.random()
        if roll < 0.45:
            return self.early_more(r.choice(["mixed", "mixed", "loop", "loop", "with", "deep"]))
        roll = r.random()
        if roll < 0.4:
            self.lines.append(f"    if {self.test()}:")
            self.lines.append(f"        return {self.arr()}")
            return
        outs = r.sample(self.names, min(len(self.names), r.randint(1, 2)))
        if roll < 0.6:  # if a: return p / elif b: return q / [else: B]
            self.lines.append(f"    if {self.test()}:")
            self.lines.append(f"        return {self.arr()}")
            for _ in range(r.randint(1, 2)):
                self.lines.append(f"    elif {self.test()}:")
                self.lines.append(f"        return {self.arr()}")
            if r.random() < 0.5:
                self.lines.append("    else:")
                self._body("        ", outs, 2)
        elif roll < 0.8:  # if c: return z / else: B (or mirrored)
            self.lines.append(f"    if {self.test()}:")
            if r.random() < 0.5:
                self.lines.append(f"        return {self.arr()}")
                self.lines.append("    else:")
                self._body("        ", outs, 2)
            else:
                self._body("        ", outs, 2)
                self.lines.append("    else:")
                self.lines.append(f"        return {self.arr()}")
        elif roll < 0.9:  # an arm Python decides (a shape test), ending in a return after an early one
            self.lines.append(f"    if {self.params[0]}.shape[0] > {r.choice([3, 4])}:")
            for v in outs:
                self.lines.append(f"        {v} = {self.arr()}")
            self.lines.append(f"        if {self.test()}:")
            self.lines.append(f"            return {self.arr()}")
            self.lines.append(f"        return {self.arr()}")
        else:  # if c: <...> / if m: return r / <assigns> / else: B
            self.lines.append(f"    if {self.test()}:")
            self._body("        ", outs, 2)
            self.lines.append(f"        if {self.test()}:")
            self.lines.append(f"            return {self.arr()}")
            for v in outs:
                self.lines.append(f"        {v} = {self.arr()}")
            if r.random() < 0.6:
                self.lines.append("    else:")
                self._body("        ", outs, 2)


    def early_more(self, form) -> None:
        r = self.rng
        outs = r.sample(self.names, min(len(self.names), r.randint(1, 2)))
        if form == "mixed":  # if a: B / elif b: return q / [elif c: B] / [else: B or return z]
            later = [True, *r.sample([False, True], r.randint(0, 2))]
            r.shuffle(later)
            arms = [False, *later]  # the first arm does not return: a returning one follows it
            for k, returns in enumerate(arms):
                self.lines.append(f"    {'if' if k == 0 else 'elif'} {self.test()}:")
                if returns:
                    self.lines.append(f"        return {self.arr()}")
                else:
                    self._body("        ", outs, 2)
            roll = r.random()
            if roll < 0.35:
                self.lines.append("    else:")
                self.lines.append(f"        return {self.arr()}")
            elif roll < 0.7:
                self.lines.append("    else:")
                self._body("        ", outs, 2)
        elif form in ("loop", "with"):
            i = self.fresh("i")
            if form == "loop" and not self.planted and r.random() < 0.06:
                self.planted = "forarray"
                self.lines.append(f"    for {i} in {self.params[0]}:")
                test = f"{i} > {r.choice(['0', '0.5', '-0.5'])}"
            elif form == "loop":
                self.lines.append(f"    for {i} in range({r.choice(['1, ', '', ''])}{r.randint(2, self.n)}):")
                v = r.choice(self.names)
                test = r.choice([f"{v}[{i}] {r.choice(['<', '>'])} {r.choice(['0', '0.5', '-0.5', '1'])}",
                                 f"{v}[{i}] > {v}.mean()", self.test()])
            else:
                self.lines.append(f"    with np.errstate({r.choice(['all', 'divide', 'invalid'])}=\"ignore\"):")
                test = self.test()
            if r.random() < 0.3:
                for v in outs:
                    self.lines.append(f"        {v} = {self.arr()}")
            self.lines.append(f"        if {test}:")
            self.lines.append(f"            return {self.arr()}")
            for v in outs:  # the rest of the body: code after the held early return
                if r.random() < 0.7:
                    self.lines.append(f"        {v} = {self.arr()}")
            if form == "with" or r.random() < 0.3:
                self.lines.append("        pass")
        else:  # if a: [...] / if b: (if c: return r) / <assigns> / else: <assigns> / ... / [else: B]
            self.lines.append(f"    if {self.test()}:")
            for v in outs:
                self.lines.append(f"        {v} = {self.arr()}")
            self.lines.append(f"        if {self.test()}:")
            self.lines.append(f"            if {self.test()}:")
            self.lines.append(f"                return {self.arr()}")
            for v in outs:
                self.lines.append(f"            {v} = {self.arr()}")
            if r.random() < 0.6:
                self.lines.append("        else:")
                for v in outs:
                    self.lines.append(f"            {v} = {self.arr()}")
            for v in outs:
                if r.random() < 0.5:
                    self.lines.append(f"        {v} = {self.arr()}")
            if r.random() < 0.6:
                self.lines.append("    else:")
                self._body("        ", outs, 2)


def generate(seed: int) -> tuple[str, str, int, str]:
    """(module source, planted construct or "", array length, dtype)."""
    rng = random.Random(seed)
    g = _Gen(rng, rng.choice([3, 4, 6]))
    for _ in range(rng.randint(2, 6)):
        g.statement()
    g.lines.append(f"    return {g.arr()}")
    dtype = rng.choice(["float32", "float32", "float64"])
    helpers = [line for _, _, text in g.helpers for line in ["", "", *text.split("\n")]]
    source = "\n".join(["import numpy as np", "import leapp", *helpers, "", "", "@leapp.compile",
                        "def f(x, y):", *g.lines, ""])
    return source, g.planted, g.n, dtype


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(seed, n, dtype, count):
    rng = np.random.default_rng(seed)
    base = rng.uniform(-2, 2, size=(2, n))
    out = [base]
    for k in range(count):  # scaled, flipped and shifted copies put the tests on both sides
        scale = rng.choice([-3.0, -1.0, -0.2, 0.0, 0.3, 2.0, 4.0])
        shift = rng.choice([-2.0, -0.6, 0.0, 0.6, 2.0])
        out.append(base * scale + shift + rng.normal(0, 0.3, size=(2, n)) * (k % 2))
    return [tuple(v.astype(dtype)) for v in out]


def _same(got, want, dtype) -> str:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    rtol = 2e-3 if want.dtype == np.float16 else 1e-4 if dtype == "float32" else 1e-9
    if not np.allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True):
        return f"values differ by {np.nanmax(np.abs(got.astype(float) - want.astype(float)))}"
    return ""


def _branch_coverage(tests, inputs):
    both = 0
    for t in tests:
        seen = set()
        for x, y in inputs:
            try:
                with np.errstate(all="ignore"):
                    seen.add(bool(eval(t, {"np": np}, {"x": x, "y": y})))  # noqa: S307 (our own text)
            except Exception:
                pass
        both += len(seen) == 2
    return both


def check(seed: int, *, n_inputs: int = 8, onnx: bool = False, seed_api: bool = False, tmpdir=None) -> Outcome:
    from leapp.errors import InternalError, LeappError

    source, planted, n, dtype = generate(seed)
    folder = tmpdir or tempfile.mkdtemp(prefix="leapp-branches-")
    path = os.path.join(folder, f"branches_{seed}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source)
    ref_path = os.path.join(folder, f"branches_{seed}_ref.py")
    with open(ref_path, "w", encoding="utf-8") as fh:
        fh.write(source.replace("@leapp.compile\n", "\n"))
    inputs = _inputs(seed, n, dtype, n_inputs)
    out = Outcome("exact", source=source)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = _load(ref_path, f"branches_{seed}_ref").f
            wants = []
            for x, y in inputs:
                try:
                    with np.errstate(all="ignore"):
                        wants.append(("ok", reference(x.copy(), y.copy())))
                except Exception as exc:
                    wants.append(("raise", type(exc).__name__))
            ok = [i for i, (kind, _) in enumerate(wants) if kind == "ok"]
            seed_kind = _seed_api(reference, inputs, wants, ref_path, dtype) if seed_api and ok else ""
            try:
                cf = _load(path, f"branches_{seed}").f
                cf.trace(*inputs[ok[0] if ok else 0])  # a sample on which NumPy raises traces nothing
                for (x, y), (kind, want) in zip(inputs, wants, strict=True):
                    if kind != "ok":
                        continue
                    with np.errstate(all="ignore"):
                        got = cf(x.copy(), y.copy())
                    problem = _same(got, want, dtype)
                    if problem:
                        out.kind = _judged(source, x, y, dtype)
                        out.detail = f"inputs {x!r} {y!r}: {problem}"
                        break
                if onnx and out.kind == "exact":
                    failed = _onnx(cf, inputs, wants, folder, seed, dtype)
                    if failed:
                        (x, y), problem = failed
                        out.kind, out.detail = _judged(source, x, y, dtype), f"onnx on {x!r} {y!r}: {problem}"
            except InternalError as exc:
                return Outcome("internal", str(exc), source=source, seed_api=seed_kind)
            except LeappError as exc:
                text = str(exc)
                if planted and PLANTED[planted][1] in text and (f"{path}:" in text or "(line " in text):
                    return Outcome("refused", text[:300], planted, source=source, seed_api=seed_kind)
                return Outcome("false_refusal", text[:600], planted, source=source, seed_api=seed_kind)
            except Exception as exc:
                if not ok and type(exc).__name__ == wants[0][1]:  # NumPy raises it on every input too
                    return Outcome("numpy_raises", f"{type(exc).__name__}: {exc}", planted, source=source)
                return Outcome("internal", f"{type(exc).__name__}: {exc}", source=source, seed_api=seed_kind)
    finally:
        for name in (f"branches_{seed}", f"branches_{seed}_ref"):
            sys.modules.pop(name, None)
    if planted and planted != "dtype" and out.kind == "exact":  # a dtype that never flows out is fine
        out.kind, out.detail = "mismatch", f"the planted {planted!r} went through"
    out.tests, out.both_ways = _count_tests(source), _branch_coverage(_tests_of(source), inputs)
    out.seed_api = seed_kind
    return out


def _seed_api(reference, inputs, wants, ref_path, dtype) -> str:
    """The plain function between ``annotate.input_tensors`` and ``output_tensors`` on three frames
    NumPy runs, then ``compile_graph(validate=True)``; its graph run on every input NumPy runs. The
    seed API reads no source, so it cannot convert a branch: it must say so, naming the program's
    line, or give a graph equal to NumPy. "exact"; "refused" (a LeappError naming the program's
    file); "warned" (a graph that differs after a warning naming the file); "silent" (a graph that
    differs with no such warning, or a refusal that names no line); "internal" (an InternalError or
    another exception)."""
    import leapp
    from leapp import annotate
    from leapp.errors import InternalError, LeappError

    frames = [inputs[i] for i, (kind, _) in enumerate(wants) if kind == "ok"][:3]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            leapp.start("branches")
            for x, y in frames:
                tx, ty = annotate.input_tensors("f", {"x": x.copy(), "y": y.copy()})
                with np.errstate(all="ignore"):
                    out = reference(tx, ty)
                annotate.output_tensors("f", {"out": out})
            leapp.stop()
            node = leapp.compile_graph(validate=True)["f"]
        except InternalError:
            return "internal"
        except LeappError as exc:
            return "refused" if f"{ref_path}:" in str(exc) else "silent"
        except Exception:
            return "internal"
        finally:
            leapp.api.reset()
        named = any(f"{ref_path}:" in str(w.message) for w in caught)
        for (x, y), (kind, want) in zip(inputs, wants, strict=True):
            if kind != "ok":
                continue
            try:
                with np.errstate(all="ignore"):
                    got = node(**{k: v.copy() for k, v in (("x", x), ("y", y)) if k in node.input_names})["out"]
            except Exception:
                return "warned" if named else "silent"
            if _same(got, want, dtype):
                return "warned" if named else "silent"
    return "exact"


def _judged(source, x, y, dtype) -> str:
    """"boundary" when a test NumPy evaluated on these inputs lay on its boundary, else "mismatch"."""
    return "boundary" if _on_boundary(source, x, y, dtype) else "mismatch"


def _on_boundary(source, x, y, dtype) -> bool:
    """Whether a comparison in a test of ``if``/``elif``/``while``/a conditional expression, run in
    NumPy on ``x``, ``y``, had its two sides within the value tolerance ``_same`` uses.

    The program is run again undecorated with every such comparison routed through a probe that
    evaluates it as Python does (chains and short-circuits included) and notes how close the sides
    were. Only comparisons NumPy actually evaluated count, so a mismatch elsewhere stays one."""
    import ast

    class Probe(ast.NodeTransformer):
        def visit_Compare(self, node):
            self.generic_visit(node)
            ops = ast.Constant(",".join(type(o).__name__ for o in node.ops))
            sides = ast.List([node.left, *node.comparators], ast.Load())
            return ast.copy_location(ast.Call(ast.Name("__probe", ast.Load()), [sides, ops], []), node)

    tree = ast.parse(source.replace("@leapp.compile\n", "\n"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            node.test = Probe().visit(node.test)
    ast.fix_missing_locations(tree)
    rtol = 1e-4 if dtype == "float32" else 1e-9
    near = []
    compare = {"Lt": np.less, "Gt": np.greater, "LtE": np.less_equal, "GtE": np.greater_equal,
               "Eq": np.equal, "NotEq": np.not_equal}

    def probe(values, ops):
        result = True
        for a, op, b in zip(values[:-1], ops.split(","), values[1:], strict=True):
            with np.errstate(all="ignore"):
                fa, fb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
                if np.isfinite(fa).all() and np.isfinite(fb).all():
                    near.append(bool((np.abs(fa - fb) <= rtol + rtol * np.abs(fb)).any()))
                result = compare[op](a, b)
            if not result:
                return result
        return result

    namespace = {"__probe": probe, "__name__": "branches_probe"}
    try:
        exec(compile(tree, "<branches probe>", "exec"), namespace)  # noqa: S102 (our own program)
        with np.errstate(all="ignore"):
            namespace["f"](x.copy(), y.copy())
    except Exception:
        return False
    return any(near)


def _tests_of(source) -> list[str]:
    import ast

    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            out.append(ast.unparse(node.test))
    return out


def _count_tests(source) -> int:
    return len(_tests_of(source))


def _onnx(cf, inputs, wants, folder, seed, dtype):
    """The first input (and the difference) where the ONNX file departs from NumPy, or None."""
    import onnxruntime as ort

    target = os.path.join(folder, f"branches_{seed}.onnx")
    cf.export(target, "onnx")
    session = ort.InferenceSession(target)
    names = [i.name for i in session.get_inputs()]
    for (x, y), (kind, want) in zip(inputs, wants, strict=True):
        if kind != "ok":
            continue
        (got,) = session.run(None, {k: v for k, v in (("x", x), ("y", y)) if k in names})  # unused: pruned
        problem = _same(got, want, dtype)
        if problem:
            return (x, y), problem
    return None
