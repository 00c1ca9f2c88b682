"""Edits of a stack config dict (as `tests.support.stack_config` returns it) that tests compose into wrong values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
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


def refused(tmp_path: Path, base: str, mutate: Mutation) -> tuple[str, str]:
    """Plan stack `base` with `mutate` applied, which must be refused before anything is registered: (the error,
    the text of the stack file written for it)."""
    from eks_karpenter import ConfigError

    from tests.support import plan_config, stack_config

    cfg = stack_config(base)
    mutate(cfg)
    result = plan_config(cfg, tmp_path)
    assert isinstance(result.error, ConfigError), result.error
    assert result.document.resources == [], "a bad config must register nothing"
    return str(result.error), (tmp_path / "stacks" / "Pulumi.bad.yaml").read_text()
