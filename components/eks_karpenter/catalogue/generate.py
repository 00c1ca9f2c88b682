"""Build the instance-type catalogue from Karpenter's own published data (run by hand, output committed).

Inputs, from a Karpenter release (see SOURCE below): the instance-type reference page (`instance-types.md`: the
labels Karpenter gives every type and its allocatable resources after Karpenter's overhead model, AL2023, no
blockDeviceMappings) and the static on-demand price table (`ondemand-prices.json`, Linux, USD per hour).

    .venv/bin/python scripts/fetch_upstream.py                 # verified upstream files in .upstream/
    python -m eks_karpenter.catalogue.generate .upstream/karpenter

The folder is a required argument: the package never reaches outside itself for its inputs.

The output (`instance_types.py` beside this file) is one type per line, sorted, so it regenerates byte-identically
from the same inputs (a test checks that) and a regeneration diffs line by line. It is a Python module of constant
tuples rather than JSON: loading it unmarshals the compiled module (its repeated label values shared, not one
string each), faster in a fresh process than parsing the same rows as JSON, and every plan loads it (figures:
`benchmarks/results/catalogue_load.md`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from eks_karpenter.labels import INSTANCE_TYPE

KARPENTER_VERSION = "1.14.1"
PRICE_REGION = "us-east-1"
PRICE_DATE = "2026-07-06"
SOURCE = (f"Karpenter v{KARPENTER_VERSION}: website/content/en/docs/reference/instance-types.md and "
          f"pkg/providers/pricing/zz_generated.pricing_aws.go ({PRICE_REGION}, generated {PRICE_DATE})")
OUTPUT = Path(__file__).with_name("instance_types.py")

_TYPE = re.compile(r"^### `(?P<name>[^`]+)`\s*$")
_ROW = re.compile(r"^\s*\|(?P<key>[^|]+)\|(?P<value>[^|]*)\|\s*$")
_SECTION = re.compile(r"^#### (?P<section>Labels|Resources)\s*$")

RESOURCE_COLUMNS = ("cpu", "memory", "pods", "ephemeral-storage")
"""Allocatable resources every type has, stored as numbers: millicores, MiB, count, MiB."""


def quantity_millis(text: str) -> int:
    """A Kubernetes CPU quantity (`940m`, `2`) in millicores."""
    return int(text[:-1]) if text.endswith("m") else int(float(text) * 1000)


_BINARY = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}


def quantity_mib(text: str) -> int:
    """A Kubernetes memory quantity with a binary suffix (`1392Mi`, `17Gi`) in MiB."""
    match = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)", text)
    if not match:
        raise ValueError(f"unexpected memory quantity {text!r}")
    return int(int(match[1]) * _BINARY[match[2]])


def parse_instance_types(markdown: str) -> list[dict[str, Any]]:
    """Every `### `type`` block of the reference page: {"name", "labels": {...}, "resources": {...}}."""
    types: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    section = ""
    for line in markdown.splitlines():
        if m := _TYPE.match(line):
            current = {"name": m["name"], "labels": {}, "resources": {}}
            types.append(current)
            section = ""
        elif m := _SECTION.match(line):
            section = m["section"].lower()
        elif current is not None and section and (m := _ROW.match(line)):
            key, value = m["key"].strip(), m["value"].strip()
            if key in ("Label", "Resource", "--"):
                continue
            current[section][key] = value
    for t in types:
        missing = [c for c in RESOURCE_COLUMNS if c not in t["resources"]]
        if missing or t["labels"].get(INSTANCE_TYPE) != t["name"]:
            raise ValueError(f"{t['name']}: incomplete block (missing {missing or 'instance-type label'})")
    return types


def build_catalogue(markdown: str, prices: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The catalogue document: provenance, label columns, and one row per type."""
    types = sorted(parse_instance_types(markdown), key=lambda t: t["name"])
    table = prices[PRICE_REGION]
    label_keys = sorted({k for t in types for k in t["labels"]})
    extended = sorted({k for t in types for k in t["resources"]} - set(RESOURCE_COLUMNS))
    rows = []
    for t in types:
        res = t["resources"]
        rows.append([
            t["name"],
            [t["labels"].get(k) for k in label_keys],
            quantity_millis(res["cpu"]), quantity_mib(res["memory"]), int(res["pods"]),
            quantity_mib(res["ephemeral-storage"]),
            {k: int(res[k]) for k in extended if k in res},
            table.get(t["name"]),
        ])
    return {
        "source": SOURCE,
        "karpenterVersion": KARPENTER_VERSION,
        "priceRegion": PRICE_REGION,
        "priceDate": PRICE_DATE,
        "currency": "USD",
        "priceKind": "on-demand, Linux, per hour",
        "allocatableModel": "Karpenter's overhead model, AL2023, no blockDeviceMappings",
        "labels": label_keys,
        "columns": ["name", "labels", "cpuMillis", "memoryMiB", "pods", "ephemeralStorageMiB", "extended",
                    "onDemandHourly"],
        "types": rows,
    }


_HEAD = {"source": "SOURCE", "karpenterVersion": "KARPENTER_VERSION", "priceRegion": "PRICE_REGION",
         "priceDate": "PRICE_DATE", "currency": "CURRENCY", "priceKind": "PRICE_KIND",
         "allocatableModel": "ALLOCATABLE_MODEL", "labels": "LABELS", "columns": "COLUMNS"}


def render(catalogue: dict[str, Any]) -> str:
    """Stable text: the provenance, then one type per line as a constant tuple (extended resources as sorted
    pairs, so that the whole table is one constant)."""
    lines = ['"""Generated by `python -m eks_karpenter.catalogue.generate`: do not edit (see generate.py)."""', "",
             "# ruff: noqa: E501", "# mypy: ignore-errors", ""]
    lines += [f"{name} = {_literal(catalogue[key])}" for key, name in _HEAD.items()]
    lines += ["", "TYPES = ("]
    for name, values, *numbers, extended, price in catalogue["types"]:
        row = (name, tuple(values), *numbers, tuple(sorted(extended.items())), price)
        lines.append(f"    {_literal(row)},")
    return "\n".join([*lines, ")", ""])


def _literal(value: Any) -> str:
    return repr(tuple(value)) if isinstance(value, list) else repr(value)


def generate(upstream: Path) -> str:
    markdown = (upstream / "instance-types.md").read_text()
    prices = json.loads((upstream / "ondemand-prices.json").read_text())
    return render(build_catalogue(markdown, prices))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m eks_karpenter.catalogue.generate UPSTREAM_KARPENTER_DIR  (e.g. .upstream/karpenter, "
              "filled by scripts/fetch_upstream.py)", file=sys.stderr)
        return 2
    upstream = Path(args[0])
    OUTPUT.write_text(generate(upstream))
    print(f"wrote {OUTPUT} from {upstream}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
