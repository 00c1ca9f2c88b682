"""Tags on resources this stack does not own: none by default; when asked for, they survive
`pulumi destroy`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eks_karpenter.tools.engine import PlanDocument, plan_program

from tests.support import REPO, plan_stack, stack_config

TAG = "aws:ec2/tag:Tag"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def brownfield_with(**network: Any) -> PlanDocument:
    section = {**stack_config("brownfield")["eks-karpenter:network"], **network}
    return plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:network": json.dumps(section)})


def network_tags(doc: PlanDocument) -> list[Any]:
    return [t for t in doc.by_type(TAG) if t.name.startswith("network-")]


def test_no_tag_is_written_on_an_adopted_subnet_or_cluster_security_group_by_default() -> None:
    doc = plan_stack("brownfield")
    assert doc.by_type(TAG) == []
    [node_class] = doc.by_type(NODE_CLASS)
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [
        {"id": "subnet-0a1b2c3d4e5f60001"}, {"id": "subnet-0a1b2c3d4e5f60002"}, {"id": "subnet-0a1b2c3d4e5f60003"}]
    assert all("id" in t for t in node_class.inputs["spec"]["securityGroupSelectorTerms"])


def test_discovery_tags_are_opt_in_and_then_the_classes_select_by_them() -> None:
    doc = brownfield_with(writeDiscoveryTags=True)
    keys = {(t.inputs["resourceId"], t.inputs["key"]) for t in network_tags(doc)}
    assert keys == {(f"subnet-0a1b2c3d4e5f6000{i}", "karpenter.sh/discovery") for i in (1, 2, 3)}
    assert [t.name for t in doc.by_type(TAG) if not t.name.startswith("network-")] == ["cluster-sg-discovery"]
    [node_class] = doc.by_type(NODE_CLASS)
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "legacy-cas"}}]
    assert node_class.inputs["spec"]["securityGroupSelectorTerms"][0] == {
        "tags": {"karpenter.sh/discovery": "legacy-cas"}}


def test_load_balancer_role_tags_only_when_asked() -> None:
    assert not any("elb" in t.inputs["key"] for t in network_tags(brownfield_with(writeDiscoveryTags=True)))
    doc = brownfield_with(writeLoadBalancerTags=True)
    keys = {(t.inputs["resourceId"], t.inputs["key"]) for t in network_tags(doc)}
    assert keys == {*((f"subnet-0a1b2c3d4e5f6000{i}", "kubernetes.io/role/internal-elb") for i in (1, 2, 3)),
                    *((f"subnet-0a1b2c3d4e5f6010{i}", "kubernetes.io/role/elb") for i in (1, 2))}


@pytest.mark.parametrize("flags", [{"writeDiscoveryTags": True}, {"writeLoadBalancerTags": True}])
def test_tags_written_on_adopted_resources_are_retained_on_delete(flags: dict[str, bool]) -> None:
    tags = brownfield_with(**flags).by_type(TAG)
    assert tags
    for t in tags:
        assert t.options.get("retainOnDelete") is True, t.name


def test_tag_on_a_created_clusters_security_group_goes_with_the_cluster() -> None:
    # The stack owns that group: destroy removes the tag, then the cluster and its group.
    (tag,) = [t for t in plan_stack("dev").by_type(TAG) if t.name == "cluster-sg-discovery"]
    assert "retainOnDelete" not in tag.options
