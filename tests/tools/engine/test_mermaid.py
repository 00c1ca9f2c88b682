"""Mermaid view of a plan: one subgraph per layer, components as nodes, custom resources counted by type."""

from __future__ import annotations

import re

import pytest
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.engine import PlanDocument, PlannedResource
from eks_karpenter.tools.engine.mermaid import TIMES, render_mermaid

from tests.support import REPO, STACKS, plan_stack

ID = r"[A-Za-z0-9_]+"
NODE = re.compile(rf"^\s+({ID})(\[|\(\[)\"")
SUBGRAPH = re.compile(rf"^\s*subgraph ({ID})\[\"(.*)\"\]$")
EDGE = re.compile(rf"^\s+({ID}) (-->|-\. depends on \.->) ({ID})$")


def r(urn_chain: str, name: str, parent: str = "", custom: bool = True, deps: list[str] | None = None,
      protect: bool = False) -> PlannedResource:
    type_ = urn_chain.rsplit("$", 1)[-1]
    return PlannedResource(urn=f"urn:pulumi:s::p::{urn_chain}::{name}", type=type_, name=name, parent=parent,
                           custom=custom, inputs={}, dependencies=deps or [],
                           options={"protect": True} if protect else {})


def synthetic() -> PlanDocument:
    """Two layers; the cluster layer nests a component with its own children and depends on the network."""
    net = r("x:index:Network", "network", custom=False)
    vpc = r("x:index:Network$aws:ec2/vpc:Vpc", "network-vpc", net.urn, protect=True)
    subnets = [r("x:index:Network$aws:ec2/subnet:Subnet", f"network-{z}", net.urn, protect=z == "a")
               for z in "abc"]
    cluster = r("x:index:Cluster", "cluster", custom=False)
    eks = r("x:index:Cluster$eks:index:Cluster", "cluster-eks", cluster.urn, custom=False, deps=[subnets[0].urn])
    role = r("x:index:Cluster$eks:index:Cluster$aws:iam/role:Role", 'odd "name" end', eks.urn)
    attach = r("x:index:Cluster$eks:index:Cluster$aws:iam/role:Role$aws:iam/rolePolicyAttachment:"
               "RolePolicyAttachment", "attach", role.urn)
    loose = r("aws:s3/bucket:Bucket", "state")
    return PlanDocument("p", "s", sorted([net, vpc, *subnets, cluster, eks, role, attach, loose],
                                         key=lambda x: x.urn))


def test_one_subgraph_per_layer_with_nested_components() -> None:
    text = render_mermaid(synthetic())
    assert text.startswith("flowchart TB\n")
    subgraphs = [m.group(2) for line in text.splitlines() if (m := SUBGRAPH.match(line))]
    assert subgraphs == ["cluster", "cluster-eks", "network", "stack"]
    assert text.count("\n    end\n") == 3  # cluster (holding cluster-eks), network, stack
    assert "        end\n" in text  # cluster-eks nested one level deeper


def test_custom_resources_are_counted_per_type() -> None:
    text = render_mermaid(synthetic())
    assert f"aws:ec2/subnet:Subnet {TIMES}3 (1 protected)" in text
    assert f"aws:ec2/vpc:Vpc {TIMES}1 (protected)" in text
    # The attachment is parented to a role, not a component: it counts for the role's component.
    assert f"aws:iam/rolePolicyAttachment:RolePolicyAttachment {TIMES}1" in text
    assert "network-a" not in text, "resources are summarised, not listed"


def test_ids_are_sanitised_and_labels_escaped() -> None:
    text = render_mermaid(synthetic())
    assert '"' not in "".join(re.findall(r'\["(.*?)"\]', text))
    assert "#quot;" not in text  # the odd name is a custom resource: summarised, never printed
    ids = [m.group(1) for line in text.splitlines() if (m := NODE.match(line) or SUBGRAPH.match(line))]
    assert ids and all(re.fullmatch(ID, i) for i in ids)
    assert len(ids) == len(set(ids))
    assert not any(i.lower() == "end" for i in ids)
    for line in text.splitlines():
        if edge := EDGE.match(line):
            assert edge.group(1) in ids and edge.group(3) in ids, line


def test_layers_that_depend_on_each_other_are_linked() -> None:
    text = render_mermaid(synthetic())
    assert "    s_cluster -. depends on .-> s_network\n" in text
    assert "s_network -. depends on" not in text


def test_label_quotes_are_escaped() -> None:
    comp = r('x:index:Thing', 'say "hi"', custom=False)
    text = render_mermaid(PlanDocument("p", "s", [comp]))
    assert "say #quot;hi#quot;" in text


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_real_plans_render_deterministically(stack: str) -> None:
    plan = plan_stack(stack)
    text = render_mermaid(plan)
    assert text == render_mermaid(PlanDocument.from_json(plan.to_json()))
    tops = [x for x in plan.resources if not x.parent and not x.custom]
    layer_subgraphs = [line for line in text.splitlines() if line.startswith("    subgraph ")]
    assert len(layer_subgraphs) == sum(1 for t in tops if any(x.parent == t.urn for x in plan.resources))
    # Summaries keep the chart small however many resources the stack has.
    assert len(text.splitlines()) < 3 * len({(x.parent, x.type) for x in plan.resources}) + 10


def test_cli_plan_format_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--stack", "dev", "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart TB\n") and "subgraph s_network" in out
    assert f"aws:ec2/subnet:Subnet {TIMES}4" in out


@pytest.mark.slow
def test_readme_diagram_is_the_dev_stack_as_planned() -> None:
    readme = (REPO / "docs" / "offline-plan.md").read_text()
    block = readme.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == render_mermaid(plan_stack("dev")), \
        "regenerate: python -m infra plan --stack dev --format mermaid (into docs/offline-plan.md's mermaid block)"
