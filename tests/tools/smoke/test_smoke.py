"""`python -m infra smoke`: the pure plan (one Deployment per pool, only that pool can take it), and the whole flow
against a fake API server with a simulated Karpenter (tests/support/fake_kube.py) on a clock 100 times faster
than real."""

from __future__ import annotations

import copy
import functools
import io
import json
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from eks_karpenter.catalogue import load_catalogue
from eks_karpenter.platform.kube import KubeApi, KubeError
from eks_karpenter.tools.cli import UsageError, _parser, main
from eks_karpenter.tools.smoke import SmokeSizing, SmokeTimeouts, consolidation_of, plan_smoke, unschedulable_reasons
from eks_karpenter.tools.smoke.budgets import Cron, parse_duration, window_open
from eks_karpenter.tools.smoke.cli import _stack_config, cmd_smoke
from eks_karpenter.tools.smoke.plan import RUN_LABEL, plan_pool, rendered_pools, size_requests, sized_above
from eks_karpenter.tools.smoke.runner import MILESTONES, Runner, Settings, SmokeResult

from tests.support import REPO, STACKS
from tests.support.fake_kube import SCALE, Behaviour, FakeCluster

kubernetes = pytest.importorskip("kubernetes")


@functools.cache
def _pools(stack: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return rendered_pools(_stack_config(stack))


def pools_of(stack: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return copy.deepcopy(_pools(stack))


def run_cli(argv: list[str], **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv) if not kwargs else cmd_smoke(_parser().parse_args(argv), **kwargs)
    return code, out.getvalue(), err.getvalue()


# --- the plan ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stack", STACKS)
def test_dry_run_prints_one_deployment_per_pool_that_only_that_pool_can_schedule(stack: str) -> None:
    code, out, _ = run_cli(["smoke", "--dry-run", "--stack", stack])
    assert code == 0
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert docs[0]["kind"] == "Namespace" and RUN_LABEL in docs[0]["metadata"]["labels"]
    deployments = docs[1:]
    pools = pools_of(stack)
    assert [d["kind"] for d in deployments] == ["Deployment"] * len(pools)
    for (pool, _), deployment in zip(pools, deployments, strict=True):
        assert deployment["metadata"]["namespace"] == docs[0]["metadata"]["name"]
        pod = deployment["spec"]["template"]["spec"]
        assert pod["nodeSelector"]["karpenter.sh/nodepool"] == pool["metadata"]["name"]
        assert deployment["spec"]["replicas"] == 1
        assert pod["containers"][0]["image"] == "registry.k8s.io/pause:3.10"
        for other, other_class in pools:
            reasons = unschedulable_reasons(pod, other, other_class)
            if other is pool:
                assert reasons == []
            else:
                assert reasons, f"{other['metadata']['name']} could take {pool['metadata']['name']}'s pod"


def test_prod_pods_tolerate_exactly_their_pool_taints_and_ask_for_its_arch_and_capacity() -> None:
    plan = plan_smoke("prod", pools_of("prod"), run_id="r1")
    by_pool = {p.pool: p for p in plan.pools}
    assert set(by_pool) == {"general", "critical", "arm64"}
    assert "tolerations" not in by_pool["general"].pod_spec
    assert by_pool["critical"].pod_spec["tolerations"] == [
        {"key": "workload-tier", "operator": "Equal", "value": "critical", "effect": "NoSchedule"}]
    assert by_pool["arm64"].pod_spec["nodeSelector"]["kubernetes.io/arch"] == "arm64"
    assert by_pool["critical"].pod_spec["nodeSelector"]["karpenter.sh/capacity-type"] == "on-demand"
    assert by_pool["general"].pod_spec["nodeSelector"]["karpenter.sh/capacity-type"] == "spot"
    # Without the toleration, the tainted pools refuse the pod: the test above would catch a missing one.
    critical = dict(by_pool["critical"].pod_spec, tolerations=[])
    pool, node_class = next(p for p in pools_of("prod") if p[0]["metadata"]["name"] == "critical")
    assert any("not tolerated" in r for r in unschedulable_reasons(critical, pool, node_class))


def test_startup_taints_are_not_tolerated() -> None:
    pool, node_class = copy.deepcopy(pools_of("prod")[0])
    pool["spec"]["template"]["spec"]["startupTaints"] = [{"key": "node.cilium.io/agent-not-ready",
                                                          "effect": "NoExecute"}]
    p = plan_pool(pool, node_class, "ns", "r1")
    assert "tolerations" not in p.pod_spec
    assert unschedulable_reasons(p.pod_spec, pool, node_class) == []


def test_requests_fill_most_of_the_cheapest_admitted_type_next_to_daemonsets() -> None:
    plan = plan_smoke("prod", pools_of("prod"), run_id="r1")
    for p in plan.pools:
        t = p.instance_type
        pool, node_class = next(x for x in pools_of("prod") if x[0]["metadata"]["name"] == p.pool)
        from eks_karpenter.catalogue import admitted_for

        assert t is admitted_for(pool, node_class).cheapest()
        # Fits the cheapest type with room for the DaemonSets, and more than half of it: one node, and a new one.
        assert t.cpu_millis // 2 <= p.cpu_millis <= t.cpu_millis - 250
        assert t.memory_mib // 2 <= p.memory_mib <= t.memory_mib - 512
    big = load_catalogue().by_name["m7i.4xlarge"]
    cpu, memory = size_requests(big, SmokeSizing())
    assert cpu == int(big.cpu_millis * 0.8) // 10 * 10 and memory == int(big.memory_mib * 0.8)


def test_unknown_pool_and_disallowed_capacity_type_are_clear_errors() -> None:
    code, out, err = run_cli(["smoke", "--dry-run", "--stack", "prod", "--pool", "nope"])
    assert code == 1 and out == "" and "no NodePool named 'nope'" in err and "general" in err
    code, _, err = run_cli(["smoke", "--dry-run", "--stack", "prod", "--pool", "critical", "--capacity-type", "spot"])
    assert code == 1 and "does not allow capacity type 'spot'" in err
    code, out, _ = run_cli(["smoke", "--dry-run", "--stack", "prod", "--pool", "arm64", "--format", "json"])
    assert [d["kind"] for d in json.loads(out)] == ["Namespace", "Deployment"]


# --- consolidation and budgets ------------------------------------------------------------------------------------

MONDAY_9 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
SUNDAY_9 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def test_cron_windows() -> None:
    assert Cron.parse("0 8 * * mon-fri").matches(datetime(2026, 11, 23, 8, 0, tzinfo=UTC))
    assert not Cron.parse("0 8 * * mon-fri").matches(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    assert window_open("0 8 * * mon-fri", "10h", MONDAY_9)
    assert not window_open("0 8 * * mon-fri", "10h", datetime(2026, 11, 23, 18, 0, tzinfo=UTC))
    assert not window_open("0 8 * * mon-fri", "10h", SUNDAY_9)
    assert window_open("@daily", "1h30m", datetime(2026, 11, 22, 1, 29, tzinfo=UTC))
    assert window_open("*/15 * * * *", "5m", datetime(2026, 11, 22, 1, 33, tzinfo=UTC))
    assert not window_open("*/15 * * * *", "5m", datetime(2026, 11, 22, 1, 36, tzinfo=UTC))
    assert parse_duration("1h30m") == 5400 and parse_duration("Never") is None


def test_consolidation_states() -> None:
    assert consolidation_of({"consolidateAfter": "Never"}, MONDAY_9).state == "disabled"
    assert consolidation_of({"consolidateAfter": "1m", "budgets": [{"nodes": "0"}]}, MONDAY_9).state == "blocked"
    window = {"nodes": "0", "schedule": "0 8 * * mon-fri", "duration": "10h"}
    assert consolidation_of({"consolidateAfter": "1m", "budgets": [window]}, MONDAY_9).state == "blocked"
    assert consolidation_of({"consolidateAfter": "1m", "budgets": [window]}, SUNDAY_9).state == "enabled"
    # A zero budget for other reasons does not stop an empty node from going (prod's business-hours freeze).
    underutilized = dict(window, reasons=["Underutilized", "Drifted"])
    assert consolidation_of({"consolidateAfter": "5m", "budgets": [underutilized]}, MONDAY_9).state == "enabled"
    odd = dict(window, schedule="0 8 * * funday")
    assert consolidation_of({"consolidateAfter": "1m", "budgets": [odd]}, MONDAY_9).state == "maybe-blocked"
    assert consolidation_of({"consolidateAfter": "30s"}, MONDAY_9).consolidate_after == 30


# --- the flow against a fake API server -------------------------------------------------------------------------

def fast(timeouts: SmokeTimeouts | None = None, now: datetime | None = None) -> Settings:
    settings = Settings(timeouts=timeouts or SmokeTimeouts(), poll=1.0, clock=lambda: time.monotonic() * SCALE,
                        sleep=lambda s: time.sleep(s / SCALE))
    if now is not None:
        settings.now = lambda: now
    return settings


def live_pools(stack: str = "prod", consolidate_after: str = "20s") -> list[dict[str, Any]]:
    out = []
    for pool, _ in pools_of(stack):
        pool = copy.deepcopy(pool)
        pool["spec"]["disruption"]["consolidateAfter"] = consolidate_after
        out.append(pool)
    return out


def api_for(url: str) -> KubeApi:
    config = kubernetes.client.Configuration()
    config.host = url
    return KubeApi(kubernetes.client.ApiClient(config))


@pytest.fixture
def cluster() -> Iterator[tuple[FakeCluster, KubeApi]]:
    fake = FakeCluster(live_pools())
    with fake.serving() as url:
        yield fake, api_for(url)


def run(fake: FakeCluster, api: KubeApi, settings: Settings, pools: tuple[str, ...] = ()) -> SmokeResult:
    plan = plan_smoke("prod", pools_of("prod"), pools)
    return Runner(api, plan, settings).run()


def test_every_pool_launches_a_node_and_loses_it_with_timings_in_order(cluster: Any) -> None:
    fake, api = cluster
    result = run(fake, api, fast())
    assert result.ok and [r.pool for r in result.pools] == ["general", "critical", "arm64"]
    for r in result.pools:
        assert list(r.milestones) == list(MILESTONES)
        times = list(r.milestones.values())
        assert times == sorted(times)
        # Each simulated step takes 20 ms, i.e. 2 s on the test's clock.
        assert r.milestones["node Ready"] - r.milestones["pod created"] >= 4
        assert r.milestones["node gone"] - r.milestones["scaled to zero"] >= 20  # consolidateAfter
        assert r.instance_type == "c7a.medium" and r.nodeclaim and r.node and r.gone_outcome == \
            "removed by consolidation"
    assert fake.namespaces == {} and fake.nodes == {} and fake.nodeclaims == {}
    assert result.cleanup == [f"deleted namespace {result.plan.namespace}"]


STALLS = {
    "NodeClaim created": (
        Behaviour(stall="nodeclaim", events=[("Pod", "FailedScheduling", 'Failed to schedule pod, incompatible with '
                                               'nodepool "general", no instance type satisfied resources')]),
        SmokeTimeouts(nodeclaim=15), ["FailedScheduling", "no instance type satisfied",
                                      "hint: Karpenter found no instance type"]),
    "NodeClaim launched": (
        Behaviour(stall="launched", claim_conditions=[{
            "type": "Launched", "status": "False", "reason": "InsufficientCapacityError",
            "message": "creating instance, insufficient capacity, InsufficientInstanceCapacity: We currently do "
                       "not have sufficient c7a.medium capacity"}],
            events=[("NodeClaim", "InsufficientCapacityError", "NodeClaim event: insufficient capacity")]),
        SmokeTimeouts(launched=15), ["Launched=False InsufficientCapacityError", "hint: EC2 had no capacity",
                                     "event NodeClaim/general-"]),
    "node Ready": (
        Behaviour(stall="ready", claim_conditions=[
            {"type": "Registered", "status": "Unknown", "reason": "NodeNotFound",
             "message": "Node not registered with cluster"}]),
        SmokeTimeouts(ready=15), ["Registered=Unknown NodeNotFound: Node not registered with cluster"]),
    "pod Running": (
        Behaviour(stall="running", events=[("Pod", "FailedCreatePodSandBox", "failed to set up sandbox")]),
        SmokeTimeouts(running=15), ["FailedCreatePodSandBox"]),
    "node gone": (
        Behaviour(stall="gone"), SmokeTimeouts(gone=15), ["still there 15s after consolidateAfter (20s)"]),
}


@pytest.mark.parametrize("milestone", list(STALLS))
def test_a_stalled_phase_fails_its_pool_and_says_why(milestone: str) -> None:
    behaviour, timeouts, expected = STALLS[milestone]
    fake = FakeCluster(live_pools(), {"general": behaviour})
    with fake.serving() as url:
        result = run(fake, api_for(url), fast(timeouts), ("general", "critical"))
    general, critical = result.pools
    assert not result.ok and critical.ok  # one pool's failure does not stop the others
    assert general.status == "failed" and general.phase == milestone
    assert list(general.milestones) == list(MILESTONES[:MILESTONES.index(milestone)])
    text = "\n".join([general.error or "", *general.diagnostics])
    for needle in expected:
        assert needle in text
    assert fake.namespaces == {}


@pytest.mark.parametrize(("message", "hint"), [
    ("UnauthorizedOperation: You are not authorized to perform: ec2:RunInstances", "IAM role lacks a permission"),
    ("creating launch template, InvalidParameterValue: bad AMI", "launch template was refused"),
])
def test_launch_errors_get_a_hint(message: str, hint: str) -> None:
    behaviour = Behaviour(stall="launched", claim_conditions=[
        {"type": "Launched", "status": "False", "reason": "LaunchFailed", "message": message}])
    fake = FakeCluster(live_pools(), {"arm64": behaviour})
    with fake.serving() as url:
        result = run(fake, api_for(url), fast(SmokeTimeouts(launched=15)), ("arm64",))
    (r,) = result.pools
    assert r.phase == "NodeClaim launched" and any(message in d for d in r.diagnostics)
    assert any(hint in d for d in r.diagnostics)


def test_consolidation_disabled_is_reported_and_the_test_node_removed() -> None:
    fake = FakeCluster(live_pools(consolidate_after="Never"))
    with fake.serving() as url:
        result = run(fake, api_for(url), fast(), ("general",))
    (r,) = result.pools
    assert r.ok and r.gone_outcome == "consolidation disabled" and "node gone" not in r.milestones
    assert any(f"deleted NodeClaim {r.nodeclaim}" in n for n in r.notes)
    assert fake.nodeclaims == {} and fake.nodes == {}


def test_consolidation_disabled_with_keep_nodes_leaves_the_node() -> None:
    fake = FakeCluster(live_pools(consolidate_after="Never"))
    with fake.serving() as url:
        settings = fast()
        settings.remove_kept_nodes = False
        (r,) = run(fake, api_for(url), settings, ("general",)).pools
    assert r.ok and list(fake.nodes) == [r.node]


def test_budget_blocking_now_is_reported_instead_of_waiting() -> None:
    pools = live_pools()
    pools[0]["spec"]["disruption"]["budgets"] = [{"nodes": "0", "schedule": "0 8 * * mon-fri", "duration": "10h"}]
    fake = FakeCluster(pools)
    with fake.serving() as url:
        (r,) = run(fake, api_for(url), fast(SmokeTimeouts(gone=15), now=MONDAY_9), ("general",)).pools
        assert r.ok and r.gone_outcome == "blocked by a budget"
        assert "window '0 8 * * mon-fri' for 10h is open now" in " ".join(r.notes)
        # Outside the window the same pool is consolidated as usual.
        fake.now = lambda: SUNDAY_9
        (r,) = run(fake, api_for(url), fast(now=SUNDAY_9), ("general",)).pools
        assert r.ok and r.gone_outcome == "removed by consolidation"


def test_the_pod_is_sized_above_the_free_room_of_the_pools_existing_nodes_and_fails_if_it_lands_there() -> None:
    fake = FakeCluster(live_pools(), {"general": Behaviour(bind_existing="ip-10-9-9-9.ec2.internal")})
    fake.add_node("ip-10-9-9-9.ec2.internal", "general", cpu="3920m")  # a busy node, 1000m requested on it
    fake.pods[("team", "app-0")] = {"metadata": {"name": "app-0", "namespace": "team", "labels": {}},
                                    "spec": {"nodeName": "ip-10-9-9-9.ec2.internal", "nodeSelector": {
                                        "karpenter.sh/nodepool": "general"},
                                        "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
                                    "status": {"phase": "Running"}}
    fake.add_claim("general-old", "general")
    with fake.serving() as url:
        (r,) = run(fake, api_for(url), fast(SmokeTimeouts(nodeclaim=15)), ("general",)).pools
    requests = r.deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert r.plan.cpu_millis > 2920 and requests["cpu"] == f"{r.plan.cpu_millis}m"
    assert r.plan.instance_type.cpu_millis - 250 >= r.plan.cpu_millis  # still fits the type it was sized for
    assert any("sized up to" in n and "2920m free" in n for n in r.notes)
    assert "affinity" not in r.deployment["spec"]["template"]["spec"]  # Karpenter ignores hostname affinities
    # Should it land there anyway (the simulated scheduler ignores requests), the pool fails with the reason.
    assert r.phase == "NodeClaim created" and "scheduled on existing node ip-10-9-9-9" in (r.error or "")
    assert "general-old" in r.existing_claims


def test_sizing_above_free_room_stays_within_the_pools_types() -> None:
    plan = plan_smoke("prod", pools_of("prod"), ("critical",), run_id="r1").pools[0]
    assert sized_above(plan, 100) is plan
    bigger = sized_above(plan, 5000)
    assert bigger is not None and bigger.cpu_millis > 5000 and bigger.arch == plan.arch
    pool, node_class = next(p for p in pools_of("prod") if p[0]["metadata"]["name"] == "critical")
    assert unschedulable_reasons(bigger.pod_spec, pool, node_class) == []
    assert sized_above(plan, 10_000_000) is None


def test_a_claim_deleted_after_insufficient_capacity_is_followed_by_the_retry() -> None:
    fake = FakeCluster(live_pools(), {"general": Behaviour(ice_first=True)})
    with fake.serving() as url:
        (r,) = run(fake, api_for(url), fast(), ("general",)).pools
    assert r.ok and list(r.milestones) == list(MILESTONES)
    (note,) = [n for n in r.notes if "deleted before it launched" in n]
    assert "Launched=False InsufficientCapacityError: InsufficientInstanceCapacity" in note
    assert r.nodeclaim not in note


def test_another_workloads_new_claim_is_not_taken_for_the_pods() -> None:
    fake = FakeCluster(live_pools(), {"general": Behaviour(decoy=True)})
    with fake.serving() as url:
        (r,) = run(fake, api_for(url), fast(), ("general",)).pools
    assert r.ok and r.nodeclaim != "general-decoy"
    # Picked first (alone) and dropped once the pod's nomination named the real one, or never picked.
    assert all("not general-decoy" in n for n in r.notes if "nominated" in n)
    assert "general-decoy" in fake.nodeclaims  # not ours: left alone


def test_a_node_other_pods_moved_onto_is_reported_not_failed() -> None:
    fake = FakeCluster(live_pools(), {"general": Behaviour(squatter=True)})
    with fake.serving() as url:
        (r,) = run(fake, api_for(url), fast(SmokeTimeouts(gone=15)), ("general",)).pools
    assert r.ok and r.gone_outcome == "kept: runs other pods" and "node gone" not in r.milestones
    assert any("team/app-1" in n for n in r.notes) and r.node in fake.nodes


def test_consolidation_disabled_keeps_a_node_other_pods_moved_onto() -> None:
    fake = FakeCluster(live_pools(consolidate_after="Never"), {"general": Behaviour(squatter=True)})
    with fake.serving() as url:
        (r,) = run(fake, api_for(url), fast(), ("general",)).pools
    assert r.ok and r.gone_outcome == "consolidation disabled" and r.node in fake.nodes
    assert any(f"node {r.node} kept: it now runs team/app-1" in n for n in r.notes)


def test_missing_nodepool_fails_that_pool(cluster: Any) -> None:
    fake, api = cluster
    del fake.nodepools["arm64"]
    result = run(fake, api, fast(), ("arm64",))
    (r,) = result.pools
    assert r.status == "failed" and "does not exist in the cluster" in (r.error or "")
    assert r.phase == "pod created" and fake.namespaces == {}


def test_a_few_failed_polls_are_retried_and_a_dead_server_ends_the_run_cleanly(cluster: Any) -> None:
    fake, api = cluster
    original, calls = api.list_nodeclaims, {"n": 0}

    def flaky(label_selector: str = "") -> list[dict[str, Any]]:
        calls["n"] += 1
        if calls["n"] in (3, 4):  # two polls in a row fail
            raise KubeError("HTTP 503: etcdserver: leader changed")
        return original(label_selector)

    api.list_nodeclaims = flaky  # type: ignore[method-assign]
    (r,) = run(fake, api, fast(), ("general",)).pools
    assert r.ok
    calls["n"] = 0

    def dies(label_selector: str = "") -> list[dict[str, Any]]:
        calls["n"] += 1
        if calls["n"] > 1:  # after the preflight: the namespace exists by then
            raise KubeError("HTTP 503")
        return original(label_selector)

    api.list_nodeclaims = dies  # type: ignore[method-assign]
    with pytest.raises(KubeError):
        run(fake, api, fast(), ("general",))
    assert calls["n"] == 1 + 5 and fake.namespaces == {}  # five polls, then cleaned up all the same
    assert any(w.endswith("deleted") and w.startswith("namespace") for _, w in fake.history)


def interrupt_when(fake: FakeCluster, condition: Any) -> Settings:
    settings = fast()

    def sleep(seconds: float) -> None:
        if condition(fake):
            raise KeyboardInterrupt
        time.sleep(seconds / SCALE)

    settings.sleep = sleep
    return settings


def test_interruption_deletes_the_namespace_and_exits_130() -> None:
    fake = FakeCluster(live_pools())
    with fake.serving() as url:
        settings = interrupt_when(fake, lambda f: bool(f.nodeclaims))
        code, out, _ = run_cli(["smoke", "--stack", "prod", "--pool", "general"],
                               api_factory=lambda _: api_for(url), settings=settings)
    assert code == 130
    assert fake.namespaces == {} and any(w.startswith("namespace eks-karpenter-smoke-") and w.endswith("deleted")
                                         for _, w in fake.history)
    assert "interrupted" in out and "deleted namespace eks-karpenter-smoke-" in out


def test_cleanup_removes_only_namespaces_of_earlier_runs(cluster: Any) -> None:
    fake, api = cluster
    for name, labels in (("eks-karpenter-smoke-a", {RUN_LABEL: "a"}), ("eks-karpenter-smoke-b", {RUN_LABEL: "b"}),
                         ("team-batch", {})):
        fake.namespaces[name] = {"metadata": {"name": name, "labels": labels}}
    code, out, err = run_cli(["smoke", "--stack", "prod", "--cleanup"], api_factory=lambda _: api)
    assert code == 0 and out == ""
    assert list(fake.namespaces) == ["team-batch"]
    assert "deleted 2 namespace(s)" in err and "eks-karpenter-smoke-a" in err


def test_exit_codes_and_formats() -> None:
    fake = FakeCluster(live_pools(), {"arm64": Behaviour(stall="nodeclaim")})
    with fake.serving() as url:
        factory = {"api_factory": lambda _: api_for(url)}
        code, out, _ = run_cli(["smoke", "--stack", "prod", "--pool", "general"], settings=fast(), **factory)
        assert code == 0 and "pool general: ok" in out and "1/1 pools passed" in out
        for phase in ("pod created", "NodeClaim created", "NodeClaim launched", "node Ready", "pod Running",
                      "node gone"):
            assert phase in out
        code, out, _ = run_cli(["smoke", "--stack", "prod", "--pool", "arm64", "--format", "json"],
                               settings=fast(SmokeTimeouts(nodeclaim=15)), **factory)
        doc = json.loads(out)
        assert code == 1 and doc["ok"] is False and doc["pools"][0]["failedPhase"] == "NodeClaim created"
        code, out, _ = run_cli(["smoke", "--stack", "prod", "--format", "markdown", "--pool", "general"],
                               settings=fast(), **factory)
        assert code == 0 and out.startswith("### ✅ Smoke test: `prod`") and "| pod Running |" in out


def test_timeouts_come_from_flags() -> None:
    args = _parser().parse_args(["smoke", "--stack", "dev", "--timeout-launched", "240", "--timeout-gone", "600"])
    assert (args.timeout_launched, args.timeout_gone, args.timeout_ready) == (240.0, 600.0, None)
    with pytest.raises(UsageError, match="--timeout-ready: expected a positive number of seconds"):
        _parser().parse_args(["smoke", "--stack", "dev", "--timeout-ready", "-5"])
    assert SmokeTimeouts().model_dump() == {"nodeclaim": 60, "launched": 180, "ready": 300, "running": 120,
                                            "gone": 300}


def test_kubeconfig_dict_reaches_the_server(cluster: Any) -> None:
    fake, _ = cluster
    fake.namespaces["x"] = {"metadata": {"name": "x", "labels": {RUN_LABEL: "x"}}}
    server = f"http://127.0.0.1:{fake.port}"
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
                  "clusters": [{"name": "k", "cluster": {"server": server}}],
                  "users": [{"name": "u", "user": {"token": "t"}}],
                  "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}
    api = KubeApi.from_kubeconfig(kubeconfig)
    assert [n["metadata"]["name"] for n in api.list_namespaces(RUN_LABEL)] == ["x"]


def test_unreachable_server_and_missing_client_are_clean_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    api = api_for("http://127.0.0.1:9")  # discard port: nothing listens
    api.api_client.configuration.retries = 0
    with pytest.raises(KubeError, match="cannot reach the Kubernetes API"):
        api.list_namespaces(RUN_LABEL)
    monkeypatch.setitem(__import__("sys").modules, "kubernetes", None)
    with pytest.raises(KubeError, match=r"the `kubernetes` package is missing: it is a dependency of eks-karpenter"):
        KubeApi.from_file(None)


def test_sigterm_cleans_up_like_ctrl_c() -> None:
    import os
    import signal

    from eks_karpenter.tools.smoke.cli import _sigterm_interrupts

    with pytest.raises(KeyboardInterrupt), _sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_deploy_workflow_smoke_tests_each_stack_right_after_its_up() -> None:
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / "deploy.yml").read_text())["jobs"]
    smoked = set()
    for job in jobs.values():
        names = [str(s.get("uses", "")) + s.get("run", "") for s in job["steps"]]
        up = next((i for i, n in enumerate(names) if n.startswith("pulumi/actions@")), None)
        if up is None:
            continue
        stack = job["steps"][up]["with"]["stack-name"]
        smoke = job["steps"][up + 1]
        assert smoke["run"].startswith(f".venv/bin/python -m infra smoke --stack {stack} --format markdown")
        assert smoke["shell"] == "bash" and '| tee -a "$GITHUB_STEP_SUMMARY"' in smoke["run"]
        assert smoke["env"]["PULUMI_CONFIG_PASSPHRASE"]  # --show-secrets decrypts the kubeconfig output
        smoked.add(stack)
    assert smoked == set(STACKS)


def test_readme_sample_table_is_what_the_report_prints() -> None:
    from eks_karpenter.tools.smoke.report import render_text
    from eks_karpenter.tools.smoke.runner import PoolResult

    plan = plan_smoke("dev", pools_of("dev"), run_id="20261123-104500-3f9a1c")
    (p,) = plan.pools
    r = PoolResult(p.pool, p, status="ok", pod="smoke-general-7d9f8c6b5-x2x4q", nodeclaim="general-8k2lw",
                   node="ip-10-20-34-117.eu-west-1.compute.internal", instance_type="c7a.medium", capacity_type="spot",
                   zone="eu-west-1b", gone_outcome="removed by consolidation")
    r.milestones = {"pod created": 2, "NodeClaim created": 4, "NodeClaim launched": 8, "node Ready": 57,
                    "pod Running": 80, "scaled to zero": 80, "node gone": 142}
    result = SmokeResult(plan, [r], datetime(2026, 11, 23, 10, 45, tzinfo=UTC),
                         "https://0C1F3D5E7A9B.gr7.eu-west-1.eks.amazonaws.com",
                         cleanup=[f"deleted namespace {plan.namespace}"])
    assert f"```\n{render_text(result)}```" in (REPO / "docs" / "real-path.md").read_text()


def test_kubeconfig_comes_from_the_stacks_output_through_the_pulumi_cli(
        cluster: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_karpenter.tools.smoke.cli import connect

    fake, _ = cluster
    fake.namespaces["left"] = {"metadata": {"name": "left", "labels": {RUN_LABEL: "old"}}}
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
                  "clusters": [{"name": "k", "cluster": {"server": f"http://127.0.0.1:{fake.port}"}}],
                  "users": [{"name": "u", "user": {"token": "t"}}],
                  "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}
    # pulumi-eks exports the kubeconfig as JSON text, so `--json` prints a JSON string.
    script = tmp_path / "pulumi"
    script.write_text("#!/bin/sh\n" f"echo \"$*\" > {tmp_path}/args\n"
                      f"cat <<'EOF'\n{json.dumps(json.dumps(kubeconfig))}\nEOF\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    args = _parser().parse_args(["smoke", "--stack", "dev", "--cleanup"])
    assert [n["metadata"]["name"] for n in connect(args).list_namespaces(RUN_LABEL)] == ["left"]
    assert (tmp_path / "args").read_text().split() == ["stack", "output", "--json", "--show-secrets", "kubeconfig",
                                                       "--stack", "dev"]
    monkeypatch.setenv("PATH", "/nonexistent")
    code, out, err = run_cli(["smoke", "--stack", "dev", "--cleanup"])
    assert code == 1 and out == "" and "pass --kubeconfig FILE or --context NAME" in err


def test_states_are_enums_whose_values_the_report_keeps() -> None:
    from eks_karpenter.tools.smoke.runner import MILESTONES, Milestone, Status

    assert [str(m) for m in MILESTONES] == ["pod created", "NodeClaim created", "NodeClaim launched", "node Ready",
                                            "pod Running", "scaled to zero", "node gone"]
    assert json.dumps({"status": Status.FAILED, "phase": Milestone.NODE_READY}) == \
        '{"status": "failed", "phase": "node Ready"}'
