"""The instance-family facts rules rely on, checked against Karpenter's generated instance-type list."""

from __future__ import annotations

import re

from eks_karpenter.platform.nodepool.instances import INSTANCE_CATEGORIES, family_arch

from tests.support import UPSTREAM, requires_upstream


def _upstream() -> tuple[dict[str, set[str]], set[str]]:
    arch: dict[str, set[str]] = {}
    categories: set[str] = set()
    family = ""
    for line in (UPSTREAM / "karpenter" / "instance-types.md").read_text().splitlines():
        if m := re.fullmatch(r" \|karpenter\.k8s\.aws/instance-family\|(.+)\|", line):
            family = m.group(1)
        elif m := re.fullmatch(r" \|kubernetes\.io/arch\|(.+)\|", line):
            arch.setdefault(family, set()).add(m.group(1))
        elif m := re.fullmatch(r" \|karpenter\.k8s\.aws/instance-category\|(.+)\|", line):
            categories.add(m.group(1))
    return arch, categories


@requires_upstream
def test_family_arch_matches_every_upstream_family() -> None:
    arch, _ = _upstream()
    assert len(arch) > 150
    wrong = {f: (a, family_arch(f)) for f, a in arch.items() if a != {family_arch(f)}}
    assert wrong == {}


@requires_upstream
def test_categories_are_upstream_categories() -> None:
    assert _upstream()[1] == INSTANCE_CATEGORIES


def test_not_a_family() -> None:
    assert family_arch("Large") is None and family_arch("m") is None
