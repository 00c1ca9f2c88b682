"""`python -m infra simulate`: workload files, placement as Karpenter would, the fixed node group, the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.catalogue import InstanceType, load_catalogue
from eks_karpenter.platform.nodepool.config import NodePoolConfig
from eks_karpenter.platform.nodepool.manifests import render_node_pool
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.quantities import cpu_millis, memory_bytes
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.engine.runner import read_flat_config
from eks_karpenter.tools.simulate import (
    Pool,
    WorkloadError,
    load_workload,
    parse_workload,
    pool_from_manifest,
    pools_for_stack,
    schedule,
    schedule_fixed,
)

from tests.support import REPO

CAT = load_catalogue()
KEYS = CAT.label_keys
INFLATE = REPO / "examples" / "workloads" / "inflate.yaml"
WEB_BATCH = REPO / "examples" / "workloads" / "web-batch.yaml"
MIB = 1 << 20


def pool(name: str, **spec: Any) -> Pool:
    cfg = NodePoolConfig.model_validate({"name": name, **spec})
    return pool_from_manifest(render_node_pool(cfg), None, CAT)


def workload(*deployments: dict[str, Any], daemon_sets: list[dict[str, Any]] | None = None) -> Any:
    body: dict[str, Any] = {"deployments": list(deployments)}
    if daemon_sets:
        body["daemonSets"] = daemon_sets
    return parse_workload(json.dumps(body), "w.yaml")


def dep(name: str = "app", replicas: int = 1, cpu: str = "1", **extra: Any) -> dict[str, Any]:
    return {"name": name, "replicas": replicas, "cpu": cpu, **extra}


def stack_pools(stack: str) -> list[Pool]:
    cfg = load_stack_config(read_flat_config(REPO / "stacks" / f"Pulumi.{stack}.yaml", "eks-karpenter"), stack)
    return pools_for_stack(cfg, CAT)


def placed(result: Any) -> dict[str, dict[str, int]]:
    return {p.pool.name: dict(p.placed) for p in result.pools if p.placed}


def cheapest_holding(types: tuple[InstanceType, ...], cpu: int, memory: int, pods: int) -> InstanceType:
    """Independent check: the cheapest type whose allocatable resources hold the totals."""
    fitting = [t for t in types if t.on_demand_hourly is not None and t.cpu_millis >= cpu
               and t.memory_mib * MIB >= memory and t.pods >= pods]
    return min(fitting, key=lambda t: (t.on_demand_hourly or 0.0, t.name))


# --- workload files ----------------------------------------------------------------------------------------------

def test_quantities_parse_like_kubernetes() -> None:
    assert [cpu_millis(q) for q in ("500m", "1", "0.5", "2.25", "1e3", "100u")] == [500, 1000, 500, 2250, 10**6, 1]
    assert memory_bytes("1Gi") == 1 << 30 and memory_bytes("512Mi") == 512 * MIB
    assert memory_bytes("1G") == 10**9 and memory_bytes("129e6") == 129_000_000 and memory_bytes("1k") == 1000
    with pytest.raises(ValueError):
        cpu_millis("one")
    with pytest.raises(ValueError):
        memory_bytes("-1Gi")


def test_examples_parse() -> None:
    inflate = load_workload(str(INFLATE))
    assert [(d.name, d.replicas, d.cpu_millis) for d in inflate.deployments] == [("inflate", 10, 1000)]
    mixed = load_workload(str(WEB_BATCH))
    assert mixed.pods == 36 and len(mixed.daemon_sets) == 3


def errors(text: str, source: str = "workloads/web.yaml") -> list[str]:
    with pytest.raises(WorkloadError) as info:
        parse_workload(text, source)
    return info.value.lines


BAD = """\
deployments:
  - name: web
    replicas: 2
    cpu: 500m
  - name: batch
    replicas: 3
    cpu: one
    memory: 1Gi
"""


def test_bad_value_names_file_line_and_key() -> None:
    [line] = errors(BAD)
    assert line.startswith("workloads/web.yaml:7: deployments[1].cpu: not a Kubernetes quantity")
    assert line.endswith('(got "one")')


def test_unknown_key_missing_key_and_type_errors_each_get_their_line() -> None:
    text = ("deployments:\n"
            "  - name: web\n"
            "    cpu: 1\n"
            "    nodeSelectr: {a: b}\n"
            "  - name: api\n"
            "    replicas: many\n"
            "    cpu: 1\n"
            "    architecture: sparc\n")
    got = errors(text)
    assert got[0] == "workloads/web.yaml:2: deployments[0].replicas: Field required (got nothing)"
    assert got[1].startswith("workloads/web.yaml:4: deployments[0].nodeSelectr: unknown key: did you mean "
                             "`nodeSelector`?")
    assert got[2].startswith("workloads/web.yaml:6: deployments[1].replicas: Input should be a valid integer")
    assert got[3].startswith("workloads/web.yaml:8: deployments[1].architecture: Input should be")


def test_duplicate_keys_are_refused_not_silently_overwritten() -> None:
    text = "deployments:\n  - name: web\n    replicas: 1\n    cpu: 1\n    cpu: 2\n"
    assert errors(text) == ["workloads/web.yaml:5: deployments[0].cpu: duplicate key 'cpu': also defined at line 4"]


def test_workload_files_are_read_like_stack_files() -> None:
    """One YAML reader for every file we read (eks_karpenter.config.stackfile): `yes` and dates stay strings, as in
    yaml.v3, instead of YAML 1.1 booleans and dates that a string field then refuses; every duplicate is named."""
    text = ("deployments:\n  - name: web\n    replicas: 1\n    cpu: 1\n"
            "    nodeSelector: {workload-tier: yes, rollout: 2026-01-31}\n")
    assert parse_workload(text, "w.yaml").deployments[0].node_selector == {"workload-tier": "yes",
                                                                            "rollout": "2026-01-31"}
    twice = "deployments:\n  - name: web\n    name: api\n    replicas: 1\n    replicas: 2\n    cpu: 1\n"
    assert errors(twice) == ["workloads/web.yaml:3: deployments[0].name: duplicate key 'name': also defined at line 2",
                             "workloads/web.yaml:5: deployments[0].replicas: duplicate key 'replicas': also defined "
                             "at line 4"]
    assert errors("# workloads\ndaemonSets: []\n") == [
        "workloads/web.yaml:2: deployments: Field required (got nothing)"]


def test_syntax_errors_and_wrong_shapes() -> None:
    [line] = errors("deployments:\n  - name: web\n   cpu: [1\n")
    assert line.startswith("workloads/web.yaml:3: not valid YAML") or line.startswith("workloads/web.yaml:4: not")
    assert errors("- a\n- b\n") == ['workloads/web.yaml:1: expected a mapping with a `deployments:` list '
                                    '(got ["a", "b"])']
    assert errors("deployments: []\n")[0].startswith("workloads/web.yaml:1: deployments: List should have at least")


def test_cross_field_rules() -> None:
    text = ("deployments:\n"
            "  - {name: web, replicas: 1, cpu: 1}\n"
            "  - name: web\n"
            "    replicas: 1\n"
            "    cpu: 1\n"
            "    architecture: arm64\n"
            "    nodeSelector:\n"
            "      kubernetes.io/arch: amd64\n")
    assert errors(text) == [
        'workloads/web.yaml:3: deployments[1].name: duplicate name (also deployments[0]) (got "web")',
        'workloads/web.yaml:8: deployments[1].nodeSelector.kubernetes.io/arch: contradicts architecture: arm64 '
        '(got "amd64")',
    ]


# --- placement ---------------------------------------------------------------------------------------------------

def test_inflate_on_dev_is_one_node_of_the_cheapest_type_holding_ten_cpus() -> None:
    [general] = stack_pools("dev")
    result = schedule([general], load_workload(str(INFLATE)), KEYS)
    [line] = result.pools[0].nodes
    assert (line.count, line.pods) == (1, 10)
    assert line.type is cheapest_holding(general.types, 10_000, 0, 10)
    assert result.hourly == line.type.on_demand_hourly and not result.unschedulable


def test_higher_weight_first_then_name_order() -> None:
    w = workload(dep(replicas=3))
    assert placed(schedule([pool("b"), pool("a")], w, KEYS)) == {"a": {"app": 3}}
    assert placed(schedule([pool("a"), pool("b", weight=5)], w, KEYS)) == {"b": {"app": 3}}


def test_taints_must_be_tolerated_and_startup_taints_need_not() -> None:
    taint = [{"key": "team", "value": "data", "effect": "NoSchedule"}]
    pools = [pool("tainted", weight=50, taints=taint), pool("startup", startupTaints=taint)]
    assert placed(schedule(pools, workload(dep()), KEYS)) == {"startup": {"app": 1}}
    tolerating = dep(tolerations=[{"key": "team", "operator": "Exists"}])
    assert placed(schedule(pools, workload(tolerating), KEYS)) == {"tainted": {"app": 1}}
    result = schedule(pools[:1], workload(dep(replicas=2)), KEYS)
    [u] = result.unschedulable
    assert (u.deployment, u.pods, u.reason) == ("app", 2, "no pool tolerates taint team=data:NoSchedule")


def test_prefer_no_schedule_taints_are_avoided_but_used_as_a_last_resort() -> None:
    soft = [{"key": "spare", "effect": "PreferNoSchedule"}]
    pools = [pool("soft", weight=50, taints=soft), pool("plain")]
    assert placed(schedule(pools, workload(dep()), KEYS)) == {"plain": {"app": 1}}
    assert placed(schedule(pools[:1], workload(dep()), KEYS)) == {"soft": {"app": 1}}


def test_selector_must_match_template_labels_and_requirements() -> None:
    labelled = pool("labelled", labels={"team": "data"})
    plain = pool("plain", weight=90)
    w = workload(dep(nodeSelector={"team": "data"}))
    assert placed(schedule([plain, labelled], w, KEYS)) == {"labelled": {"app": 1}}
    [u] = schedule([plain], w, KEYS).unschedulable
    assert u.reason == "no pool has label team=data" and u.pools == {"plain": "no label team=data"}
    on_demand = pool("od", capacityTypes=["on-demand"])
    [u] = schedule([on_demand], workload(dep(nodeSelector={"karpenter.sh/capacity-type": "spot"})), KEYS).unschedulable
    assert u.pools == {"od": "requirements do not allow karpenter.sh/capacity-type=spot"}
    assert placed(schedule([on_demand], workload(dep(nodeSelector={"karpenter.sh/nodepool": "od"})), KEYS))


def test_capacity_type_selectors_narrow_the_node_and_do_not_mix() -> None:
    general = pool("general")
    w = workload(dep("od", 1, nodeSelector={"karpenter.sh/capacity-type": "on-demand"}),
                 dep("spot", 1, nodeSelector={"karpenter.sh/capacity-type": "spot"}), dep("any", 1))
    [p] = schedule([general], w, KEYS).pools
    # "any" joins the first node (on-demand); the spot pod needs a node of its own.
    assert sorted((n.capacity_types, n.pods) for n in p.nodes) == [(("on-demand",), 2), (("spot",), 1)]


def test_selector_on_an_instance_label_restricts_the_admitted_types() -> None:
    w = workload(dep(replicas=4, nodeSelector={"karpenter.k8s.aws/instance-family": "m6i"}))
    result = schedule([pool("general")], w, KEYS)
    assert {n.type.family for p in result.pools for n in p.nodes} == {"m6i"}
    gpu = workload(dep(nodeSelector={"karpenter.k8s.aws/instance-family": "p5"}))
    [u] = schedule([pool("general")], gpu, KEYS).unschedulable
    assert u.reason == "no admitted type has the instance labels it selects"
    assert u.pools == {"general": "no admitted type has karpenter.k8s.aws/instance-family=p5"}


def test_zone_selectors_are_satisfied_by_the_stacks_zones() -> None:
    [general] = stack_pools("dev")
    assert placed(schedule([general], workload(dep(nodeSelector={"topology.kubernetes.io/zone": "eu-west-1b"})),
                           KEYS))
    [u] = schedule([general], workload(dep(nodeSelector={"topology.kubernetes.io/zone": "eu-west-1c"})),
                   KEYS).unschedulable
    assert u.reason == "no pool has label topology.kubernetes.io/zone=eu-west-1c"


def test_architecture_must_be_admitted() -> None:
    amd, arm = pool("amd"), pool("arm", arch=["arm64"])
    result = schedule([amd, arm], workload(dep("x", architecture="arm64"), dep("y"), dep("z", architecture="any")),
                      KEYS)
    # z (multi-arch) joins the first in-flight node with room, x's arm64 node, before any new node.
    assert placed(result) == {"amd": {"y": 1}, "arm": {"x": 1, "z": 1}}
    assert {n.type.arch for p in result.pools if p.pool is arm for n in p.nodes} == {"arm64"}
    [u] = schedule([amd], workload(dep(architecture="arm64")), KEYS).unschedulable
    assert u.reason == "no pool admits its architecture"


def test_pools_with_inclusive_numeric_requirements_are_simulated() -> None:
    # Gte/Lte are valid NodePool operators (the config accepts them); admission must not fail on them.
    p = pool("four-to-eight", requirements=[
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]},
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["8"]}])
    vcpus = {t.vcpus for t in p.types}
    assert (min(vcpus), max(vcpus)) == (4, 8)  # both bounds inclusive
    result = schedule([p], workload(dep(replicas=2)), KEYS)
    assert result.pods == 2 and all(4 <= n.type.vcpus <= 8 for n in result.pools[0].nodes)


def test_pod_larger_than_any_admitted_type() -> None:
    small = pool("small", instanceSizes=["large"])
    [u] = schedule([small], workload(dep(cpu="3")), KEYS).unschedulable
    assert u.reason == "pod larger than any admitted type"
    # DaemonSet requests come off every node first.
    biggest = max(t.cpu_millis for t in small.types)
    fits = workload(dep(cpu=f"{biggest}m"))
    assert not schedule([small], fits, KEYS).unschedulable
    squeezed = workload(dep(cpu=f"{biggest}m"), daemon_sets=[{"name": "agent", "cpu": "1m"}])
    assert schedule([small], squeezed, KEYS).unschedulable[0].reason == "pod larger than any admitted type"


def test_cpu_limit_counts_launched_vcpus_and_spills_to_the_next_pool() -> None:
    capped = pool("capped", weight=10, limits={"cpu": "8"})
    result = schedule([capped], workload(dep(replicas=20)), KEYS)
    [p] = result.pools
    assert sum(n.type.vcpus * n.count for n in p.nodes) <= 8
    assert p.pods + result.unschedulable[0].pods == 20 and p.pods >= 7
    [u] = result.unschedulable
    assert u.reason == "pool limit reached" and u.pools["capped"].startswith("pool limit reached (cpu ")
    spill = schedule([capped, pool("rest")], workload(dep(replicas=20)), KEYS)
    assert not spill.unschedulable and placed(spill)["rest"]["app"] == 20 - p.pods


def test_nodes_limit_counts_nodes() -> None:
    one = pool("one", limits={"nodes": "1"}, instanceSizes=["large"])
    result = schedule([one], workload(dep(replicas=5)), KEYS)
    assert result.node_count == 1 and result.pods == 1
    assert result.unschedulable[0].pools == {"one": "pool limit reached (nodes 1/1)"}


def test_identical_pods_share_nodes_first_fit_decreasing() -> None:
    # Big pods first: the small ones fill the gaps of the nodes opened for the big ones.
    result = schedule([pool("general")], workload(dep("small", 4, "250m"), dep("big", 3, "3")), KEYS)
    assert result.node_count == 1
    [line] = result.pools[0].nodes
    assert line.type is cheapest_holding(result.pools[0].pool.types, 10_000, 0, 7)


# --- the committed stacks and the examples -------------------------------------------------------------------------

def test_web_batch_on_prod_uses_each_pool_as_intended() -> None:
    pools = stack_pools("prod")
    result = schedule(pools, load_workload(str(WEB_BATCH)), KEYS)
    assert not result.unschedulable
    assert placed(result) == {"critical": {"api": 4}, "arm64": {"batch": 20}, "general": {"web": 12}}
    by_pool = {p.pool.name: p for p in result.pools}
    assert {n.type.arch for n in by_pool["arm64"].nodes} == {"arm64"}
    assert {n.type.labels["karpenter.k8s.aws/instance-category"] for n in by_pool["critical"].nodes} <= {"m", "r"}
    # Overhead of three DaemonSets (150m CPU, 128Mi, 3 pods) on every node; each pool's pods on one node.
    for name, cpu, memory, pods in (("critical", 4 * 1500, 4 * 3 << 30, 4), ("arm64", 20_000, 20 * 2 << 30, 20),
                                    ("general", 12 * 500, 12 << 30, 12)):
        [line] = by_pool[name].nodes
        pool_types = by_pool[name].pool.types
        assert line.type is cheapest_holding(pool_types, cpu + 150, memory + 128 * MIB, pods + 3), name
    assert math.isclose(result.hourly, sum(p.hourly for p in result.pools))


def test_web_batch_on_dev_reports_what_has_no_pool() -> None:
    result = schedule(stack_pools("dev"), load_workload(str(WEB_BATCH)), KEYS)
    assert placed(result) == {"general": {"web": 12, "batch": 20}}
    [u] = result.unschedulable
    assert (u.deployment, u.pods, u.reason) == ("api", 4, "no pool has label workload-tier=critical")


def test_inflate_on_prod_avoids_the_tainted_pools() -> None:
    result = schedule(stack_pools("prod"), load_workload(str(INFLATE)), KEYS)
    assert placed(result) == {"general": {"inflate": 10}}


# --- the fixed node group, recomputed by hand -----------------------------------------------------------------------

def test_fixed_group_inflate_by_hand() -> None:
    m5 = CAT.by_name["m5.large"]
    assert (m5.cpu_millis, m5.on_demand_hourly) == (1930, 0.096)  # 2 vCPU minus kube/system reservations
    result = schedule_fixed(m5, load_workload(str(INFLATE)))
    assert (result.nodes, result.pods) == (10, 10)  # one 1-CPU pod per node
    assert math.isclose(result.hourly, 0.96)
    xl = CAT.by_name["m5.xlarge"]
    per_node = xl.cpu_millis // 1000
    assert per_node == 3
    result = schedule_fixed(xl, load_workload(str(INFLATE)))
    assert result.nodes == math.ceil(10 / per_node) == 4
    assert math.isclose(result.hourly, 4 * (xl.on_demand_hourly or 0))


def test_fixed_group_web_batch_by_hand() -> None:
    # m5.large: 1930m, 6903Mi, 29 pods; DaemonSets take 150m, 128Mi, 3 pods: 1780m free per node.
    # Largest first: 4 api pods (1500m) one per node (280m left); 20 batch pods (1000m) one per node (780m left);
    # 12 web pods (500m) cannot use the api nodes' 280m, and go one each into 12 of the batch nodes.
    result = schedule_fixed(CAT.by_name["m5.large"], load_workload(str(WEB_BATCH)))
    assert (result.nodes, result.pods, result.unschedulable) == (24, 36, ())
    assert math.isclose(result.hourly, 24 * 0.096)


def test_fixed_group_refuses_other_architectures_and_oversized_pods() -> None:
    w = workload(dep("arm", 2, architecture="arm64"), dep("huge", 1, "4"), dep("ok", 1, "1"))
    result = schedule_fixed(CAT.by_name["m5.large"], w)
    assert result.nodes == 1 and result.pods == 1
    assert {u.deployment: u.reason for u in result.unschedulable} == {
        "arm": "architecture arm64: m5.large is amd64", "huge": "pod larger than m5.large's allocatable resources"}


# --- the command line --------------------------------------------------------------------------------------------

def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["simulate", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "--stack", "prod", "--workload", str(WEB_BATCH), "--format", "json",
                       "--fixed-instance-type", "m5.xlarge")
    assert rc == 0 and not err
    doc = json.loads(out)
    assert set(doc) == {"stack", "region", "priceRegion", "priceSource", "priceDate", "priceFallback", "priceKind",
                        "currency", "hoursPerMonth", "heuristic", "workload", "karpenter", "fixed", "difference",
                        "notes"}
    assert (doc["priceKind"], doc["currency"], doc["hoursPerMonth"], doc["priceDate"]) == \
        ("on-demand", "USD", 730, "2026-07-06")
    k, f = doc["karpenter"], doc["fixed"]
    assert k["pods"] == 36 and f["instanceType"] == "m5.xlarge"
    assert math.isclose(k["hourly"], sum(p["hourly"] for p in k["pools"]), abs_tol=1e-3)
    assert math.isclose(f["hourly"], f["nodes"] * f["hourlyEach"], abs_tol=1e-4)
    assert math.isclose(doc["difference"]["monthly"], (k["hourly"] - f["hourly"]) * 730, abs_tol=0.1)
    general = next(p for p in k["pools"] if p["name"] == "general")
    assert general["spotAllowed"] and general["limits"] == {"cpu": "1000", "memory": "1000Gi"}
    assert set(general["nodes"][0]) == {"type", "count", "pods", "vcpus", "capacityTypes", "hourlyEach", "hourly",
                                      "monthly"}


def test_cli_text_and_markdown_label_prices_as_on_demand(capsys: pytest.CaptureFixture[str]) -> None:
    rc, text, _ = run(capsys, "--stack", "dev", "--workload", str(WEB_BATCH))
    assert rc == 0
    assert "on-demand ceiling" in text and "spot would be lower" in text and "first-fit decreasing" in text
    assert "api: 4 pods: no pool has label workload-tier=critical" in text
    rc, md, _ = run(capsys, "--stack", "dev", "--workload", str(INFLATE), "--format", "markdown")
    assert rc == 0 and md.startswith("### Simulate")


def test_a_stack_is_simulated_at_its_regions_prices(capsys: pytest.CaptureFixture[str]) -> None:
    # dev is in eu-west-1: m5.large at eu-west-1's 0.114 (us-east-1's is 0.096), with the source and its date.
    rc, md, _ = run(capsys, "--stack", "dev", "--workload", str(INFLATE), "--format", "markdown")
    assert rc == 0 and "| Fixed `m5.large` | 10 | 10 | $1.1400 | $832.20 |" in md
    assert ("eu-west-1 on-demand prices: Apache Libcloud 3.9.1's price table (PyPI apache-libcloud, "
            "libcloud/data/pricing.json sha256 59fbcd5575c6...), prices of 2025-03-02") in md
    rc, out, _ = run(capsys, "--stack", "dev", "--workload", str(INFLATE), "--format", "json",
                     "--fixed-instance-type", "m7i.large")
    doc = json.loads(out)
    assert (doc["region"], doc["priceRegion"], doc["priceDate"]) == ("eu-west-1", "eu-west-1", "2025-03-02")
    # m7i.large has no eu-west-1 price in the table: us-east-1's, and named as such.
    assert doc["fixed"]["hourlyEach"] == 0.1008 and "m7i.large" in doc["priceFallback"]
    assert any(n.startswith("launched at Karpenter v1.14.1's us-east-1 price (its table generated 2026-07-06) for "
                            "want of a eu-west-1 price in Apache Libcloud 3.9.1's price table: ") and "m7i.large" in n
               for n in doc["notes"])
    rc, out, _ = run(capsys, "--stack", "prod", "--workload", str(INFLATE), "--format", "json")
    doc = json.loads(out)
    assert (doc["priceRegion"], doc["priceDate"], doc["priceFallback"]) == ("us-east-1", "2026-07-06", [])
    assert doc["fixed"]["hourlyEach"] == 0.096


def test_cli_bad_inputs_exit_1_with_nothing_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "web.yaml"
    bad.write_text(BAD)
    rc, out, err = run(capsys, "--stack", "dev", "--workload", str(bad))
    assert (rc, out) == (1, "")
    assert f"{bad}:7: deployments[1].cpu: not a Kubernetes quantity" in err
    rc, out, err = run(capsys, "--stack", "dev", "--workload", str(tmp_path / "missing.yaml"))
    assert (rc, out) == (1, "") and "missing.yaml: No such file or directory" in err
    rc, out, err = run(capsys, "--stack", "dev", "--workload", str(INFLATE), "--fixed-instance-type", "m5.huge")
    assert (rc, out) == (1, "") and "m5.huge: not in the catalogue" in err
    rc, out, err = run(capsys, "--stack", "nope", "--workload", str(INFLATE))
    assert (rc, out) == (1, "") and "no such stack file" in err


@pytest.mark.slow
def test_python_m_infra_simulate_end_to_end(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "infra", "simulate", "--stack", "prod", "--workload",
                           str(INFLATE), "--format", "json"], capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["fixed"]["nodes"] == 10 and doc["karpenter"]["nodeCount"] == 1
    assert doc["difference"]["hourly"] < 0  # one right-sized node beats ten m5.large
    bad = tmp_path / "web.yaml"
    bad.write_text(BAD.replace("cpu: 500m", "cpu: 500m\n    cpu: 1"))
    proc = subprocess.run([sys.executable, "-m", "infra", "simulate", "--stack", "prod", "--workload", str(bad)],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert "Traceback" not in proc.stderr and f"{bad}:5: deployments[0].cpu: duplicate key" in proc.stderr


def test_readme_sample_is_the_commands_output(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the sample names the workload file relative to the repository
    readme = (REPO / "docs" / "cost-and-scale.md").read_text()
    marker = "<!-- figures:simulate-sample -->\n```\n"  # written by scripts/gen_docs.py
    assert marker in readme
    sample = readme.split(marker, 1)[1].split("\n```\n", 1)[0]
    rc, out, _ = run(capsys, "--stack", "prod", "--workload", "examples/workloads/web-batch.yaml")
    assert rc == 0 and out.rstrip("\n") == sample, "regenerate the sample in docs/cost-and-scale.md"


def test_a_region_without_a_price_table_is_simulated_at_us_east_1s_prices_and_says_so() -> None:
    from eks_karpenter.catalogue.prices import priced_catalogue
    from eks_karpenter.tools.simulate.report import Simulation, to_data

    catalogue = priced_catalogue("ap-east-2")
    load = load_workload(str(INFLATE))
    sim = Simulation("prod", "ap-east-2", str(INFLATE), load, schedule(stack_pools("prod"), load, KEYS),
                     schedule_fixed(catalogue.by_name["m5.large"], load), catalogue)
    doc = to_data(sim)
    assert (doc["region"], doc["priceRegion"], doc["priceFallback"]) == ("ap-east-2", "us-east-1", [])
    assert doc["fixed"]["hourlyEach"] == 0.096
    assert ("prices are us-east-1's, not ap-east-2's: the shipped tables have no ap-east-2 prices (on-demand often "
            "differs by region); `cost --stack prod --live` gives ap-east-2's current prices") in doc["notes"]


def test_the_heading_counts_workloads_and_pods_without_requests_are_noted(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    manifests = tmp_path / "kinds.yaml"
    manifests.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 2\n  template:\n"
        "    spec:\n      containers: [{name: c, image: i, resources: {requests: {cpu: '1', memory: 2Gi}}}]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec:\n  containers: [{name: c, image: i}]\n")
    rc, text, err = run(capsys, "--stack", "dev", "--workload", str(manifests))
    assert rc == 0, err
    assert text.splitlines()[0].endswith(": 2 workloads, 3 pods")
    assert "note: no cpu or memory requests (placed as taking none, as the scheduler places them): sleeper" in text


def test_the_help_names_the_manifest_kinds_it_reads(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Kubernetes manifests (Deployment, StatefulSet, ReplicaSet, Job, CronJob, Pod, DaemonSet;" in text
