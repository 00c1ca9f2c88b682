"""No import loop inside the library, counting every import statement: module-level, function-local (where a loop
hides: it works until someone moves the import up) and TYPE_CHECKING-only ones."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import REPO

ROOT = REPO / "components"


def module_files(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module of `package` under `root`: dotted name -> (file, whether it is a package's __init__)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _owning_module(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """The library module `name` lives in (`a.b.c` -> `a.b` when `c` is a name in `a.b`), None outside it."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
              modules: dict[str, tuple[Path, bool]]) -> set[str]:
    if isinstance(node, ast.Import):
        return {m for alias in node.names if (m := _owning_module(alias.name, modules))}
    base = node.module or ""
    if node.level:  # relative: from the importing module's package, one level up per extra dot
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    out = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        found = submodule if submodule in modules else _owning_module(base, modules)
        if found:
            out.add(found)
    return out


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the library modules it imports anywhere in its body."""
    modules = module_files(root, package)
    graph = {}
    for module, (path, is_package) in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                deps |= _imported(node, module, is_package, modules)
        graph[module] = deps - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_library_has_no_import_loop() -> None:
    """A loop (tools/cli.py <-> tools/smoke/cli.py was one) forces function-local imports to hide it and breaks
    as soon as one of them moves; shared code belongs in a module both import (tools/project.py there)."""
    graph = import_graph(ROOT, "eks_karpenter")
    assert len(graph) > 100 and graph["eks_karpenter.tools.cli"]
    assert cycles(graph) == []


def test_the_check_finds_loops_hidden_in_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import x\n")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import y\nx = 1\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"} and graph["pkg.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"]]
    (pkg / "sub" / "b.py").write_text("x = 1\n")
    assert cycles(import_graph(tmp_path, "pkg")) == []
