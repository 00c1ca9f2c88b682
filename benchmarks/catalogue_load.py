"""Catalogue loading benchmark: the figures behind two choices of `eks_karpenter/catalogue/`.

Prints figures, asserts nothing:
- loading the shipped rows in a fresh process: importing the generated module (`instance_types.py`, compiled) versus
  parsing the same rows written as JSON (why generate.py writes a Python module);
- building one `InstanceType` per row: the slotted dataclass as shipped versus a frozen one (why model.py's is not
  frozen).

Run: .venv/bin/python -m benchmarks.catalogue_load [--repeat 15] [--write-result]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import py_compile
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.results import write_result

REPO = Path(__file__).resolve().parent.parent
COMMAND = "python -m benchmarks.catalogue_load --write-result"


def fresh_process_seconds(setup: str, code: str, repeat: int) -> float:
    """Best time of `code` in a fresh interpreter, timed after `setup` (start-up and setup not included)."""
    timed = f"import time\n{setup}\nt = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)\n"
    runs = [float(subprocess.run([sys.executable, "-c", timed], cwd=REPO, check=True, capture_output=True,
                                 text=True).stdout) for _ in range(repeat)]
    return min(runs)


def load_figures(repeat: int) -> tuple[float, float]:
    """(module import, JSON parse) seconds for the catalogue rows, each in a fresh process."""
    from eks_karpenter.catalogue import instance_types

    # As an installed wheel has it (pip compiles on install), whatever PYTHONDONTWRITEBYTECODE says here.
    py_compile.compile(instance_types.__file__, doraise=True)
    with tempfile.TemporaryDirectory() as folder:
        rows = Path(folder) / "types.json"
        rows.write_text(json.dumps({"LABELS": instance_types.LABELS, "TYPES": instance_types.TYPES}))
        module = fresh_process_seconds("import eks_karpenter.catalogue",
                                       "import eks_karpenter.catalogue.instance_types", repeat)
        parsed = fresh_process_seconds("import json", f"json.loads(open({str(rows)!r}).read())", repeat)
    return module, parsed


def build_figures(repeat: int) -> tuple[int, float, float]:
    """(rows, slotted seconds, frozen seconds): one object per catalogue row, best of `repeat`."""
    from eks_karpenter.catalogue.model import InstanceType, load_catalogue

    types = load_catalogue().types
    fields = [f.name for f in dataclasses.fields(InstanceType) if f.init]
    frozen = dataclasses.make_dataclass("FrozenInstanceType", fields, frozen=True, eq=False)
    rows = [tuple(getattr(t, name) for name in fields) for t in types]

    def best(cls: type) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            for row in rows:
                cls(*row)
            times.append(time.perf_counter() - start)
        return min(times)

    return len(rows), best(InstanceType), best(frozen)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--write-result", action="store_true", help="also write benchmarks/results/catalogue_load.md")
    args = parser.parse_args(argv)
    module, parsed = load_figures(args.repeat)
    count, slotted, frozen = build_figures(args.repeat)
    body = (f"catalogue rows, fresh process (best of {args.repeat}): import the generated module {module * 1000:.1f} "
            f"ms; parse the same rows as JSON {parsed * 1000:.1f} ms ({parsed / module:.1f}x as long)\n"
            f"{count} InstanceType objects (best of {args.repeat}): slotted dataclass {slotted * 1000:.2f} ms; "
            f"frozen dataclass {frozen * 1000:.2f} ms ({frozen / slotted:.1f}x as long)")
    print(body)
    if args.write_result:
        print(f"wrote {write_result('catalogue_load', COMMAND, body)}")


if __name__ == "__main__":
    main()
