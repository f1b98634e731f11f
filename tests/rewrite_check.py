"""Does ``leapp rewrite`` of a file show exactly the code ``leapp.compile`` ran for a function in it?"""

from __future__ import annotations

import textwrap

from leapp.ast_pass import rewrite_source
from leapp.ast_pass.convert.apply import added, own_lines
from leapp.ast_pass.convert.helpers import ModuleResolver
from leapp.ast_pass.resolve import make_scope
from leapp.ast_pass.rewrite import IMPORT_LINE


def read_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None  # made in memory: there is no file for `leapp rewrite` to read


def mismatches(compiled) -> list[str]:
    """``compiled``: (qualname, compiler.source.Source, file text) triples; one message per mismatch.

    Each file is rewritten once, as ``leapp rewrite`` does with those functions
    selected (``--function``/``[tool.leapp]``); the lines holding each function
    must equal, after dedenting, the source compile rebuilt the function from.
    """
    by_file: dict = {}
    for qualname, src, text in compiled:
        # a test the trace saw on data where the static pass could not type it (a dict's value) is
        # converted with its line noted (``Source.data_lines``): the rewrite given the same lines
        # (and a method whose traced object held another `self.m` than the def leapp read is read
        # again without methods: ``Source.reads_methods``, the rewrite given the same resolver)
        by_file.setdefault((src.path, text, src.convert, src.data_lines, src.reads_methods), []).append(
            (qualname, src))
    out = []
    for (path, text, convert, data_lines, methods), items in by_file.items():
        helpers = None if methods else ModuleResolver(None, text, path, {}, methods=False,
                                                      scope_of=lambda tree: make_scope(tree.body, None).imports)
        shown = rewrite_source(text, path, include_functions=tuple(q for q, _ in items),
                               convert=convert, data_lines=data_lines, helpers=helpers).splitlines()
        offset = own_lines("\n".join(shown)) - len(text.splitlines())  # the dispatch import, when it was added
        own = []  # per shown line, the user's line it is or follows (lines a branch conversion added)
        count = 0
        for line in shown:
            count += not added(line)
            own.append(count - offset)
        for qualname, src in items:
            cli = textwrap.dedent("\n".join(line for line, n in zip(shown, own, strict=True)
                                            if src.first_line <= n <= src.last_line))
            ran = src.rewritten[len(IMPORT_LINE):] if src.rewritten.startswith(IMPORT_LINE) else src.rewritten
            if cli.rstrip() != ran.rstrip():
                out.append(f"{path}:{src.first_line} {qualname}:\n--- leapp rewrite\n{cli}\n--- compile ran\n{ran}")
    return out
