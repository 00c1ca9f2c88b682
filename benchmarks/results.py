"""Result files the benchmarks write (`--write-result`): `benchmarks/results/<name>.md`, the docs' source.

Each file is the benchmark's printed figures in a fenced block, preceded by the command that wrote it and the
machine it ran on. `scripts/gen_docs.py` copies them into docs/cost-and-scale.md between
`<!-- figures:benchmark-<name> -->` markers, and a test checks that file against the committed results: no test
ever runs a benchmark.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> str:
    """Cores, CPU model and Python version of this machine."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}"


def render(command: str, host: str, body: str) -> str:
    """A result file's text: where it came from, then the figures as printed."""
    return f"Refreshed by `{command}` on {host}.\n\n```text\n{body.strip()}\n```\n"


def write_result(name: str, command: str, body: str, host: str | None = None) -> Path:
    """Write `benchmarks/results/<name>.md` and return its path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.md"
    path.write_text(render(command, host or machine(), body))
    return path
