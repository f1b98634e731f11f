"""What an export's description (the ``.json`` beside the artifact) says about the user's code.

The description is compared across machines and checked into repositories, so
it holds no absolute path: a source file is named from its top package's
parent (``leapp/examples/robot_obs.py``), else from the current directory
(``prep.py`` for ``/home/me/proj/prep.py`` run in ``/home/me/proj``), else by
its file name alone. Each note appears once, in the order the passes made them.
"""

from __future__ import annotations

import os


def project_path(path: str) -> str:
    """``path`` relative to the project: from its top package's parent, else the cwd, else its name."""
    if not os.path.isabs(path):
        return path.replace(os.sep, "/")
    folder = os.path.dirname(path)
    top = None
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        top = folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if top is not None:
        return os.path.relpath(path, os.path.dirname(top)).replace(os.sep, "/")
    cwd = os.getcwd()
    try:
        inside = os.path.commonpath([cwd, path]) == cwd
    except ValueError:  # another drive
        inside = False
    return (os.path.relpath(path, cwd) if inside else os.path.basename(path)).replace(os.sep, "/")


def source_files(graph_module) -> set:
    """The source files the graph's nodes were recorded in, a helper's file included."""
    files = set()
    for n in graph_module.graph.nodes:
        loc = n.meta.get("leapp_loc")
        if loc is None or isinstance(loc, str):
            continue
        files.add(loc[0])
        if len(loc) > 4 and loc[4] is not None:
            files.add(loc[4][0])
    return {f for f in files if isinstance(f, str) and os.path.isabs(f)}


def relative(text: str, files) -> str:
    """``text`` with each of ``files`` (absolute paths) written as ``project_path`` gives it."""
    for path in sorted(files, key=len, reverse=True):  # a path that extends another goes first
        if path in text:
            text = text.replace(path, project_path(path))
    return text


def notes(raw, graph_module) -> list:
    """The passes' notes as the description holds them: project-relative paths, each note once."""
    files = source_files(graph_module)
    out, seen = [], set()
    for note in raw:
        note = relative(note, files)
        if note not in seen:
            seen.add(note)
            out.append(note)
    return out
