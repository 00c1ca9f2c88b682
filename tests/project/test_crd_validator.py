"""The CRD validator itself: it accepts good Karpenter objects and catches a known-bad one per rule family."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support import UPSTREAM, requires_upstream

pytestmark = requires_upstream

POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general"},
    "spec": {
        "template": {
            "metadata": {"labels": {"team": "web", "karpenter.sh/capacity-type": "spot"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m6i"],
                     "minValues": 2},
                    {"key": "example.com/team", "operator": "Exists"},
                ],
                "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
            },
        },
        "disruption": {"consolidateAfter": "1m", "budgets": [
            {"nodes": "10%"}, {"nodes": "0", "schedule": "0 9 * * 1-5", "duration": "8h"}]},
        "limits": {"cpu": "1000", "memory": "1000Gi", "nodes": 10},
        "weight": 10,
    },
}

NODE_CLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@v20240625"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "role": "KarpenterNodeRole-demo",
        "tags": {"team": "web"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True,
                                 "ebs": {"volumeSize": "50Gi", "volumeType": "gp3", "encrypted": True}}],
        "kubelet": {"maxPods": 110, "evictionSoft": {"memory.available": "500Mi"},
                    "evictionSoftGracePeriod": {"memory.available": "1m"},
                    "imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80},
    },
}

Mutation = Callable[[dict[str, Any]], None]


def validate(obj: dict[str, Any]) -> list[str]:
    from tests.support.crd_validator import validate_object  # imported lazily: it needs the upstream files

    return validate_object(obj)


def put(path: str, value: Any) -> Mutation:
    """Set a dotted path below `spec` (numbers index lists)."""
    def apply(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = obj["spec"]
        for part in parents:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        target[int(last) if last.isdigit() else last] = value
    return apply


def label(key: str, value: str) -> Mutation:
    """Add a template label (label keys contain dots, so `put` cannot address them)."""
    def apply(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["metadata"]["labels"][key] = value
    return apply


def append(path: str, value: Any) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        target: Any = obj["spec"]
        for part in path.split("."):
            target = target[int(part)] if part.isdigit() else target[part]
        target.append(value)
    return apply


def drop(path: str) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = obj["spec"]
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        del target[last]
    return apply


def both(*mutations: Mutation) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        for m in mutations:
            m(obj)
    return apply


REQ = "template.spec.requirements"

# (id, base, mutation, expected error: "<path>: <message fragment>")
POOL_CASES: list[tuple[str, Mutation, str]] = [
    ("static-limits", both(put("replicas", 2), drop("weight")),
     ".spec: only 'limits.nodes' is supported on static NodePools"),
    ("static-weight", both(put("replicas", 2), put("limits", {"nodes": 3})),
     ".spec: 'weight' is not supported on static NodePools"),
    ("budget-schedule-alone", put("disruption.budgets.1", {"nodes": "0", "schedule": "@daily"}),
     ".spec.disruption.budgets: 'schedule' must be set with 'duration'"),
    ("label-karpenter-domain", label("karpenter.sh/foo", "x"),
     '.spec.template.metadata.labels: label domain "karpenter.sh" is restricted'),
    ("label-nodepool", label("karpenter.sh/nodepool", "x"),
     '.spec.template.metadata.labels: label "karpenter.sh/nodepool" is restricted'),
    ("label-hostname", label("kubernetes.io/hostname", "x"),
     '.spec.template.metadata.labels: label "kubernetes.io/hostname" is restricted'),
    ("label-aws-domain", label("karpenter.k8s.aws/instance-pods", "4"),
     '.spec.template.metadata.labels: label domain "karpenter.k8s.aws" is restricted'),
    ("ref-group-empty", put("template.spec.nodeClassRef.group", ""),
     ".spec.template.spec.nodeClassRef.group: group may not be empty"),
    ("ref-kind-empty", put("template.spec.nodeClassRef.kind", ""),
     ".spec.template.spec.nodeClassRef.kind: kind may not be empty"),
    ("ref-name-empty", put("template.spec.nodeClassRef.name", ""),
     ".spec.template.spec.nodeClassRef.name: name may not be empty"),
    ("in-without-values", put(f"{REQ}.0.values", []),
     ".spec.template.spec.requirements: requirements with operator 'In' must have a value defined"),
    ("gt-not-integer", put(f"{REQ}.1.values", ["two"]),
     ".spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single"),
    ("gt-negative", put(f"{REQ}.1.values", ["-1"]),
     ".spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single"),
    ("lte-two-values", put(f"{REQ}.1", {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte",
                                         "values": ["4", "8"]}),
     ".spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single"),
    ("min-values", put(f"{REQ}.2.minValues", 3),
     ".spec.template.spec.requirements: requirements with 'minValues' must have at least that many values"),
    ("key-karpenter-domain", put(f"{REQ}.3.key", "sub.karpenter.sh/x"),
     '.spec.template.spec.requirements[3].key: label domain "karpenter.sh" is restricted'),
    ("key-nodepool", put(f"{REQ}.3.key", "karpenter.sh/nodepool"),
     '.spec.template.spec.requirements[3].key: label "karpenter.sh/nodepool" is restricted'),
    ("key-hostname", put(f"{REQ}.3.key", "kubernetes.io/hostname"),
     '.spec.template.spec.requirements[3].key: label "kubernetes.io/hostname" is restricted'),
    ("key-aws-domain", put(f"{REQ}.3.key", "karpenter.k8s.aws/instance-pods"),
     '.spec.template.spec.requirements[3].key: label domain "karpenter.k8s.aws" is restricted'),
    # structural (OpenAPI) checks
    ("unknown-field", put("template.spec.bogusField", 1),
     ".spec.template.spec: Additional properties are not allowed ('bogusField' was unexpected)"),
    ("policy-enum", put("disruption.consolidationPolicy", "WhenIdle"),
     ".spec.disruption.consolidationPolicy: 'WhenIdle' is not one of"),
    ("consolidate-after-required", put("disruption", {"consolidationPolicy": "WhenEmpty"}),
     ".spec.disruption: 'consolidateAfter' is a required property"),
    ("expire-pattern", put("template.spec.expireAfter", "30days"),
     ".spec.template.spec.expireAfter: '30days' does not match"),
    ("budget-nodes-int", put("disruption.budgets.0.nodes", 5), ".spec.disruption.budgets[0].nodes: 5 is not of type"),
    ("reasons-unique", put("disruption.budgets.0.reasons", ["Empty", "Empty"]),
     ".spec.disruption.budgets[0].reasons: ['Empty', 'Empty'] has non-unique elements"),
    ("weight-range", put("weight", 101), ".spec.weight: 101 is greater than the maximum of 100"),
    ("limit-quantity", put("limits.cpu", "lots"), ".spec.limits.cpu:"),
    ("label-value", label("team", "-web"), ".spec.template.metadata.labels.team: '-web' does not match"),
    ("taint-effect", put("template.spec.taints.0.effect", "NoRun"),
     ".spec.template.spec.taints[0].effect: 'NoRun' is not one of"),
    ("node-class-ref-required", drop("template.spec.nodeClassRef"),
     ".spec.template.spec: 'nodeClassRef' is a required property"),
]

CLASS_CASES: list[tuple[str, Mutation, str]] = [
    ("role-and-profile", put("instanceProfile", "profile"),
     ".spec: must specify exactly one of ['role', 'instanceProfile']"),
    ("neither-role-nor-profile", drop("role"), ".spec: must specify exactly one of ['role', 'instanceProfile']"),
    ("family-required", put("amiSelectorTerms", [{"id": "ami-0123456789abcdef0"}]),
     ".spec: must specify amiFamily if amiSelectorTerms does not contain an alias"),
    ("terms-none", put("amiSelectorTerms", [{"owner": "amazon"}]),
     ".spec.amiSelectorTerms: expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"),
    ("id-combined", both(put("amiFamily", "AL2023"),
                         put("amiSelectorTerms", [{"id": "ami-0123456789abcdef0", "owner": "self"}])),
     ".spec.amiSelectorTerms: 'id' is mutually exclusive"),
    ("alias-combined", put("amiSelectorTerms", [{"alias": "al2023@latest", "name": "x"}]),
     ".spec.amiSelectorTerms: 'alias' is mutually exclusive, cannot be set with a combination of other fields"),
    ("alias-two-terms", put("amiSelectorTerms", [{"alias": "al2023@latest"}, {"name": "x"}]),
     ".spec.amiSelectorTerms: 'alias' is mutually exclusive, cannot be set with a combination of other "
     "amiSelectorTerms"),
    ("alias-format", put("amiSelectorTerms.0.alias", "al2023"),
     ".spec.amiSelectorTerms[0].alias: 'alias' is improperly formatted"),
    ("alias-family", put("amiSelectorTerms.0.alias", "ubuntu@latest"),
     ".spec.amiSelectorTerms[0].alias: family is not supported"),
    ("alias-windows-pinned", put("amiSelectorTerms.0.alias", "windows2022@v1"),
     ".spec.amiSelectorTerms[0].alias: windows families may only specify version 'latest'"),
    ("ami-tags-empty", both(put("amiFamily", "AL2023"), put("amiSelectorTerms", [{"tags": {"team": ""}}])),
     ".spec.amiSelectorTerms[0].tags: empty tag keys or values aren't supported"),
    ("two-roots", append("blockDeviceMappings", {"deviceName": "/dev/xvdb", "rootVolume": True,
                                                 "ebs": {"volumeSize": "10Gi"}}),
     ".spec.blockDeviceMappings: must have only one blockDeviceMappings with rootVolume"),
    ("ebs-size", put("blockDeviceMappings.0.ebs", {"volumeType": "gp3"}),
     ".spec.blockDeviceMappings[0].ebs: snapshotID or volumeSize must be defined"),
    ("ebs-init-rate", put("blockDeviceMappings.0.ebs.volumeInitializationRate", 200),
     ".spec.blockDeviceMappings[0].ebs: snapshotID must be set when volumeInitializationRate is set"),
    ("ebs-size-pattern", put("blockDeviceMappings.0.ebs.volumeSize", "18Ti"),
     ".spec.blockDeviceMappings[0].ebs.volumeSize: '18Ti' does not match"),
    ("reservation-none", put("capacityReservationSelectorTerms", [{"ownerID": "123456789012"}]),
     ".spec.capacityReservationSelectorTerms: expected at least one, got none, ['tags', 'id', "
     "'instanceMatchCriteria']"),
    ("reservation-id-combined", put("capacityReservationSelectorTerms", [{"id": "cr-1", "ownerID": "123456789012"}]),
     ".spec.capacityReservationSelectorTerms: 'id' is mutually exclusive"),
    ("reservation-tags-empty", put("capacityReservationSelectorTerms", [{"tags": {"": "x"}}]),
     ".spec.capacityReservationSelectorTerms[0].tags: empty tag keys or values aren't supported"),
    ("conntrack-empty", put("connectionTracking", {}),
     ".spec.connectionTracking: at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set"),
    ("profile-empty", both(drop("role"), put("instanceProfile", "")),
     ".spec.instanceProfile: instanceProfile cannot be empty"),
    ("image-gc", put("kubelet.imageGCLowThresholdPercent", 85),
     ".spec.kubelet: imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"),
    ("soft-without-grace", drop("kubelet.evictionSoftGracePeriod"),
     ".spec.kubelet: evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"),
    ("grace-without-soft", drop("kubelet.evictionSoft"),
     ".spec.kubelet: evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft"),
    ("eviction-hard-key", put("kubelet.evictionHard", {"memory.free": "5%"}),
     ".spec.kubelet.evictionHard: valid keys for evictionHard are"),
    ("eviction-soft-key", both(put("kubelet.evictionSoft", {"cpu": "5%"}),
                               put("kubelet.evictionSoftGracePeriod", {"cpu": "1m"})),
     ".spec.kubelet.evictionSoft: valid keys for evictionSoft are"),
    ("eviction-grace-key", put("kubelet.evictionSoftGracePeriod", {"memory.available": "1m", "cpu": "1m"}),
     ".spec.kubelet.evictionSoftGracePeriod: valid keys for evictionSoftGracePeriod are"),
    ("kube-reserved-key", put("kubelet.kubeReserved", {"gpu": "1"}),
     ".spec.kubelet.kubeReserved: valid keys for kubeReserved are"),
    ("kube-reserved-negative", put("kubelet.kubeReserved", {"cpu": "-1"}),
     ".spec.kubelet.kubeReserved: kubeReserved value cannot be a negative resource quantity"),
    ("system-reserved-key", put("kubelet.systemReserved", {"gpu": "1"}),
     ".spec.kubelet.systemReserved: valid keys for systemReserved are"),
    ("system-reserved-negative", put("kubelet.systemReserved", {"memory": "-1Gi"}),
     ".spec.kubelet.systemReserved: systemReserved value cannot be a negative resource quantity"),
    ("nic-primary", put("networkInterfaces", [{"networkCardIndex": 1, "deviceIndex": 0,
                                               "interfaceType": "interface"}]),
     ".spec.networkInterfaces: networkInterfaces must include a primary interface"),
    ("nic-duplicate", put("networkInterfaces", [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]),
     ".spec.networkInterfaces: networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs"),
    ("placement-none", put("placementGroupSelector", {}),
     ".spec.placementGroupSelector: expected at least one, got none, ['name', 'id']"),
    ("placement-both", put("placementGroupSelector", {"name": "pg", "id": "pg-1"}),
     ".spec.placementGroupSelector: 'name' and 'id' are mutually exclusive"),
    ("role-empty", put("role", ""), ".spec.role: role cannot be empty"),
    ("sg-empty", put("securityGroupSelectorTerms", []),
     ".spec.securityGroupSelectorTerms: securityGroupSelectorTerms cannot be empty"),
    ("sg-none", put("securityGroupSelectorTerms", [{}]),
     ".spec.securityGroupSelectorTerms: expected at least one, got none, ['tags', 'id', 'name']"),
    ("sg-id-combined", put("securityGroupSelectorTerms", [{"id": "sg-1", "name": "x"}]),
     ".spec.securityGroupSelectorTerms: 'id' is mutually exclusive"),
    ("sg-name-combined", put("securityGroupSelectorTerms", [{"name": "x", "tags": {"a": "b"}}]),
     ".spec.securityGroupSelectorTerms: 'name' is mutually exclusive"),
    ("sg-tags-empty", put("securityGroupSelectorTerms", [{"tags": {"a": ""}}]),
     ".spec.securityGroupSelectorTerms[0].tags: empty tag keys or values aren't supported"),
    ("subnet-empty", put("subnetSelectorTerms", []), ".spec.subnetSelectorTerms: subnetSelectorTerms cannot be empty"),
    ("subnet-none", put("subnetSelectorTerms", [{}]),
     ".spec.subnetSelectorTerms: expected at least one, got none, ['tags', 'id']"),
    ("subnet-id-combined", put("subnetSelectorTerms", [{"id": "subnet-1", "tags": {"a": "b"}}]),
     ".spec.subnetSelectorTerms: 'id' is mutually exclusive"),
    ("subnet-tags-empty", put("subnetSelectorTerms", [{"tags": {"a": ""}}]),
     ".spec.subnetSelectorTerms[0].tags: empty tag keys or values aren't supported"),
    ("tag-empty", put("tags", {"": "x"}), ".spec.tags: empty tag keys aren't supported"),
    ("tag-cluster-name", put("tags", {"eks:eks-cluster-name": "x"}),
     ".spec.tags: tag contains a restricted tag matching eks:eks-cluster-name"),
    ("tag-cluster", put("tags", {"kubernetes.io/cluster/demo": "owned"}),
     ".spec.tags: tag contains a restricted tag matching kubernetes.io/cluster/"),
    ("tag-nodepool", put("tags", {"karpenter.sh/nodepool": "x"}),
     ".spec.tags: tag contains a restricted tag matching karpenter.sh/nodepool"),
    ("tag-nodeclaim", put("tags", {"karpenter.sh/nodeclaim": "x"}),
     ".spec.tags: tag contains a restricted tag matching karpenter.sh/nodeclaim"),
    ("tag-nodeclass", put("tags", {"karpenter.k8s.aws/ec2nodeclass": "x"}),
     ".spec.tags: tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass"),
    ("hop-limit", put("metadataOptions", {"httpPutResponseHopLimit": 65}),
     ".spec.metadataOptions.httpPutResponseHopLimit: 65 is greater than the maximum of 64"),
    ("family-enum", put("amiFamily", "Ubuntu"), ".spec.amiFamily: 'Ubuntu' is not one of"),
    ("selector-required", drop("subnetSelectorTerms"), ".spec: 'subnetSelectorTerms' is a required property"),
]

FAMILY_OF_ALIAS = {"al2": "AL2", "al2023": "AL2023", "bottlerocket": "Bottlerocket", "windows2019": "Windows2019",
                   "windows2022": "Windows2022", "windows2025": "Windows2025"}
for _alias, _family in FAMILY_OF_ALIAS.items():
    _version = "latest" if _alias.startswith("windows") else "v20240625"
    _other = "AL2023" if _family != "AL2023" else "Bottlerocket"
    _article = "an" if _family.startswith("AL") else "a"
    CLASS_CASES.append((f"family-vs-{_alias}", both(put("amiSelectorTerms", [{"alias": f"{_alias}@{_version}"}]),
                                                    put("amiFamily", _other)),
                        f".spec: if set, amiFamily must be '{_family}' or 'Custom' when using {_article} {_family} "
                        "alias"))


def _run(base: dict[str, Any], mutation: Mutation) -> list[str]:
    obj = copy.deepcopy(base)
    mutation(obj)
    return validate(obj)


def test_good_objects_pass() -> None:
    assert validate(POOL) == []
    assert validate(NODE_CLASS) == []


@pytest.mark.parametrize(("case", "mutation", "expected"), POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_bad_node_pool(case: str, mutation: Mutation, expected: str) -> None:
    errors = _run(POOL, mutation)
    assert any(e.startswith(expected) for e in errors), errors


@pytest.mark.parametrize(("case", "mutation", "expected"), CLASS_CASES, ids=[c[0] for c in CLASS_CASES])
def test_bad_node_class(case: str, mutation: Mutation, expected: str) -> None:
    errors = _run(NODE_CLASS, mutation)
    assert any(e.startswith(expected) for e in errors), errors


def test_every_cel_message_is_exercised() -> None:
    """Each non-transition CEL rule of NodePool and EC2NodeClass is caught by at least one case above."""
    rules = json.loads((UPSTREAM / "karpenter" / "cel-rules.json").read_text())["rules"]
    wanted = {r["message"] for kind in ("karpenter.sh/v1/NodePool", "karpenter.k8s.aws/v1/EC2NodeClass")
              for r in rules[kind] if "oldSelf" not in r["rule"]}
    seen = {e.split(": ", 1)[1] for base, cases in ((POOL, POOL_CASES), (NODE_CLASS, CLASS_CASES))
            for _, m, _ in cases for e in _run(base, m)}
    assert wanted - seen == set()


def test_transition_rules_are_skipped_on_create() -> None:
    static = copy.deepcopy(POOL)
    del static["spec"]["weight"]
    static["spec"]["replicas"] = 3
    static["spec"]["limits"] = {"nodes": 5}
    assert validate(static) == []


def test_defaults_are_applied_before_validation() -> None:
    from tests.support.crd_validator import defaulted

    pool = copy.deepcopy(POOL)
    del pool["spec"]["disruption"]
    out = defaulted(pool)
    assert out["spec"]["disruption"] == {"consolidateAfter": "0s", "consolidationPolicy": "WhenEmptyOrUnderutilized",
                                         "budgets": [{"nodes": "10%"}]}
    assert out["spec"]["template"]["spec"]["expireAfter"] == "720h"
    assert defaulted(NODE_CLASS)["spec"]["metadataOptions"] == {
        "httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1,
        "httpTokens": "required"}
    assert validate(pool) == []


def test_object_name_and_kind_are_checked() -> None:
    bad_name = copy.deepcopy(POOL)
    bad_name["metadata"]["name"] = "General_Pool"
    assert any(e.startswith(".metadata.name:") for e in validate(bad_name))
    unknown = {**POOL, "apiVersion": "karpenter.sh/v1beta1"}
    assert validate(unknown)[0].startswith(".: no CRD")


def test_cel_errors_are_failures() -> None:
    from tests.support.crd_validator import rule_holds

    assert rule_holds("self.a > 1", {"a": 2})
    assert not rule_holds("self.a > 1", {"a": 1})
    assert not rule_holds("self.a > 1", {})  # missing key: evaluation error, counted as a failure
    assert rule_holds('"example.com/x".find("^([^/]+)") == "example.com"', None)
