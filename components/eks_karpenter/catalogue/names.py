"""Instance type and family names checked against the bundled catalogue: a typo (`m7i.lage`, `m99x`) is refused
with the closest name; a name the catalogue cannot know yet (one generation past its newest of that kind, e.g.
`m10g` while it tops out at `m9`) is only a warning, since EC2 may have launched it after the catalogue's date."""

from __future__ import annotations

import difflib
import functools
import re
from collections import defaultdict
from dataclasses import dataclass

from eks_karpenter.catalogue.model import load_catalogue

_FAMILY = re.compile(r"^(?P<kind>[a-z]+)(?P<generation>[0-9]+)")


@dataclass(frozen=True)
class _Names:
    types: frozenset[str]
    families: frozenset[str]
    sizes: dict[str, tuple[str, ...]]
    newest: dict[str, int]
    """Newest generation per kind of family (`m` -> 9)."""
    provenance: str


@functools.cache
def _names() -> _Names:
    catalogue = load_catalogue()
    sizes: dict[str, list[str]] = defaultdict(list)
    newest: dict[str, int] = defaultdict(int)
    for itype in catalogue:
        family, _, size = itype.name.partition(".")
        sizes[family].append(size)
        match = _FAMILY.match(family)
        if match:
            newest[match["kind"]] = max(newest[match["kind"]], int(match["generation"]))
    return _Names(frozenset(t.name for t in catalogue), frozenset(sizes), {f: tuple(s) for f, s in sizes.items()},
                  dict(newest), f"Karpenter {catalogue.karpenter_version}'s data of {catalogue.price_date}")


def _newer(family: str) -> bool:
    """One generation past the catalogue's newest of its kind: plausibly launched after the catalogue."""
    match = _FAMILY.match(family)
    return match is not None and int(match["generation"]) == _names().newest.get(match["kind"], -1) + 1


@dataclass(frozen=True)
class NameProblem:
    message: str
    warning: bool
    """True for a name that may be newer than the catalogue (printed, not fatal)."""


def family_problem(family: str) -> NameProblem | None:
    """Why `family` (like `m7i`) is not a family of the catalogue, or None."""
    names = _names()
    if family in names.families:
        return None
    if _newer(family):
        return NameProblem(f"instance family {family} is not in the catalogue ({names.provenance}): if it is newer, "
                           "Karpenter can launch it; otherwise check the spelling", True)
    close = difflib.get_close_matches(family, sorted(names.families), n=1, cutoff=0.6)
    hint = f": did you mean `{close[0]}`?" if close else ""
    return NameProblem(f"no EC2 instance family has this name{hint} (catalogue: {names.provenance})", False)


def type_problem(itype: str) -> NameProblem | None:
    """Why `itype` (like `m7i.large`) is not an instance type of the catalogue, or None."""
    names = _names()
    if itype in names.types:
        return None
    family, dot, size = itype.partition(".")
    if not dot or not size:
        return NameProblem("an instance type is `family.size`, like m7i.large", False)
    if family not in names.families:
        problem = family_problem(family)
        if problem is not None and problem.warning:
            return NameProblem(f"instance type {itype} is not in the catalogue ({names.provenance}): if it is newer, "
                               "Karpenter can launch it; otherwise check the spelling", True)
        close = difflib.get_close_matches(itype, sorted(names.types), n=1, cutoff=0.6)
        hint = f": did you mean `{close[0]}`?" if close else ""
        return NameProblem(f"no EC2 instance type has this name{hint} (catalogue: {names.provenance})", False)
    sizes = names.sizes[family]
    close = difflib.get_close_matches(size, sizes, n=1, cutoff=0.5)
    hint = f": did you mean `{family}.{close[0]}`?" if close else ""
    return NameProblem(f"{family} has no size {size!r}{hint} (its sizes: {', '.join(sizes)})", False)
