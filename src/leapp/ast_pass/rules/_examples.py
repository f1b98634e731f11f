"""Helpers for writing rule examples compactly."""

from __future__ import annotations

from textwrap import dedent


def src(text: str) -> str:
    return dedent(text).lstrip("\n")
