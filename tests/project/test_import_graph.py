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


# --- layers: the same graph, read package by package --------------------------------------------------------

LAYERED = ("platform", "tools")
"""Folders whose sub-packages and modules are packages of their own (a concern, a tool)."""


def package_of(module: str, root: str = "eks_karpenter") -> str:
    """The package a module belongs to: `root.X` for a top-level module or package, `root.platform.X` and
    `root.tools.X` for a concern or a tool (`root.platform` itself for its `__init__`)."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in LAYERED:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def package_edges(graph: dict[str, set[str]], root: str = "eks_karpenter") -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the module imports behind it, between distinct packages."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, deps in graph.items():
        for dep in deps:
            a, b = package_of(module, root), package_of(dep, root)
            if a != b and b != root:
                edges.setdefault((a, b), []).append(f"{module} -> {dep}")
    return edges


def layer_violations(graph: dict[str, set[str]], root: str = "eks_karpenter") -> list[str]:
    """What breaks the layers: `config` importing a concern (anything under `platform`), the platform importing
    a tool, and two packages importing each other."""
    edges = package_edges(graph, root)
    found = []
    for (a, b), why in sorted(edges.items()):
        if a == f"{root}.config" and b.startswith(f"{root}.platform"):
            found.append(f"config imports a concern: {', '.join(sorted(why))}")
        if a.startswith(f"{root}.platform") and b.startswith(f"{root}.tools"):
            found.append(f"the platform imports a tool: {', '.join(sorted(why))}")
        if a < b and (b, a) in edges:
            found.append(f"{a} and {b} import each other: {', '.join(sorted(why + edges[(b, a)]))}")
    return found


def test_the_packages_keep_their_layers() -> None:
    """`config` sits below every concern, the platform below every tool, and no two packages (top level, or
    concern and tool level) import each other, counting function-local and TYPE_CHECKING imports."""
    graph = import_graph(ROOT, "eks_karpenter")
    assert package_of("eks_karpenter.platform.nodepool.rules") == "eks_karpenter.platform.nodepool"
    assert package_of("eks_karpenter.config.errors") == "eks_karpenter.config"
    assert layer_violations(graph) == []


def test_the_layer_check_finds_planted_violations(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    for folder in ("config", "platform/a", "platform/b", "tools/t"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "platform" / "__init__.py").write_text("")
    (pkg / "tools" / "__init__.py").write_text("")
    (pkg / "config" / "model.py").write_text("x = 1\n")
    (pkg / "platform" / "a" / "rules.py").write_text("from pkg.config.model import x\n")
    (pkg / "platform" / "b" / "plan.py").write_text("y = 1\n")
    (pkg / "tools" / "t" / "run.py").write_text("from pkg.platform.a.rules import x\n")
    assert layer_violations(import_graph(tmp_path, "pkg"), "pkg") == []

    # Each planted import, alone, is found: hidden in a function, or behind TYPE_CHECKING.
    (pkg / "config" / "model.py").write_text("x = 1\ndef f():\n    from pkg.platform.b import plan\n")
    assert [v.split(":")[0] for v in layer_violations(import_graph(tmp_path, "pkg"), "pkg")] == [
        "config imports a concern"]
    (pkg / "config" / "model.py").write_text("x = 1\n")
    (pkg / "platform" / "b" / "plan.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.tools.t import run\ny = 1\n")
    assert [v.split(":")[0] for v in layer_violations(import_graph(tmp_path, "pkg"), "pkg")] == [
        "the platform imports a tool"]
    (pkg / "platform" / "b" / "plan.py").write_text("from pkg.platform.a.rules import x\ny = 1\n")
    (pkg / "platform" / "a" / "rules.py").write_text("from pkg.config.model import x\ndef g():\n"
                                                     "    from pkg.platform.b.plan import y\n")
    assert [v.split(":")[0] for v in layer_violations(import_graph(tmp_path, "pkg"), "pkg")] == [
        "pkg.platform.a and pkg.platform.b import each other"]
