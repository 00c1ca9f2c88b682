"""Managed node groups: replaced create-before-delete, each with its own launch template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eks_karpenter.platform.cluster import plan as P
from eks_karpenter.tools.engine import PlanDocument
from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown

from tests.support import plan_config, plan_stack, stack_config

MNG = "eks:index:ManagedNodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
CLU = "eks-karpenter:cluster"


def test_every_managed_node_group_is_named_by_prefix_with_its_own_launch_template() -> None:
    doc = plan_stack("dev")
    groups = doc.by_type(MNG)
    (cluster,) = doc.by_type("eks:index:Cluster")
    assert {g.name for g in groups} == {"cluster-system", "cluster-spot-workshop-spot"}
    templates = {t.name: t for t in doc.by_type(LT)}
    for g in groups:
        assert "nodeGroupName" not in g.inputs, g.name
        assert g.inputs["nodeGroupNamePrefix"].endswith("-"), g.name
        # 37 characters at most: EKS appends 26 to the prefix and node group names end at 63.
        assert len(g.inputs["nodeGroupNamePrefix"]) <= 37
        assert "diskSize" not in g.inputs, "disk size lives in the launch template"
        # With a launch template pulumi-eks no longer follows the cluster's version: the group pins it.
        assert g.inputs["version"] == cluster.inputs["version"] == "1.35"
        template = templates[f"{g.name}-lt"]
        # Its own template (ids are per-resource placeholders), at the version the template reports.
        assert g.inputs["launchTemplate"]["id"].startswith("lt-")
        assert g.inputs["launchTemplate"]["version"] == "1"
        assert any(d.endswith(f"::{template.name}") for d in g.dependencies)
    assert len({g.inputs["launchTemplate"]["id"] for g in groups}) == len(groups)


@pytest.mark.slow
def test_launch_templates_require_imdsv2_encrypt_gp3_and_tag_instances_and_volumes() -> None:
    doc = plan_stack("prod")
    (template,) = doc.by_type(LT)
    meta = template.inputs["metadataOptions"]
    assert meta["httpTokens"] == "required" and meta["httpEndpoint"] == "enabled"
    # 1: no pod on the system nodes needs IMDS (the controller gets AWS_REGION, credentials from Pod Identity)
    assert meta["httpPutResponseHopLimit"] == 1
    (volume,) = template.inputs["blockDeviceMappings"]
    assert volume["deviceName"] == "/dev/xvda"
    assert volume["ebs"] == {"volumeSize": 50, "volumeType": "gp3", "encrypted": "true",
                             "deleteOnTermination": "true"}
    specs = {s["resourceType"]: s["tags"] for s in template.inputs["tagSpecifications"]}
    assert set(specs) == {"instance", "volume"}
    for tags in specs.values():
        assert tags["environment"] == "prod" and tags["eks-karpenter/cluster"] == "prod-karpenter"
        assert tags["Name"] == "prod-karpenter-system"
    assert "imageId" not in template.inputs and "userData" not in template.inputs, "EKS picks the AMI"


def test_hop_limit_and_disk_size_come_from_config(tmp_path: Path) -> None:
    config = stack_config("dev")
    config[CLU]["systemNodeGroup"].update(httpPutResponseHopLimit=1, diskSize=80)
    config[CLU]["spotNodeGroups"][0]["diskSize"] = 30
    doc = plan_config(config, tmp_path).document
    system, spot = doc.get(LT, "cluster-system-lt"), doc.get(LT, "cluster-spot-workshop-spot-lt")
    assert system.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert system.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 80
    assert spot.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1  # dev sets 1: team pods may land there
    assert spot.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 30


def test_bottlerocket_gets_an_encrypted_os_and_data_volume() -> None:
    spec = P.launch_template(ami_type="BOTTLEROCKET_ARM_64", disk_size=60, hop_limit=1, node_name="n", tags={})
    devices = {m["device_name"]: m["ebs"] for m in spec["block_device_mappings"]}
    assert devices["/dev/xvda"]["volume_size"] == P.BOTTLEROCKET_OS_VOLUME_GIB
    assert devices["/dev/xvdb"]["volume_size"] == 60
    assert all(e["encrypted"] == "true" and e["volume_type"] == "gp3" for e in devices.values())


@pytest.mark.slow
def test_changing_instance_types_replaces_the_system_group_create_before_delete(tmp_path: Path) -> None:
    config = stack_config("dev")
    config[CLU]["systemNodeGroup"]["instanceTypes"] = ["m7a.large"]
    new = plan_config(config, tmp_path, stack="dev").document
    diff = diff_plans(plan_stack("dev"), new)
    (change,) = [c for c in diff.changes if c.resource.name == "cluster-system"]
    assert change.op == "replace" and change.order == "create-before-delete"
    text = render_diff_markdown(diff)
    assert "± replace (create-before-delete) | `eks:index:ManagedNodeGroup` | `cluster-system`" in text
    assert "Deleted before the replacement exists" not in text


def test_a_fixed_name_group_is_shown_replaced_delete_first() -> None:
    # What the previous release planned: a fixed name, so the old group (CoreDNS, Karpenter) goes first.
    old = plan_stack("dev")
    fixed = PlanDocument.from_json(old.to_json())
    fixed.get(MNG, "cluster-system").inputs.update(nodeGroupName="dev-karpenter-system")
    changed = PlanDocument.from_json(fixed.to_json())
    changed.get(MNG, "cluster-system").inputs["instanceTypes"] = ["m7a.large"]
    diff = diff_plans(fixed, changed)
    (change,) = diff.changes
    assert change.op == "replace" and change.order == "delete-before-create"
    assert "Deleted before the replacement exists" in render_diff_markdown(diff)
    # Moving such a stack to this release: the one-time switch to a prefix replaces create-first.
    upgrade = diff_plans(fixed, old)
    (change,) = [c for c in upgrade.changes if c.resource.name == "cluster-system"]
    assert change.op == "replace" and change.order == "create-before-delete", json.dumps(
        [p.label for p in change.properties])


def test_a_spot_group_may_not_take_the_system_prefix_or_a_too_long_name(tmp_path: Path) -> None:
    from eks_karpenter.config.errors import ConfigError

    for name, fragment in (("system", "system node group's name prefix"), ("a" * 37, "pattern")):
        config = stack_config("dev")
        config[CLU]["spotNodeGroups"][0]["name"] = name
        result = plan_config(config, tmp_path)
        assert isinstance(result.error, ConfigError), result.error
        assert f"{CLU}.spotNodeGroups[0].name: " in str(result.error) and fragment in str(result.error)
        assert not result.document.resources
