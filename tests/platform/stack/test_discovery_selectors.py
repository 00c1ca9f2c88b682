"""A node class that selects subnets or the security group by another cluster's `karpenter.sh/discovery` value
than the one the stack tags its own with: Karpenter would find none, which only the smoke test would otherwise
show. The plan warns; `import-legacy --stack` flags converted classes (tests/tools/migrate)."""

from __future__ import annotations

import json
from typing import Any

from eks_karpenter.platform.cluster.config import ClusterConfig
from eks_karpenter.platform.network.config import NetworkConfig
from eks_karpenter.platform.nodepool.config import NodeClassConfig
from eks_karpenter.platform.version_rules import discovery_warnings
from eks_karpenter.tools.engine import run_plan

from tests.support import REPO, stack_config

OTHER = [{"tags": {"karpenter.sh/discovery": "my-cluster"}}]
CREATED = ClusterConfig.model_validate({"name": "acme-dev"})
NEW_VPC = NetworkConfig.model_validate({})
ADOPTED_VPC = NetworkConfig.model_validate({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": {
    "eu-west-1a": "subnet-0123456789abcdef0", "eu-west-1b": "subnet-0123456789abcdef1"}})


def node_class(subnets: list[dict[str, Any]] | None = None, groups: list[dict[str, Any]] | None = None) -> Any:
    return NodeClassConfig.model_validate({"name": "default", "subnetSelectorTerms": subnets,
                                           "securityGroupSelectorTerms": groups})


def test_another_clusters_discovery_value_is_warned_where_the_stack_tags_its_own() -> None:
    subnets, groups = discovery_warnings([node_class(OTHER, OTHER)], CREATED, NEW_VPC)
    assert subnets == ("eks-karpenter:nodeClasses[0].subnetSelectorTerms (class default) selects "
                       "karpenter.sh/discovery: my-cluster, but this stack tags its subnets karpenter.sh/discovery: "
                       "acme-dev: Karpenter would find none and launch no node; select acme-dev, or leave "
                       "subnetSelectorTerms out for the stack's own")
    assert groups.startswith("eks-karpenter:nodeClasses[0].securityGroupSelectorTerms (class default) selects")


def test_nothing_is_said_where_the_tags_are_not_the_stacks_or_a_term_can_match() -> None:
    adopted = ClusterConfig.model_validate({"name": "acme-dev", "existing": True})
    assert discovery_warnings([node_class(OTHER, OTHER)], adopted, ADOPTED_VPC) == []
    fine = [[{"tags": {"karpenter.sh/discovery": "acme-dev"}}], [{"tags": {"karpenter.sh/discovery": "*"}}],
            [{"tags": {"team": "web"}}], None]
    assert discovery_warnings([node_class(terms, terms) for terms in fine], CREATED, NEW_VPC) == []
    by_id = node_class([*OTHER, {"id": "subnet-0123456789abcdef0"}], [*OTHER, {"id": "sg-0123456789abcdef0"}])
    assert discovery_warnings([by_id], CREATED, NEW_VPC) == []
    own_groups = ClusterConfig.model_validate({"name": "acme-dev", "nodeSecurityGroupIds": ["sg-0123456789abcdef0"]})
    assert [w.split(" (")[0] for w in discovery_warnings([node_class(OTHER, OTHER)], own_groups, NEW_VPC)] == [
        "eks-karpenter:nodeClasses[0].subnetSelectorTerms"]


def test_the_plan_warns_of_a_class_selecting_another_clusters_subnets() -> None:
    config = stack_config("dev")
    classes = config["eks-karpenter:nodeClasses"]
    classes[0]["subnetSelectorTerms"] = OTHER
    result = run_plan(REPO, "dev", config_overrides={"eks-karpenter:nodeClasses": json.dumps(classes)})
    assert result.error is None, result.error
    [warning] = [w for w in result.document.warnings if "karpenter.sh/discovery: my-cluster" in w]
    assert warning.startswith("eks-karpenter:nodeClasses[0].subnetSelectorTerms (class default) selects")
    assert f"tags its subnets karpenter.sh/discovery: {config['eks-karpenter:cluster']['name']}" in warning
