"""Every Karpenter object and Helm release of every stack, as planned, against upstream's own files."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from eks_karpenter.tools.engine import PlanDocument, PlannedResource

from tests.support import STACKS, UPSTREAM, plan_stack, requires_upstream, stack_config

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
RELEASE = "kubernetes:helm.sh/v3:Release"


def manifest(r: PlannedResource) -> dict[str, Any]:
    return {k: r.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}


def karpenter_objects(doc: PlanDocument) -> list[PlannedResource]:
    return doc.by_type(NODEPOOL) + doc.by_type(NODECLASS)


@pytest.mark.slow
@requires_upstream
@pytest.mark.parametrize("stack", STACKS)
def test_every_object_passes_the_v1_14_1_crds_and_cel_rules(stack: str) -> None:
    from tests.support.crd_validator import validate_object

    objects = karpenter_objects(plan_stack(stack))
    assert objects
    for r in objects:
        assert validate_object(manifest(r)) == [], r.name


@pytest.mark.slow
@requires_upstream
@pytest.mark.parametrize("stack", STACKS)
def test_planned_helm_values_exist_in_the_charts(stack: str) -> None:
    from tests.support.helm_keys import KARPENTER_CRD_OPEN_MAPS, KARPENTER_OPEN_MAPS, undefined_keys

    doc = plan_stack(stack)
    charts = UPSTREAM / "charts"
    for name, chart, open_maps in [("karpenter-controller", "karpenter", KARPENTER_OPEN_MAPS),
                                   ("karpenter-crd", "karpenter-crd", KARPENTER_CRD_OPEN_MAPS)]:
        release = doc.get(RELEASE, name)
        chart_values = yaml.safe_load((charts / chart / "values.yaml").read_text())
        assert undefined_keys(release.inputs["values"], chart_values, open_maps) == [], name


@pytest.mark.slow
def test_stack_pools_match_the_brief() -> None:
    def pools(stack: str) -> dict[str, dict[str, Any]]:
        return {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in plan_stack(stack).by_type(NODEPOOL)}

    def allowed(spec: dict[str, Any], key: str) -> list[str]:
        reqs = spec["template"]["spec"]["requirements"]
        return next(r["values"] for r in reqs if r["key"] == key and r["operator"] == "In")

    dev = pools("dev")
    assert list(dev) == ["general"]
    assert allowed(dev["general"], "karpenter.sh/capacity-type") == ["spot", "on-demand"]
    prod = pools("prod")
    assert set(prod) == {"general", "critical", "arm64"}
    assert allowed(prod["general"], "karpenter.sh/capacity-type") == ["spot", "on-demand"]
    assert allowed(prod["critical"], "karpenter.sh/capacity-type") == ["on-demand"]
    assert allowed(prod["arm64"], "kubernetes.io/arch") == ["arm64"]
    for spec in [*dev.values(), *prod.values()]:
        assert spec["limits"] and spec["template"]["spec"]["expireAfter"] != "Never"
    brown = pools("brownfield")["default"]
    assert brown["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert brown["disruption"]["consolidateAfter"] == "30s"


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_classes_use_the_platform_node_role_and_discovery_tags(stack: str) -> None:
    doc = plan_stack(stack)
    adopted = "vpcId" in stack_config(stack).get("eks-karpenter:network", {})
    for r in doc.by_type(NODECLASS):
        spec = r.inputs["spec"]
        assert spec["role"] == doc.outputs["expectedNodeRoleName"] == doc.outputs["nodeRoleName"]
        discovery = [{"tags": {"karpenter.sh/discovery": doc.outputs["discoveryTagValue"]}}]
        # Adopted subnets and an adopted cluster's security group are not tagged: selected by ID instead.
        subnets = [{"id": s} for _, s in sorted(doc.outputs["privateSubnetIds"].items())] if adopted else discovery
        cluster_sg = [{"id": doc.outputs["clusterSecurityGroupId"]}] if adopted else discovery
        assert spec["subnetSelectorTerms"] == subnets
        # plus, on an existing cluster, its nodes' security groups by id
        extra = stack_config(stack)["eks-karpenter:cluster"].get("nodeSecurityGroupIds", [])
        assert spec["securityGroupSelectorTerms"] == cluster_sg + [{"id": sg} for sg in extra]
        assert spec["metadataOptions"]["httpTokens"] == "required"
        assert all(b["ebs"]["encrypted"] for b in spec.get("blockDeviceMappings", []))


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_pools_and_classes_wait_for_the_controller_and_are_deleted_first(stack: str) -> None:
    doc = plan_stack(stack)
    controller = doc.get(RELEASE, "karpenter-controller")
    crds = doc.get(RELEASE, "karpenter-crd")
    classes = {r.inputs["metadata"]["name"]: r for r in doc.by_type(NODECLASS)}
    for r in doc.by_type(NODECLASS):
        assert controller.urn in r.dependencies
    for r in doc.by_type(NODEPOOL):
        assert controller.urn in r.dependencies
        ref = r.inputs["spec"]["template"]["spec"]["nodeClassRef"]
        assert ref["group"] == "karpenter.k8s.aws" and ref["kind"] == "EC2NodeClass"
        assert classes[ref["name"]].urn in r.dependencies
    assert crds.urn in controller.dependencies
    # Destroy runs this graph backwards: pools, then classes, then the controller, then the node groups.
    for group in doc.by_type("eks:index:ManagedNodeGroup"):
        assert group.urn in controller.dependencies


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_workload_scheduling_is_exported_per_pool(stack: str) -> None:
    doc = plan_stack(stack)
    scheduling = doc.outputs["workloadScheduling"]
    assert set(scheduling) == set(doc.outputs["nodePools"])
    for pool, fragment in scheduling.items():
        assert fragment["nodeSelector"]["karpenter.sh/nodepool"] == pool


def test_critical_pool_scheduling_tolerates_its_taint() -> None:
    fragment = plan_stack("prod").outputs["workloadScheduling"]["critical"]
    assert {"key": "workload-tier", "operator": "Equal", "value": "critical", "effect": "NoSchedule"} in \
        fragment["tolerations"]
    assert fragment["nodeSelector"]["karpenter.sh/capacity-type"] == "on-demand"
