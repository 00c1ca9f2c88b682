"""IAM role and policy names: unique per region, within IAM's limits, never two long names cut to one; stacks
deployed with the older names keep them (a renamed role is a replaced role)."""

from __future__ import annotations

from pathlib import Path

import pytest
from eks_karpenter.platform.iam.names import (
    IAM_NAME_LIMIT,
    IAM_POLICY_NAME_LIMIT,
    IamNames,
    iam_name,
    regional_iam_name,
)

from tests.support import plan_config, stack_config

ROLE = "aws:iam/role:Role"
POLICY = "aws:iam/policy:Policy"
LONG = "a" * 100


def test_names_carry_the_region() -> None:
    names = IamNames("prod", "us-east-1")
    assert names.role("karpenter-node") == "prod-karpenter-node-us-east-1"
    assert names.policy("KarpenterNodeLifecycle") == "prod-KarpenterNodeLifecycle-us-east-1"
    assert names.role("karpenter-node") != IamNames("prod", "eu-west-1").role("karpenter-node")


@pytest.mark.parametrize("region", ["us-east-1", "ap-southeast-3", "us-gov-west-1"])
def test_long_names_fit_and_stay_distinct(region: str) -> None:
    for limit in (IAM_NAME_LIMIT, IAM_POLICY_NAME_LIMIT):
        a = regional_iam_name(LONG + "x", "karpenter-controller", region, limit)
        b = regional_iam_name(LONG + "y", "karpenter-controller", region, limit)
        assert len(a) <= limit and len(b) <= limit
        assert a != b  # the same first characters, yet a hash of the full name tells them apart
        assert a.endswith(f"-karpenter-controller-{region}")


def test_a_short_name_is_left_whole_and_a_purpose_too_long_still_fits() -> None:
    assert regional_iam_name("dev", "x", "us-east-1") == "dev-x-us-east-1"
    assert len(regional_iam_name("dev", "p" * 80, "us-east-1")) <= IAM_NAME_LIMIT


def test_legacy_names_are_exactly_the_old_ones() -> None:
    legacy = IamNames("prod-karpenter", "us-east-1", "legacy")
    assert legacy.role("karpenter-node") == "prod-karpenter-karpenter-node"
    assert legacy.policy("KarpenterEKSIntegration") == "prod-karpenter-KarpenterEKSIntegration"
    assert legacy.role("karpenter-controller") == iam_name("prod-karpenter", "karpenter-controller")
    assert len(IamNames(LONG, "us-east-1", "legacy").role("karpenter-node")) == IAM_NAME_LIMIT


def test_a_stack_deployed_before_keeps_its_names_with_legacy(tmp_path: Path) -> None:
    # `iamNames: legacy` (the commented line in prod's stack file): its roles are not renamed (renaming replaces
    # them: running nodes would lose the access entry of the node role).
    config = stack_config("prod")
    config["eks-karpenter:iamNames"] = "legacy"
    doc = plan_config(config, tmp_path, stack="prod").document
    names = {r.inputs.get("name") for r in doc.by_type(ROLE) + doc.by_type(POLICY)} - {None}
    assert "prod-karpenter-karpenter-node" in names and "prod-karpenter-karpenter-controller" in names
    assert not [n for n in names if "us-east-1" in n]
    node_class = doc.get("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "nodeclass-default")
    assert node_class.inputs["spec"]["role"] == "prod-karpenter-karpenter-node"


def test_one_cluster_name_in_two_regions_does_not_collide(tmp_path: Path) -> None:
    def names(region: str, zones: list[str], where: Path) -> set[str]:
        config = stack_config("dev")
        config["aws:region"] = region
        config.setdefault("eks-karpenter:network", {})["availabilityZones"] = zones
        where.mkdir()
        doc = plan_config(config, where, stack="dev").document
        found = {str(r.inputs["name"]) for r in doc.by_type(ROLE) + doc.by_type(POLICY) if r.inputs.get("name")}
        assert all(len(n) <= IAM_NAME_LIMIT for n in {str(r.inputs["name"]) for r in doc.by_type(ROLE)
                                                       if r.inputs.get("name")})
        return found

    east = names("us-east-1", ["us-east-1a", "us-east-1b", "us-east-1c"], tmp_path / "east")
    west = names("us-west-2", ["us-west-2a", "us-west-2b", "us-west-2c"], tmp_path / "west")
    assert east and west and not east & west
