"""Kubernetes resource quantities (`500m`, `1Gi`), shared by every concern that reads or checks one."""

from __future__ import annotations

import math
import re
from decimal import Decimal

from eks_karpenter.config.errors import Issue, KeyPath

_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity_value(value: str) -> Decimal:
    """The amount in a Kubernetes quantity (`500m` -> 0.5, `1Gi` -> 1073741824). Raises ValueError."""
    match = _QUANTITY.fullmatch(value)
    if not match:
        raise ValueError(f"not a Kubernetes quantity such as 500m, 1, 512Mi or 1Gi: {value!r}")
    number, suffix, exponent = match.groups()
    amount = Decimal(number)  # the pattern only admits plain decimal numbers
    try:
        if exponent is not None:
            return amount.scaleb(int(exponent))
        if suffix in _BINARY:
            return amount * Decimal(1024) ** _BINARY[suffix]
        return amount.scaleb(_DECIMAL[suffix or ""])
    except ArithmeticError:  # an exponent beyond Decimal's range (`1e9999999`): a bad value, not a crash
        raise ValueError(f"not a Kubernetes quantity: the exponent is out of range: {value!r}") from None


def cpu_millis(value: str) -> int:
    """A CPU quantity in millicores, rounded up (Kubernetes allows nothing finer than 1m)."""
    return math.ceil(quantity_value(value) * 1000)


def memory_bytes(value: str) -> int:
    """A memory quantity in bytes, rounded up."""
    return math.ceil(quantity_value(value))


_BYTES_RESOURCES = ("memory", "ephemeral-storage")


def unitless_bytes(resource: str, value: str) -> bool:
    """A byte-sized resource written as a bare number other than 0: `memory: 1000` is 1000 bytes, never meant."""
    bytes_sized = resource in _BYTES_RESOURCES or resource.startswith("hugepages-")
    return bytes_sized and re.fullmatch(r"[0-9]+(\.[0-9]+)?", value) is not None and float(value) != 0


def bytes_issue(at: KeyPath, resource: str, value: str) -> Issue:
    return Issue(at, f"{resource} without a unit is a number of bytes; write a quantity with a unit, like "
                 f"{value}Gi or {value}Mi", value)
