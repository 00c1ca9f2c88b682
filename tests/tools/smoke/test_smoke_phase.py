"""`smoke --phase`: the cluster checked against what a migration phase expects, on the fake API server."""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from eks_karpenter.platform.kube import KubeApi
from eks_karpenter.platform.migration.plan import OPT_IN_TAINT
from eks_karpenter.tools.cli import _parser
from eks_karpenter.tools.smoke.cli import _stack_config, cmd_smoke
from eks_karpenter.tools.smoke.phase import Expectation, PhaseCheckError, check_phase, expectation
from eks_karpenter.tools.smoke.plan import rendered_pools

from tests.support import stack_config
from tests.support.fake_kube import FakeCluster

kubernetes = pytest.importorskip("kubernetes")

CA = ("kube-system", "cluster-autoscaler-aws-cluster-autoscaler")
NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def live_pools(phase: int, ready: bool = True) -> list[dict[str, Any]]:
    pools = []
    for pool, _ in rendered_pools(_stack_config("brownfield")):
        pool = copy.deepcopy(pool)
        spec = pool["spec"]["template"]["spec"]
        # the pool as the phase's `pulumi up` left it: tainted for opted-in pods in phase 1 only
        spec.pop("taints", None)
        if phase == 1:
            spec["taints"] = [OPT_IN_TAINT.dump()]
        pool["status"] = {"conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                          "message": "EC2NodeClass default not ready"}]}
        pools.append(pool)
    return pools


def api_for(url: str) -> KubeApi:
    config = kubernetes.client.Configuration()
    config.host = url
    return KubeApi(kubernetes.client.ApiClient(config))


def run(fake: FakeCluster, want: Expectation) -> dict[str, tuple[bool, str]]:
    with fake.serving() as url:
        return {c.name: (c.ok, c.detail) for c in check_phase(api_for(url), want, NOW)}


def want(phase: int | None = None, **migration: Any) -> Expectation:
    cfg = _stack_config("brownfield")
    if migration:
        cfg = cfg.model_copy(update={"migration": cfg.migration.model_copy(update=migration)})
    return expectation(cfg, phase)


def test_phase_1_cluster_as_expected() -> None:
    fake = FakeCluster(live_pools(1))
    fake.add_deployment(*CA, replicas=1)
    fake.add_pending_pod("web", "fresh", NOW - timedelta(minutes=1))
    assert run(fake, want(1)) == {
        f"cluster-autoscaler {CA[0]}/{CA[1]}": (True, "1 replicas"),
        "nodepool default": (True, "Ready, opted-in pods only"),
        "pending pods": (True, "none older than 300s"),
    }


def test_phase_2_fails_while_cluster_autoscaler_still_runs() -> None:
    fake = FakeCluster(live_pools(2))
    fake.add_deployment(*CA, replicas=1)
    checks = run(fake, want(2))
    assert checks[f"cluster-autoscaler {CA[0]}/{CA[1]}"] == (False, "set to 1 replicas, phase 2 expects 0")
    assert checks["nodepool default"] == (True, "Ready")


def test_a_pool_still_tainted_means_the_phase_is_not_applied() -> None:
    fake = FakeCluster(live_pools(1))
    fake.add_deployment(*CA, replicas=0)
    assert run(fake, want(2))["nodepool default"] == (
        False, "phase 2 expects the pool to take every pod (no migration taint)")


def test_a_pool_that_is_not_ready_fails() -> None:
    fake = FakeCluster(live_pools(2, ready=False))
    fake.add_deployment(*CA, replicas=0)
    assert run(fake, want(2))["nodepool default"] == (False, "not Ready: EC2NodeClass default not ready")


def test_cluster_autoscaler_not_ready_in_phase_1() -> None:
    fake = FakeCluster(live_pools(1))
    fake.add_deployment(*CA, replicas=1, ready=0)
    assert run(fake, want(1))[f"cluster-autoscaler {CA[0]}/{CA[1]}"] == (False, "0 of 1 replicas ready")


def test_old_pending_pods_fail_the_check_by_name() -> None:
    fake = FakeCluster(live_pools(2))
    fake.add_deployment(*CA, replicas=0)
    fake.add_pending_pod("web", "stuck", NOW - timedelta(minutes=12))
    fake.add_pending_pod("web", "fresh", NOW - timedelta(minutes=2))
    assert run(fake, want(2))["pending pods"] == (False, "1 Pending longer than 300s: web/stuck (12m)")
    assert run(fake, want(2, pending_pods_max_age="15m"))["pending pods"][0] is True


def test_phase_3_checks_the_drained_groups() -> None:
    groups = [g.model_copy(update={"drain_to": 1}) for g in _stack_config("brownfield").migration.node_groups]
    fake = FakeCluster(live_pools(3))
    fake.add_deployment(*CA, replicas=0)
    fake.add_group_node("ip-10-0-1-1", "spot-4vcpu-16gb")
    fake.add_group_node("ip-10-0-1-2", "spot-4vcpu-16gb")
    fake.add_group_node("ip-10-0-2-1", "spot-8vcpu-32gb")
    checks = run(fake, want(3, node_groups=groups))
    assert checks["nodegroup spot-4vcpu-16gb"] == (False, "2 nodes, expected at most 1 (still draining?)")
    assert checks["nodegroup spot-8vcpu-32gb"] == (True, "1 nodes")


def test_in_phase_1_the_smoke_tests_pods_opt_in_to_the_pools() -> None:
    from eks_karpenter.tools.smoke.plan import plan_smoke

    cfg = _stack_config("brownfield")
    assert cfg.migration is not None and cfg.migration.phase == 1
    [pool] = plan_smoke("brownfield", rendered_pools(cfg), []).pools
    tolerations = pool.deployment["spec"]["template"]["spec"]["tolerations"]
    assert {**OPT_IN_TAINT.dump(), "operator": "Equal"} in tolerations
    later = cfg.model_copy(update={"migration": cfg.migration.model_copy(update={"phase": 2})})
    [pool] = plan_smoke("brownfield", rendered_pools(later), []).pools
    assert "tolerations" not in pool.deployment["spec"]["template"]["spec"]


def test_expectations_come_from_the_stack_file() -> None:
    assert (want(1).autoscaler_replicas, want(2).autoscaler_replicas, want(4).autoscaler_replicas) == (1, 0, 0)
    assert want().phase == stack_config("brownfield")["eks-karpenter:migration"]["phase"]
    deleted = [g.model_copy(update={"after_migration": "delete"})
               for g in _stack_config("brownfield").migration.node_groups]
    assert want(4, node_groups=deleted).node_group_nodes == {"spot-4vcpu-16gb": 0, "spot-8vcpu-32gb": 0}
    assert want(4).node_group_nodes == {}  # handed back: no longer this stack's to check


def test_a_stack_without_migration_cannot_be_checked() -> None:
    cfg = _stack_config("dev")
    with pytest.raises(PhaseCheckError, match="no eks-karpenter:migration section"):
        expectation(cfg)
    with pytest.raises(PhaseCheckError, match="--phase 7: the phases are 1 to 4"):
        expectation(_stack_config("brownfield"), 7)


def test_cli_phase_defaults_to_the_stacks_phase_and_exits_1_on_failure() -> None:
    fake = FakeCluster(live_pools(1))
    fake.add_deployment(*CA, replicas=1)
    with fake.serving() as url:
        api = api_for(url)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            ok = cmd_smoke(_parser().parse_args(["smoke", "--stack", "brownfield", "--phase"]),
                           api_factory=lambda _: api)
            failed = cmd_smoke(_parser().parse_args(["smoke", "--stack", "brownfield", "--phase", "2",
                                                     "--format", "json"]), api_factory=lambda _: api)
    text, report = out.getvalue().split("\n", 4)[:4], out.getvalue()
    assert ok == 0 and failed == 1
    assert text[0] == "migration phase 1 of stack brownfield:"
    body = json.loads(report[report.index("{"):])
    assert body["phase"] == 2 and body["ok"] is False
    assert [c["name"] for c in body["checks"] if not c["ok"]] == [f"cluster-autoscaler {CA[0]}/{CA[1]}",
                                                                  "nodepool default"]
