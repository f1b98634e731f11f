"""``linalg`` calls that raise on some inputs (a singular or indefinite matrix), guarded inside a
converted branch: one list for both stages.

A select runs both branches on every input, so ``np.linalg.inv(m)`` in the branch that a given
input does not take would still run on that input's ``m``, which may be singular there (that is
often why the code branched). Inside a converted ``if``/``elif``/``else`` or conditional
expression the runtime hands such a call ``np.where(path, m, I)``: ``m`` itself, bit for bit, on
every input that takes the branch, and the identity on the others, whose results are selected
away (``leapp.runtime.branches.guarded``). The static pass converts a branch holding one of these
calls (``ast_pass.convert.plan``); the first argument is the matrix guarded.
"""

from __future__ import annotations

GUARDED_LINALG = frozenset({"numpy.linalg.inv", "numpy.linalg.solve", "numpy.linalg.cholesky",
                            "numpy.linalg.matrix_power",
                            # decompositions raise LinAlgError on a NaN or inf (NumPy and torch alike)
                            "numpy.linalg.eigh", "numpy.linalg.eigvalsh", "numpy.linalg.eig",
                            "numpy.linalg.eigvals", "numpy.linalg.svd", "numpy.linalg.svdvals",
                            "numpy.linalg.pinv", "numpy.linalg.matrix_rank"})
# Of those, the ones a rectangular matrix is an input of: guarded with a rectangular identity.
RECTANGULAR_LINALG = frozenset({"numpy.linalg.svd", "numpy.linalg.svdvals", "numpy.linalg.pinv",
                                "numpy.linalg.matrix_rank"})
# NumPy functions given an integer index array (its argument's position): inside converted arms an
# index from data may be out of range on the inputs that do not take them, so it runs as
# ``np.where(path, idx, 0)`` (``leapp.runtime.branches.guarded_index``), as a subscript's index does.
INDEX_ARGUMENT = {"numpy.take": 1, "numpy.take_along_axis": 1}

# NumPy calls that do not return on a matrix holding inf here (OpenBLAS's gesdd loops:
# `np.linalg.svd(np.diag([np.inf, 1.0, 1.0]))` never ends). The export check does not run NumPy
# on ±inf inputs for a graph calling one (leapp.export.write), nor does the corpus runner.
NUMPY_HANGS_ON_INF = frozenset({"numpy.linalg.svd", "numpy.linalg.svdvals", "numpy.linalg.pinv",
                                "numpy.linalg.matrix_rank"})
