"""Node classes and pools: defaults, rendering, shortcut merging, every rule with its key path, warnings, workload
helpers, the components, and equivalence with the upstream CRDs (schema + CEL)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, KeyPath, issues_from_validation_error
from eks_karpenter.labels import INSTANCE_FAMILY
from eks_karpenter.platform.nodepool import (
    NodeClass,
    NodeClassConfig,
    NodePool,
    NodePoolConfig,
    default_node_classes,
    default_node_pools,
    render_node_class,
    render_node_pool,
    scheduling_for,
    user_data_problem,
    validate_node_config,
    warnings_for,
)
from eks_karpenter.platform.nodepool import config as C
from eks_karpenter.tools.engine import plan_components
from eks_karpenter.tools.engine.document import PlannedResource
from pydantic import BaseModel, TypeAdapter, ValidationError

from tests.support import requires_upstream

AT_P: KeyPath = ("eks-karpenter:nodePools",)
AT_C: KeyPath = ("eks-karpenter:nodeClasses",)
ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
CLUSTER, NODE_ROLE = "demo", "KarpenterNodeRole-demo"
STACK_TAGS = {"eks-karpenter/cluster": "demo", "team": "platform"}

NODECONFIG = """\
apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s
"""
MIME = """\
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo hello

--BOUNDARY--
"""
TOML = '[settings.kubernetes]\nmax-pods = 110\n\n[settings.host-containers.admin]\nenabled = false\n'


def pools_of(*items: dict[str, Any]) -> list[NodePoolConfig]:
    return TypeAdapter(list[NodePoolConfig]).validate_python(list(items))


def classes_of(*items: dict[str, Any]) -> list[NodeClassConfig]:
    return TypeAdapter(list[NodeClassConfig]).validate_python(list(items))


def pool(**fields: Any) -> NodePoolConfig:
    return pools_of({"name": "general", **fields})[0]


def node_class(**fields: Any) -> NodeClassConfig:
    return classes_of({"name": "default", **fields})[0]


def rules(pools: list[dict[str, Any]], classes: list[dict[str, Any]] | None = None, *, interruption: bool = True,
          zones: list[str] | None = None) -> list[Issue]:
    defined = classes if classes is not None else [{"name": "default"}]
    return validate_node_config(pools_of(*pools), classes_of(*defined), ZONES if zones is None else zones,
                                interruption, AT_P, AT_C)


def field_issues(model: type[BaseModel], item: dict[str, Any]) -> list[Issue]:
    at = AT_P if model is NodePoolConfig else AT_C
    try:
        TypeAdapter(list[model]).validate_python([item])  # type: ignore[valid-type]
    except ValidationError as err:
        return issues_from_validation_error(err, at)
    return []


def render_class(cfg: NodeClassConfig) -> dict[str, Any]:
    return render_node_class(cfg, CLUSTER, NODE_ROLE, STACK_TAGS)


def reqs(cfg: NodePoolConfig) -> list[dict[str, Any]]:
    return list(render_node_pool(cfg)["spec"]["template"]["spec"]["requirements"])


# --- defaults and rendering ------------------------------------------------------------------------------------

DEFAULT_REQUIREMENTS = [
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
]


def test_default_pool_manifest_exactly() -> None:
    assert render_node_pool(default_node_pools()[0]) == {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": DEFAULT_REQUIREMENTS,
                "expireAfter": "720h",
                "terminationGracePeriod": "48h",
            }},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m",
                           "budgets": [{"nodes": "10%"}]},
            "limits": {"cpu": "1000", "memory": "1000Gi"},
        },
    }


def test_default_node_class_manifest_exactly() -> None:
    discovery = [{"tags": {"karpenter.sh/discovery": "demo"}}]
    assert render_class(default_node_classes()[0]) == {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": versions.AMI_ALIAS}],
            "subnetSelectorTerms": discovery,
            "securityGroupSelectorTerms": discovery,
            "role": NODE_ROLE,
            "tags": STACK_TAGS,
            "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                "httpPutResponseHopLimit": 1, "httpTokens": "required"},
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {
                "volumeSize": "50Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}}],
        },
    }


def test_defaults_are_spot_first_and_cost_minded() -> None:
    cfg = NodePoolConfig(name="p")
    assert cfg.capacity_types == ["spot", "on-demand"]
    assert cfg.instance_categories == ["c", "m", "r"]
    assert cfg.min_generation == 3
    assert cfg.limits == {"cpu": "1000", "memory": "1000Gi"}
    assert cfg.disruption.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert cfg.expire_after == "720h"  # Karpenter v1's default; expiry ignores disruption budgets
    assert cfg.node_class == "default"
    assert NodeClassConfig(name="c").ami_selector_terms[0].alias == versions.AMI_ALIAS


def test_class_tags_merge_over_stack_tags_and_role_choices() -> None:
    spec = render_class(node_class(tags={"team": "web", "Name": "node"}, role="MyRole"))["spec"]
    assert spec["tags"] == {"eks-karpenter/cluster": "demo", "team": "web", "Name": "node"}
    assert spec["role"] == "MyRole"
    spec = render_class(node_class(instanceProfile="MyProfile"))["spec"]
    assert spec["instanceProfile"] == "MyProfile" and "role" not in spec
    assert "tags" not in render_node_class(node_class(), CLUSTER, NODE_ROLE, {})["spec"]


def test_restricted_stack_tag_is_refused_at_render() -> None:
    with pytest.raises(ValueError, match="restricted"):
        render_node_class(node_class(), CLUSTER, NODE_ROLE, {"kubernetes.io/cluster/demo": "owned"})


@pytest.mark.parametrize(("alias", "family", "devices"), [
    ("al2023@v20240625", None, [("/dev/xvda", "50Gi", True)]),
    ("al2@v20240625", None, [("/dev/xvda", "50Gi", True)]),
    ("bottlerocket@v1.26.0", None, [("/dev/xvda", "4Gi", False), ("/dev/xvdb", "50Gi", True)]),
    ("windows2022@latest", None, [("/dev/sda1", "50Gi", True)]),
    ("al2023@latest", "Custom", None),
])
def test_default_block_devices_follow_the_family(alias: str, family: str | None,
                                                 devices: list[tuple[str, str, bool]] | None) -> None:
    extra = {"amiFamily": family} if family else {}
    spec = render_class(node_class(amiSelectorTerms=[{"alias": alias}], **extra))["spec"]
    if devices is None:
        assert "blockDeviceMappings" not in spec
        return
    got = [(d["deviceName"], d["ebs"]["volumeSize"], d.get("rootVolume", False)) for d in spec["blockDeviceMappings"]]
    assert got == devices
    assert all(d["ebs"]["encrypted"] and d["ebs"]["volumeType"] == "gp3" for d in spec["blockDeviceMappings"])


def test_explicit_block_devices_replace_the_default() -> None:
    bdm = [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "200Gi", "volumeType": "io2", "iops": 5000}}]
    assert render_class(node_class(blockDeviceMappings=bdm))["spec"]["blockDeviceMappings"] == bdm


def test_numbers_become_strings_and_unset_optionals_are_omitted() -> None:
    cfg = pool(limits={"cpu": 64, "nodes": 10}, disruption={"budgets": [{"nodes": 0}]}, terminationGracePeriod=None)
    spec = render_node_pool(cfg)["spec"]
    assert spec["limits"] == {"cpu": "64", "nodes": "10"}
    assert spec["disruption"]["budgets"] == [{"nodes": "0"}]
    assert "terminationGracePeriod" not in spec["template"]["spec"]
    assert "weight" not in spec and "metadata" not in spec["template"]
    assert "limits" not in render_node_pool(pool(limits={}))["spec"]


def test_labels_annotations_taints_weight_rendered() -> None:
    cfg = pool(labels={"team": "web"}, annotations={"example.com/owner": "web"}, weight=10,
               taints=[{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
               startupTaints=[{"key": "example.com/not-ready", "effect": "NoExecute"}])
    spec = render_node_pool(cfg)["spec"]
    assert spec["template"]["metadata"] == {"labels": {"team": "web"}, "annotations": {"example.com/owner": "web"}}
    assert spec["template"]["spec"]["taints"] == [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]
    assert spec["template"]["spec"]["startupTaints"] == [{"key": "example.com/not-ready", "effect": "NoExecute"}]
    assert spec["weight"] == 10


# --- shortcuts and raw requirements ----------------------------------------------------------------------------

def test_every_shortcut_renders_its_requirement() -> None:
    cfg = pool(capacityTypes=["on-demand"], arch=["arm64"], os=["linux"], instanceCategories=["c"], minGeneration=6,
               instanceFamilies=["c7g"], instanceSizes=["large"], excludeInstanceSizes=["metal"],
               instanceTypes=["c7g.large"], zones=["eu-west-1a"], minCpu=2, maxCpu=16)
    assert [(r["key"], r["operator"], r.get("values")) for r in reqs(cfg)] == [
        ("karpenter.sh/capacity-type", "In", ["on-demand"]),
        ("kubernetes.io/arch", "In", ["arm64"]),
        ("kubernetes.io/os", "In", ["linux"]),
        ("karpenter.k8s.aws/instance-category", "In", ["c"]),
        ("karpenter.k8s.aws/instance-generation", "Gt", ["5"]),
        ("karpenter.k8s.aws/instance-family", "In", ["c7g"]),
        ("karpenter.k8s.aws/instance-size", "In", ["large"]),
        ("karpenter.k8s.aws/instance-size", "NotIn",
         ["metal", "metal-12xl", "metal-16xl", "metal-24xl", "metal-32xl", "metal-48xl", "metal-96xl"]),
        ("node.kubernetes.io/instance-type", "In", ["c7g.large"]),
        ("topology.kubernetes.io/zone", "In", ["eu-west-1a"]),
        ("karpenter.k8s.aws/instance-cpu", "Gt", ["1"]),
        ("karpenter.k8s.aws/instance-cpu", "Lt", ["17"]),
    ]


def test_raw_requirements_come_after_shortcuts() -> None:
    raw = {"key": "example.com/team", "operator": "Exists"}
    assert reqs(pool(requirements=[raw])) == [*DEFAULT_REQUIREMENTS, raw]


def test_raw_requirement_replaces_the_shortcut_on_its_key() -> None:
    raw = {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]}
    got = reqs(pool(requirements=[raw]))
    assert [r for r in got if r["key"] == "karpenter.sh/capacity-type"] == [raw]
    assert got[-1] == raw and len(got) == len(DEFAULT_REQUIREMENTS)
    raw_cpu = {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["8"]}
    assert [r for r in reqs(pool(requirements=[raw_cpu])) if r["key"].endswith("instance-cpu")] == [raw_cpu]


def test_min_values_rendered() -> None:
    raw = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m6i"], "minValues": 2}
    assert reqs(pool(requirements=[raw]))[-1] == raw


@pytest.mark.parametrize("pin", [
    {"instanceFamilies": ["t3"]}, {"instanceTypes": ["t3.large"]},
    {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["t3"]}]},
])
def test_pinned_families_drop_default_category_and_generation(pin: dict[str, Any]) -> None:
    keys = [r["key"] for r in reqs(pool(**pin))]
    assert "karpenter.k8s.aws/instance-category" not in keys
    assert "karpenter.k8s.aws/instance-generation" not in keys


def test_explicit_category_and_generation_survive_pinning() -> None:
    keys = [r["key"] for r in reqs(pool(instanceFamilies=["m7i"], instanceCategories=["m"], minGeneration=5))]
    assert "karpenter.k8s.aws/instance-category" in keys and "karpenter.k8s.aws/instance-generation" in keys


def test_null_removes_category_and_generation() -> None:
    keys = [r["key"] for r in reqs(pool(instanceCategories=None, minGeneration=None))]
    assert keys == ["karpenter.sh/capacity-type", "kubernetes.io/arch", "kubernetes.io/os"]


# --- single-field checks on the types ---------------------------------------------------------------------------

POOL_FIELD_CASES: list[tuple[str, dict[str, Any], KeyPath, str]] = [
    ("name-case", {"name": "General"}, ("name",), "pattern"),
    ("name-long", {"name": "a" * 64}, ("name",), "at most 63"),
    ("typo", {"capacityType": ["spot"]}, ("capacityType",), "Extra inputs"),
    ("capacity-unknown", {"capacityTypes": ["preemptible"]}, ("capacityTypes", 0), "'spot'"),
    ("capacity-dup", {"capacityTypes": ["spot", "spot"]}, ("capacityTypes",), "unique"),
    ("capacity-empty", {"capacityTypes": []}, ("capacityTypes",), "at least 1"),
    ("arch", {"arch": ["x86_64"]}, ("arch", 0), "'amd64'"),
    ("generation", {"minGeneration": 0}, ("minGeneration",), "greater than or equal to 1"),
    ("family", {"instanceFamilies": ["M5"]}, ("instanceFamilies", 0), "pattern"),
    ("type", {"instanceTypes": ["m5large"]}, ("instanceTypes", 0), "pattern"),
    ("zone", {"zones": ["eu-west-1"]}, ("zones", 0), "pattern"),
    ("req-nodepool", {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "Exists"}]},
     ("requirements", 0, "key"), 'label "karpenter.sh/nodepool" is restricted'),
    ("req-hostname", {"requirements": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]},
     ("requirements", 0, "key"), 'label "kubernetes.io/hostname" is restricted'),
    ("req-karpenter-domain", {"requirements": [{"key": "x.karpenter.sh/a", "operator": "Exists"}]},
     ("requirements", 0, "key"), 'label domain "karpenter.sh" is restricted'),
    ("req-aws-domain", {"requirements": [{"key": "karpenter.k8s.aws/instance-pods", "operator": "Exists"}]},
     ("requirements", 0, "key"), 'label domain "karpenter.k8s.aws" is restricted'),
    ("req-kubelet-domain", {"requirements": [{"key": "team.kubernetes.io/x", "operator": "Exists"}]},
     ("requirements", 0, "key"), "kubernetes.io and k8s.io"),
    ("req-key-syntax", {"requirements": [{"key": "bad key", "operator": "Exists"}]},
     ("requirements", 0, "key"), "name must be"),
    ("req-key-prefix", {"requirements": [{"key": "Example.com/x", "operator": "Exists"}]},
     ("requirements", 0, "key"), "prefix must be"),
    ("req-operator", {"requirements": [{"key": "a", "operator": "Equals"}]}, ("requirements", 0, "operator"), "'In'"),
    ("req-min-values", {"requirements": [{"key": "a", "operator": "In", "values": ["x"], "minValues": 51}]},
     ("requirements", 0, "minValues"), "less than or equal to 50"),
    ("req-value", {"requirements": [{"key": "a", "operator": "In", "values": ["-x"]}]},
     ("requirements", 0, "values", 0), "pattern"),
    ("label-nodepool", {"labels": {"karpenter.sh/nodepool": "x"}}, ("labels", "karpenter.sh/nodepool"),
     "restricted"),
    ("label-value", {"labels": {"team": "x" * 64}}, ("labels", "team"), "at most 63"),
    ("taint-effect", {"taints": [{"key": "a", "effect": "NoRun"}]}, ("taints", 0, "effect"), "'NoSchedule'"),
    ("taint-value", {"taints": [{"key": "a", "value": "", "effect": "NoSchedule"}]}, ("taints", 0, "value"),
     "taint values"),
    ("expire", {"expireAfter": "14d"}, ("expireAfter",), "pattern"),
    ("grace-never", {"terminationGracePeriod": "Never"}, ("terminationGracePeriod",), "pattern"),
    ("policy", {"disruption": {"consolidationPolicy": "WhenIdle"}}, ("disruption", "consolidationPolicy"), "'When"),
    ("consolidate-after", {"disruption": {"consolidateAfter": "1d"}}, ("disruption", "consolidateAfter"), "pattern"),
    ("budget-nodes", {"disruption": {"budgets": [{"nodes": "110%"}]}}, ("disruption", "budgets", 0, "nodes"),
     "pattern"),
    ("budget-cron-range", {"disruption": {"budgets": [{"schedule": "61 * * * *", "duration": "1h"}]}},
     ("disruption", "budgets", 0, "schedule"), "not valid"),
    ("budget-cron-fields", {"disruption": {"budgets": [{"schedule": "* * *", "duration": "1h"}]}},
     ("disruption", "budgets", 0, "schedule"), "5-field"),
    ("budget-duration", {"disruption": {"budgets": [{"schedule": "@daily", "duration": "30s"}]}},
     ("disruption", "budgets", 0, "duration"), "pattern"),
    ("budget-reasons", {"disruption": {"budgets": [{"reasons": ["Empty", "Empty"]}]}},
     ("disruption", "budgets", 0, "reasons"), "unique"),
    ("budgets-max", {"disruption": {"budgets": [{"nodes": "1"}] * 51}}, ("disruption", "budgets"), "at most 50"),
    ("limit-negative", {"limits": {"cpu": "-1"}}, ("limits", "cpu"), "pattern"),
    ("limit-word", {"limits": {"cpu": "lots"}}, ("limits", "cpu"), "pattern"),
    ("weight-low", {"weight": 0}, ("weight",), "greater than or equal to 1"),
    ("weight-high", {"weight": 101}, ("weight",), "less than or equal to 100"),
]


@pytest.mark.parametrize(("case", "item", "path", "fragment"), POOL_FIELD_CASES, ids=[c[0] for c in POOL_FIELD_CASES])
def test_pool_field_checks(case: str, item: dict[str, Any], path: KeyPath, fragment: str) -> None:
    found = field_issues(NodePoolConfig, {"name": "general", **item})
    matching = [i for i in found if i.path == AT_P + (0,) + path]
    assert matching, [i.path for i in found]
    assert any(fragment in i.message for i in matching), [i.message for i in matching]


CLASS_FIELD_CASES: list[tuple[str, dict[str, Any], KeyPath, str]] = [
    ("family", {"amiFamily": "Ubuntu"}, ("amiFamily",), "'AL2'"),
    ("alias-format", {"amiSelectorTerms": [{"alias": "al2023"}]}, ("amiSelectorTerms", 0, "alias"),
     "improperly formatted"),
    ("alias-family", {"amiSelectorTerms": [{"alias": "ubuntu@latest"}]}, ("amiSelectorTerms", 0, "alias"),
     "family is not supported"),
    ("alias-windows", {"amiSelectorTerms": [{"alias": "windows2022@v1"}]}, ("amiSelectorTerms", 0, "alias"),
     "only specify version 'latest'"),
    ("alias-version", {"amiSelectorTerms": [{"alias": "al2023@20240625"}]}, ("amiSelectorTerms", 0, "alias"),
     "v20240625"),
    ("alias-long", {"amiSelectorTerms": [{"alias": "bottlerocket@v1.26.0-long-suffix"}]},
     ("amiSelectorTerms", 0, "alias"), "at most 30"),
    ("terms-empty", {"amiSelectorTerms": []}, ("amiSelectorTerms",), "at least 1"),
    ("ami-id", {"amiSelectorTerms": [{"id": "ami_123"}]}, ("amiSelectorTerms", 0, "id"), "pattern"),
    ("ami-tags", {"amiSelectorTerms": [{"tags": {"a": ""}}]}, ("amiSelectorTerms", 0, "tags", "a"), "at least 1"),
    ("subnet-id", {"subnetSelectorTerms": [{"id": "sn-1"}]}, ("subnetSelectorTerms", 0, "id"), "pattern"),
    ("subnets-empty", {"subnetSelectorTerms": []}, ("subnetSelectorTerms",), "at least 1"),
    ("sg-empty", {"securityGroupSelectorTerms": []}, ("securityGroupSelectorTerms",), "at least 1"),
    ("role-empty", {"role": ""}, ("role",), "at least 1"),
    ("role-arn", {"role": "arn:aws:iam::123456789012:role/x"}, ("role",), "not the ARN"),
    ("profile-arn", {"instanceProfile": "arn:aws:iam::123456789012:instance-profile/x"}, ("instanceProfile",),
     "not the ARN"),
    ("hop-limit", {"metadataOptions": {"httpPutResponseHopLimit": 65}},
     ("metadataOptions", "httpPutResponseHopLimit"), "less than or equal to 64"),
    ("tokens", {"metadataOptions": {"httpTokens": "off"}}, ("metadataOptions", "httpTokens"), "'required'"),
    ("ipv6-spelling", {"metadataOptions": {"httpProtocolIpv6": "enabled"}},
     ("metadataOptions", "httpProtocolIpv6"), "Extra inputs"),
    ("volume-ti", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "18Ti"}}]},
     ("blockDeviceMappings", 0, "ebs", "volumeSize"), "volume size"),
    ("volume-zero", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "0Gi"}}]},
     ("blockDeviceMappings", 0, "ebs", "volumeSize"), "volume size"),
    ("volume-unit", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50GB"}}]},
     ("blockDeviceMappings", 0, "ebs", "volumeSize"), "volume size"),
    ("volume-type", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp4"}}]},
     ("blockDeviceMappings", 0, "ebs", "volumeType"), "'gp3'"),
    ("init-rate", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"snapshotID": "snap-1",
                                                                                  "volumeInitializationRate": 99}}]},
     ("blockDeviceMappings", 0, "ebs", "volumeInitializationRate"), "greater than or equal to 100"),
    ("kms-spelling", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"kmsKeyId": "k"}}]},
     ("blockDeviceMappings", 0, "ebs", "kmsKeyId"), "Extra inputs"),
    ("device-name", {"blockDeviceMappings": [{"ebs": {"volumeSize": "20Gi"}}]},
     ("blockDeviceMappings", 0, "deviceName"), "required"),
    ("eviction-key", {"kubelet": {"evictionHard": {"memory.free": "5%"}}},
     ("kubelet", "evictionHard", "memory.free"), "'memory.available'"),
    ("eviction-value", {"kubelet": {"evictionHard": {"memory.available": "lots"}}},
     ("kubelet", "evictionHard", "memory.available"), "pattern"),
    ("grace-value", {"kubelet": {"evictionSoftGracePeriod": {"memory.available": "1 minute"}}},
     ("kubelet", "evictionSoftGracePeriod", "memory.available"), "pattern"),
    ("reserved-key", {"kubelet": {"systemReserved": {"gpu": "1"}}}, ("kubelet", "systemReserved", "gpu"), "'cpu'"),
    ("reserved-negative", {"kubelet": {"kubeReserved": {"cpu": "-1"}}}, ("kubelet", "kubeReserved", "cpu"),
     "pattern"),
    ("gc-range", {"kubelet": {"imageGCHighThresholdPercent": 101}}, ("kubelet", "imageGCHighThresholdPercent"),
     "less than or equal to 100"),
    ("max-pods", {"kubelet": {"maxPods": -1}}, ("kubelet", "maxPods"), "greater than or equal to 0"),
    ("cluster-dns", {"kubelet": {"clusterDNS": ["10.100.0"]}}, ("kubelet", "clusterDNS", 0), "not an IP"),
    ("reservation-id", {"capacityReservationSelectorTerms": [{"id": "cr_1"}]},
     ("capacityReservationSelectorTerms", 0, "id"), "pattern"),
    ("reservation-owner", {"capacityReservationSelectorTerms": [{"ownerID": "12"}]},
     ("capacityReservationSelectorTerms", 0, "ownerID"), "pattern"),
    ("reservation-match", {"capacityReservationSelectorTerms": [{"instanceMatchCriteria": "any"}]},
     ("capacityReservationSelectorTerms", 0, "instanceMatchCriteria"), "'open'"),
    ("conntrack", {"connectionTracking": {"udpTimeout": 61}}, ("connectionTracking", "udpTimeout"),
     "less than or equal to 60"),
    ("placement-id", {"placementGroupSelector": {"id": "pg_1"}}, ("placementGroupSelector", "id"), "pattern"),
    ("nic-type", {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "ena"}]},
     ("networkInterfaces", 0, "interfaceType"), "'interface'"),
    ("store-policy", {"instanceStorePolicy": "RAID1"}, ("instanceStorePolicy",), "'RAID0'"),
    ("nested-virt", {"cpuOptions": {"nestedVirtualization": "on"}}, ("cpuOptions", "nestedVirtualization"),
     "'enabled'"),
    ("ip-prefix", {"ipPrefixCount": -1}, ("ipPrefixCount",), "greater than or equal to 0"),
    *[(f"tag-{key or 'empty'}", {"tags": {key: "x"}}, ("tags", key), fragment) for key, fragment in (
        ("", "at least 1"), ("eks:eks-cluster-name", "restricted"), ("kubernetes.io/cluster/demo", "restricted"),
        ("kubernetes.io/clusterx", "restricted"), ("karpenter.sh/nodepool", "restricted"),
        ("karpenter.sh/nodeclaim", "restricted"), ("karpenter.k8s.aws/ec2nodeclass", "restricted"),
        ("aws:cloudformation:stack-name", "reserved by AWS"))],
]


@pytest.mark.parametrize(("case", "item", "path", "fragment"), CLASS_FIELD_CASES,
                         ids=[c[0] for c in CLASS_FIELD_CASES])
def test_class_field_checks(case: str, item: dict[str, Any], path: KeyPath, fragment: str) -> None:
    found = field_issues(NodeClassConfig, {"name": "default", **item})
    matching = [i for i in found if i.path == AT_C + (0,) + path]
    assert matching, [(i.path, i.message) for i in found]
    assert any(fragment in i.message for i in matching), [i.message for i in matching]


@pytest.mark.parametrize("size", ["1Gi", "59000Gi", "64000G", "9Ti", "17Ti", "58Ti", "64T"])
def test_volume_sizes_at_the_crd_bounds_are_accepted(size: str) -> None:
    assert field_issues(NodeClassConfig, {"name": "c", "blockDeviceMappings": [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": size}}]}) == []


@pytest.mark.parametrize("schedule", ["@daily", "0 9 * * mon-fri", "*/15 0-6 1,15 jan-jun 0", "0 22 * * ?"])
def test_cron_schedules_accepted(schedule: str) -> None:
    assert field_issues(NodePoolConfig, {"name": "p", "disruption": {"budgets": [
        {"nodes": "0", "schedule": schedule, "duration": "1h30m"}]}}) == []


# --- rules: one case per rule, each with the exact key path ------------------------------------------------------

NIC = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
WINDOWS = {"name": "default", "amiSelectorTerms": [{"alias": "windows2022@latest"}]}
POOL0, CLASS0 = AT_P + (0,), AT_C + (0,)

# (id, pools, classes (None = one default class), interruption handled, expected path, message fragment)
RuleCase = tuple[str, list[dict[str, Any]], list[dict[str, Any]] | None, bool, KeyPath, str]
CLASS_RULE_CASES: list[RuleCase] = [
    ("role-and-profile", [], [{"name": "c", "role": "R", "instanceProfile": "P"}], True,
     CLASS0 + ("instanceProfile",), "exactly one of role and instanceProfile"),
    ("family-required", [], [{"name": "c", "amiSelectorTerms": [{"id": "ami-0abc1234"}]}], True,
     CLASS0 + ("amiFamily",), "must specify amiFamily"),
    ("family-mismatch", [], [{"name": "c", "amiFamily": "Bottlerocket"}], True, CLASS0 + ("amiFamily",),
     "must be 'AL2023' or 'Custom'"),
    ("ami-term-empty", [], [{"name": "c", "amiFamily": "AL2023", "amiSelectorTerms": [{"owner": "amazon"}]}], True,
     CLASS0 + ("amiSelectorTerms", 0), "expected at least one of"),
    ("ami-id-combined", [], [{"name": "c", "amiFamily": "AL2023", "amiSelectorTerms": [
        {"id": "ami-0abc1234", "owner": "self"}]}], True, CLASS0 + ("amiSelectorTerms", 0, "id"), "'id' is mutually"),
    ("ami-alias-combined", [], [{"name": "c", "amiSelectorTerms": [{"alias": "al2023@latest", "name": "x"}]}], True,
     CLASS0 + ("amiSelectorTerms", 0, "alias"), "'alias' is mutually"),
    ("ami-alias-ssm", [], [{"name": "c", "amiSelectorTerms": [{"alias": "al2023@latest", "ssmParameter": "/x"}]}],
     True, CLASS0 + ("amiSelectorTerms", 0, "alias"), "'alias' is mutually"),
    ("ami-alias-two-terms", [], [{"name": "c", "amiSelectorTerms": [{"alias": "al2023@latest"}, {"name": "x"}]}],
     True, CLASS0 + ("amiSelectorTerms",), "other amiSelectorTerms"),
    ("subnet-term-empty", [], [{"name": "c", "subnetSelectorTerms": [{}]}], True, CLASS0 + ("subnetSelectorTerms", 0),
     "expected at least one of tags, id"),
    ("subnet-id-combined", [], [{"name": "c", "subnetSelectorTerms": [{"id": "subnet-0a1b2c3d", "tags": {"a": "b"}}]}],
     True, CLASS0 + ("subnetSelectorTerms", 0, "id"), "'id' is mutually"),
    ("sg-term-empty", [], [{"name": "c", "securityGroupSelectorTerms": [{}]}], True,
     CLASS0 + ("securityGroupSelectorTerms", 0), "expected at least one of tags, id, name"),
    ("sg-id-combined", [], [{"name": "c", "securityGroupSelectorTerms": [
        {"id": "sg-0a1b2c3d", "tags": {"a": "b"}}]}], True,
     CLASS0 + ("securityGroupSelectorTerms", 0, "id"), "'id' is mutually"),
    ("sg-name-combined", [], [{"name": "c", "securityGroupSelectorTerms": [{"name": "n", "tags": {"a": "b"}}]}], True,
     CLASS0 + ("securityGroupSelectorTerms", 0, "name"), "'name' is mutually"),
    ("two-roots", [], [{"name": "c", "blockDeviceMappings": [
        {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
        {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}}]}], True,
     CLASS0 + ("blockDeviceMappings", 1, "rootVolume"), "only one blockDeviceMappings with rootVolume"),
    ("ebs-no-size", [], [{"name": "c", "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {
        "volumeType": "gp3"}}]}], True, CLASS0 + ("blockDeviceMappings", 0, "ebs"), "snapshotID or volumeSize"),
    ("init-rate", [], [{"name": "c", "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "20Gi", "volumeInitializationRate": 150}}]}], True,
     CLASS0 + ("blockDeviceMappings", 0, "ebs", "volumeInitializationRate"), "snapshotID must be set"),
    ("iops-gp2", [], [{"name": "c", "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "20Gi", "volumeType": "gp2", "iops": 3000}}]}], True,
     CLASS0 + ("blockDeviceMappings", 0, "ebs", "iops"), "io1, io2 and gp3"),
    ("throughput-io2", [], [{"name": "c", "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "20Gi", "volumeType": "io2", "throughput": 500}}]}], True,
     CLASS0 + ("blockDeviceMappings", 0, "ebs", "throughput"), "gp3 volumes"),
    ("reservation-term-empty", [], [{"name": "c", "capacityReservationSelectorTerms": [{"ownerID": "123456789012"}]}],
     True, CLASS0 + ("capacityReservationSelectorTerms", 0), "expected at least one of tags, id"),
    ("reservation-id-combined", [], [{"name": "c", "capacityReservationSelectorTerms": [
        {"id": "cr-0a1b2c3d4e5f60001", "instanceMatchCriteria": "open"}]}], True,
     CLASS0 + ("capacityReservationSelectorTerms", 0, "id"), "'id' is mutually"),
    ("image-gc", [], [{"name": "c", "kubelet": {"imageGCHighThresholdPercent": 80,
                                                "imageGCLowThresholdPercent": 80}}], True,
     CLASS0 + ("kubelet", "imageGCHighThresholdPercent"), "must be greater than"),
    ("soft-no-grace", [], [{"name": "c", "kubelet": {"evictionSoft": {"memory.available": "5%"}}}], True,
     CLASS0 + ("kubelet", "evictionSoft", "memory.available"), "no matching evictionSoftGracePeriod"),
    ("grace-no-soft", [], [{"name": "c", "kubelet": {"evictionSoftGracePeriod": {"memory.available": "1m"}}}], True,
     CLASS0 + ("kubelet", "evictionSoftGracePeriod", "memory.available"), "no matching evictionSoft"),
    ("nic-primary", [], [{"name": "c", "networkInterfaces": [{**NIC, "networkCardIndex": 1}]}], True,
     CLASS0 + ("networkInterfaces",), "primary interface"),
    ("nic-duplicate", [], [{"name": "c", "networkInterfaces": [NIC, NIC]}], True, CLASS0 + ("networkInterfaces", 1),
     "duplicate networkCardIndex and deviceIndex"),
    ("nic-two-efa", [], [{"name": "c", "networkInterfaces": [
        NIC, {**NIC, "deviceIndex": 1, "interfaceType": "efa-only"},
        {**NIC, "deviceIndex": 2, "interfaceType": "efa-only"}]}], True,
     CLASS0 + ("networkInterfaces", 2), "one efa-only interface per network card"),
    ("placement-none", [], [{"name": "c", "placementGroupSelector": {}}], True, CLASS0 + ("placementGroupSelector",),
     "exactly one of name and id"),
    ("placement-both", [], [{"name": "c", "placementGroupSelector": {"name": "n", "id": "pg-0a1b2c3d4e5f60001"}}], True,
     CLASS0 + ("placementGroupSelector",), "exactly one of name and id"),
    ("conntrack-empty", [], [{"name": "c", "connectionTracking": {}}], True, CLASS0 + ("connectionTracking",),
     "at least one of"),
    ("class-dup", [], [{"name": "c"}, {"name": "c"}], True, AT_C + (1, "name"), "unique"),
    ("userdata-al2023-yaml", [], [{"name": "c", "userData": "apiVersion: v1\nkind: ConfigMap\n"}], True,
     CLASS0 + ("userData",), "nodeadm NodeConfig"),
    ("userdata-al2023-text", [], [{"name": "c", "userData": "echo hi"}], True, CLASS0 + ("userData",),
     "nodeadm NodeConfig"),
    ("userdata-al2", [], [{"name": "c", "amiSelectorTerms": [{"alias": "al2@latest"}], "userData": "echo hi"}],
     True, CLASS0 + ("userData",), "AL2 user data must be MIME"),
    ("userdata-mime-single", [], [{"name": "c", "userData": "MIME-Version: 1.0\nContent-Type: text/plain\n\nhi"}],
     True, CLASS0 + ("userData",), "must be multipart"),
    ("userdata-bottlerocket", [], [{"name": "c", "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                                    "userData": "[settings\nmax-pods = 1"}], True, CLASS0 + ("userData",),
     "must be TOML"),
    ("userdata-windows-tags", [], [{**WINDOWS, "name": "c", "userData": "<powershell>\nWrite-Host hi\n</powershell>"}],
     True, CLASS0 + ("userData",), "bare PowerShell"),
    ("userdata-windows-bash", [], [{**WINDOWS, "name": "c", "userData": "#!/bin/bash\necho hi"}], True,
     CLASS0 + ("userData",), "PowerShell commands"),
]

POOL_RULE_CASES: list[RuleCase] = [
    ("in-no-values", [{"name": "p", "requirements": [{"key": "a", "operator": "In"}]}], None, True,
     POOL0 + ("requirements", 0, "values"), "operator 'In' must have a value"),
    ("in-empty-values", [{"name": "p", "requirements": [{"key": "a", "operator": "In", "values": []}]}], None, True,
     POOL0 + ("requirements", 0, "values"), "operator 'In' must have a value"),
    ("notin-no-values", [{"name": "p", "requirements": [{"key": "a", "operator": "NotIn"}]}], None, True,
     POOL0 + ("requirements", 0, "values"), "'NotIn' needs at least one value"),
    ("exists-values", [{"name": "p", "requirements": [{"key": "a", "operator": "Exists", "values": ["x"]}]}], None,
     True, POOL0 + ("requirements", 0, "values"), "takes no values"),
    ("gt-word", [{"name": "p", "requirements": [{"key": "karpenter.k8s.aws/instance-memory", "operator": "Gt",
                                                 "values": ["lots"]}]}], None, True,
     POOL0 + ("requirements", 0, "values"), "single non-negative integer"),
    ("gte-two", [{"name": "p", "requirements": [{"key": "karpenter.k8s.aws/instance-memory", "operator": "Gte",
                                                 "values": ["1", "2"]}]}], None, True,
     POOL0 + ("requirements", 0, "values"), "single non-negative integer"),
    ("lt-none", [{"name": "p", "requirements": [{"key": "karpenter.k8s.aws/instance-memory", "operator": "Lt"}]}],
     None, True, POOL0 + ("requirements", 0, "values"), "single non-negative integer"),
    ("min-values", [{"name": "p", "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                                    "values": ["m5"], "minValues": 2}]}], None, True,
     POOL0 + ("requirements", 0, "minValues"), "at least that many values"),
    ("capacity-value", [{"name": "p", "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                        "values": ["on-demand", "preemptible"]}]}], None, True,
     POOL0 + ("requirements", 0, "values", 1), "one of spot, on-demand, reserved"),
    ("shortcut-and-raw", [{"name": "p", "arch": ["arm64"], "requirements": [
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}], None, True,
     POOL0 + ("requirements", 0, "key"), "`arch` already sets kubernetes.io/arch"),
    ("budget-no-duration", [{"name": "p", "disruption": {"budgets": [{"nodes": "1"}, {"schedule": "@daily"}]}}],
     None, True, POOL0 + ("disruption", "budgets", 1, "duration"), "'schedule' must be set with 'duration'"),
    ("budget-no-schedule", [{"name": "p", "disruption": {"budgets": [{"duration": "1h"}]}}], None, True,
     POOL0 + ("disruption", "budgets", 0, "schedule"), "'schedule' must be set with 'duration'"),
    ("dup-taint", [{"name": "p", "taints": [{"key": "a", "effect": "NoSchedule"},
                                            {"key": "a", "value": "b", "effect": "NoSchedule"}]}], None, True,
     POOL0 + ("taints", 1), "duplicate taint"),
    ("dup-startup-taint", [{"name": "p", "startupTaints": [{"key": "a", "effect": "NoExecute"},
                                                           {"key": "a", "effect": "NoExecute"}]}], None, True,
     POOL0 + ("startupTaints", 1), "duplicate taint"),
    ("cpu-range", [{"name": "p", "minCpu": 16, "maxCpu": 8}], None, True, POOL0 + ("minCpu",), "must not exceed"),
    ("sizes-overlap", [{"name": "p", "instanceSizes": ["large", "metal"], "excludeInstanceSizes": ["metal"]}], None,
     True, POOL0 + ("excludeInstanceSizes", 0), "also listed in instanceSizes"),
    ("family-category", [{"name": "p", "instanceFamilies": ["t3"], "instanceCategories": ["c", "m"]}], None, True,
     POOL0 + ("instanceFamilies", 0), "outside instanceCategories"),
    ("family-generation", [{"name": "p", "instanceFamilies": ["m4"], "minGeneration": 5}], None, True,
     POOL0 + ("instanceFamilies", 0), "older than minGeneration 5"),
    ("type-family", [{"name": "p", "instanceFamilies": ["m7i"], "instanceTypes": ["c7i.large"]}], None, True,
     POOL0 + ("instanceTypes", 0), "not in instanceFamilies"),
    ("type-size", [{"name": "p", "instanceSizes": ["large"], "instanceTypes": ["m7i.xlarge"]}], None, True,
     POOL0 + ("instanceTypes", 0), "not in instanceSizes"),
    ("type-excluded", [{"name": "p", "excludeInstanceSizes": ["metal"], "instanceTypes": ["m7i.metal"]}], None, True,
     POOL0 + ("instanceTypes", 0), "in excludeInstanceSizes"),
    ("type-default-category", [{"name": "p", "instanceCategories": ["c"], "instanceTypes": ["m7i.large"]}], None,
     True, POOL0 + ("instanceTypes", 0), "outside instanceCategories"),
    ("label-vs-raw-in", [{"name": "p", "labels": {"example.com/team": "a"}, "requirements": [
        {"key": "example.com/team", "operator": "In", "values": ["b"]}]}], None, True,
     POOL0 + ("requirements", 0, "values"), "conflicts with label example.com/team=a"),
    ("label-vs-raw-notin", [{"name": "p", "labels": {"example.com/team": "a"}, "requirements": [
        {"key": "example.com/team", "operator": "NotIn", "values": ["b"]}]}], None, True,
     POOL0 + ("requirements", 0, "operator"), "must be In"),
    ("label-vs-shortcut", [{"name": "p", "labels": {"kubernetes.io/arch": "arm64"}}], None, True,
     POOL0 + ("labels", "kubernetes.io/arch"), "conflicts with `arch`"),
    ("too-many-labels", [{"name": "p", "labels": {f"l{i}": "x" for i in range(97)}}], None, True,
     POOL0 + ("labels",), "may not exceed 100"),
    ("pool-dup", [{"name": "p"}, {"name": "p"}], None, True, AT_P + (1, "name"), "unique"),
    ("class-missing", [{"name": "p", "nodeClass": "gpu"}], None, True, POOL0 + ("nodeClass",),
     "no eks-karpenter:nodeClasses entry"),
    ("zone-shortcut", [{"name": "p", "zones": ["eu-west-1a", "eu-west-1d"]}], None, True, POOL0 + ("zones", 1),
     "not one of the network's zones"),
    ("zone-raw", [{"name": "p", "requirements": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                                  "values": ["eu-west-1a", "us-east-1a"]}]}], None, True,
     POOL0 + ("requirements", 0, "values", 1), "not one of the network's zones"),
    ("spot-unhandled", [{"name": "p"}], None, False, POOL0 + ("capacityTypes",), "enable eks-karpenter:interruption"),
    ("spot-unhandled-raw", [{"name": "p", "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "NotIn",
                                                            "values": ["on-demand"]}]}], None, False,
     POOL0 + ("requirements", 0, "values"), "spotWithoutInterruptionHandling: true"),
    ("reserved-no-terms", [{"name": "p", "capacityTypes": ["reserved", "on-demand"]}], None, True,
     POOL0 + ("capacityTypes",), "capacityReservationSelectorTerms"),
    ("windows-class-linux-pool", [{"name": "p"}], [WINDOWS], True, POOL0 + ("os",), "os must be [windows]"),
    ("linux-class-windows-pool", [{"name": "p", "os": ["windows"]}], None, True, POOL0 + ("os",),
     "os must be [linux]"),
    ("windows-arm", [{"name": "p", "os": ["windows"], "arch": ["amd64", "arm64"]}], [WINDOWS], True,
     POOL0 + ("arch",), "amd64 only"),
]


def _assert_rule(pools: list[dict[str, Any]], classes: list[dict[str, Any]] | None, interruption: bool, path: KeyPath,
                 fragment: str) -> None:
    found = rules(pools, classes, interruption=interruption)
    matching = [i for i in found if i.path == path]
    assert matching, [(i.path, i.message) for i in found]
    assert any(fragment in i.message for i in matching), [i.message for i in matching]


@pytest.mark.parametrize(("case", "pools", "classes", "interruption", "path", "fragment"), CLASS_RULE_CASES,
                         ids=[c[0] for c in CLASS_RULE_CASES])
def test_class_rules(case: str, pools: list[dict[str, Any]], classes: list[dict[str, Any]] | None,
                     interruption: bool, path: KeyPath, fragment: str) -> None:
    _assert_rule(pools, classes, interruption, path, fragment)


@pytest.mark.parametrize(("case", "pools", "classes", "interruption", "path", "fragment"), POOL_RULE_CASES,
                         ids=[c[0] for c in POOL_RULE_CASES])
def test_pool_rules(case: str, pools: list[dict[str, Any]], classes: list[dict[str, Any]] | None,
                    interruption: bool, path: KeyPath, fragment: str) -> None:
    _assert_rule(pools, classes, interruption, path, fragment)


def test_rules_pass_for_defaults_with_interruption_handling() -> None:
    assert rules([{"name": "default"}]) == []


def test_spot_is_allowed_with_interruption_handling_or_an_explicit_opt_out() -> None:
    assert rules([{"name": "p"}], interruption=True) == []
    assert rules([{"name": "p", "spotWithoutInterruptionHandling": True}], interruption=False) == []
    assert rules([{"name": "p", "capacityTypes": ["on-demand"]}], interruption=False) == []


def test_spot_message_names_both_ways_out() -> None:
    (issue,) = rules([{"name": "p"}], interruption=False)
    assert "eks-karpenter:interruption" in issue.message and "spotWithoutInterruptionHandling" in issue.message
    assert issue.value == ["spot", "on-demand"]


def test_subnet_terms_mixing_id_and_tags_follow_upstream() -> None:
    # Upstream's CEL only refuses a combined term when every term is combined; fields within a term are ANDed.
    mixed = [{"id": "subnet-0a1b2c3d", "tags": {"a": "b"}}, {"tags": {"a": "b"}}]
    assert rules([], [{"name": "c", "subnetSelectorTerms": mixed}]) == []


def test_label_and_matching_requirement_are_compatible() -> None:
    assert rules([{"name": "p", "labels": {"example.com/team": "a"}, "requirements": [
        {"key": "example.com/team", "operator": "In", "values": ["a", "b"]}]}]) == []
    assert rules([{"name": "p", "labels": {"example.com/team": "a"}, "requirements": [
        {"key": "example.com/team", "operator": "Exists"}]}]) == []


@pytest.mark.parametrize(("family", "text"), [
    ("AL2023", NODECONFIG), ("AL2023", MIME), ("AL2023", "#!/bin/bash\necho hi\n"), ("AL2", MIME),
    ("AL2", "#!/bin/bash\necho hi\n"), ("Bottlerocket", TOML), ("Windows2022", "Write-Host 'hi'"),
    ("Custom", "anything <powershell> at all"), (None, "ignored without a family"),
])
def test_user_data_accepted(family: str | None, text: str) -> None:
    assert user_data_problem(family, text) is None


# --- warnings ----------------------------------------------------------------------------------------------------

def test_latest_alias_warns_and_protected_stacks_hear_about_drift() -> None:
    latest = classes_of({"name": "c", "amiSelectorTerms": [{"alias": "al2023@latest"}]})
    (dev,) = warnings_for([], latest, protected=False)
    (prod,) = warnings_for([], latest, protected=True)
    assert "al2023@latest" in dev and "pin" in dev
    assert "drift" in prod and "every node" in prod and "protected" in prod
    assert warnings_for([], classes_of({"name": "c"}), protected=True) == []


def test_risky_settings_warn() -> None:
    found = warnings_for(
        pools_of({"name": "p", "limits": {}, "spotWithoutInterruptionHandling": True}),
        classes_of({"name": "c", "associatePublicIPAddress": True, "metadataOptions": {
            "httpTokens": "optional", "httpPutResponseHopLimit": 3, "httpEndpoint": "disabled"}}),
        protected=False)
    text = "\n".join(found)
    for fragment in ("IMDSv1", "httpPutResponseHopLimit 3", "IMDS disabled", "associatePublicIPAddress",
                     "no limits", "spot without interruption handling"):
        assert fragment in text
    assert len(found) == 6
    assert warnings_for(pools_of({"name": "p"}), classes_of({"name": "c", "metadataOptions": {
        "httpPutResponseHopLimit": 2}}), protected=True) == []


# --- workload helpers ------------------------------------------------------------------------------------------

PREFER_SPOT = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {
    "matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}}]}}


def test_scheduling_for_the_default_pool_prefers_spot() -> None:
    assert scheduling_for(pool()) == {"nodeSelector": {"karpenter.sh/nodepool": "general"}, "affinity": PREFER_SPOT}


def test_scheduling_for_a_single_capacity_type_pins_it() -> None:
    assert scheduling_for(pool(capacityTypes=["on-demand"])) == {
        "nodeSelector": {"karpenter.sh/nodepool": "general", "karpenter.sh/capacity-type": "on-demand"}}
    raw = {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["on-demand", "reserved"]}
    assert scheduling_for(pool(requirements=[raw]))["nodeSelector"]["karpenter.sh/capacity-type"] == "spot"


def test_scheduling_with_reserved_capacity_adds_no_preference() -> None:
    out = scheduling_for(pool(capacityTypes=["reserved", "spot", "on-demand"]))
    assert "affinity" not in out and list(out["nodeSelector"]) == ["karpenter.sh/nodepool"]


def test_tolerations_match_taints_but_not_startup_taints() -> None:
    cfg = pool(taints=[{"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                       {"key": "example.com/gpu", "effect": "NoExecute"}],
               startupTaints=[{"key": "example.com/not-ready", "effect": "NoSchedule"}])
    assert scheduling_for(cfg)["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
        {"key": "example.com/gpu", "operator": "Exists", "effect": "NoExecute"}]


# --- schema and docs -----------------------------------------------------------------------------------------------

def _models() -> list[type[BaseModel]]:
    return [NodePoolConfig, C.Requirement, C.Taint, C.Disruption, C.Budget, NodeClassConfig, C.AmiSelectorTerm,
            C.SubnetSelectorTerm, C.SecurityGroupSelectorTerm, C.CapacityReservationSelectorTerm, C.MetadataOptions,
            C.BlockDeviceMapping, C.Ebs, C.KubeletConfig, C.NetworkInterface, C.PlacementGroupSelector,
            C.ConnectionTracking, C.CpuOptions]


def test_pool_and_class_schemas_build() -> None:
    schema = TypeAdapter(list[NodePoolConfig]).json_schema(by_alias=True)
    assert "capacityTypes" in schema["$defs"]["NodePoolConfig"]["properties"]
    schema = TypeAdapter(list[NodeClassConfig]).json_schema(by_alias=True)
    assert "associatePublicIPAddress" in schema["$defs"]["NodeClassConfig"]["properties"]


def test_node_class_keys_are_spelled_as_upstream() -> None:
    assert {f.alias for f in NodeClassConfig.model_fields.values()} - {"name"} <= set(_crd_spec_keys())


def _crd_spec_keys() -> list[str]:
    return ["amiFamily", "amiSelectorTerms", "associatePublicIPAddress", "blockDeviceMappings",
            "capacityReservationSelectorTerms", "connectionTracking", "context", "cpuOptions", "detailedMonitoring",
            "instanceProfile", "instanceStorePolicy", "ipPrefixCount", "kubelet", "metadataOptions",
            "networkInterfaces", "placementGroupSelector", "role", "securityGroupSelectorTerms",
            "subnetSelectorTerms", "tags", "userData"]


# --- components under the offline engine's mocks -----------------------------------------------------------------

def run_component(build: Callable[[], Any]) -> list[PlannedResource]:
    result = plan_components(build, region="eu-west-1")
    assert result.error is None, result.error
    return result.document.resources


def test_node_class_and_pool_are_one_custom_resource_each() -> None:
    class_manifest = render_class(node_class())
    pool_manifest = render_node_pool(pool(nodeClass="default"))
    refs: dict[str, str] = {}

    def build() -> Any:
        nc = NodeClass("nodeclass-default", {"manifest": class_manifest})
        np = NodePool("nodepool-general", {"manifest": pool_manifest})
        refs.update(nc=nc.object_name, np=np.object_name, ref=np.node_class)
        return pulumi.Output.all(nc.urn, np.urn)

    planned = run_component(build)
    assert all(r.custom for r in planned) and len(planned) == 2  # no wrapper component per object
    by_kind = {r.inputs["kind"]: r for r in planned}
    for kind, manifest, token in (("EC2NodeClass", class_manifest, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"),
                                  ("NodePool", pool_manifest, "kubernetes:karpenter.sh/v1:NodePool")):
        resource = by_kind[kind]
        assert resource.type == token
        assert resource.inputs["apiVersion"] == manifest["apiVersion"]
        assert resource.inputs["spec"] == manifest["spec"]
        assert resource.inputs["metadata"]["name"] == manifest["metadata"]["name"]
    assert refs == {"nc": "default", "np": "general", "ref": "default"}


def test_node_class_and_pool_refuse_the_wrong_manifest() -> None:
    with pytest.raises(ValueError, match=r"expected a karpenter\.sh/v1 NodePool manifest"):
        NodePool("x", {"manifest": render_class(node_class())})
    with pytest.raises(ValueError, match=r"expected a karpenter\.k8s\.aws/v1 EC2NodeClass manifest"):
        NodeClass("x", {"manifest": render_node_pool(pool(nodeClass="default"))})


# --- equivalence with the CRDs -------------------------------------------------------------------------------------

VALID_CLASSES: list[dict[str, Any]] = [
    {"name": "default"},
    {"name": "al2023-full", "amiFamily": "AL2023", "amiSelectorTerms": [{"alias": "al2023@v20240625"}],
     "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo", "tier": "private"}},
                             {"id": "subnet-0abc1234"}],
     "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "sg-0abc1234"},
                                    {"name": "nodes"}],
     "role": "CustomNodeRole", "userData": NODECONFIG, "tags": {"team": "web", "Name": "web-node"},
     "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 2,
                         "httpTokens": "required"},
     "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {
         "volumeSize": "100Gi", "volumeType": "gp3", "iops": 4000, "throughput": 250, "encrypted": True,
         "kmsKeyID": "arn:aws:kms:eu-west-1:123456789012:key/abc", "deleteOnTermination": True}}],
     "detailedMonitoring": True,
     "kubelet": {"maxPods": 110, "podsPerCore": 10, "systemReserved": {"cpu": "100m", "memory": "100Mi"},
                 "kubeReserved": {"cpu": "200m", "memory": "100Mi", "ephemeral-storage": "1Gi", "pid": "100"},
                 "evictionHard": {"memory.available": "5%", "nodefs.available": "10%"},
                 "evictionSoft": {"memory.available": "500Mi"},
                 "evictionSoftGracePeriod": {"memory.available": "1m30s"},
                 "evictionMaxPodGracePeriod": 60, "imageGCHighThresholdPercent": 85,
                 "imageGCLowThresholdPercent": 80, "cpuCFSQuota": True, "clusterDNS": ["10.100.0.10"]},
     "associatePublicIPAddress": False, "instanceStorePolicy": "RAID0",
     "capacityReservationSelectorTerms": [{"tags": {"purpose": "batch"}, "ownerID": "123456789012",
                                           "instanceMatchCriteria": "targeted"}, {"id": "cr-0abc1234"}],
     "context": "ctx-123",
     "networkInterfaces": [NIC, {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
                           {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}],
     "placementGroupSelector": {"name": "pg"},
     "connectionTracking": {"tcpEstablishedTimeout": 600, "udpStreamTimeout": 120, "udpTimeout": 30},
     "cpuOptions": {"nestedVirtualization": "enabled"}, "ipPrefixCount": 1},
    {"name": "custom-ami", "amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}],
     "instanceProfile": "NodeProfile", "userData": "anything goes",
     "blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"snapshotID": "snap-0abc",
                                                                 "volumeInitializationRate": 150}}]},
    {"name": "al2023-selected", "amiFamily": "AL2023", "amiSelectorTerms": [
        {"name": "amazon-eks-node-al2023-*", "owner": "amazon"}, {"tags": {"team": "*"}},
        {"ssmParameter": "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id"}],
     "userData": MIME},
    {"name": "bottlerocket", "amiSelectorTerms": [{"alias": "bottlerocket@v1.26.0"}], "userData": TOML},
    {"name": "al2", "amiFamily": "AL2", "amiSelectorTerms": [{"alias": "al2@v20240625"}],
     "userData": "#!/bin/bash\necho hi\n"},
    {"name": "windows", "amiSelectorTerms": [{"alias": "windows2022@latest"}],
     "userData": "New-Item -Path 'C:\\temp' -ItemType Directory"},
    {"name": "windows2025", "amiFamily": "Windows2025", "amiSelectorTerms": [{"alias": "windows2025@latest"}]},
    {"name": "custom-alias", "amiFamily": "Custom", "amiSelectorTerms": [{"alias": "al2023@latest"}]},
    {"name": "hpc", "placementGroupSelector": {"id": "pg-0abc1234"}, "connectionTracking": {"udpTimeout": 30},
     "metadataOptions": {"httpTokens": "optional"}},
]

VALID_POOLS: list[dict[str, Any]] = [
    {"name": "default"},
    {"name": "web", "nodeClass": "al2023-full", "capacityTypes": ["spot", "on-demand", "reserved"],
     "arch": ["amd64", "arm64"], "os": ["linux"], "instanceCategories": ["c", "m"], "minGeneration": 5,
     "instanceFamilies": ["m7i", "c7g"], "instanceSizes": ["large", "xlarge"], "excludeInstanceSizes": ["metal"],
     "instanceTypes": ["m7i.large", "c7g.xlarge"], "zones": ["eu-west-1a", "eu-west-1b"], "minCpu": 2, "maxCpu": 16,
     "labels": {"team": "web", "example.com/tier": "frontend", "node.kubernetes.io/role": "web"},
     "annotations": {"example.com/owner": "web"},
     "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                {"key": "example.com/gpu", "effect": "NoExecute"}],
     "startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}],
     "expireAfter": "720h", "terminationGracePeriod": "2h30m",
     "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m", "budgets": [
         {"nodes": "20%"}, {"nodes": 0, "schedule": "0 8 * * mon-fri", "duration": "10h",
                            "reasons": ["Underutilized", "Drifted"]}]},
     "limits": {"cpu": 200, "memory": "800Gi", "nodes": "50", "nvidia.com/gpu": "4"}, "weight": 50},
    {"name": "raw", "labels": {"example.com/team": "payments"}, "requirements": [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5d", "m6id", "m7i"],
         "minValues": 2},
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["32"]},
        {"key": "karpenter.k8s.aws/instance-memory", "operator": "Gte", "values": ["4096"]},
        {"key": "example.com/team", "operator": "Exists"},
        {"key": "karpenter.k8s.aws/instance-hypervisor", "operator": "NotIn", "values": ["xen"]},
        {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["eu-west-1c"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"},
        {"key": "karpenter.k8s.aws/instance-local-nvme", "operator": "Gt", "values": ["0"]},
        {"key": "kops.k8s.io/instancegroup", "operator": "Exists"}]},
    {"name": "critical", "capacityTypes": ["on-demand"], "terminationGracePeriod": None, "expireAfter": "Never",
     "disruption": {"consolidationPolicy": "Balanced", "consolidateAfter": "Never", "budgets": [{"nodes": "1"}],
                    "timeZone": "Europe/Berlin", "windows": [{"nodes": "0", "days": ["sat"], "start": "22:00",
                                                              "end": "06:00", "reasons": ["Drifted"]}]},
     "limits": {}, "instanceCategories": None, "minGeneration": None, "weight": 100},
    {"name": "graviton", "nodeClass": "bottlerocket", "arch": ["arm64"], "minGeneration": 6},
    {"name": "win", "nodeClass": "windows", "os": ["windows"], "capacityTypes": ["on-demand"],
     "taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
    {"name": "batch", "nodeClass": "al2", "capacityTypes": ["spot"], "spotWithoutInterruptionHandling": True},
    {"name": "custom", "nodeClass": "custom-ami", "os": ["linux", "windows"]},
    {"name": "labelled", "capacityTypes": ["spot"],
     "labels": {"kubernetes.io/arch": "amd64", "karpenter.sh/capacity-type": "spot"}},
    {"name": "hpc", "nodeClass": "hpc", "minCpu": 32, "zones": ["eu-west-1c"]},
]


def _all_keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _all_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _all_keys(v)}
    return set()


def test_valid_configs_cover_every_field() -> None:
    used = _all_keys(VALID_POOLS) | _all_keys(VALID_CLASSES)
    missing = {f"{m.__name__}.{f.alias or n}" for m in _models() for n, f in m.model_fields.items()
               if (f.alias or n) not in used}
    assert missing == set()


def test_valid_configs_pass_every_rule() -> None:
    assert rules(VALID_POOLS, VALID_CLASSES) == []


@pytest.mark.slow
@requires_upstream
@pytest.mark.parametrize("item", VALID_CLASSES, ids=[c["name"] for c in VALID_CLASSES])
def test_valid_node_classes_render_to_objects_the_crd_accepts(item: dict[str, Any]) -> None:
    from tests.support.crd_validator import validate_object

    assert validate_object(render_class(classes_of(item)[0])) == []


@requires_upstream
@pytest.mark.parametrize("item", VALID_POOLS, ids=[p["name"] for p in VALID_POOLS])
def test_valid_node_pools_render_to_objects_the_crd_accepts(item: dict[str, Any]) -> None:
    from tests.support.crd_validator import validate_object

    assert validate_object(render_node_pool(pools_of(item)[0])) == []


@requires_upstream
@pytest.mark.parametrize(("case", "pools", "classes", "interruption", "path", "fragment"),
                         [c for c in CLASS_RULE_CASES + POOL_RULE_CASES if c[0] in {
                             "role-and-profile", "family-required", "family-mismatch", "ami-term-empty",
                             "ami-id-combined", "ami-alias-combined", "ami-alias-two-terms", "subnet-term-empty",
                             "subnet-id-combined", "sg-term-empty", "sg-id-combined", "sg-name-combined", "two-roots",
                             "ebs-no-size", "init-rate", "reservation-term-empty", "reservation-id-combined",
                             "image-gc", "soft-no-grace", "grace-no-soft", "nic-primary", "nic-duplicate",
                             "nic-two-efa", "placement-none", "placement-both", "conntrack-empty", "in-no-values",
                             "in-empty-values", "gt-word", "gte-two", "lt-none", "min-values", "budget-no-duration",
                             "budget-no-schedule"}],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_rules_refusals_are_crd_refusals(case: str, pools: list[dict[str, Any]],
                                         classes: list[dict[str, Any]] | None, interruption: bool, path: KeyPath,
                                         fragment: str) -> None:
    """What these rules refuse, the apiserver would refuse too: render the refused config and check the CRD."""
    from tests.support.crd_validator import validate_object

    if pools:
        manifests = [render_node_pool(p) for p in pools_of(*pools)]
    else:
        manifests = [render_class(c) for c in classes_of(*(classes or []))]
    assert rules(pools, classes, interruption=interruption), "the rules should refuse this config"
    assert any(validate_object(m) for m in manifests), "the CRD accepts what the rules refuse"


# Same bad input given to the config and to a manifest the CRD checks: both must refuse it.
# (kind, config field, bad value, where it goes in the manifest's spec)
FieldCase = tuple[str, str, Any, tuple[str, ...]]
SAME_INPUT_CASES: list[FieldCase] = [
    ("class", "amiSelectorTerms", [{"alias": "al2023"}], ("amiSelectorTerms",)),
    ("class", "amiSelectorTerms", [{"alias": "ubuntu@latest"}], ("amiSelectorTerms",)),
    ("class", "amiSelectorTerms", [{"alias": "windows2022@v1"}], ("amiSelectorTerms",)),
    ("class", "amiSelectorTerms", [], ("amiSelectorTerms",)),
    ("class", "subnetSelectorTerms", [], ("subnetSelectorTerms",)),
    ("class", "subnetSelectorTerms", [{"tags": {"a": ""}}], ("subnetSelectorTerms",)),
    ("class", "securityGroupSelectorTerms", [], ("securityGroupSelectorTerms",)),
    ("class", "securityGroupSelectorTerms", [{"tags": {"": "x"}}], ("securityGroupSelectorTerms",)),
    ("class", "role", "", ("role",)),
    ("class", "amiFamily", "Ubuntu", ("amiFamily",)),
    ("class", "metadataOptions", {"httpPutResponseHopLimit": 65}, ("metadataOptions",)),
    ("class", "metadataOptions", {"httpTokens": "off"}, ("metadataOptions",)),
    ("class", "blockDeviceMappings", [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "18Ti"}}],
     ("blockDeviceMappings",)),
    ("class", "blockDeviceMappings", [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp4", "volumeSize": "1Gi"}}],
     ("blockDeviceMappings",)),
    ("class", "kubelet", {"evictionHard": {"memory.free": "5%"}}, ("kubelet",)),
    ("class", "kubelet", {"kubeReserved": {"cpu": "-1"}}, ("kubelet",)),
    ("class", "kubelet", {"systemReserved": {"gpu": "1"}}, ("kubelet",)),
    ("class", "kubelet", {"imageGCHighThresholdPercent": 101}, ("kubelet",)),
    ("class", "capacityReservationSelectorTerms", [{"ownerID": "12", "id": "cr-0a1b2c3d4e5f60001"}],
     ("capacityReservationSelectorTerms",)),
    ("class", "connectionTracking", {"udpTimeout": 61}, ("connectionTracking",)),
    ("class", "placementGroupSelector", {"name": ""}, ("placementGroupSelector",)),
    ("class", "networkInterfaces", [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "ena"}],
     ("networkInterfaces",)),
    ("class", "instanceStorePolicy", "RAID1", ("instanceStorePolicy",)),
    *[("class", "tags", {key: "x"}, ("tags",)) for key in (
        "", "eks:eks-cluster-name", "kubernetes.io/cluster/demo", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim",
        "karpenter.k8s.aws/ec2nodeclass")],
    *[("pool", "labels", {key: "x"}, ("template", "metadata", "labels")) for key in (
        "karpenter.sh/nodepool", "kubernetes.io/hostname", "x.karpenter.sh/a", "karpenter.k8s.aws/instance-pods")],
    ("pool", "labels", {"team": "-x"}, ("template", "metadata", "labels")),
    *[("pool", "requirements", [{"key": key, "operator": "Exists"}], ("template", "spec", "requirements")) for key in (
        "karpenter.sh/nodepool", "kubernetes.io/hostname", "x.karpenter.sh/a", "karpenter.k8s.aws/instance-pods")],
    ("pool", "requirements", [{"key": "a", "operator": "Equals"}], ("template", "spec", "requirements")),
    ("pool", "requirements", [{"key": "a", "operator": "Exists", "minValues": 51}],
     ("template", "spec", "requirements")),
    ("pool", "taints", [{"key": "a", "effect": "NoRun"}], ("template", "spec", "taints")),
    ("pool", "taints", [{"key": "a", "value": "", "effect": "NoSchedule"}], ("template", "spec", "taints")),
    ("pool", "expireAfter", "14d", ("template", "spec", "expireAfter")),
    ("pool", "terminationGracePeriod", "Never", ("template", "spec", "terminationGracePeriod")),
    ("pool", "disruption", {"consolidationPolicy": "WhenIdle", "consolidateAfter": "1m"}, ("disruption",)),
    ("pool", "disruption", {"consolidateAfter": "1d"}, ("disruption",)),
    ("pool", "disruption", {"consolidateAfter": "1m", "budgets": [{"nodes": "110%"}]}, ("disruption",)),
    ("pool", "disruption", {"consolidateAfter": "1m", "budgets": [{"nodes": "1", "schedule": "@daily",
                                                                  "duration": "30s"}]}, ("disruption",)),
    ("pool", "disruption", {"consolidateAfter": "1m", "budgets": [{"nodes": "1", "reasons": ["Empty", "Empty"]}]},
     ("disruption",)),
    ("pool", "limits", {"cpu": "lots"}, ("limits",)),
    ("pool", "weight", 101, ("weight",)),
    ("pool", "weight", 0, ("weight",)),
]


def _inject(manifest: dict[str, Any], where: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    target = out["spec"]
    for part in where[:-1]:
        target = target.setdefault(part, {})
    last = where[-1]
    if last == "requirements" and isinstance(value, list):
        target[last] = [*target[last], *value]
    else:
        target[last] = value
    return out


@requires_upstream
@pytest.mark.parametrize(("kind", "field", "value", "where"), SAME_INPUT_CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(SAME_INPUT_CASES)])
def test_same_bad_input_is_refused_by_config_and_crd(kind: str, field: str, value: Any,
                                                     where: tuple[str, ...]) -> None:
    from tests.support.crd_validator import validate_object

    if kind == "class":
        item, base = {"name": "default", field: value}, render_class(node_class())
        refused = field_issues(NodeClassConfig, item) or rules([], [item])
    else:
        item, base = {"name": "general", field: value}, render_node_pool(pool())
        refused = field_issues(NodePoolConfig, item) or rules([item])
    assert refused, "the config should refuse this value"
    assert validate_object(_inject(base, where, value)), "the CRD should refuse it too"


# Deliberately stricter than the CRD: Karpenter, EC2 or the kubelet would refuse these later, at runtime.
STRICTER_THAN_CRD: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    ("notin-without-values", {"name": "p", "requirements": [{"key": "a", "operator": "NotIn"}]}, []),
    ("exists-with-values", {"name": "p", "requirements": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, []),
    ("duplicate-taint", {"name": "p", "taints": [{"key": "a", "effect": "NoSchedule"},
                                                 {"key": "a", "effect": "NoSchedule"}]}, []),
    ("label-vs-requirement", {"name": "p", "labels": {"kubernetes.io/arch": "arm64"}}, []),
    ("iops-on-gp2", {"name": "p"}, [{"name": "default", "blockDeviceMappings": [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeType": "gp2", "iops": 3000}}]}]),
]


@requires_upstream
@pytest.mark.parametrize(("case", "pool_item", "classes"), STRICTER_THAN_CRD, ids=[c[0] for c in STRICTER_THAN_CRD])
def test_documented_rules_beyond_the_crd(case: str, pool_item: dict[str, Any],
                                         classes: list[dict[str, Any]]) -> None:
    from tests.support.crd_validator import validate_object

    assert rules([pool_item], classes or None)
    assert validate_object(render_node_pool(pools_of(pool_item)[0])) == []
    for c in classes_of(*classes):
        assert validate_object(render_class(c)) == []


def test_rendered_requirements_follow_each_pool_not_a_stale_copy() -> None:
    from eks_karpenter.platform.nodepool.manifests import pool_requirements

    pool = NodePoolConfig(name="p", node_class="default", instance_families=["m5"])
    first = pool_requirements(pool)
    first.clear()  # a caller's list is its own: the pool's requirements are unchanged
    assert pool_requirements(pool) == pool_requirements(NodePoolConfig(name="p", node_class="default",
                                                                       instance_families=["m5"]))
    changed = pool.model_copy(update={"instance_families": ["c7g"], "arch": ["arm64"]})
    assert [r.values for r in pool_requirements(changed) if r.key == INSTANCE_FAMILY] == [("c7g",)]
    assert [r.values for r in pool_requirements(pool) if r.key == INSTANCE_FAMILY] == [("m5",)]
    assert render_node_pool(changed)["spec"]["template"]["spec"]["requirements"] != \
        render_node_pool(pool)["spec"]["template"]["spec"]["requirements"]


def test_a_missing_class_is_named_by_the_callers_own_key() -> None:
    # A consumer project validates its pool against its own class key, not the platform's stack key.
    found = validate_node_config(pools_of({"name": "p", "nodeClass": "gpu"}), classes_of({"name": "default"}),
                                 ZONES, True, ("team-batch:nodePool",), ("team-batch:nodeClass",))
    [issue] = [i for i in found if i.path == ("team-batch:nodePool", 0, "nodeClass")]
    assert issue.message.startswith("no team-batch:nodeClass entry has this name (defined: default)"), issue.message
