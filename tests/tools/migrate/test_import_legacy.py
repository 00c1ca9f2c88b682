"""`python -m infra import-legacy`: v1alpha5 Provisioners and v1alpha1 AWSNodeTemplates to v1 config and manifests."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter import versions
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.nodepool.manifests import render_node_class, render_node_pool
from eks_karpenter.platform.nodepool.rules import validate_node_config
from eks_karpenter.tools.migrate import Conversion, LegacyImportError, convert_documents, parse_documents

from tests.support import REPO, requires_upstream, stack_config

FIXTURES = REPO / "tests" / "fixtures" / "legacy"
GOOD = ("workshop-default.yaml", "network-optimised.yaml", "network-optimised-template.yaml",
        "consolidation-inline.yaml")
ROLE = "KarpenterNodeRole-demo"
LEGACY_CLUSTER = "1.32"
"""The Kubernetes version most tests convert for: a v1alpha5-era cluster that still has AL2 AMIs (the last minor
that does), so AL2 templates convert as they are. Conversions for 1.33 and later are tested at the end."""

# --- helpers ----------------------------------------------------------------------------------------------------


def fixture_docs(*names: str) -> list[tuple[str, int, dict[str, Any]]]:
    docs = []
    for name in names:
        path = FIXTURES / name
        docs += parse_documents(f"legacy/{name}", path.read_text())
    return docs


def convert_fixtures(*names: str, version: str = LEGACY_CLUSTER) -> Conversion:
    return convert_documents(fixture_docs(*names), version)


def by_name(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(i for i in items if i["name"] == name)


def template_spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"subnetSelector": {"karpenter.sh/discovery": "demo"},
                            "securityGroupSelector": {"karpenter.sh/discovery": "demo"}}
    spec.update(overrides)
    return {k: v for k, v in spec.items() if v is not None}


def provisioner(name: str = "default", **spec: Any) -> dict[str, Any]:
    spec.setdefault("providerRef", {"name": "default"})
    return {"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": name},
            "spec": {k: v for k, v in spec.items() if v is not None}}


def template(name: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate", "metadata": {"name": name},
            "spec": template_spec(**spec)}


def convert(*objects: dict[str, Any], file: str = "in.yaml", version: str = LEGACY_CLUSTER) -> Conversion:
    return convert_documents([(file, i, obj) for i, obj in enumerate(objects, start=1)], version)


def problems(*objects: dict[str, Any], file: str = "in.yaml", version: str = LEGACY_CLUSTER) -> list[str]:
    with pytest.raises(LegacyImportError) as err:
        convert(*objects, file=file, version=version)
    return err.value.problems


def one_problem(*objects: dict[str, Any]) -> str:
    found = problems(*objects)
    assert len(found) == 1, found
    return found[0]


def pool_of(*objects: dict[str, Any], name: str = "default") -> dict[str, Any]:
    return by_name(convert(*objects).node_pools, name)


def class_of(*objects: dict[str, Any], name: str = "default") -> dict[str, Any]:
    return by_name(convert(*objects).node_classes, name)


def run_cli(*args: str, stdin: str | None = None, version: str | None = LEGACY_CLUSTER
            ) -> subprocess.CompletedProcess[str]:
    target = ["--kubernetes-version", version] if version else []
    return subprocess.run([sys.executable, "-m", "infra", "import-legacy", *args, *target], cwd=REPO,
                          capture_output=True, text=True, input=stdin, timeout=120)


# --- Provisioner -> NodePool -------------------------------------------------------------------------------------


def test_ttl_seconds_after_empty_becomes_when_empty() -> None:
    pool = by_name(convert_fixtures("workshop-default.yaml").node_pools, "default")
    assert pool["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s",
                                  "budgets": [{"nodes": "10%"}]}


def test_consolidation_enabled_becomes_when_empty_or_underutilized() -> None:
    pool = by_name(convert_fixtures("consolidation-inline.yaml").node_pools, "batch")
    assert pool["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert pool["disruption"]["consolidateAfter"] == "0s"


def test_neither_ttl_nor_consolidation_never_removes_nodes() -> None:
    # v1alpha5 left empty and underused nodes alone; v1's default would consolidate them.
    pool = pool_of(provisioner(), template())
    assert pool["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert pool["disruption"]["consolidateAfter"] == "Never"


def test_consolidation_disabled_with_ttl_is_when_empty() -> None:
    pool = pool_of(provisioner(consolidation={"enabled": False}, ttlSecondsAfterEmpty=0), template())
    assert pool["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert pool["disruption"]["consolidateAfter"] == "0s"


def test_ttl_and_consolidation_together_are_refused() -> None:
    message = one_problem(provisioner(ttlSecondsAfterEmpty=30, consolidation={"enabled": True}), template())
    assert message.startswith("in.yaml (document 1): Provisioner 'default': spec.ttlSecondsAfterEmpty: ")
    assert "consolidation.enabled" in message


def test_ttl_seconds_until_expired_becomes_expire_after() -> None:
    assert by_name(convert_fixtures("consolidation-inline.yaml").node_pools, "batch")["expireAfter"] == "604800s"
    # Absent: v1alpha5 never expired nodes (v1 would default to 720h).
    assert pool_of(provisioner(), template())["expireAfter"] == "Never"


@pytest.mark.parametrize("field", ["ttlSecondsAfterEmpty", "ttlSecondsUntilExpired"])
@pytest.mark.parametrize("value", [-1, "30", True])
def test_ttls_must_be_whole_seconds(field: str, value: Any) -> None:
    message = one_problem(provisioner(**{field: value}), template())
    assert f"spec.{field}: " in message


def test_requirements_are_kept_in_order_with_the_legacy_defaults_appended() -> None:
    pool = by_name(convert_fixtures("network-optimised.yaml", "network-optimised-template.yaml").node_pools,
                   "network-intensive")
    assert pool["requirements"] == [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In",
         "values": ["c5n.2xlarge", "c5n.4xlarge", "c6in.2xlarge", "c6in.4xlarge"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a", "eu-west-1b"]},
        # What the v1alpha5 webhook added (v1 adds nothing):
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
    ]


def test_empty_requirements_get_every_legacy_default() -> None:
    conv = convert(provisioner(), template())
    assert by_name(conv.node_pools, "default")["requirements"] == [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
    ]
    assert any("added what v1alpha5 defaulted" in n and "capacity-type In on-demand" in n for n in conv.notes)


def test_a_label_pins_its_key_instead_of_the_default() -> None:
    pool = pool_of(provisioner(labels={"kubernetes.io/arch": "arm64"}), template())
    arch = [r for r in pool["requirements"] if r["key"] == "kubernetes.io/arch"]
    assert arch == [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]


def test_instance_defaults_are_skipped_when_the_provisioner_names_instances() -> None:
    pool = pool_of(provisioner(requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "NotIn",
                                              "values": ["t2"]}]), template())
    keys = [r["key"] for r in pool["requirements"]]
    assert "karpenter.k8s.aws/instance-category" not in keys
    assert "karpenter.k8s.aws/instance-generation" not in keys
    # ... and the library's shortcuts for them are switched off, so they add nothing either.
    assert pool["instanceCategories"] is None and pool["minGeneration"] is None


def test_shortcuts_never_add_requirements_to_a_converted_pool() -> None:
    for pool in convert_fixtures(*GOOD).node_pools:
        cfg = NodePoolConfig.model_validate(pool)
        assert render_node_pool(cfg)["spec"]["template"]["spec"]["requirements"] == pool["requirements"]


@pytest.mark.parametrize(("key", "fragment"), [
    ("karpenter.sh/provisioner-name", "karpenter.sh/nodepool"),
    ("karpenter.sh/nodepool", "restricted"),
    ("kubernetes.io/hostname", "restricted"),
    ("karpenter.k8s.aws/instance-pods", "karpenter.k8s.aws"),
    ("karpenter.sh/do-not-evict", "karpenter.sh"),
])
def test_restricted_requirement_keys_are_refused(key: str, fragment: str) -> None:
    message = one_problem(provisioner(requirements=[{"key": key, "operator": "Exists"}]), template())
    assert "spec.requirements[0].key: " in message
    assert fragment in message


@pytest.mark.parametrize(("requirement", "fragment"), [
    ({"key": "example.com/team", "operator": "Matches", "values": ["a"]}, "operator: must be one of"),
    ({"key": "example.com/team", "operator": "In", "values": []}, "needs at least one value"),
    ({"key": "example.com/team", "operator": "Exists", "values": ["a"]}, "takes no values"),
    ({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["x"]}, "non-negative integer"),
    ({"key": "example.com/team", "operator": "In", "values": ["a"], "minValues": 1}, "minValues: unknown field"),
])
def test_malformed_requirements_are_refused(requirement: dict[str, Any], fragment: str) -> None:
    message = one_problem(provisioner(requirements=[requirement]), template())
    assert "spec.requirements[0]" in message and fragment in message


def test_labels_annotations_taints_and_startup_taints_are_kept() -> None:
    conv = convert_fixtures(*GOOD)
    network = by_name(conv.node_pools, "network-intensive")
    assert network["labels"] == {"workload-type": "network", "team": "edge"}
    assert network["annotations"] == {"example.com/owner": "edge-team"}
    assert network["taints"] == [{"key": "dedicated", "value": "network", "effect": "NoSchedule"}]
    batch = by_name(conv.node_pools, "batch")
    assert batch["startupTaints"] == [{"key": "node.cilium.io/agent-not-ready", "value": "true",
                                       "effect": "NoExecute"}]
    assert by_name(conv.node_pools, "gpu")["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]


def test_taint_time_added_is_dropped_with_a_note() -> None:
    taint = {"key": "a", "effect": "NoExecute", "timeAdded": "2023-01-01T00:00:00Z"}
    conv = convert(provisioner(taints=[taint]), template())
    assert by_name(conv.node_pools, "default")["taints"] == [{"key": "a", "effect": "NoExecute"}]
    assert any("spec.taints[0].timeAdded: dropped" in n for n in conv.notes)


def test_bad_taint_effect_is_refused() -> None:
    message = one_problem(provisioner(taints=[{"key": "a", "effect": "NoRun"}]), template())
    assert "spec.taints[0].effect: must be one of NoSchedule" in message


def test_restricted_label_is_refused() -> None:
    message = one_problem(provisioner(labels={"karpenter.sh/provisioner-name": "x"}), template())
    assert "spec.labels[\"karpenter.sh/provisioner-name\"]: " in message


def test_limits_and_weight() -> None:
    conv = convert_fixtures(*GOOD)
    assert by_name(conv.node_pools, "default")["limits"] == {"cpu": "1000", "memory": "1000Gi"}
    network = by_name(conv.node_pools, "network-intensive")
    assert network["limits"] == {"cpu": "256", "memory": "512Gi"}
    assert network["weight"] == 50
    # No limits in v1alpha5 meant no limits: the library's default ceiling is switched off.
    assert by_name(conv.node_pools, "gpu")["limits"] == {}
    assert "weight" not in by_name(conv.node_pools, "gpu")


def test_no_drain_deadline_like_v1alpha5() -> None:
    for pool in convert_fixtures(*GOOD).node_pools:
        assert pool["terminationGracePeriod"] is None


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"weight": 0}, "spec.weight: must be in 1..100"),
    ({"limits": {"cpu": 10}}, "spec.limits.cpu: unknown field"),
    ({"limits": {"resources": {"cpu": "lots"}}}, "spec.limits.resources.cpu: not a Kubernetes quantity"),
])
def test_bad_limits_and_weight_are_refused(spec: dict[str, Any], fragment: str) -> None:
    assert fragment in one_problem(provisioner(**spec), template())


# --- node classes ------------------------------------------------------------------------------------------------


def test_provider_ref_points_the_pool_at_the_converted_class() -> None:
    conv = convert_fixtures("network-optimised.yaml", "network-optimised-template.yaml")
    assert by_name(conv.node_pools, "network-intensive")["nodeClass"] == "network-optimised"
    assert [c["name"] for c in conv.node_classes] == ["network-optimised"]
    manifest = next(m for m in conv.manifests() if m["kind"] == "NodePool")
    assert manifest["spec"]["template"]["spec"]["nodeClassRef"] == {
        "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "network-optimised"}


def test_provider_ref_to_a_missing_template_is_refused() -> None:
    message = one_problem(provisioner(providerRef={"name": "nowhere"}))
    assert "spec.providerRef.name: no AWSNodeTemplate named 'nowhere'" in message


def test_provider_ref_of_another_kind_is_refused() -> None:
    message = one_problem(provisioner(providerRef={"kind": "EC2NodeClass", "name": "default"}), template())
    assert "spec.providerRef.kind: must be AWSNodeTemplate" in message


def test_inline_provider_becomes_a_class_named_after_the_provisioner() -> None:
    conv = convert_fixtures("consolidation-inline.yaml")
    assert by_name(conv.node_pools, "batch")["nodeClass"] == "batch"
    batch = by_name(conv.node_classes, "batch")
    assert batch["subnetSelectorTerms"] == [{"id": "subnet-0123456789abcdef0"}, {"id": "subnet-0fedcba9876543210"}]
    assert batch["tags"] == {"workload": "batch"}


def test_inline_provider_clashing_with_a_template_name_is_refused() -> None:
    message = one_problem(provisioner("default", providerRef=None, provider=template_spec()), template())
    assert "Provisioner 'default': spec.provider: " in message and "AWSNodeTemplate of that name" in message


def test_provider_and_provider_ref_together_are_refused() -> None:
    message = one_problem(provisioner(provider=template_spec()), template())
    assert "spec.provider: set either spec.provider or spec.providerRef" in message


def test_provisioner_without_node_settings_is_refused() -> None:
    obj = provisioner()
    del obj["spec"]["providerRef"]
    assert "needs spec.providerRef" in one_problem(obj)


def test_kubelet_configuration_moves_to_the_class() -> None:
    conv = convert_fixtures("consolidation-inline.yaml")
    kubelet = by_name(conv.node_classes, "batch")["kubelet"]
    assert kubelet == {
        "maxPods": 110, "podsPerCore": 4,
        "systemReserved": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"},
        "kubeReserved": {"cpu": "200m", "memory": "500Mi", "ephemeral-storage": "3Gi"},
        "evictionHard": {"memory.available": "5%", "nodefs.available": "10%"},
        "evictionSoft": {"memory.available": "500Mi", "nodefs.available": "15%"},
        "evictionSoftGracePeriod": {"memory.available": "1m", "nodefs.available": "1m30s"},
        "evictionMaxPodGracePeriod": 60, "imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80,
        "cpuCFSQuota": True, "clusterDNS": ["172.20.0.10"],
    }
    assert "kubelet" not in by_name(conv.node_classes, "gpu")
    assert any("containerRuntime: dropped" in n for n in conv.notes)


@pytest.mark.parametrize("runtime", ["dockerd", "cri-o"])
def test_container_runtimes_other_than_containerd_are_refused(runtime: str) -> None:
    message = one_problem(provisioner(kubeletConfiguration={"containerRuntime": runtime}), template())
    assert "spec.kubeletConfiguration.containerRuntime: " in message and "containerd" in message


@pytest.mark.parametrize(("kubelet", "fragment"), [
    ({"maxPod": 10}, "kubeletConfiguration.maxPod: unknown field"),
    ({"systemReserved": {"gpu": "1"}}, "systemReserved.gpu: unknown key"),
    ({"evictionHard": {"memory.free": "5%"}}, "evictionHard[\"memory.free\"]: unknown eviction signal"),
    ({"evictionSoft": {"memory.available": "1Gi"}}, "evictionSoftGracePeriod: has no entry"),
    ({"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 60}, "must be greater than"),
])
def test_bad_kubelet_settings_are_refused(kubelet: dict[str, Any], fragment: str) -> None:
    assert fragment in one_problem(provisioner(kubeletConfiguration=kubelet), template())


def test_a_shared_template_with_different_kubelet_settings_is_split() -> None:
    conv = convert(provisioner("a"), provisioner("b", kubeletConfiguration={"maxPods": 50}),
                   provisioner("c", kubeletConfiguration={"maxPods": 50}), template())
    assert [c["name"] for c in conv.node_classes] == ["default", "default-b"]
    assert "kubelet" not in by_name(conv.node_classes, "default")
    assert by_name(conv.node_classes, "default-b")["kubelet"] == {"maxPods": 50}
    assert {p["name"]: p["nodeClass"] for p in conv.node_pools} == {"a": "default", "b": "default-b",
                                                                     "c": "default-b"}
    assert any("get their own copy 'default-b'" in n for n in conv.notes)


def test_a_shared_template_with_the_same_kubelet_settings_stays_one_class() -> None:
    conv = convert(provisioner("a", kubeletConfiguration={"maxPods": 50}),
                   provisioner("b", kubeletConfiguration={"maxPods": 50}), template())
    assert [c["name"] for c in conv.node_classes] == ["default"]
    assert conv.node_classes[0]["kubelet"] == {"maxPods": 50}


def test_subnet_and_security_group_selectors() -> None:
    conv = convert_fixtures(*GOOD)
    network = by_name(conv.node_classes, "network-optimised")
    assert network["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "prod-eks",
                                                        "network-tier": "private"}}]
    assert network["securityGroupSelectorTerms"] == [{"id": "sg-0a1b2c3d4e5f60718"}, {"id": "sg-0f1e2d3c4b5a69788"}]
    default = by_name(conv.node_classes, "default")
    assert default["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "workshop-cluster"}}]


def test_aws_ids_with_the_double_colon_spelling() -> None:
    cls = class_of(provisioner(), template(subnetSelector={"aws::ids": "subnet-0a1b2c3d, subnet-0e5f6a7b"}))
    assert cls["subnetSelectorTerms"] == [{"id": "subnet-0a1b2c3d"}, {"id": "subnet-0e5f6a7b"}]


@pytest.mark.parametrize(("selector", "fragment"), [
    ({"aws-ids": "subnet-1", "karpenter.sh/discovery": "demo"}, "cannot be combined with tag filters"),
    ({"aws-ids": "sg-1"}, "not subnet-... ids: sg-1"),
    ({"karpenter.sh/discovery": ""}, "empty value"),
    ({}, "must not be empty"),
])
def test_bad_subnet_selectors_are_refused(selector: dict[str, str], fragment: str) -> None:
    message = one_problem(provisioner(), template(subnetSelector=selector))
    assert "AWSNodeTemplate 'default': spec.subnetSelector" in message and fragment in message


def test_missing_selector_is_refused() -> None:
    message = one_problem(provisioner(), template(securityGroupSelector=None))
    assert "spec.securityGroupSelector: required" in message


def test_ami_selector_by_name_and_owner() -> None:
    gpu = by_name(convert_fixtures("consolidation-inline.yaml").node_classes, "gpu")
    assert gpu["amiFamily"] == "AL2"
    assert gpu["amiSelectorTerms"] == [{"name": "analytics-eks-gpu-1.27-*", "owner": "123456789012",
                                        "tags": {"team": "ml"}}]


def test_ami_selector_one_term_per_owner_and_v1alpha1_default_owners() -> None:
    two = class_of(provisioner(), template(amiFamily="Custom",
                                           amiSelector={"aws::name": "my-ami-*", "aws::owners": "self,111122223333"}))
    assert two["amiSelectorTerms"] == [{"name": "my-ami-*", "owner": "self"},
                                       {"name": "my-ami-*", "owner": "111122223333"}]
    # Without aws::owners v1alpha1 looked only at self and amazon: written out.
    tags = class_of(provisioner(), template(amiSelector={"team": "ml"}))
    assert tags["amiSelectorTerms"] == [{"owner": "self", "tags": {"team": "ml"}},
                                        {"owner": "amazon", "tags": {"team": "ml"}}]
    assert tags["amiFamily"] == "AL2"  # v1alpha1's default, required next to a selector in v1


def test_ami_selector_ids() -> None:
    cls = class_of(provisioner(), template(amiFamily="Custom", amiSelector={"aws::ids": "ami-0abc1234,ami-0def5678"}))
    assert cls["amiSelectorTerms"] == [{"id": "ami-0abc1234"}, {"id": "ami-0def5678"}]
    assert cls["amiFamily"] == "Custom"
    assert "blockDeviceMappings" not in cls  # Custom AMIs bring their own disks


@pytest.mark.parametrize(("selector", "fragment"), [
    ({"aws::ids": "ami-0abc1234", "aws::name": "x"}, "aws::ids cannot be combined"),
    ({"aws::owners": "self"}, "aws::owners alone"),
    ({"aws-ids": "i-123"}, "not AMI ids"),
])
def test_bad_ami_selectors_are_refused(selector: dict[str, str], fragment: str) -> None:
    message = one_problem(provisioner(), template(amiSelector=selector))
    assert "spec.amiSelector" in message and fragment in message


@pytest.mark.parametrize(("family", "alias"), [
    ("AL2023", versions.AMI_ALIAS),
    ("AL2", "al2@latest"),
    (None, "al2@latest"),
    ("Bottlerocket", "bottlerocket@latest"),
    ("Windows2022", "windows2022@latest"),
])
def test_ami_family_becomes_an_alias(family: str | None, alias: str) -> None:
    requirements = [{"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}] \
        if family and family.startswith("Windows") else None
    conv = convert(provisioner(requirements=requirements), template(amiFamily=family))
    cls = by_name(conv.node_classes, "default")
    assert cls["amiSelectorTerms"] == [{"alias": alias}]
    assert "amiFamily" not in cls  # the alias implies it
    if alias.endswith("@latest") and not alias.startswith("windows"):
        assert any(f"alias {alias}" in n and "pin a version" in n for n in conv.notes)
    else:
        assert not any("pin a version" in n for n in conv.notes)


def test_pinned_alias_comes_from_versions() -> None:
    assert versions.AMI_ALIAS.startswith("al2023@v")


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"amiFamily": "Ubuntu"}, "spec.amiFamily: Ubuntu was removed"),
    ({"amiFamily": "Custom"}, "spec.amiFamily: Custom needs an amiSelector"),
    ({"amiFamily": "AmazonLinux"}, "spec.amiFamily: must be one of"),
    ({"launchTemplate": "eks-nodes"}, "spec.launchTemplate: custom launch templates were removed"),
])
def test_unsupported_ami_settings_are_refused(spec: dict[str, Any], fragment: str) -> None:
    assert fragment in one_problem(provisioner(), template(**spec))


def test_instance_profile_is_kept_and_no_role_is_needed() -> None:
    conv = convert_fixtures("network-optimised.yaml", "network-optimised-template.yaml")
    cls = by_name(conv.node_classes, "network-optimised")
    assert cls["instanceProfile"] == "KarpenterNodeInstanceProfile-prod-eks"
    manifest = conv.manifests()[0]
    assert manifest["spec"]["instanceProfile"] == "KarpenterNodeInstanceProfile-prod-eks"
    assert "role" not in manifest["spec"]


def test_without_instance_profile_config_leaves_role_to_the_platform() -> None:
    conv = convert(provisioner(), template())
    assert "role" not in conv.node_classes[0] and "instanceProfile" not in conv.node_classes[0]
    assert "role" not in conv.config()["eks-karpenter:nodeClasses"][0]
    assert conv.config(node_role=ROLE)["eks-karpenter:nodeClasses"][0]["role"] == ROLE
    assert any("leaves `role` unset" in n for n in conv.notes)


def test_manifests_without_instance_profile_need_a_node_role() -> None:
    conv = convert(provisioner(), template(), file="legacy.yaml")
    with pytest.raises(LegacyImportError) as err:
        conv.manifests(cluster_name="demo")
    assert err.value.problems[0].startswith("legacy.yaml (document 2): AWSNodeTemplate 'default': no instanceProfile")
    assert "--node-role" in err.value.problems[0] and "KarpenterNodeRole-demo" in err.value.problems[0]
    assert conv.manifests(node_role=ROLE)[0]["spec"]["role"] == ROLE


@pytest.mark.parametrize("role", ["arn:aws:iam::111122223333:role/nodes", "", "a b"])
def test_node_role_must_be_a_role_name(role: str) -> None:
    conv = convert(provisioner(), template())
    with pytest.raises(LegacyImportError, match="give the IAM role's name"):
        conv.manifests(node_role=role)
    with pytest.raises(LegacyImportError, match="give the IAM role's name"):
        conv.config(node_role=role)


def test_instance_profile_arn_is_refused() -> None:
    message = one_problem(provisioner(), template(instanceProfile="arn:aws:iam::111122223333:instance-profile/x"))
    assert "spec.instanceProfile: must be the instance profile's name" in message


def test_user_data_tags_monitoring_and_disks_are_kept() -> None:
    cls = by_name(convert_fixtures("network-optimised.yaml", "network-optimised-template.yaml").node_classes,
                  "network-optimised")
    assert cls["userData"].startswith("MIME-Version: 1.0\n")
    assert "net.core.somaxconn = 32768" in cls["userData"]
    assert cls["tags"] == {"team": "edge", "cost-center": "4711", "Name": "prod-eks-network"}
    assert cls["detailedMonitoring"] is True
    assert cls["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "100Gi", "volumeType": "gp3", "iops": 6000, "throughput": 250, "encrypted": True,
        "deleteOnTermination": True}}]
    assert cls["metadataOptions"] == {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                      "httpPutResponseHopLimit": 2, "httpTokens": "required"}


def test_context_and_public_ip_are_kept() -> None:
    cls = class_of(provisioner(), template(context="c-123", associatePublicIpAddress=False))
    assert cls["context"] == "c-123"
    assert cls["associatePublicIPAddress"] is False


def test_legacy_disk_and_imds_defaults_are_written_out() -> None:
    conv = convert_fixtures("workshop-default.yaml", "consolidation-inline.yaml")
    default = by_name(conv.node_classes, "default")
    assert default["metadataOptions"]["httpPutResponseHopLimit"] == 2
    assert default["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "20Gi", "volumeType": "gp3", "encrypted": True}}]
    assert [d["deviceName"] for d in by_name(conv.node_classes, "batch")["blockDeviceMappings"]] == [
        "/dev/xvda", "/dev/xvdb"]
    assert any("v1alpha1 defaults written out" in n and "blockDeviceMappings" in n for n in conv.notes)


def test_partial_metadata_options_take_ec2_defaults() -> None:
    conv = convert(provisioner(), template(metadataOptions={"httpEndpoint": "enabled"}))
    assert conv.node_classes[0]["metadataOptions"] == {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                                       "httpPutResponseHopLimit": 1, "httpTokens": "optional"}
    assert any("httpTokens: optional allows IMDSv1" in n for n in conv.notes)


@pytest.mark.parametrize("key", ["kubernetes.io/cluster/demo", "karpenter.sh/nodepool", "eks:eks-cluster-name",
                                 "karpenter.sh/provisioner-name", "karpenter.k8s.aws/ec2nodeclass", "aws:owner"])
def test_restricted_tags_are_refused(key: str) -> None:
    message = one_problem(provisioner(), template(tags={key: "x", "team": "platform"}))
    assert f"spec.tags[{json.dumps(key)}]: " in message


@pytest.mark.parametrize(("ebs", "fragment"), [
    ({"volumeSize": "20000Mi"}, "whole size in Gi"),
    ({"volumeType": "gp4", "volumeSize": "20Gi"}, "volumeType: must be one of"),
    ({"volumeType": "gp3"}, "volumeSize: required unless snapshotID"),
])
def test_bad_block_devices_are_refused(ebs: dict[str, Any], fragment: str) -> None:
    message = one_problem(provisioner(), template(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": ebs}]))
    assert "spec.blockDeviceMappings[0].ebs" in message and fragment in message


# --- refusals: unknown, misplaced, unsupported ------------------------------------------------------------------


BAD_MIXED = [
    (1, "Provisioner 'typo'", "spec.requirments", "unknown field"),
    (2, "Provisioner 'misplaced'", "spec.subnetSelector", "is an AWSNodeTemplate field"),
    (3, "Provisioner 'both-modes'", "spec.ttlSecondsAfterEmpty", "cannot be combined with consolidation"),
    (4, "AWSNodeTemplate 'fine'", "spec.ttlSecondsAfterEmpty", "is a Provisioner field"),
    (5, "AWSNodeTemplate 'ubuntu'", "spec.amiFamily", "Ubuntu was removed"),
    (6, "AWSNodeTemplate 'from-launch-template'", "spec.launchTemplate", "launch templates were removed"),
    (7, "AWSNodeTemplate 'restricted-tags'", 'spec.tags["kubernetes.io/cluster/demo"]', "restricted"),
]


@pytest.mark.parametrize(("doc", "what", "path", "fragment"), BAD_MIXED)
def test_bad_file_problems_name_file_document_and_path(doc: int, what: str, path: str, fragment: str) -> None:
    with pytest.raises(LegacyImportError) as err:
        convert_fixtures("bad-mixed.yaml")
    prefix = f"legacy/bad-mixed.yaml (document {doc}): {what}: {path}: "
    matching = [p for p in err.value.problems if p.startswith(prefix)]
    assert matching, err.value.problems
    assert fragment in matching[0]


def test_every_bad_document_is_reported_at_once() -> None:
    with pytest.raises(LegacyImportError) as err:
        convert_fixtures("bad-mixed.yaml")
    documents = {int(p.split("(document ")[1].split(")")[0]) for p in err.value.problems}
    assert documents == {1, 2, 3, 4, 5, 6, 7}
    assert str(err.value).startswith(f"cannot import the legacy Karpenter objects, {len(err.value.problems)} ")


def test_provider_only_and_newer_fields_are_explained() -> None:
    inline = template_spec(userData="#!/bin/bash\necho hi\n")
    message = one_problem(provisioner(providerRef=None, provider=inline))
    assert "spec.provider.userData: `userData` only exists on AWSNodeTemplate" in message
    message = one_problem(provisioner(), template(subnetSelectorTerms=[{"tags": {"a": "b"}}]))
    assert "spec.subnetSelectorTerms: `subnetSelectorTerms` is the v1beta1/v1 spelling" in message
    message = one_problem(provisioner(provider={**template_spec(), "ttlSecondsAfterEmpty": 30}, providerRef=None))
    assert "spec.provider.ttlSecondsAfterEmpty: `ttlSecondsAfterEmpty` is a Provisioner spec field" in message


def test_unknown_top_level_and_nested_fields_are_refused() -> None:
    obj = provisioner(consolidation={"enabled": True, "policy": "aggressive"})
    obj["extra"] = 1
    found = problems(obj, template(metadataOptions={"httpTokens": "required", "hopLimit": 2}))
    assert any(p.endswith("Provisioner 'default': extra: unknown field; expected one of apiVersion, kind, metadata, "
                          "spec, status") for p in found)
    assert any("spec.consolidation.policy: unknown field" in p for p in found)
    assert any("spec.metadataOptions.hopLimit: unknown field" in p for p in found)


@pytest.mark.parametrize(("obj", "fragment"), [
    ({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "x"}}, "already the new API"),
    ({"apiVersion": "karpenter.sh/v1alpha4", "kind": "Provisioner", "metadata": {"name": "x"}},
     "apiVersion \"karpenter.sh/v1alpha4\" is not supported"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "not a legacy Karpenter object"),
    ({"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {}}, "metadata.name: required"),
])
def test_other_objects_are_refused(obj: dict[str, Any], fragment: str) -> None:
    assert fragment in one_problem(obj)


def test_shell_placeholders_are_refused_outside_user_data() -> None:
    message = one_problem(provisioner(), template(subnetSelector={"karpenter.sh/discovery": "${CLUSTER_NAME}"}))
    assert "contains the shell placeholder ${CLUSTER_NAME}" in message and "envsubst" in message
    # user data legitimately holds shell variables
    assert "${HOME}" in class_of(provisioner(), template(userData="#!/bin/bash\necho ${HOME}\n"))["userData"]


def test_duplicate_names_are_refused() -> None:
    found = problems(provisioner("a"), provisioner("a"), template(), template())
    assert any("(document 2): Provisioner 'a': metadata.name: duplicate Provisioner name" in p for p in found)
    assert any("(document 4): AWSNodeTemplate 'default': metadata.name: duplicate" in p for p in found)


def test_names_the_library_cannot_use_are_refused() -> None:
    message = one_problem(provisioner("Default.pool", providerRef={"name": "default"}), template())
    assert "metadata.name: 'Default.pool' cannot name a NodePool" in message


def test_library_rules_are_applied_to_the_result() -> None:
    # A Windows class with a linux pool passes the converter's own checks but not the library's rules.
    message = one_problem(provisioner(), template(amiFamily="Windows2022"))
    assert message.startswith("in.yaml (document 1): Provisioner 'default': the converted entry is refused at "
                              "eks-karpenter:nodePools.default")
    assert "windows" in message


def test_kubectl_list_output_and_status_are_understood() -> None:
    listing = {"apiVersion": "v1", "kind": "List", "items": [
        {**provisioner(), "status": {"resources": {"cpu": "4"}}},
        {**template(), "metadata": {"name": "default", "uid": "1234", "resourceVersion": "99",
                                    "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}}},
    ]}
    conv = convert(listing)
    assert [p["name"] for p in conv.node_pools] == ["default"]
    assert any("items[0].status: ignored" in n for n in conv.notes)
    found = problems({"apiVersion": "v1", "kind": "List", "items": [provisioner(bogus=1), template()]})
    assert found[0].startswith("in.yaml (document 1): Provisioner 'default': items[0].spec.bogus: unknown field")


def test_nothing_to_convert_is_an_error() -> None:
    assert one_problem() == "no karpenter.sh/v1alpha5 Provisioner or karpenter.k8s.aws/v1alpha1 AWSNodeTemplate " \
                            "in the given files"


def test_invalid_yaml_names_the_file_and_line() -> None:
    with pytest.raises(LegacyImportError) as err:
        parse_documents("broken.yaml", "kind: Provisioner\nspec: [\n")
    assert err.value.problems[0].startswith("broken.yaml: line ")


def test_unreferenced_template_is_converted_with_a_note() -> None:
    conv = convert(provisioner(), template(), template("spare"))
    assert [c["name"] for c in conv.node_classes] == ["default", "spare"]
    assert any("AWSNodeTemplate 'spare'" in n and "not referenced" in n for n in conv.notes)


# --- the two output formats ------------------------------------------------------------------------------------


def test_config_output_loads_with_the_node_models_and_rules() -> None:
    conv = convert_fixtures(*GOOD)
    config = conv.config()
    pools = [NodePoolConfig.model_validate(p) for p in config["eks-karpenter:nodePools"]]
    classes = [NodeClassConfig.model_validate(c) for c in config["eks-karpenter:nodeClasses"]]
    issues = validate_node_config(pools, classes, ["eu-west-1a", "eu-west-1b"], True, ("p",), ("c",))
    assert issues == []


def test_config_renders_to_the_same_objects_as_manifests() -> None:
    conv = convert_fixtures(*GOOD)
    config = conv.config()
    rendered = [render_node_class(NodeClassConfig.model_validate(c), "demo", ROLE, {})
                for c in config["eks-karpenter:nodeClasses"]]
    rendered += [render_node_pool(NodePoolConfig.model_validate(p)) for p in config["eks-karpenter:nodePools"]]
    assert rendered == conv.manifests(node_role=ROLE, cluster_name="demo")


@requires_upstream
def test_manifests_pass_the_v1_crds_and_cel_rules() -> None:
    from tests.support.crd_validator import validate_object

    manifests = convert_fixtures(*GOOD).manifests(node_role=ROLE)
    assert sorted(m["kind"] for m in manifests) == ["EC2NodeClass"] * 4 + ["NodePool"] * 4
    for obj in manifests:
        assert validate_object(obj) == [], obj["metadata"]["name"]
    # The check has teeth: a class with both role and instanceProfile is refused by CEL.
    broken = copy.deepcopy(manifests[1])
    broken["spec"]["role"] = ROLE
    assert any("exactly one of" in e for e in validate_object(broken))


@requires_upstream
@pytest.mark.parametrize("case", ["neither", "ami-ids", "al2023", "windows", "split-kubelet"])
def test_edge_case_manifests_pass_the_v1_crds(case: str) -> None:
    from tests.support.crd_validator import validate_object

    windows = [{"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}]
    objects = {
        "neither": (provisioner(), template()),
        "ami-ids": (provisioner(), template(amiFamily="Custom", amiSelector={"aws::ids": "ami-0abc1234"})),
        "al2023": (provisioner(), template(amiFamily="AL2023")),
        "windows": (provisioner(requirements=windows), template(amiFamily="Windows2019")),
        "split-kubelet": (provisioner("a"), provisioner("b", kubeletConfiguration={"maxPods": 20}), template()),
    }[case]
    for obj in convert(*objects).manifests(node_role=ROLE):
        assert validate_object(obj) == [], obj


def test_config_snippet_loads_as_part_of_a_stack_file() -> None:
    from eks_karpenter.platform import stack

    if "nodePools" not in stack.SECTIONS:
        pytest.skip("eks-karpenter:nodePools is not part of the stack config yet")
    config = stack_config("dev")  # eu-west-1a/b, as the network-optimised pool requires
    # The fixtures' classes keep v1alpha1's IMDS hop limit of 2, which a stack with teams refuses: a cluster
    # migrating from a Provisioner has none yet.
    config["eks-karpenter:access"].pop("teams")
    config.update(convert_fixtures(*GOOD).config())
    # The fixtures' AL2 classes need a minor that still has AL2 AMIs: a legacy cluster on extended support.
    config["eks-karpenter:cluster"].update(version="1.32", upgradePolicy={"supportType": "EXTENDED"})
    flat = {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}
    loaded = stack.load_stack_config(flat, "Pulumi.dev.yaml + import-legacy",
                                     today=versions.EKS_KUBERNETES_SUPPORT_COMPILED)
    names = [p["name"] for p in loaded.dump()["nodePools"]]
    assert names == ["default", "network-intensive", "batch", "gpu"]


@pytest.mark.slow
def test_manifest_yaml_round_trips() -> None:
    result = run_cli(*(f"tests/fixtures/legacy/{n}" for n in GOOD), "--format", "manifests", "--node-role", ROLE)
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert docs == convert_fixtures(*GOOD).manifests(node_role=ROLE)


# --- the command line -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_prints_a_config_snippet_by_default() -> None:
    result = run_cli(*(f"tests/fixtures/legacy/{n}" for n in GOOD))
    assert result.returncode == 0, result.stderr
    body = yaml.safe_load(result.stdout)
    assert list(body) == ["config"]
    assert list(body["config"]) == ["eks-karpenter:nodePools", "eks-karpenter:nodeClasses"]
    assert body["config"] == convert_fixtures(*GOOD).config()
    assert "values: [spot, on-demand]" in result.stdout
    assert "userData: |" in result.stdout  # multi-line user data stays readable
    assert "note: " in result.stderr and "al2@latest" in result.stderr


@pytest.mark.slow
def test_cli_manifests_need_a_node_role_without_instance_profile() -> None:
    result = run_cli("tests/fixtures/legacy/workshop-default.yaml", "--format", "manifests")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "workshop-default.yaml (document 2): AWSNodeTemplate 'default': no instanceProfile" in result.stderr
    assert "--node-role" in result.stderr


@pytest.mark.slow
def test_cli_manifests_without_role_when_every_class_has_an_instance_profile() -> None:
    result = run_cli("tests/fixtures/legacy/network-optimised.yaml",
                     "tests/fixtures/legacy/network-optimised-template.yaml", "--format", "manifests")
    assert result.returncode == 0, result.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(result.stdout)]
    assert kinds == ["EC2NodeClass", "NodePool"]


@pytest.mark.slow
def test_cli_bad_file_exits_1_with_every_problem_on_stderr() -> None:
    result = run_cli("tests/fixtures/legacy/bad-mixed.yaml")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: cannot import the legacy Karpenter objects, 8 problems:\n")
    for doc, what, path, _ in BAD_MIXED:
        assert f"tests/fixtures/legacy/bad-mixed.yaml (document {doc}): {what}: {path}: " in result.stderr


@pytest.mark.slow
def test_cli_one_bad_file_among_good_ones_fails_the_run() -> None:
    result = run_cli("tests/fixtures/legacy/workshop-default.yaml", "tests/fixtures/legacy/bad-mixed.yaml")
    assert result.returncode == 1 and result.stdout == ""


@pytest.mark.slow
def test_cli_missing_file() -> None:
    result = run_cli("tests/fixtures/legacy/nope.yaml")
    assert result.returncode == 1 and result.stdout == ""
    assert "tests/fixtures/legacy/nope.yaml: No such file or directory" in result.stderr


@pytest.mark.slow
def test_cli_reads_stdin() -> None:
    text = (FIXTURES / "workshop-default.yaml").read_text()
    result = run_cli("-", "--node-role", ROLE, stdin=text)
    assert result.returncode == 0, result.stderr
    classes = yaml.safe_load(result.stdout)["config"]["eks-karpenter:nodeClasses"]
    assert classes[0]["role"] == ROLE


@pytest.mark.slow
def test_cli_help_lists_the_subcommand() -> None:
    result = subprocess.run([sys.executable, "-m", "infra", "--help"], cwd=REPO, capture_output=True, text=True,
                            timeout=60)
    assert "import-legacy" in result.stdout


# --- the stack's Kubernetes version: AL2 has no AMIs from 1.33 on ----------------------------------

NO_FAMILY = ("workshop-default.yaml", "cas-era-no-ami-family.yaml")


@pytest.mark.parametrize("version", ["1.33", "1.35"])
def test_no_ami_family_becomes_al2023_where_al2_has_no_amis(version: str) -> None:
    conv = convert_fixtures(*NO_FAMILY, version=version)
    for cls in conv.node_classes:
        assert cls["amiSelectorTerms"] == [{"alias": versions.AMI_ALIAS}], cls["name"]
        assert "amiFamily" not in cls
    notes = [n for n in conv.notes if "v1alpha1 assumed AL2" in n]
    assert len(notes) == 3
    assert all(f"Kubernetes {version}" in n and f"alias {versions.AMI_ALIAS}" in n for n in notes)
    # bootstrap user data is flagged for the move to nodeadm
    [workers] = [n for n in notes if "AWSNodeTemplate 'workers'" in n]
    assert "rewrite it" in workers and "nodeadm" in workers
    assert not any("rewrite it" in n for n in notes if n != workers)


def test_no_ami_family_stays_al2_where_al2_still_has_amis() -> None:
    conv = convert_fixtures(*NO_FAMILY, version="1.32")
    assert {c["amiSelectorTerms"][0]["alias"] for c in conv.node_classes} == {"al2@latest"}


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"amiFamily": "AL2"}, "spec.amiFamily: AL2: EKS publishes no Amazon Linux 2 AMIs for Kubernetes 1.35 (the "
                           "last is 1.32): set amiFamily AL2023 or Bottlerocket"),
    ({"amiSelector": {"aws::name": "my-golden-al2-*"}},
     "spec.amiFamily: not set, so v1alpha1 treated the selected AMIs as AL2, and EKS publishes no Amazon Linux 2 "
     "AMIs for Kubernetes 1.35"),
])
def test_al2_that_cannot_be_swapped_is_a_problem_on_1_35(spec: dict[str, Any], fragment: str) -> None:
    [problem] = problems(provisioner(), template(**spec), version="1.35")
    assert fragment in problem


def test_the_version_rules_have_the_last_word() -> None:
    # An AL2 alias the converter never writes on 1.35 is still refused by the plan's own rule.
    from eks_karpenter.platform.version_rules import validate_node_class_amis

    conv = convert_fixtures(*NO_FAMILY, version="1.32")
    classes = [NodeClassConfig.model_validate(c) for c in conv.node_classes]
    assert validate_node_class_amis("1.35", classes, ("c",))
    assert validate_node_class_amis("1.35", [NodeClassConfig.model_validate(c) for c in
                                             convert_fixtures(*NO_FAMILY, version="1.35").node_classes], ("c",)) == []


def test_converted_objects_plan_on_1_35_in_the_brownfield_stack(tmp_path: Any) -> None:
    from tests.support import plan_config

    conv = convert_fixtures(*NO_FAMILY, version="1.35")
    config = stack_config("brownfield")
    assert config["eks-karpenter:cluster"].get("version", versions.KUBERNETES_VERSION) == "1.35"
    config.update(conv.config())
    result = plan_config(config, tmp_path, stack="brownfield")
    assert result.error is None, result.error
    classes = result.document.by_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    pools = result.document.by_type("kubernetes:karpenter.sh/v1:NodePool")
    assert sorted(c.name for c in classes) == ["nodeclass-default", "nodeclass-web", "nodeclass-workers"]
    assert sorted(p.name for p in pools) == ["nodepool-default", "nodepool-web", "nodepool-workers"]
    for cls in classes:
        assert cls.inputs["spec"]["amiSelectorTerms"] == [{"alias": versions.AMI_ALIAS}]


@requires_upstream
def test_converted_objects_for_1_35_pass_the_v1_crds_and_cel_rules() -> None:
    from tests.support.crd_validator import validate_object

    manifests = convert_fixtures(*NO_FAMILY, version="1.35").manifests(node_role=ROLE)
    assert sorted(m["kind"] for m in manifests) == ["EC2NodeClass"] * 3 + ["NodePool"] * 3
    for obj in manifests:
        assert validate_object(obj) == [], obj["metadata"]["name"]


@pytest.mark.slow
def test_cli_takes_the_version_from_the_stack() -> None:
    files = [f"tests/fixtures/legacy/{n}" for n in NO_FAMILY]
    result = run_cli(*files, "--stack", "brownfield", version=None)
    assert result.returncode == 0, result.stderr
    assert "al2@" not in result.stdout and f"alias: {versions.AMI_ALIAS}" in result.stdout
    assert "Kubernetes 1.35" in result.stderr
    old = run_cli(*files, version="1.32")
    assert old.returncode == 0 and "alias: al2@latest" in old.stdout


@pytest.mark.slow
def test_cli_refuses_an_unknown_version() -> None:
    result = run_cli("tests/fixtures/legacy/workshop-default.yaml", version="1.20")
    assert result.returncode == 1
    assert result.stderr.startswith("error: --kubernetes-version 1.20: one of 1.29,")


@pytest.mark.slow
def test_config_output_uses_the_projects_namespace(tmp_path: Path) -> None:
    """From a project of another name the snippet (and its notes) use that project's namespace: it pastes into
    that project's stack file as it is."""
    (tmp_path / "Pulumi.yaml").write_text("name: myplatform\nruntime: python\n")
    result = subprocess.run([sys.executable, "-m", "eks_karpenter.tools.cli", "import-legacy", "--program",
                             str(tmp_path), "--kubernetes-version", "1.32",  # the fixtures' AL2 still has AMIs
                             *(str(REPO / "tests/fixtures/legacy" / n) for n in GOOD)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)["config"]
    assert sorted(config) == ["myplatform:nodeClasses", "myplatform:nodePools"]
    assert "eks-karpenter:" not in result.stdout + result.stderr
