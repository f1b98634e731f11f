"""One program per branch construct through torch.compile(fullgraph=True) and leapp.compile: the table in
docs/control-flow.md.

``PYTHONPATH=src python benchmarks/control_flow_torch_compile.py`` prints, per construct, whether
torch.compile compiled it, and what leapp chose (from ``cf.report()``) and whether its one graph
agrees with NumPy on the example and on inputs scaled and negated (both sides of most tests).
"""

import warnings

import numpy as np
import torch

warnings.simplefilter("ignore")
def clamp(x):
    if x.max() > 1.0:
        x = np.minimum(x, 1.0)
    return x
def ifelse(x):
    if x.mean() < 0.5:
        y = x * 2
    else:
        y = -x
    return y
def elif_(x):
    if x.sum() > 0:
        q = x / 2
    elif x[0] > x[1]:
        q = x / 3
    else:
        q = x / 4
    return q
def early(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    return x / n
def ternary(x):
    return x if x.sum() > 0 else -x
def boolops(x):
    if x.mean() > 0 and not x.max() > 10:
        x = x + 1
    return x
def chain(x):
    if 0 < x.mean() < 1:
        x = x * 3
    return x
def elif_returns(x):
    if x.sum() > 4:
        return x / 4
    elif x[0] > x[1]:
        return x / 3
    return x * 2
def nested_return(x):
    n = x.sum()
    if n > 0:
        if n > 5:
            return x * 5
        y = x * 2
    else:
        y = -x
    return y + 1
def while_(x):
    while np.abs(x).max() > 1.0:
        x = x / 2.0
    return x
x = np.array([0.5, 2.0, -1.0], np.float32)
if __name__ != "__main__":
    pass
if __name__ == "__main__":
    import leapp

    for f in [clamp, ifelse, elif_, early, ternary, boolops, chain, elif_returns, nested_return, while_]:
        torch._dynamo.reset()
        try:
            out = torch.compile(f, fullgraph=True)(x)
            print(f.__name__, "torch.compile: OK", np.allclose(out, f(x)))
        except Exception as e:
            print(f.__name__, "torch.compile: RAISES", type(e).__name__, str(e).splitlines()[0][:150])
        try:
            cf = leapp.compile(f)
            inputs = [x, x * 3, -x, x * 0, x * 1e-8]
            agree = all(np.array_equal(cf(v), f(v)) for v in inputs)
            chosen = [line.strip() for line in cf.format_report().splitlines() if "line " in line and "select" in line]
            print(f.__name__, "leapp:", "; ".join(chosen) or "no branch on data", "| one graph, equal to NumPy on",
                  f"{len(inputs)} inputs:", agree, "| graphs:", len(cf.graphs))
        except Exception as e:
            print(f.__name__, "leapp: REFUSED", type(e).__name__, str(e).splitlines()[1][:150] if "\n" in str(e) else str(e)[:150])
