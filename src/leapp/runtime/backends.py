"""What runs a lowered graph: the FX ``GraphModule`` itself, or code inductor generates from it.

``"fx"`` (the default) calls the GraphModule: one torch eager op per node,
nothing to compile. ``"inductor"`` hands the same graph, with the shapes and
dtypes of the traced sample, to torch inductor once (``compile_fx``, without
dynamo: no guards run per call, the caller's signature check is the guard),
which fuses the elementwise chains into a few C++ loops on CPU. It costs a
second or more per traced signature and needs a C compiler; the graph it
compiles is the one the dtype check, the self-check and validation see, so a
kernel that rounds differently from NumPy is caught like any other mismatch.
"""

from __future__ import annotations

import copy

import torch

BACKENDS = ("fx", "inductor")


def check_backend(backend) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, not {backend!r}")
    return backend


def compile_runner(graph_module, example_inputs, backend):
    """A callable ``runner(*tensors) -> {output name: tensor}`` for ``graph_module``.

    ``example_inputs`` are CPU tensors of the traced shapes and dtypes. The
    inductor runner assumes exactly those shapes and contiguous layouts: its
    caller must hand it nothing else.
    """
    check_backend(backend)
    if backend == "fx":
        return graph_module
    from torch._inductor import config
    from torch._inductor.compile_fx import compile_fx

    # compile_fx rewrites the graph it is given (outputs, lifted constants): give it a copy.
    # One compile thread: no worker processes that outlive the call.
    with config.patch(compile_threads=1), torch.no_grad():
        return compile_fx(copy.deepcopy(graph_module), list(example_inputs))
