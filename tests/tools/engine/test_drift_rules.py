"""Karpenter's drift rules, per supported release: the table (tools/engine/drift_rules.py) against each release's
CRDs, each field class on manifests, and the diff of prod under each class."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter import versions
from eks_karpenter.catalogue.match import Requirement
from eks_karpenter.tools.engine.diff import diff_plans
from eks_karpenter.tools.engine.drift import class_drift, hash_view, narrowed_requirements, pool_drift
from eks_karpenter.tools.engine.drift_rules import (
    CORE,
    DRIFT_RULES,
    NO_DRIFT,
    PROVIDER,
    RESOLVED,
    RESOLVES,
    field_class,
)
from eks_karpenter.tools.engine.fleets import drift_rules_of

from tests.support import UPSTREAM, plan_stack, requires_upstream
from tests.tools.engine.test_routine_changes import diff_of, planned

RULES = DRIFT_RULES[versions.KARPENTER_VERSION]


def release_dir(version: str) -> Path:
    return UPSTREAM / ("karpenter" if version == versions.KARPENTER_VERSION else f"karpenter-{version}")


def crd_spec(version: str, name: str) -> dict[str, Any]:
    crd = yaml.safe_load((release_dir(version) / name).read_text())
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return dict(v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"])


def crd_fields(version: str) -> tuple[set[str], set[str]]:
    """Every field of a release's NodePool spec (template and disruption opened one level) and EC2NodeClass spec,
    as the table spells paths."""
    pool = crd_spec(version, "karpenter.sh_nodepools.yaml")
    template, disruption = pool.pop("template")["properties"], pool.pop("disruption")["properties"]
    pool_fields = ({f"spec.{k}" for k in pool} | {f"spec.disruption.{k}" for k in disruption}
                   | {f"spec.template.metadata.{k}" for k in template["metadata"]["properties"]}
                   | {f"spec.template.spec.{k}" for k in template["spec"]["properties"]})
    node_class = {f"spec.{k}" for k in crd_spec(version, "karpenter.k8s.aws_ec2nodeclasses.yaml")}
    return pool_fields, node_class


# --- the table --------------------------------------------------------------------------------------------------

def test_every_supported_release_has_its_rules_with_their_sources() -> None:
    assert set(DRIFT_RULES) == set(versions.KARPENTER_VERSIONS)
    for release, rules in DRIFT_RULES.items():
        assert rules.release == release
        repos = {(s.repo, s.path) for s in rules.sources}
        assert (CORE, "pkg/apis/v1/nodepool.go") in repos and (PROVIDER, "pkg/apis/v1/ec2nodeclass.go") in repos
        assert (CORE, "pkg/controllers/nodeclaim/disruption/drift.go") in repos
        assert (PROVIDER, "pkg/cloudprovider/drift.go") in repos
        assert all(s.tag == f"v{release}" for s in rules.sources if s.repo == PROVIDER)
        assert all(len(s.blob) == 40 for s in rules.sources)
        assert set(RESOLVES) == {p for p, c in rules.node_class.items() if c == RESOLVED}


@requires_upstream
@pytest.mark.parametrize("release", sorted(DRIFT_RULES))
def test_the_table_classifies_exactly_the_fields_of_the_releases_crds(release: str) -> None:
    pool_fields, class_fields = crd_fields(release)
    rules = DRIFT_RULES[release]
    assert set(rules.node_pool) == pool_fields, "NodePool fields: unclassified or not in the CRD"
    assert set(rules.node_class) == class_fields, "EC2NodeClass fields: unclassified or not in the CRD"


@requires_upstream
def test_the_crd_check_fails_for_a_field_the_table_lacks() -> None:
    _, class_fields = crd_fields("1.12.2")
    assert "spec.cpuOptions" not in class_fields  # came in 1.13: the 1.12.2 table must not name it
    assert set(DRIFT_RULES["1.14.1"].node_class) != class_fields


def test_field_class_reads_the_entry_at_or_above_a_path() -> None:
    assert field_class(RULES.node_pool, ("spec", "template", "spec", "requirements", 0, "values", 1)) == "requirements"
    assert field_class(RULES.node_pool, ("spec", "disruption", "budgets", 0, "nodes")) == NO_DRIFT
    assert field_class(RULES.node_class, ("spec", "subnetSelectorTerms", 0, "tags", "a")) == RESOLVED
    assert field_class(RULES.node_class, ("spec", "newField")) is None


# --- field classes on manifests ---------------------------------------------------------------------------------

def pool(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"metadata": {"name": "general"}, "spec": {
        "template": {"metadata": {"labels": {"team": "a"}}, "spec": {
            "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]},
                             {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]},
                             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
            "taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "expireAfter": "720h"}},
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m",
                       "budgets": [{"nodes": "10%"}]},
        "limits": {"cpu": "100"}, "weight": 10}}
    for dotted, value in spec.items():
        *parents, last = dotted.split("__")
        at = base["spec"]
        for p in parents:
            at = at[p]
        at[last] = value
    return base


def edited(manifest: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    edit(out["spec"])
    return out


def reqs(edit: Callable[[list[dict[str, Any]]], None]) -> dict[str, Any]:
    def apply(spec: dict[str, Any]) -> None:
        edit(spec["template"]["spec"]["requirements"])

    return edited(pool(), apply)


@pytest.mark.parametrize(("what", "edit"), [
    ("taints", lambda s: s["template"]["spec"]["taints"].append({"key": "c", "effect": "NoSchedule"})),
    ("metadata.labels", lambda s: s["template"]["metadata"]["labels"].update(team="b")),
    ("expireAfter", lambda s: s["template"]["spec"].update(expireAfter="168h")),
    ("nodeClassRef", lambda s: s["template"]["spec"]["nodeClassRef"].update(name="other")),
    ("terminationGracePeriod", lambda s: s["template"]["spec"].update(terminationGracePeriod="1h")),
])
def test_a_hashed_template_field_drifts_every_node(what: str, edit: Callable[[dict[str, Any]], None]) -> None:
    (cause,) = pool_drift(pool(), edited(pool(), edit), RULES)
    assert f"`{what}`" in cause and "every node drifts" in cause


@pytest.mark.parametrize(("what", "edit"), [
    ("budgets", lambda s: s["disruption"].update(budgets=[{"nodes": "0", "reasons": ["Drifted"]}])),
    ("weight", lambda s: s.update(weight=50)),
    ("limits", lambda s: s.update(limits={"cpu": "2000", "memory": "4000Gi"})),
    ("consolidation", lambda s: s["disruption"].update(consolidationPolicy="WhenEmpty", consolidateAfter="1h")),
    ("replicas", lambda s: s.update(replicas=3)),
    ("taints reordered", lambda s: s["template"]["spec"]["taints"].reverse()),
    ("a null field", lambda s: s["template"]["spec"].update(startupTaints=None)),
])
def test_behaviour_and_hash_equal_edits_drift_nothing(what: str, edit: Callable[[dict[str, Any]], None]) -> None:
    assert pool_drift(pool(), edited(pool(), edit), RULES) == [], what


def test_narrowed_requirements_drift_only_the_nodes_that_no_longer_satisfy_them() -> None:
    (cause,) = pool_drift(pool(), reqs(lambda r: r[0].update(values=["c"])), RULES)
    assert cause == ("its requirements narrowed (`karpenter.k8s.aws/instance-category` no longer admits `m`): "
                     "nodes that no longer satisfy them drift, the others stay")


@pytest.mark.parametrize(("what", "edit"), [
    ("a value added", lambda r: r[0].update(values=["c", "m", "r"])),
    ("a bound lowered", lambda r: r[1].update(values=["3"])),
    ("a requirement removed", lambda r: r.pop(2)),
    ("minValues", lambda r: r[0].update(minValues=2)),
    ("reordered", lambda r: r.reverse()),
    ("In made NotIn of another value", lambda r: r[2].update(operator="NotIn", values=["on-demand"])),
    ("NotIn of a value In never admitted", lambda r: r.append(
        {"key": "karpenter.k8s.aws/instance-category", "operator": "NotIn", "values": ["x"]})),
])
def test_widened_requirements_drift_nothing(what: str, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    assert pool_drift(pool(), reqs(edit), RULES) == [], what


@pytest.mark.parametrize(("edit", "says"), [
    (lambda r: r[1].update(values=["6"]), "`karpenter.k8s.aws/instance-generation`: Gt [5] -> Gt [6]"),
    (lambda r: r.append({"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}),
     "`kubernetes.io/arch`: any -> In [arm64]"),
    (lambda r: r.append({"key": "karpenter.k8s.aws/instance-category", "operator": "NotIn", "values": ["m"]}),
     "`karpenter.k8s.aws/instance-category` no longer admits `m`"),
    (lambda r: r[2].update(values=["on-demand"]), "`karpenter.sh/capacity-type` no longer admits `spot`"),
])
def test_each_narrowing_names_what_nodes_may_no_longer_satisfy(
        edit: Callable[[list[dict[str, Any]]], None], says: str) -> None:
    (cause,) = pool_drift(pool(), reqs(edit), RULES)
    assert says in cause and "nodes that no longer satisfy them drift" in cause


def test_requirement_sets_compare_by_what_they_admit() -> None:
    def r(key: str, op: str, *values: str) -> Requirement:
        return Requirement(key, op, values)

    gen = "karpenter.k8s.aws/instance-generation"
    assert narrowed_requirements([r(gen, "Gt", "5"), r(gen, "Lt", "8")], [r(gen, "In", "6", "7")]) == []
    assert narrowed_requirements([r(gen, "Gte", "6")], [r(gen, "Gt", "5")]) == []
    assert narrowed_requirements([r(gen, "Gt", "5"), r(gen, "Lt", "9")], [r(gen, "In", "6", "7")]) == [
        f"`{gen}` no longer admits `8`"]
    assert narrowed_requirements([r("team", "Exists")], [r("team", "DoesNotExist")]) != []
    assert narrowed_requirements([r("team", "DoesNotExist")], [r("team", "NotIn", "a")]) == []


# --- EC2NodeClass -----------------------------------------------------------------------------------------------

def node_class(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "default"}, "spec": {
        "amiSelectorTerms": [{"alias": "al2023@v20260815"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "prod"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "prod"}}],
        "role": "node", "tags": {"team": "a"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}},
                                {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "200Gi"}}], **spec}}


@pytest.mark.parametrize(("field", "resolved"), [
    ("subnetSelectorTerms", "subnets"), ("securityGroupSelectorTerms", "security groups"),
    ("capacityReservationSelectorTerms", "capacity reservations")])
def test_selector_terms_roll_only_if_what_they_resolve_to_changes(field: str, resolved: str) -> None:
    (cause,) = class_drift(node_class(), node_class(**{field: [{"id": "x-0123456789abcdef0"}]}), RULES)
    assert cause.startswith(f"`{field}` changed: rolls if the resolved {resolved} change (")


def test_ami_selector_terms_by_tags_roll_if_the_resolved_amis_change() -> None:
    (cause,) = class_drift(node_class(), node_class(amiSelectorTerms=[{"tags": {"team": "a"}}]), RULES)
    assert cause == ("`amiSelectorTerms` changed: rolls if the resolved AMIs change (nodes on an AMI no longer "
                     "among them drift)")


def test_a_new_alias_release_is_a_new_ami() -> None:
    (cause,) = class_drift(node_class(), node_class(amiSelectorTerms=[{"alias": "al2023@v20260901"}]), RULES)
    assert "another AMI release, so nodes on the old AMI drift" in cause


@pytest.mark.parametrize("spec", [
    {"tags": {"team": "b"}}, {"role": "other"}, {"userData": "#!/bin/bash"}, {"detailedMonitoring": True},
    {"metadataOptions": {"httpPutResponseHopLimit": 2}}, {"kubelet": {"maxPods": 50}},
    {"amiFamily": "Custom"}])
def test_a_hashed_class_field_drifts_every_node_using_it(spec: dict[str, Any]) -> None:
    (cause,) = class_drift(node_class(), node_class(**spec), RULES)
    assert f"`{next(iter(spec))}`" in cause and "every node using it drifts" in cause


@pytest.mark.parametrize("spec", [
    {"ipPrefixCount": 2}, {"amiFamily": "AL2023"}, {"userData": None},
    {"blockDeviceMappings": list(reversed(node_class()["spec"]["blockDeviceMappings"]))}])
def test_class_edits_outside_the_hash_drift_nothing(spec: dict[str, Any]) -> None:
    assert class_drift(node_class(), node_class(**spec), RULES) == []


def test_a_field_an_older_release_does_not_know_counts_as_hashed() -> None:
    edit = node_class(cpuOptions={"nestedVirtualization": "enabled"})
    assert "`cpuOptions`" in class_drift(node_class(), edit, DRIFT_RULES["1.12.2"])[0]
    assert "`cpuOptions`" in class_drift(node_class(), edit, DRIFT_RULES["1.14.1"])[0]


def test_hash_view_treats_lists_as_sets_and_nulls_as_absent() -> None:
    assert hash_view({"a": [2, 1, 2], "b": None}) == hash_view({"a": [1, 2]})
    assert hash_view({"a": [1]}) != hash_view({"a": [1, 3]})


# --- the diff of prod -------------------------------------------------------------------------------------------

def general(c: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in c["eks-karpenter:nodePools"] if p["name"] == "general")


@pytest.mark.parametrize(("what", "edit"), [
    ("widened requirements", lambda c: general(c).update(instanceCategories=["c", "m", "r", "x"])),
    ("weight", lambda c: general(c).update(weight=20)),
    ("limits", lambda c: general(c).update(limits={"cpu": "2000", "memory": "2000Gi"})),
    ("budgets", lambda c: general(c)["disruption"].update(budgets=[{"nodes": "5%"}])),
])
def test_on_prod_widening_and_behaviour_replace_no_node(what: str, edit: Callable[[dict[str, Any]], None]) -> None:
    diff = diff_of(edit)
    assert diff.has_changes and diff.fleets == (), what


def test_on_prod_narrowed_requirements_roll_the_nodes_that_no_longer_satisfy_them() -> None:
    diff = diff_of(lambda c: general(c).update(instanceCategories=["c", "m"]))
    (fleet,) = diff.fleets
    assert fleet.name == "general"
    assert fleet.causes == ("its requirements narrowed (`karpenter.k8s.aws/instance-category` no longer admits "
                            "`r`): nodes that no longer satisfy them drift, the others stay",)


def test_on_prod_a_hashed_template_field_rolls_the_pool() -> None:
    (fleet,) = diff_of(lambda c: general(c).update(labels={"tier": "general"})).fleets
    assert fleet.name == "general" and "every node drifts" in fleet.causes[0]


def test_on_prod_the_diff_uses_the_rules_of_the_release_it_installs() -> None:
    def older(c: dict[str, Any]) -> None:
        c.setdefault("eks-karpenter:karpenter", {})["version"] = "1.12.2"
        general(c).update(instanceCategories=["c", "m", "r", "x"], labels={"tier": "general"})

    assert drift_rules_of(planned(older)).release == "1.12.2"
    assert drift_rules_of(plan_stack("prod")).release == versions.KARPENTER_VERSION
    (fleet,) = diff_of(older).fleets
    assert fleet.causes == ("its template changed (`metadata.labels`): every node drifts (Karpenter 1.12.2 hashes "
                            "these fields)",)
    assert diff_plans(plan_stack("prod"), plan_stack("prod")).fleets == ()
