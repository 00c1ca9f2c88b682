"""The wheel holds one import name, `eks_karpenter` (with its catalogue), and imports nothing undeclared."""

from __future__ import annotations

import ast
import pickle
import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from eks_karpenter.tools.policypack import PACK_FILES

from tests.support import REPO
from tests.support.wheel import built_wheel

SOURCE = REPO / "components" / "eks_karpenter"
# Declared dependencies (distribution -> import names) and the optional extras' (imported inside functions only).
# What the program runs at `up`, `preview` and `destroy` (the Kubernetes client, the EKS token) is a dependency:
# the template installs no extra. The CEL evaluator that checks a consumer against the platform's admission
# policies is the `consumer` extra: it has no wheel for musl nor an sdist, and the platform never evaluates.
DEPENDENCIES = {"pulumi": {"pulumi"}, "pulumi-aws": {"pulumi_aws"}, "pulumi-kubernetes": {"pulumi_kubernetes"},
                "pulumi-eks": {"pulumi_eks"}, "pydantic": {"pydantic"}, "pyyaml": {"yaml"},
                "kubernetes": {"kubernetes"}, "boto3": {"boto3", "botocore"}}
EXTRAS: dict[str, dict[str, set[str]]] = {"live": {}, "smoke": {}, "consumer": {"cel-expr-python": {"cel_expr_python"}}}
NEVER = {"components", "infra", "tests"}


@pytest.fixture(scope="module")
def wheel() -> zipfile.ZipFile:
    return zipfile.ZipFile(built_wheel())


def _metadata(wheel: zipfile.ZipFile) -> tuple[str, str]:
    [dist_info] = {n.split("/")[0] for n in wheel.namelist() if n.split("/")[0].endswith(".dist-info")}
    return dist_info, wheel.read(f"{dist_info}/METADATA").decode()


@pytest.mark.slow  # builds the wheel
def test_only_eks_karpenter_and_its_dist_info(wheel: zipfile.ZipFile) -> None:
    dist_info, _ = _metadata(wheel)
    assert re.fullmatch(r"eks_karpenter-[0-9][^/]*\.dist-info", dist_info)
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert tops == {"eks_karpenter", dist_info}, tops
    assert not tops & NEVER
    assert not [n for n in wheel.namelist() if n.endswith((".pyc", ".pyo")) or "__pycache__" in n]


@pytest.mark.slow  # builds the wheel
def test_every_source_file_and_the_catalogue_are_inside(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "eks_karpenter/catalogue/instance_types.py" in names
    assert "eks_karpenter/__init__.py" in names and "eks_karpenter/tools/cli.py" in names
    source = {f"eks_karpenter/{p.relative_to(SOURCE).as_posix()}" for p in SOURCE.rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")}
    assert source - names == set(), "source files missing from the wheel"
    packed = {n for n in names if n.startswith("eks_karpenter/")} - source
    assert packed == {f"eks_karpenter/policypack/{f}" for f in PACK_FILES}, "files not in the source"


@pytest.mark.slow  # builds the wheel
def test_under_two_megabytes() -> None:
    assert built_wheel().stat().st_size < 2 * 1024 * 1024


@pytest.mark.slow  # builds the wheel
def test_the_console_script_and_declared_dependencies(wheel: zipfile.ZipFile) -> None:
    dist_info, metadata = _metadata(wheel)
    entry_points = wheel.read(f"{dist_info}/entry_points.txt").decode()
    assert re.search(r"^eks-karpenter = eks_karpenter\.tools\.cli:main$", entry_points, re.M)
    requires = Parser().parsestr(metadata).get_all("Requires-Dist") or []
    plain = {re.split(r"[ <>=!~;\[]", r, maxsplit=1)[0].lower() for r in requires if "extra ==" not in r}
    assert plain == set(DEPENDENCIES), "a new dependency: add its import name to DEPENDENCIES"
    for extra, dists in EXTRAS.items():
        declared = {re.split(r"[ <>=!~;\[]", r, maxsplit=1)[0].lower() for r in requires
                    if re.search(rf"extra == ['\"]{extra}['\"]", r)}
        assert set(dists) <= declared, (extra, declared)


def test_the_consumer_extra_is_in_the_dev_extra_and_pinned() -> None:
    """The tests evaluate the policies, so `dev` carries the `consumer` extra's requirement, and constraints.txt
    pins it like every other distribution."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [evaluator] = extras["consumer"]
    assert evaluator.startswith("cel-expr-python") and evaluator in extras["dev"]
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in dependencies if d.startswith("cel-expr-python")]
    assert re.search(r"^cel-expr-python==", (REPO / "constraints.txt").read_text(), re.M)


def _imports(tree: ast.Module) -> list[tuple[str, bool, int]]:
    """(top-level name, inside a function, line) of every absolute import."""
    found: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                found.extend((alias.name.split(".")[0], in_function, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module.split(".")[0], in_function, child.lineno))
            visit(child, nested)

    visit(tree, False)
    return found


def _modules(wheel: zipfile.ZipFile) -> dict[str, ast.Module]:
    try:
        return {name: ast.parse(wheel.read(name), filename=name) for name in wheel.namelist() if name.endswith(".py")}
    except SystemError:  # CPython 3.11's "AST constructor recursion depth mismatch": parse in a fresh process
        code = ("import ast, pickle, sys, zipfile; w = zipfile.ZipFile(sys.argv[1]); sys.stdout.buffer.write("
                "pickle.dumps({n: ast.parse(w.read(n), filename=n) for n in w.namelist() if n.endswith('.py')}))")
        done = subprocess.run([sys.executable, "-c", code, str(wheel.filename)], capture_output=True, check=True)
        modules: dict[str, ast.Module] = pickle.loads(done.stdout)  # our own child's output
        return modules


@pytest.mark.slow  # builds the wheel
def test_imports_only_the_stdlib_itself_and_declared_dependencies(wheel: zipfile.ZipFile) -> None:
    top_level = set(sys.stdlib_module_names) | {"eks_karpenter"} | {n for names in DEPENDENCIES.values() for n in names}
    optional = {name for dists in EXTRAS.values() for names in dists.values() for name in names}
    problems = []
    modules = _modules(wheel)
    assert len(modules) > 50
    for name, tree in modules.items():
        # The policy pack is a program Pulumi runs with its own requirements (pulumi-policy), never imported.
        pack = {"pulumi_policy", "guardrails"} if name.startswith("eks_karpenter/policypack/") else set()
        for module, in_function, line in _imports(tree):
            allowed = (top_level | optional if in_function else top_level) | pack
            if module in NEVER or module not in allowed:
                problems.append(f"{name}:{line}: imports {module}" + ("" if in_function else " at module level"))
    assert problems == []


def test_the_import_check_catches_what_it_should() -> None:
    bad = ast.parse("import boto3\nfrom infra import x\n"
                    "def f():\n    import kubernetes\n    from components import y\n")
    assert _imports(bad) == [("boto3", False, 1), ("infra", False, 2), ("kubernetes", True, 4),
                             ("components", True, 5)]


def test_pyproject_packs_only_the_library() -> None:
    text = (REPO / "pyproject.toml").read_text()
    assert 'packages = ["components/eks_karpenter"]' in text
    assert Path(SOURCE / "__init__.py").is_file()


def test_the_version_is_one_fact(wheel: zipfile.ZipFile) -> None:
    """`__version__` is written once: the wheel's metadata, the policy pack and the changelog's newest entry
    agree with it, and pyproject.toml does not write it again."""
    import eks_karpenter

    version = eks_karpenter.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    _, metadata = _metadata(wheel)
    assert Parser().parsestr(metadata)["Version"] == version
    assert 'dynamic = ["version"]' in (REPO / "pyproject.toml").read_text()
    assert not re.search(r"^version\s*=", (REPO / "pyproject.toml").read_text(), re.M)
    import yaml

    assert str(yaml.safe_load((REPO / "policy" / "PulumiPolicy.yaml").read_text())["version"]) == version
    [newest] = re.findall(r"^## (\d+\.\d+\.\d+)", (REPO / "CHANGELOG.md").read_text(), re.M)[:1]
    assert newest == version
    assert re.search(rf"^## {re.escape(version)} ", (REPO / "docs" / "UPGRADING.md").read_text(), re.M)


def test_the_licence_ships_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    dist_info, metadata = _metadata(wheel)
    licence = (REPO / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence and "END OF TERMS" in licence
    assert Parser().parsestr(metadata)["License-Expression"] == "Apache-2.0"
    shipped = {n.rsplit("/", 1)[1] for n in wheel.namelist() if n.startswith(f"{dist_info}/licenses/")}
    assert shipped == {"LICENSE", "NOTICE"}
    notice = (REPO / "NOTICE").read_text()
    assert all(name in notice for name in ("Karpenter", "AWS Node Termination Handler", "botocore", "Pulumi"))


def test_the_policy_pack_in_the_wheel_is_the_repositorys(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    for name in ("guardrails.py", "__main__.py", "requirements.txt"):
        assert wheel.read(f"eks_karpenter/policypack/{name}") == (REPO / "policy" / name).read_bytes()
    # Written out by the command, the pack's YAML no longer points at this checkout's venv.
    from eks_karpenter.tools.cli import main

    assert main(["policy-pack", "--out", str(tmp_path / "pack")]) == 0
    import yaml

    written = yaml.safe_load((tmp_path / "pack" / "PulumiPolicy.yaml").read_text())
    assert written["runtime"] == {"name": "python", "options": {"toolchain": "pip"}}
    assert (tmp_path / "pack" / "guardrails.py").read_bytes() == (REPO / "policy" / "guardrails.py").read_bytes()
    assert main(["policy-pack", "--out", str(tmp_path / "pack2"), "--virtualenv", "../venv"]) == 0
    assert yaml.safe_load((tmp_path / "pack2" / "PulumiPolicy.yaml").read_text())["runtime"]["options"] == {
        "toolchain": "pip", "virtualenv": "../venv"}
