"""The destroy guard: refused while foreign NodeClaims or cloud load balancers exist, and this stack's pools drained
before the controller goes; checked through the real Kubernetes client against the fake API server, and on the
plan (the hooks are bound where destroy reaches them first)."""

from __future__ import annotations

from collections.abc import Iterator

import kubernetes
import pytest
from eks_karpenter.platform.karpenter.teardown import TeardownRefused, blockers, check, drain
from eks_karpenter.platform.karpenter.teardown_hooks import CHECK_HOOK, DRAIN_HOOK, GUARD_CONFIGMAP, _seconds
from eks_karpenter.platform.kube import KubeApi

from tests.support import plan_stack
from tests.support.fake_kube import FakeCluster

OWN = {"general", "critical"}


def pool(name: str) -> dict[str, object]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": {}}


@pytest.fixture
def fake() -> Iterator[tuple[FakeCluster, KubeApi]]:
    cluster = FakeCluster([pool("general"), pool("critical"), pool("batch-spot")])
    with cluster.serving() as url:
        config = kubernetes.client.Configuration()
        config.host = url
        yield cluster, KubeApi(kubernetes.client.ApiClient(config))


def test_a_clean_cluster_passes(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("general-abc", "general")
    cluster.add_service("web", "frontend")  # ClusterIP: no load balancer
    cluster.add_ingress("web", "internal", class_name="nginx")  # no cloud LB reported
    check(api, OWN, "prod-karpenter")


def test_a_load_balancer_service_is_refused_with_the_command(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_service("web", "frontend", type_="LoadBalancer")
    with pytest.raises(TeardownRefused) as refused:
        check(api, OWN, "prod-karpenter")
    message = str(refused.value)
    assert "Service web/frontend" in message
    assert "kubectl delete service -n web frontend" in message
    assert "pulumi destroy --run-program" in message and "aws eks update-kubeconfig --name prod-karpenter" in message


def test_ingresses_with_a_cloud_load_balancer_are_refused(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_ingress("web", "public", hostname="k8s-web-public-123.us-east-1.elb.amazonaws.com")
    cluster.add_ingress("shop", "alb", class_name="alb")  # the ALB controller makes one before status says so
    found = blockers(api, OWN)
    assert [(b.kind, b.namespace, b.name) for b in found] == [("Ingress", "web", "public"),
                                                              ("Ingress", "shop", "alb")]
    assert found[0].command == "kubectl delete ingress -n web public"


def test_a_foreign_nodeclaim_is_refused(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("batch-spot-xyz", "batch-spot")  # a consumer stack's pool (examples/team-batch)
    with pytest.raises(TeardownRefused) as refused:
        check(api, OWN, "prod-karpenter")
    assert "NodeClaim batch-spot-xyz" in str(refused.value)
    assert "kubectl delete nodepool batch-spot" in str(refused.value)


def test_namespaces_limit_the_load_balancer_search(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_service("web", "frontend", type_="LoadBalancer")
    assert blockers(api, OWN, namespaces=["batch"]) == []
    assert len(blockers(api, OWN, namespaces=["web"])) == 1


def test_drain_deletes_own_pools_and_waits_for_their_nodeclaims(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("general-a", "general")
    cluster.add_claim("critical-b", "critical")
    drain(api, OWN, "prod-karpenter", timeout=5, poll=0.01)
    assert not cluster.nodeclaims
    assert cluster.deleted_pools == OWN
    assert "batch-spot" in cluster.nodepools  # not this stack's


def test_drain_refuses_when_nodeclaims_do_not_go(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("general-a", "general")
    cluster.stuck_claims.add("general-a")  # a PodDisruptionBudget blocks the drain
    with pytest.raises(TeardownRefused) as refused:
        drain(api, OWN, "prod-karpenter", timeout=0.2, poll=0.01)
    assert "general-a" in str(refused.value) and "kubectl describe nodeclaim" in str(refused.value)


def test_durations() -> None:
    assert _seconds("10m") == 600 and _seconds("1h30m") == 5400 and _seconds("90s") == 90
    with pytest.raises(ValueError):
        _seconds("ten minutes")


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_binds_the_check_before_pools_and_classes_and_the_drain_to_the_controller(stack: str) -> None:
    doc = plan_stack(stack)
    guard = doc.get("kubernetes:core/v1:ConfigMap", "destroy-guard")
    assert guard.inputs["metadata"]["name"] == GUARD_CONFIGMAP
    assert guard.options["hooks"] == {"beforeDelete": [CHECK_HOOK]}
    # Destroy deletes dependents first: depending on every pool and class, the guard goes (and checks) before them.
    karpenter_objects = {r.urn for r in doc.resources
                         if r.type in ("kubernetes:karpenter.sh/v1:NodePool",
                                       "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")}
    assert karpenter_objects and karpenter_objects <= set(guard.options["dependsOn"])
    controller = doc.get("kubernetes:helm.sh/v3:Release", "karpenter-controller")
    assert controller.options["hooks"] == {"beforeDelete": [DRAIN_HOOK]}


def test_the_hooks_run_the_check_and_the_drain(fake: tuple[FakeCluster, KubeApi],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi
    from eks_karpenter.platform.karpenter.teardown_hooks import TeardownHooks

    cluster, api = fake
    hooks = object.__new__(TeardownHooks)  # without a Pulumi runtime: the callbacks only, not their registration
    hooks.cluster, hooks.own_pools, hooks.drain_timeout, hooks._access = "prod-karpenter", frozenset(OWN), 5.0, None
    monkeypatch.setattr(hooks, "_api", lambda: api)
    args = pulumi.ResourceHookArgs(urn="urn:x", id="x", name="x", type="t")
    cluster.add_claim("general-a", "general")
    cluster.add_service("web", "frontend", type_="LoadBalancer")
    with pytest.raises(TeardownRefused):
        hooks._check(args)
    with pytest.raises(TeardownRefused):
        hooks._drain(args)  # refuses before deleting a single pool
    assert not cluster.deleted_pools
    cluster.services.clear()
    hooks._check(args)
    hooks._drain(args)
    assert cluster.deleted_pools == OWN and not cluster.nodeclaims
