"""What a pool can launch, checked at validation time: dead pools and unmet minValues are errors naming the stack
file and key; thin spot choice and limits below the cheapest node are warnings. Friendly keys are checked
against the catalogue: each means what its user means."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from eks_karpenter import ConfigError
from eks_karpenter.catalogue import load_catalogue
from eks_karpenter.catalogue.model import InstanceType
from eks_karpenter.labels import INSTANCE_CATEGORY, INSTANCE_GENERATION, INSTANCE_HYPERVISOR, INSTANCE_SIZE
from eks_karpenter.platform.nodepool import NodeClassConfig, NodePoolConfig, warnings_for
from eks_karpenter.platform.nodepool.admission import pool_admission
from eks_karpenter.platform.stack import StackConfig, load_stack_config

from tests.support import stack_config

SOURCE = "stacks/Pulumi.t.yaml"


def load(pools: list[dict[str, Any]]) -> StackConfig:
    config = stack_config("dev")
    config["eks-karpenter:nodePools"] = pools
    flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    return load_stack_config(flat, SOURCE)


def errors(pools: list[dict[str, Any]]) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(pools)
    return [line for line in str(err.value).splitlines()[1:]]


def test_arm64_with_intel_families_is_an_error_naming_file_and_key() -> None:
    # The stack rules name each family of the wrong architecture; the pool-level "leaves no instance type" error
    # would only repeat them, so it is not reported on top (as for any pool with its own errors).
    lines = errors([{"name": "ok", "limits": {"cpu": "10"}},
                    {"name": "dead", "arch": ["arm64"], "instanceFamilies": ["m7i", "c7i"]}])
    assert lines == [
        f'{SOURCE}: eks-karpenter:nodePools[1].instanceFamilies[0]: m7i is amd64 only, but the pool allows arm64 '
        '(arch): no instance of it can launch (got "m7i")',
        f'{SOURCE}: eks-karpenter:nodePools[1].instanceFamilies[1]: c7i is amd64 only, but the pool allows arm64 '
        '(arch): no instance of it can launch (got "c7i")']


def test_a_generation_no_family_reaches_is_an_error_on_min_generation() -> None:
    (line,) = errors([{"name": "future", "minGeneration": 12}])
    assert line.startswith(f"{SOURCE}: eks-karpenter:nodePools[0].minGeneration: leaves no instance type")


def test_a_raw_requirement_that_empties_the_pool_is_named_by_index() -> None:
    (line,) = errors([{"name": "p", "instanceFamilies": ["m5"], "requirements": [
        {"key": "karpenter.k8s.aws/instance-local-nvme", "operator": "Exists"}]}])
    assert line.startswith(f"{SOURCE}: eks-karpenter:nodePools[0].requirements[0]: leaves no instance type")


def test_unmet_min_values_is_an_error_on_that_requirement() -> None:
    # Every family is of the pool's architecture (the stack rules would name one that is not); minGeneration
    # leaves two of the three.
    (line,) = errors([{"name": "p", "minGeneration": 7, "requirements": [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m7i", "c7i"],
         "minValues": 3}]}])
    assert line.startswith(f"{SOURCE}: eks-karpenter:nodePools[0].requirements[0].minValues: needs 3 distinct values "
                           "of karpenter.k8s.aws/instance-family among the admitted types, which have 2")
    load([{"name": "p", "arch": ["amd64", "arm64"], "requirements": [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m7g", "c7g"],
         "minValues": 3}]}])


def test_malformed_pools_get_their_own_errors_only() -> None:
    lines = errors([{"name": "p", "nodeClass": "missing", "minGeneration": 12}])
    assert len(lines) == 1 and "nodeClass" in lines[0]


def warnings(pools: list[dict[str, Any]]) -> list[str]:
    cfg = load(pools)
    return warnings_for(cfg.node_pools, cfg.node_classes, protected=False)


def test_spot_with_fewer_than_15_types_is_warned() -> None:
    (w,) = warnings([{"name": "p", "instanceTypes": ["m5.large", "m5.xlarge"], "limits": {"cpu": "10"}}])
    assert w.startswith("nodePools[p]: spot from only 2 instance types (m5.large, m5.xlarge)")
    assert warnings([{"name": "p", "capacityTypes": ["on-demand"], "instanceTypes": ["m5.large"],
                      "limits": {"cpu": "10"}}]) == []
    assert warnings([{"name": "p", "instanceFamilies": ["m5", "m6i"], "limits": {"cpu": "10"}}]) == []


def test_limits_below_the_cheapest_node_or_without_cpu_are_warned() -> None:
    # Above the smallest admitted node (c7a.medium: 1 vCPU, 2Gi), below the cheapest (t3a.medium: 2 vCPUs, 4Gi).
    (w,) = warnings([{"name": "p", "capacityTypes": ["on-demand"], "instanceTypes": ["c7a.medium", "t3a.medium"],
                      "limits": {"cpu": "1", "memory": "3Gi"}}])
    assert w.startswith("nodePools[p]: limits are smaller than the cheapest node it admits, t3a.medium")
    assert "cpu 1 < 2 vCPUs" in w and "memory 3Gi < 4096Mi" in w
    (w,) = warnings([{"name": "p", "limits": {"memory": "100Gi"}}])
    assert w.startswith("nodePools[p]: no cpu limit")


def test_limits_below_the_smallest_node_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"nodePools\[0\]\.limits\.cpu: below the smallest instance the pool "
                       r"admits \(8 vCPUs\)"):
        load([{"name": "p", "minCpu": 8, "limits": {"cpu": "4"}}])
    with pytest.raises(ConfigError, match=r"limits\.memory: below the smallest instance the pool admits \(2048Mi\)"):
        load([{"name": "p", "limits": {"cpu": "100", "memory": "1Gi"}}])


def test_the_committed_stacks_admit_types_without_admission_warnings() -> None:
    for stack in ("dev", "prod", "brownfield"):
        config = stack_config(stack)
        flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
        cfg = load_stack_config(flat, SOURCE)
        assert not [w for w in warnings_for(cfg.node_pools, cfg.node_classes, cfg.protect) if "instance types" in w]


# --- friendly keys against the catalogue -----------------------------------------------------------------------

def admitted_names(**pool: Any) -> set[str]:
    cfg = NodePoolConfig.model_validate({"name": "p", **pool})
    return {t.name for t in pool_admission(cfg, NodeClassConfig(name="default")).types}


def catalogue_where(keep: Callable[[InstanceType], bool]) -> set[str]:
    return {t.name for t in load_catalogue() if keep(t)}


RELAXED: dict[str, Any] = {"arch": ["amd64", "arm64"], "instanceCategories": None, "minGeneration": None}
"""Drop the pool defaults (amd64, c/m/r, generation 3+) so each shortcut is checked on its own."""


def is_metal(t: InstanceType) -> bool:
    return t.labels.get(INSTANCE_HYPERVISOR) == ""  # EC2 reports no hypervisor for bare metal


def test_exclude_metal_excludes_every_bare_metal_size() -> None:
    got = admitted_names(**RELAXED, excludeInstanceSizes=["metal"])
    assert got == catalogue_where(lambda t: not is_metal(t))
    assert not [n for n in got if "metal" in n]
    # None of the 51 `metal-NNxl` types is admitted by a prod-like pool that excludes metal.
    prod_like = admitted_names(instanceCategories=["c", "m", "r"], minGeneration=6,
                               excludeInstanceSizes=["metal", "24xlarge", "48xlarge"])
    assert not {n for n in prod_like if ".metal" in n}


def test_instance_sizes_metal_admits_every_bare_metal_size() -> None:
    assert admitted_names(**RELAXED, instanceSizes=["metal"]) == catalogue_where(is_metal)
    assert "m7i.metal-24xl" in catalogue_where(is_metal)


def test_other_sizes_are_exact() -> None:
    assert admitted_names(**RELAXED, instanceSizes=["large"]) == catalogue_where(
        lambda t: t.labels[INSTANCE_SIZE] == "large")


def test_min_generation_admits_that_generation_and_newer() -> None:
    got = admitted_names(**{**RELAXED, "minGeneration": 7})
    assert got == catalogue_where(lambda t: int(t.labels[INSTANCE_GENERATION]) >= 7)


def test_cpu_bounds_are_inclusive() -> None:
    got = admitted_names(**RELAXED, minCpu=4, maxCpu=16)
    assert got == catalogue_where(lambda t: 4 <= t.vcpus <= 16)
    assert {4, 16} <= {load_catalogue().by_name[n].vcpus for n in got}


def test_categories_and_families_are_exact_labels() -> None:
    got = admitted_names(**{**RELAXED, "instanceCategories": ["c", "m"]})
    assert got == catalogue_where(lambda t: t.labels[INSTANCE_CATEGORY] in ("c", "m"))
    assert not {n for n in got if n.startswith(("mac", "inf", "hpc"))}
    fams = admitted_names(**RELAXED, instanceFamilies=["m7i", "c7g"])
    assert fams == catalogue_where(lambda t: t.family in ("m7i", "c7g"))


def test_arch_and_default_pool() -> None:
    assert admitted_names(arch=["arm64"], instanceCategories=None, minGeneration=None) == \
        catalogue_where(lambda t: t.arch == "arm64")
    default = admitted_names()
    assert default == catalogue_where(lambda t: t.arch == "amd64" and t.labels[INSTANCE_CATEGORY] in ("c", "m", "r")
                                      and int(t.labels[INSTANCE_GENERATION]) >= 3)



def test_prods_general_pool_no_longer_admits_the_51_sized_bare_metal_types() -> None:
    shortcut = {"instanceCategories": ["c", "m", "r"], "minGeneration": 6}
    fixed = admitted_names(**shortcut, excludeInstanceSizes=["metal", "24xlarge", "48xlarge"])
    literal = admitted_names(**shortcut, requirements=[
        {"key": "karpenter.k8s.aws/instance-size", "operator": "NotIn", "values": ["metal", "24xlarge", "48xlarge"]}])
    gone = literal - fixed
    assert len(gone) == 51 and all(".metal-" in n for n in gone) and fixed < literal


def test_documented_edges_of_categories_and_generations() -> None:
    storage = admitted_names(**{**RELAXED, "instanceCategories": ["i"]})
    assert "i4i.large" in storage and not {n for n in storage if n.startswith(("im4gn", "is4gen"))}
    assert not {n for n in admitted_names(**{**RELAXED, "minGeneration": 6}) if n.startswith("x2")}
