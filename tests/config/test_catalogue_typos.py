"""Typos a catalogue can catch, refused on the plan with the closest name: regions and zones (the partition table
generated from botocore and the dated zone-letter table), instance types and families (the bundled catalogue).
A name one generation past the catalogue's newest is only a warning: EC2 may have launched it since."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import ConfigError
from eks_karpenter.arns import REGIONS, ZONE_LETTERS, dns_suffix, partition_of
from eks_karpenter.platform.network.config import ZONE_EXCEPTIONS, default_availability_zones

from tests.support import plan_config, stack_config


def refused(cfg: dict[str, Any], tmp_path: Path) -> str:
    result = plan_config(cfg, tmp_path)
    assert isinstance(result.error, ConfigError), "planned cleanly"
    assert result.document.resources == []
    return str(result.error)


@pytest.mark.parametrize(("region", "hint"), [("eu-centrl-1", "did you mean `eu-central-1`?"),
                                              ("eu-west-9", "did you mean `eu-west-")])
def test_unknown_regions_are_refused(tmp_path: Path, region: str, hint: str) -> None:
    cfg = stack_config("dev")
    cfg["aws:region"] = region
    cfg["eks-karpenter:network"].pop("availabilityZones", None)
    message = refused(cfg, tmp_path)
    assert f"aws:region: not an AWS region: {hint}" in message and "botocore" in message


def test_a_zone_the_region_does_not_have_is_refused(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg["aws:region"] = "eu-central-1"
    cfg["eks-karpenter:network"]["availabilityZones"] = ["eu-central-1a", "eu-central-1b", "eu-central-1d"]
    message = refused(cfg, tmp_path)
    assert ("eks-karpenter:network.availabilityZones[2]: eu-central-1 has no zone 'd': its zones are eu-central-1a, "
            "eu-central-1b, eu-central-1c") in message


def test_us_east_1_keeps_its_six_zones(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg["aws:region"] = "us-east-1"
    # Letters past c are known zones there (which physical zone `e` is, is checked by zone ID at preview).
    cfg["eks-karpenter:network"]["availabilityZones"] = ["us-east-1d", "us-east-1f"]
    result = plan_config(cfg, tmp_path)
    assert result.error is None, result.error


def test_the_system_node_groups_misspelt_type_is_refused(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg["eks-karpenter:cluster"].setdefault("systemNodeGroup", {})["instanceTypes"] = ["m7i.lage"]
    message = refused(cfg, tmp_path)
    assert "eks-karpenter:cluster.systemNodeGroup.instanceTypes[0]: m7i has no size 'lage': did you mean " \
           "`m7i.large`?" in message


def test_an_unknown_nodepool_family_is_refused(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    pool = cfg["eks-karpenter:nodePools"][0]
    for key in ("instanceCategories", "minGeneration", "instanceFamilies", "instanceTypes"):
        pool.pop(key, None)
    pool["instanceFamilies"] = ["m99x", "m7i"]
    message = refused(cfg, tmp_path)
    assert "eks-karpenter:nodePools[0].instanceFamilies[0]: no EC2 instance family has this name" in message
    assert "instanceFamilies[1]" not in message


def test_a_family_newer_than_the_catalogue_is_a_warning(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    pool = cfg["eks-karpenter:nodePools"][0]
    for key in ("instanceCategories", "minGeneration", "instanceFamilies", "instanceTypes"):
        pool.pop(key, None)
    pool["instanceFamilies"] = ["m10i", "m7i", "m6i", "m5"]
    result = plan_config(cfg, tmp_path)
    assert result.error is None, result.error
    [warning] = [w for w in result.document.warnings if "m10i" in w and "catalogue" in w]
    assert f"nodePools[{pool['name']}].instanceFamilies[0]: m10i: instance family m10i is not in the catalogue" \
           in warning


def test_requirement_values_are_checked_too(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    pool = cfg["eks-karpenter:nodePools"][0]
    pool["requirements"] = [*pool.get("requirements", []),
                            {"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": ["c5.xlarg"]}]
    message = refused(cfg, tmp_path)
    assert "did you mean `c5.xlarge`?" in message


# --- one partition table --------------------------------------------------------------------------------------


def test_the_partition_table_is_botocores() -> None:
    import botocore

    from scripts.gen_partitions import MODULE, botocore_partitions, render

    assert MODULE.read_text() == render(*botocore_partitions()), "run scripts/gen_partitions.py"
    data = json.loads((Path(botocore.__file__).parent / "data" / "partitions.json").read_text())
    for partition in data["partitions"]:
        for region in partition["regions"]:
            if not region.endswith("-global"):
                assert REGIONS[region] == partition["id"], region
        assert dns_suffix(partition["id"]) == partition["outputs"]["dnsSuffix"]


@pytest.mark.parametrize(("region", "partition"), [("us-isof-south-1", "aws-iso-f"), ("eusc-de-east-1", "aws-eusc"),
                                                   ("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov"),
                                                   ("eu-west-1", "aws")])
def test_every_module_maps_a_region_to_the_same_partition(region: str, partition: str) -> None:
    from eks_karpenter.tools.engine.mocks import _invoke
    from eks_karpenter.tools.engine.outputs import partition as placeholder_partition

    assert partition_of(region) == placeholder_partition(region) == partition
    got = _invoke("aws:index/getPartition:getPartition", {}, region)
    assert got["partition"] == partition and got["dnsSuffix"] == dns_suffix(partition)


def test_the_zone_table_covers_the_default_zones() -> None:
    for region in ZONE_LETTERS:
        assert region in REGIONS, region
        zones = default_availability_zones(region)
        assert zones is None or all(z[-1] in ZONE_LETTERS[region] for z in zones), region
    for region, zones in ZONE_EXCEPTIONS.items():
        assert zones is None or all(z[-1] in ZONE_LETTERS[region] for z in zones)
