"""Facts about EC2 instance families that rules need: which architecture a family runs, which categories exist.

Both come from Karpenter's generated instance-type list (upstream `karpenter/instance-types.md`, which
scripts/fetch_upstream.py fetches); tests/catalogue/test_instance_facts.py checks them against it. The catalogue
(`catalogue/`) holds the same facts per instance type; these answer from a family's name alone, so a rule can
judge a name the catalogue does not list (a family newer than it).
"""

from __future__ import annotations

import re
from typing import Literal

Arch = Literal["amd64", "arm64"]

INSTANCE_CATEGORIES = frozenset({
    "a", "c", "d", "dl", "f", "g", "gr", "h", "hpc", "i", "im", "inf", "is", "m", "p", "r", "t", "trn", "u", "vt",
    "x", "z"})
"""Every `karpenter.k8s.aws/instance-category` value of the instance types Karpenter 1.14 knows."""

# `c7gn` -> category `c`, generation 7, attributes `gn`; `u7i-12tb` and `p6-b200` carry a size after a dash.
_FAMILY = re.compile(r"([a-z]+)([0-9]+)([a-z]*)(-[a-z0-9]+)?")


def family_arch(family: str) -> Arch | None:
    """The architecture of an instance family, or None when the name is not a family name.

    AWS names Graviton (arm64) families with a `g` among the attribute letters after the generation (c6g, m7gd,
    c7gn, im4gn, is4gen, x2gd, t4g, g5g) and has one older arm64 family, a1. Every other family is x86-64; the
    upstream list has no exception (checked by a test).
    """
    if family.startswith("u-"):  # u-3tb1, u-6tb1: high-memory x86 hosts
        return "amd64"
    match = _FAMILY.fullmatch(family)
    if match is None:
        return None
    return "arm64" if family == "a1" or "g" in match.group(3) else "amd64"
