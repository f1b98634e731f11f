"""LP9xx: input the linter cannot read as Python (reported per file; the run goes on)."""

from __future__ import annotations

from .base import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    CODE = "LP901"
    NAME = "syntax-error"
    MESSAGE = "File does not parse: {error}."
    WHAT = "Reports a file that is not valid Python for the running interpreter."
    WHY = "Nothing in it can be checked, and `leapp.compile` could not read it either."
    EXAMPLE = "def f(x:\n    return x\n"
    INSTEAD = "Fix the syntax error; the message gives the parser's reason."
    VALID = [Valid("def f(x):\n    return x\n")]
    INVALID = [Invalid("def f(x:\n    return x\n", line=1)]


class NotUtf8(Rule):
    CODE = "LP902"
    NAME = "not-utf8"
    MESSAGE = "File is not UTF-8 ({error}); leapp reads source as UTF-8."
    WHAT = "Reports a file whose bytes are not valid UTF-8."
    WHY = "Python source is UTF-8 by default (PEP 3120); leapp does not guess encodings."
    EXAMPLE = "x = 'caf\\xe9'  # saved as Latin-1\n"
    EXAMPLE_FENCE = "text"  # the bytes, not the text, are the problem
    INSTEAD = "Save the file as UTF-8."
    VALID = [Valid("x = 'caf\u00e9'\n")]
    INVALID = [Invalid(b"x = 'caf\xe9'\n", line=1)]


class EmptyFile(Rule):
    CODE = "LP903"
    NAME = "empty-file"
    MESSAGE = "File is empty."
    WHAT = "Reports a file with no content (only whitespace). `__init__.py` files are exempt."
    WHY = "An empty module handed to the linter is usually a truncated or misnamed file."
    EXAMPLE = "\n"
    INSTEAD = "Delete the file, or give it content."
    VALID = [Valid("x = 1\n"), Valid("", options={"path": "pkg/__init__.py"})]
    INVALID = [Invalid("", line=1), Invalid("\n  \n", line=1)]


class FileTooLarge(Rule):
    CODE = "LP904"
    NAME = "file-too-large"
    MESSAGE = "File is {size} bytes, over the {limit}-byte limit; it was not checked."
    WHAT = "Reports a file above `max-file-size` (default 5 MB) and skips it."
    WHY = "Generated or data files that size are not preprocessing code; reading them stalls a hook."
    EXAMPLE = "# a 40 MB generated table\n"
    EXAMPLE_FENCE = "text"
    INSTEAD = "Exclude the file (`[tool.leapp] exclude`) or raise `max-file-size`."
    VALID = [Valid("x = 1\n", options={"max_file_size": 64})]
    INVALID = [Invalid("x = 1\n" * 20, line=1, options={"max_file_size": 64})]


class IoError(Rule):
    CODE = "LP905"
    NAME = "io-error"
    MESSAGE = "Cannot read file: {error}."
    WHAT = "Reports a path that does not exist or cannot be read."
    WHY = "A hook that silently skips a file it was asked to check hides problems."
    EXAMPLE = ("$ leapp lint missing.py\n"
               "missing.py:1:1: LP905 Cannot read file: No such file or directory.\n")
    EXAMPLE_FENCE = "console"  # run by tests/test_docs_examples.py
    INSTEAD = "Pass paths that exist."
    NO_EXAMPLES = "needs a file system; tested in tests/test_cli_lint.py"


class InternalError(Rule):
    CODE = "LP999"
    NAME = "internal-error"
    MESSAGE = "leapp failed on this file ({error}); please report it. Other files were checked."
    WHAT = "Reports a bug in leapp met while checking one file; the exit status is 2."
    WHY = "A crash must not hide the findings in the other files."
    EXAMPLE = "(none: a bug has no example)\n"
    EXAMPLE_FENCE = "text"
    INSTEAD = "Report the bug with the file that triggers it."
    NO_EXAMPLES = "a bug has no example; tested by injecting a failure in tests/test_cli_lint.py"


RULES = [SyntaxErrorRule, NotUtf8, EmptyFile, FileTooLarge, IoError, InternalError]
