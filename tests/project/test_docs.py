"""Generated docs stay true: component pages, the stack-file reference, README figures and the Library API.

`scripts/gen_docs.py` writes them; these tests regenerate everything in memory (the resource counts from the
committed stacks' offline plans, the benchmark tables from `benchmarks/results/`, never from a benchmark run)
and compare with what is committed.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import eks_karpenter
import pytest
from eks_karpenter.config.stackfile import read_stack_file

from tests.support import REPO, STACKS, plan_stack

SCHEMA_LINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


gen = _load()


@pytest.mark.slow
def test_committed_docs_are_what_the_script_generates() -> None:
    files = gen.generated({stack: plan_stack(stack) for stack in STACKS})
    stale = [str(p.relative_to(REPO)) for p in gen.stale(files)]
    assert not stale, f"stale generated docs {stale}: run `.venv/bin/python scripts/gen_docs.py`"


@pytest.mark.slow
def test_every_component_is_found_with_its_token_inputs_and_outputs() -> None:
    found = {c.name: c for c in gen.components()}
    assert set(found) == {"Network", "Cluster", "Access", "Namespaces", "NodeRole", "KarpenterIam",
                          "InterruptionQueue", "Karpenter", "KarpenterFargateProfile", "NodeClass", "NodePool",
                          "NodeTerminationHandler", "Migration", "Observability"}
    for c in found.values():
        assert c.doc and c.inputs and c.outputs, c.name
        undocumented = [f.name for f in [*c.inputs, *c.outputs] if not f.doc]
        assert not undocumented, f"{c.name}: attributes without a docstring {undocumented}"
    assert found["Network"].token == "eks-karpenter:index:Network"
    assert found["NodePool"].token == "kubernetes:karpenter.sh/v1:NodePool"
    cluster = {f.name: f for f in found["Cluster"].inputs}
    assert cluster["config"].type == "ClusterConfig" and cluster["config"].required
    assert not cluster["source"].required  # NotRequired[...] is unwrapped and marked optional
    assert cluster["vpcId"].doc == "VPC the cluster runs in."


def test_attribute_docstrings_are_read_from_source() -> None:
    tree = ast.parse('class A:\n    x: int\n    """The x."""\n    y: "NotRequired[str]"\n    z: ClassVar[int]\n')
    body = tree.body[0]
    assert isinstance(body, ast.ClassDef)
    fields = list(gen._fields(body.body))
    assert [(f.name, f.doc) for f in fields] == [("x", "The x."), ("y", "")]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(gen.EXAMPLES))
def test_each_example_compiles_and_passes_the_component_its_inputs(name: str) -> None:
    code = gen.EXAMPLES[name]
    tree = compile(code, f"<example {name}>", "exec", ast.PyCF_ONLY_AST)
    component = next(c for c in gen.components() if c.name == name)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == name]
    assert len(calls) == 1, f"the {name} example constructs it once"
    args = calls[0].args[1]
    assert isinstance(args, ast.Dict)
    keys = {k.value for k in args.keys if isinstance(k, ast.Constant)}
    inputs = {f.name for f in component.inputs}
    assert keys <= inputs, f"{name} example passes unknown inputs {keys - inputs}"
    assert {f.name for f in component.inputs if f.required} <= keys, f"{name} example misses a required input"
    compile(code, f"<example {name}>", "exec")
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "eks_karpenter"
                for a in n.names}
    assert imported <= set(eks_karpenter.__all__)


@pytest.mark.slow
def test_every_component_has_an_example() -> None:
    assert set(gen.EXAMPLES) == {c.name for c in gen.components()}


@pytest.mark.slow
def test_library_api_lists_every_public_name_once() -> None:
    block = gen.library_api()
    listed = re.findall(r"^\| (?:\[)?`([A-Za-z_]+)`", block, re.M)
    assert sorted(listed, key=str.lower) == sorted(eks_karpenter.__all__, key=str.lower)
    assert all(line.count(" | ") == 1 for line in block.splitlines()[2:]), "one line, two cells per name"


def test_one_line_is_the_first_sentence() -> None:
    class A:
        """First `x`. Second.

        More."""

    assert gen.one_line(A) == "First `x`."


def test_stack_file_page_has_every_key_path_with_type_and_default() -> None:
    page = (REPO / "docs" / "stack-file.md").read_text()
    schema = json.loads((REPO / "schema" / "stack.schema.json").read_text())
    for key in schema["properties"]["config"]["properties"]:
        assert f"## `{key}`" in page
    assert re.search(r"`eks-karpenter:network\.natGateways` \| `\"single\"` \\\| `\"perAz\"` \| `\"perAz\"` \|",
                     page)
    assert '<a id="key-eks-karpenter-nodepools---limits"></a>`eks-karpenter:nodePools[].limits` |' in page
    assert re.search(r"`eks-karpenter:cluster\.name` \| string \| required \|", page)


def test_a_lost_or_doubled_marker_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each generated block lives in exactly one of the README and docs pages (FIGURE_FILES)."""
    assert gen.fill_blocks("a <!-- figures:x -->old<!-- /figures --> b", {"x": lambda: "new"}) == \
        "a <!-- figures:x -->\nnew\n<!-- /figures --> b"
    with pytest.raises(SystemExit, match="has no <!-- /figures -->"):
        gen.fill_blocks("a <!-- figures:x -->old", {"x": lambda: "new"})
    homes = gen.block_homes()
    assert set(homes) == set(gen.readme_blocks({})) and all(len(files) == 1 for files in homes.values()), homes
    for broken in ({**homes, "library-api": []}, {**homes, "library-api": ["README.md", "docs/library.md"]}):
        monkeypatch.setattr(gen, "block_homes", lambda broken=broken: broken)
        with pytest.raises(SystemExit, match="exactly one"):
            gen.generated(plans={})


@pytest.mark.slow
def test_resource_counts_are_the_plans() -> None:
    table = gen.resource_counts({"dev": plan_stack("dev")})
    doc = plan_stack("dev")
    custom = sum(r.custom for r in doc.resources)
    assert f"| `dev` | {custom} | {len(doc.resources) - custom} |" in table
    readme = (REPO / "docs" / "offline-plan.md").read_text()
    assert f"%% eks-karpenter / dev: {custom} resources in {len(doc.resources) - custom} components" in readme


@pytest.mark.parametrize("name", ["command", "scale", "instructions", "cost", "simulate"])
def test_readme_benchmark_blocks_are_the_committed_result_files(name: str) -> None:
    result = (REPO / "benchmarks" / "results" / f"{name}.md").read_text().strip()
    assert result.startswith(f"Refreshed by `python -m benchmarks.{name} ")
    block = f"<!-- figures:benchmark-{name} -->\n{result}\n<!-- /figures -->"
    assert block in (REPO / "docs" / "cost-and-scale.md").read_text()


# Editor support: every platform stack file names the committed schema, relative to itself.

def _platform_stack_files() -> list[Path]:
    return sorted((REPO / "stacks").glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("path", _platform_stack_files(), ids=lambda p: p.name)
def test_stack_file_names_the_schema(path: Path) -> None:
    first = path.read_text().splitlines()[0]
    match = SCHEMA_LINE.match(first)
    assert match, f"{path.name}: first line must be `# yaml-language-server: $schema=../schema/stack.schema.json`"
    assert (path.parent / match.group(1)).resolve() == (REPO / "schema" / "stack.schema.json").resolve()


@pytest.mark.parametrize("path", _platform_stack_files(), ids=lambda p: p.name)
def test_the_schema_comment_leaves_the_reader_and_its_lines_alone(path: Path) -> None:
    text = path.read_text()
    file = read_stack_file(path, f"stacks/{path.name}", "eks-karpenter")
    assert not file.issues
    lines = text.splitlines()
    assert file.lines[("config",)] == lines.index("config:") + 1
    for key, line in file.lines.items():
        if len(key) == 1 and key != ("config",):  # top-level keys: `  <key>:` at the line the reader says
            assert lines[line - 1].lstrip().startswith(f"{key[0]}:"), (key, line)


def test_readme_error_example_names_the_lines_of_the_committed_dev_stack() -> None:
    lines = (REPO / "stacks" / "Pulumi.dev.yaml").read_text().splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if text in line)

    block = gen.stack_file_errors()
    assert f"stacks/Pulumi.dev.yaml:{line_of('availabilityZones:')}: eks-karpenter:network.availabilityZones[1]" \
        in block
    assert f"stacks/Pulumi.dev.yaml:{line_of('eks-karpenter:nodeClasses:')}: karpenter:nodeClasses:" in block
    assert f"stacks/Pulumi.dev.yaml:{line_of('limits: {cpu:')}: eks-karpenter:nodePools[0].limits.cpus" in block
    assert block in (REPO / "docs" / "offline-plan.md").read_text()


@pytest.mark.slow
def test_the_examples_in_order_make_one_program_that_plans(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine import plan_program

    (tmp_path / "Pulumi.yaml").write_text("name: examples\nruntime: python\nmain: __main__.py\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text("\n".join(gen.EXAMPLES.values()))
    doc = plan_program(tmp_path, "dev")
    types = {r.type for r in doc.resources}
    missing = [c.name for c in gen.components() if c.token not in types]
    assert not missing, f"examples that register nothing: {missing}"


def test_component_pages_link_to_rows_of_the_stack_file_page() -> None:
    ids = re.findall(r'<a id="([^"]+)"></a>', (REPO / "docs" / "stack-file.md").read_text())
    assert len(ids) == len(set(ids)), "every key path has its own anchor"
    links = [link for page in (REPO / "docs" / "components").glob("*.md")
             for link in re.findall(r"\(\.\./stack-file\.md#([^)]+)\)", page.read_text())]
    assert links and set(links) <= set(ids)
    targets = [Path(p) for page in (REPO / "docs" / "components").glob("*.md")
               for p in re.findall(r"\]\((\.\./\.\./[^)#]+)\)", page.read_text())]
    assert all((REPO / "docs" / "components" / p).resolve().is_file() for p in targets)


def test_the_readme_is_a_ten_minute_read_that_links_the_docs() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) < 400
    links = set(re.findall(r"\]\((docs/[^)#]+|CHANGELOG\.md|LICENSE|NOTICE)\)", readme))
    guides = {"docs/deploy.md", "docs/changes.md", "docs/operations.md", "docs/migrate-from-cluster-autoscaler.md",
              "docs/pins-and-upgrades.md"}
    assert guides <= links
    missing = [link for link in sorted(links) if not (REPO / link).exists()]
    assert missing == []
    moved = ("offline-plan.md", "real-path.md", "review-flow.md", "config-reference.md", "library.md",
             "cost-and-scale.md", "deploy-role.md", "stack-file.md", "UPGRADING.md")
    assert {f"docs/{name}" for name in moved} <= links


def test_links_between_the_docs_resolve() -> None:
    for page in sorted((REPO / "docs").glob("*.md")):
        text = page.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http", "#", "mailto")):
                continue
            path = target.split("#", 1)[0]
            assert (page.parent / path).exists(), f"{page.name}: {target}"
