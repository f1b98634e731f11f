"""One program per branch construct through torch.compile(fullgraph=True): the table in docs/control-flow.md.

``python benchmarks/control_flow_torch_compile.py`` prints, per construct, whether it compiled.
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
def while_(x):
    while np.abs(x).max() > 1.0:
        x = x / 2.0
    return x
x = np.array([0.5, 2.0, -1.0], np.float32)
if __name__ != "__main__":
    pass
if __name__ == "__main__":
    for f in [clamp, ifelse, elif_, early, ternary, boolops, chain, while_]:
        torch._dynamo.reset()
        try:
            out = torch.compile(f, fullgraph=True)(x)
            print(f.__name__, "OK", np.allclose(out, f(x)))
        except Exception as e:
            print(f.__name__, "RAISES", type(e).__name__, str(e).splitlines()[0][:150])
