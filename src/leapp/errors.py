"""leapp's exceptions and warnings.

One base, ``LeappError``; each subclass also inherits the builtin a NumPy user
would catch for the same mistake. Messages say what happened, where (the
user's file:line), and what to do, and name the lint code that would have
caught it ahead of time when there is one.
"""

from __future__ import annotations

from collections.abc import Iterable


class LeappError(Exception):
    """Base of every error leapp raises on purpose."""


class UntracedCallError(LeappError, TypeError):
    """A NumPy call on traced data has no torch equivalent (strict mode)."""


class EscapeError(LeappError, TypeError):
    """A traced value left the graph (``float(x)``, ``if x > 0:``, ``.item()``) in strict mode."""


class UnsupportedArgumentError(LeappError, TypeError):
    """A keyword or argument form that the graph cannot honour (``where=``, ``order=``)."""


class ValidationError(LeappError, AssertionError):
    """A compiled graph disagreed with NumPy on a validation sample."""


class InputError(LeappError, TypeError, ValueError):
    """A value given to a graph (or to tracing) that the graph was not traced for: another shape or
    dtype, or an ndarray subclass whose NumPy semantics differ (``np.matrix``, masked arrays)."""


class TraceError(LeappError, RuntimeError):
    """The annotated region was used in a way tracing cannot follow (API misuse)."""


class OutputTypeError(LeappError, TypeError):
    """The traced function returned something a graph cannot return (a dataclass, an object)."""


class ConversionError(LeappError, TypeError):
    """A branch on traced data that leapp converted cannot become a select (dtypes, shapes, values)."""


class ProblemsError(LeappError, RuntimeError):
    """Several problems found in one trace, listed together."""

    def __init__(self, problems: Iterable[object]) -> None:
        self.problems = list(problems)
        lines = [f"{len(self.problems)} problem(s) prevent an exact graph:"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class NoSourceError(LeappError, OSError):
    """``leapp.compile`` cannot read or use a function's source (``strict=False`` traces it at runtime only)."""


class ExportError(LeappError, RuntimeError):
    """Export of a graph failed or its check against NumPy failed; nothing was written."""


class NotARegularFileError(LeappError, OSError):
    """A path to read is a FIFO, a device, a socket or a directory; leapp never opens it."""


class ReadOnlyFileError(LeappError, PermissionError):
    """A file to rewrite has no write bit (``chmod a-w``); leapp leaves it alone, even as root."""


class FileTooLargeError(LeappError, OSError):
    """A file is over the size limit; it was not read."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(27, f"{size} bytes, over the {limit}-byte limit", path)  # EFBIG
        self.size, self.limit = size, limit


class InternalError(LeappError, RuntimeError):
    """leapp disagreed with itself (e.g. the static and runtime verdicts). A bug: please report it."""


class LeappWarning(UserWarning):
    """Base of leapp's warnings."""


class UntracedCallWarning(LeappWarning):
    """A NumPy call on traced data was not traced (the seed's warning)."""


class EscapeWarning(LeappWarning):
    """A traced value left the graph; the graph holds a frozen constant or a fixed branch."""


class RetraceWarning(LeappWarning):
    """A ``leapp.compile`` function reached its bound of traced signatures (``max_signatures``)."""


class ValidationWarning(LeappWarning):
    """Validation could not run, or ran with nothing to compare against."""


class LeappInternalWarning(LeappWarning):
    """leapp repaired a disagreement between an adapter and NumPy (a leapp bug: please report it)."""


class RoundingWarning(LeappWarning):
    """A float result differs from NumPy's beyond the tolerance, and the first value that departs
    does so by rounding alone: a transcendental function (sin, exp, pow...) that torch rounds within
    a few units in the last place of NumPy's but not alike, magnified by what follows (see
    docs/limitations.md). ``ReductionOrderWarning`` is the kind for float accumulations."""


class ReductionOrderWarning(RoundingWarning):
    """A float result differs from NumPy's beyond the tolerance, and the graph accumulates floats
    (sum, mean, matmul...) in another order than NumPy there (see docs/limitations.md)."""


class PipelineWarning(LeappWarning):
    """Something about how a session's nodes connect that the exported pipeline cannot reproduce."""
