"""The smallest stack a `pulumi new` template writes: `aws:region`, `<project>:clusterName`, `<project>:deployerArn`
and `<project>:deployerCidr`, all flat strings (the last two: who deploys, and from where; test_deploy_access.py).

The cluster name fills `cluster.name`; the network defaults to a new 10.0.0.0/16 VPC over three zones of the region
(with a table of regions where `a`, `b`, `c` are not three usable zones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eks_karpenter import ConfigError, load_stack_config
from eks_karpenter.platform.network.config import ZONE_EXCEPTIONS, default_availability_zones
from eks_karpenter.platform.network.rules import validate_network
from eks_karpenter.platform.stack import StackConfig

DEPLOYER = {"deployerArn": "arn:aws:iam::123456789012:role/Admin", "deployerCidr": "198.51.100.7/32"}


def with_deployer(config: dict[str, str], project: str) -> dict[str, str]:
    """The template's deployer prompts, unless the test's config says otherwise about access or the endpoint."""
    out = dict(config)
    partition = "aws-cn" if out.get("aws:region", "").startswith("cn-") else "aws"
    if f"{project}:access" not in out:
        out.setdefault(f"{project}:deployerArn", DEPLOYER["deployerArn"].replace("arn:aws:", f"arn:{partition}:"))
    if "endpointPublicAccess" not in out.get(f"{project}:cluster", ""):
        out.setdefault(f"{project}:deployerCidr", DEPLOYER["deployerCidr"])
    return out


def load(config: dict[str, str], project: str = "acme-platform") -> StackConfig:
    return load_stack_config(with_deployer(config, project), "Pulumi.dev.yaml", project=project)


def error(config: dict[str, str], project: str = "acme-platform") -> str:
    with pytest.raises(ConfigError) as info:
        load(config, project)
    return str(info.value)


def test_region_and_cluster_name_make_a_whole_platform() -> None:
    cfg = load({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme"})
    assert cfg.cluster.name == "acme" and cfg.cluster_name == "acme"
    assert not cfg.cluster.existing
    assert cfg.network.availability_zones == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert cfg.network.vpc_cidr == "10.0.0.0/16" and not cfg.network.adopting
    assert [p.name for p in cfg.node_pools] == ["default"]


def test_a_name_that_reads_as_json_stays_the_string_written() -> None:
    assert load({"aws:region": "eu-west-1", "acme-platform:clusterName": "2026"}).cluster.name == "2026"


def test_cluster_name_fills_a_cluster_section_without_a_name() -> None:
    cfg = load({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme",
                "acme-platform:cluster": '{"endpointPublicAccess": false, "apiAccess": {"cidrs": ["10.1.0.0/24"]}}'})
    assert cfg.cluster.name == "acme" and cfg.cluster.endpoint_public_access is False


def test_the_same_name_twice_is_accepted() -> None:
    cfg = load({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme",
                "acme-platform:cluster": '{"name": "acme"}'})
    assert cfg.cluster.name == "acme"


def test_two_different_names_are_refused_at_the_shortcut() -> None:
    message = error({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme",
                     "acme-platform:cluster": '{"name": "other"}'})
    assert "acme-platform:clusterName: disagrees with acme-platform:cluster name ('other')" in message


def test_a_malformed_name_is_reported_once_at_the_key_written() -> None:
    message = error({"aws:region": "eu-west-1", "acme-platform:clusterName": "my cluster"})
    assert "acme-platform:clusterName:" in message and "1 problem" in message


def test_the_schema_accepts_the_stack_file_pulumi_new_writes_from_the_template(tmp_path: Path) -> None:
    """`pulumi new` writes the prompted `network` and `nodePools` as JSON text, which the program reads as the
    object and list they spell; the schema takes both spellings, and still refuses a wrong value."""
    import jsonschema
    import yaml
    from eks_karpenter.platform.stack import stack_file_schema

    from tests.project.test_installed_wheel import fill_template

    fill_template(tmp_path / "platform", project="acme-platform")
    written = yaml.safe_load((tmp_path / "platform" / "Pulumi.dev.yaml").read_text())
    assert isinstance(written["config"]["acme-platform:nodePools"], str)  # JSON text, as pulumi new writes it
    validator = jsonschema.Draft202012Validator(stack_file_schema("acme-platform"))
    assert list(validator.iter_errors(written)) == []
    as_yaml = {"config": {**written["config"], **{k: json.loads(v) for k, v in written["config"].items()
                                                    if k.endswith((":network", ":nodePools"))}}}
    assert list(validator.iter_errors(as_yaml)) == []
    assert not validator.is_valid({"config": {**written["config"], "acme-platform:nodePools": 3}})
    assert not validator.is_valid({"config": {**written["config"], "acme-platform:network": [1]}})


def test_a_malformed_deployer_cidr_is_the_one_problem_not_the_endpoint_it_would_open() -> None:
    message = error({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme",
                     "acme-platform:deployerCidr": "203.0.113.7/24"})
    assert "1 problem" in message and "acme-platform:deployerCidr: not a CIDR block" in message
    assert "apiAccess" not in message and "private-only" not in message
    # A cluster section that sets the endpoint itself keeps its own endpoint rules.
    message = error({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme",
                     "acme-platform:deployerCidr": "203.0.113.7/24",
                     "acme-platform:cluster": '{"endpointPublicAccess": true}'})
    assert "acme-platform:deployerCidr: not a CIDR block" in message
    assert "acme-platform:cluster.publicAccessCidrs: a public endpoint needs an explicit allow-list" in message


def test_without_any_name_the_error_names_both_ways_under_the_project() -> None:
    message = error({"aws:region": "eu-west-1"})
    assert "acme-platform:cluster: required (or give just the name with acme-platform:clusterName)" in message


def test_keys_of_another_project_are_not_read_as_the_shortcut() -> None:
    message = error({"aws:region": "eu-west-1", "eks-karpenter:clusterName": "acme"})
    assert "eks-karpenter:clusterName" in message and "acme-platform:cluster: required" in message


@pytest.mark.parametrize(("region", "zones"), [
    ("eu-west-1", ["eu-west-1a", "eu-west-1b", "eu-west-1c"]),
    ("us-east-1", ["us-east-1a", "us-east-1b", "us-east-1c"]),
    ("ap-northeast-1", ["ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"]),
    ("ca-central-1", ["ca-central-1a", "ca-central-1b", "ca-central-1d"]),
    ("cn-north-1", ["cn-north-1a", "cn-north-1b", "cn-north-1d"]),
])
def test_default_zones_per_region(region: str, zones: list[str]) -> None:
    assert default_availability_zones(region) == zones
    assert load({"aws:region": region, "acme-platform:clusterName": "acme"}).network.availability_zones == zones


def test_every_exception_is_three_zones_of_its_region() -> None:
    for region, zones in ZONE_EXCEPTIONS.items():
        assert zones is None or (len(zones) == 3 and all(z[:-1] == region for z in zones)), region


def test_a_region_without_default_zones_requires_them() -> None:
    message = error({"aws:region": "us-west-1", "acme-platform:clusterName": "acme"})
    assert "acme-platform:network.availabilityZones: required when creating a VPC in us-west-1" in message
    cfg = load({"aws:region": "us-west-1", "acme-platform:clusterName": "acme",
                "acme-platform:network": '{"availabilityZones": ["us-west-1a", "us-west-1c"]}'})
    assert cfg.network.availability_zones == ["us-west-1a", "us-west-1c"]


def test_given_zones_and_adopted_vpcs_are_kept() -> None:
    cfg = load({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme",
                "acme-platform:network": '{"availabilityZones": ["eu-west-1b", "eu-west-1c"], '
                                         '"natGateways": "single"}'})
    assert cfg.network.availability_zones == ["eu-west-1b", "eu-west-1c"]
    adopted = load({"aws:region": "eu-west-1", "acme-platform:clusterName": "acme", "acme-platform:network":
                    '{"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": {"eu-west-1a": "subnet-0123456789abcdef0",'
                    ' "eu-west-1b": "subnet-0123456789abcdef1"}}'})
    assert adopted.network.availability_zones is None and adopted.network.zones == ["eu-west-1a", "eu-west-1b"]


def test_the_rule_alone_still_requires_zones_it_was_not_given() -> None:
    from eks_karpenter.platform.network.config import NetworkConfig
    [issue] = validate_network(NetworkConfig(), "eu-west-1", ("n",))
    assert issue.path == ("n", "availabilityZones") and "required when creating a VPC (or set vpcId" in issue.message


def test_the_schema_accepts_the_template_stack_and_documents_the_shortcut() -> None:
    import jsonschema
    from eks_karpenter.platform.stack import stack_file_schema
    schema = stack_file_schema()
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"config": {"aws:region": "eu-west-1", "eks-karpenter:clusterName": "acme"}})
    assert not validator.is_valid({"config": {"aws:region": "eu-west-1"}})
    assert "pulumi new" in schema["properties"]["config"]["properties"]["eks-karpenter:clusterName"]["description"]
