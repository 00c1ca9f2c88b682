"""Habits that keep the suite and the code readable: tests that start a process are marked `slow` (so
`pytest -m "not slow"` stays the quick run), and comments, docstrings and test names say what they check, not
which issue asked for it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support import REPO

TESTS = REPO / "tests"
LIBRARY = REPO / "components" / "eks_karpenter"
_PROCESS_HELPERS = {"run_python", "run_without_upstream", "install_wheel"}
"""Helpers of tests/support that start a process."""
_ISSUE = re.compile(r"\b[Ii]ssue #?\d+|\(#\d+\)|\bissue #\d+")


def _starts_process(fn: ast.FunctionDef, funcs: dict[str, ast.FunctionDef], seen: frozenset[str] = frozenset()) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            if (called.startswith("subprocess.") or called in _PROCESS_HELPERS
                    or any(isinstance(a, ast.Attribute) and ast.unparse(a) == "sys.executable"
                           for a in ast.walk(node))):
                return True
            if (isinstance(node.func, ast.Name) and node.func.id in funcs and node.func.id not in seen
                    and _starts_process(funcs[node.func.id], funcs, seen | {fn.name})):
                return True
    return False


def unmarked_process_tests(root: Path) -> list[str]:
    """Tests that start a process (themselves, through a helper of their module, or through a fixture of their
    module) without the `slow` mark (on the test or the module)."""
    found = []
    for path in sorted(root.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_slow = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
                          and "slow" in ast.unparse(n.value) for n in tree.body)
        funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        fixtures = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                    and any("fixture" in ast.unparse(d) for d in n.decorator_list) and _starts_process(n, funcs)}
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                continue
            slow = module_slow or any("slow" in ast.unparse(d) for d in node.decorator_list)
            uses = {a.arg for a in node.args.args} & fixtures
            if not slow and (uses or _starts_process(node, funcs)):
                found.append(f"{path.relative_to(root)}::{node.name}")
    return found


def issue_references(*roots: Path) -> list[str]:
    """Lines of Python code that name an issue number (in a comment, a docstring, a name)."""
    return [f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}:{i}"
            for root in roots for path in sorted(root.rglob("*.py"))
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _ISSUE.search(line)]


def test_tests_that_start_a_process_are_marked_slow() -> None:
    assert unmarked_process_tests(TESTS) == []


def test_code_and_tests_name_no_issue_numbers() -> None:
    assert issue_references(LIBRARY, TESTS / "config", TESTS / "platform", TESTS / "tools", TESTS / "catalogue",
                            REPO / "infra", REPO / "scripts", REPO / "benchmarks") == []


def test_the_habit_checks_find_planted_lapses(tmp_path: Path) -> None:
    (tmp_path / "test_cli.py").write_text(
        "import subprocess, sys, pytest\n"
        "def run(*a):\n    return subprocess.run([sys.executable, *a])\n"
        "@pytest.fixture\ndef built():\n    return run('-c', 'pass')\n"
        "def test_direct():\n    run('-V')\n"
        "def test_through_fixture(built):\n    assert built\n"
        "@pytest.mark.slow\ndef test_marked():\n    run('-V')\n"
        "def test_pure():\n    assert 1  # the parser (issue 12) reads it\n")
    assert unmarked_process_tests(tmp_path) == ["test_cli.py::test_direct", "test_cli.py::test_through_fixture"]
    assert issue_references(tmp_path) == [f"{tmp_path / 'test_cli.py'}:15"]
