"""The README's scale table is the benchmark's own output: same lines, same columns, same sizes (not timings).

The README block is copied from `benchmarks/results/scale.md` (which `benchmarks.scale --write-result` writes) by
`scripts/gen_docs.py`; tests/project/test_docs.py checks the copy, this file checks the shape of what was copied."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import results, scale
from tests.support import REPO

BEGIN, END = "<!-- figures:benchmark-scale -->", "<!-- /figures -->"


def _readme_block() -> str:
    text = (REPO / "docs" / "cost-and-scale.md").read_text()
    assert BEGIN in text and END in text, "docs/cost-and-scale.md lost the benchmark markers"
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    return block.split("```text", 1)[1].removesuffix("```").strip()


def test_result_file_is_written_as_the_readme_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    path = results.write_result("scale", "python -m benchmarks.scale --markdown --write-result", _fake_output(),
                                host="2 cores, Some CPU, Python 3.11.7")
    written = path.read_text()
    assert written.startswith("Refreshed by `python -m benchmarks.scale --markdown --write-result` on 2 cores")
    assert scale.shape(written.split("```text", 1)[1].removesuffix("```\n").strip()) == scale.shape(_fake_output())


def _fake_output() -> str:
    figures = {"seconds": 1.0, "rss_mb": 100.0, "invokes": 1.0, "resources": 80.0}
    results = {n: {"ours": {**figures, "seconds": 1.0 + n / 1000}, "floor": {**figures, "seconds": 0.9 + n / 1100},
                   "bare": {**figures, "seconds": 0.85 + n / 1200}, "raw": figures}
               for n in (0, 100, 300, 1000)}
    return scale.render_block("2 cores, Some CPU, Python 3.11.7", 3, results, 0.5, 0.4)


def test_readme_block_has_the_shape_of_the_benchmark_output() -> None:
    assert scale.shape(_readme_block()) == scale.shape(_fake_output())


def test_readme_rows_are_the_default_sizes() -> None:
    sizes = [int(m) for m in re.findall(r"^\| (\d+) \|", _readme_block(), re.M)]
    assert sizes == [0, 100, 300, 1000]


def test_shape_ignores_figures_but_not_columns() -> None:
    fake = _fake_output()
    assert scale.shape(fake) == scale.shape(fake.replace("1.00", "9.99"))
    assert scale.shape(fake) != scale.shape(fake.replace("| 0 |", "| 0 | 0 |", 1))


def test_verdicts_are_computed_from_the_figures() -> None:
    def side(seconds: float, rss: float = 100.0, invokes: float = 2.0) -> dict[str, float]:
        return {"seconds": seconds, "rss_mb": rss, "invokes": invokes, "resources": 1.0}

    results = {0: {"ours": side(0.5), "floor": side(0.25), "raw": side(0.1)},
               100: {"ours": side(1.1), "floor": side(1.0), "raw": side(0.8)},
               1000: {"ours": side(9.0, rss=120.0, invokes=3.0), "floor": side(8.0), "raw": side(6.0)}}
    lines = scale.verdict_lines(results, library=1.3, providers=1.0)
    assert "N=0: 2.00x, NOT met" in lines[1] and "N=100: 1.10x, met" in lines[2]
    assert "N=1000: 1.12x, met" in lines[3]
    assert lines[4].endswith("ours x1.42, floor x1.03, NOT met")  # 8.5 / 6.0 against 7.75 / 7.5 ms per pair
    assert lines[5].endswith("1.20x, NOT met") and lines[6].endswith("NOT met") and lines[7].endswith("1.30x, NOT met")
