"""Progress: each `leapp compile` step is said as it starts; a progress line is drawn on a
terminal only, and nothing of it reaches a pipe or a CI log."""

from __future__ import annotations

import io
import re
import time

from leapp import export as leapp_export
from leapp.cli import main
from leapp.progress import Progress, enabled


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_progress_line_is_drawn_on_a_terminal_and_erased(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    screen = Terminal()
    with Progress("validating", total=3, stream=screen, delay=0.0, interval=0.01) as p:
        p.advance()
        time.sleep(0.2)
    drawn = screen.getvalue()
    assert re.search(r"\r  validating 1/3 \.\.\. \d+ s", drawn), drawn
    assert re.fullmatch(r"(\r  validating [01]/3 \.\.\. \d+ s *)+\r +\r", drawn), drawn


def test_a_short_step_draws_nothing(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    screen = Terminal()
    with Progress("exporting", stream=screen, delay=5.0):
        pass
    assert screen.getvalue() == ""


def test_no_progress_in_a_pipe_nor_in_ci(monkeypatch):
    pipe = io.StringIO()
    with Progress("exporting", stream=pipe, delay=0.0, interval=0.01):
        time.sleep(0.05)
    assert pipe.getvalue() == ""
    monkeypatch.setenv("CI", "true")
    assert not enabled(Terminal())
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TERM", "dumb")
    assert not enabled(Terminal())


def test_each_compile_step_is_said_before_it_runs(tmp_path, monkeypatch, capsys):
    seen = {}
    real = leapp_export.export_node

    def export_node(*args, **kwargs):
        seen["before export"] = capsys.readouterr().out
        return real(*args, **kwargs)

    monkeypatch.setattr(leapp_export, "export_node", export_node)
    assert main(["compile", "--out", str(tmp_path), "--format", "torchscript", "--no-graph",
                 "--validate", "1"]) == 0
    before = seen["before export"]
    assert before.rstrip().endswith(f"[5/5] export torchscript: {tmp_path / 'step.pt'}")
    assert "written (+ .json)" in capsys.readouterr().out


def test_lint_of_no_file_warns_instead_of_passing(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not python\n")
    assert main(["lint", "--no-cache", str(tmp_path)]) == 0
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err == f"leapp lint: warning: no Python file was checked in {tmp_path}\n"
