"""Edits of a stack config dict (as `tests.support.stack_config` returns it) that tests compose into wrong values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Mutation = Callable[[dict[str, Any]], None]
"""An in-place edit of a stack config."""


def both(*mutations: Mutation) -> Mutation:
    """The mutations, in order, as one."""
    def apply(cfg: dict[str, Any]) -> None:
        for m in mutations:
            m(cfg)
    return apply


def setitem(key: str, value: Any) -> Mutation:
    """Set the stack-file key `key` to `value`."""
    return lambda cfg: cfg.__setitem__(key, value)
