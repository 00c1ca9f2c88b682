"""The destroy guard: refused while this stack's destroy would strand something (foreign NodeClaims; on a cluster
it created, cloud load balancers), told what it would leak before anything goes, and this stack's pools drained
before the controller goes; only ever on the stack's own cluster. Checked through the real Kubernetes client
against the fake API server, and on the plan (the hooks are bound where destroy reaches them first)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import kubernetes
import pulumi
import pytest
from eks_karpenter.platform.build import _teardown_scope
from eks_karpenter.platform.cluster_access import ClusterAccess
from eks_karpenter.platform.karpenter.teardown import Scope, TeardownRefused, blockers, check, drain, leaks
from eks_karpenter.platform.karpenter.teardown_hooks import (
    CHECK_HOOK,
    DRAIN_HOOK,
    GUARD_CONFIGMAP,
    TeardownHooks,
    _seconds,
)
from eks_karpenter.platform.kube import KubeApi, KubeError
from eks_karpenter.platform.release_owner import HOOK as OWNER_HOOK
from eks_karpenter.platform.stack_cluster import ClusterIdentity, StackCluster, cluster_mismatch
from eks_karpenter.tools.project import ProgramProject, validated_stack_config

from tests.support import REPO, plan_stack
from tests.support.fake_kube import FakeCluster, TlsFiles, self_signed

OWN = frozenset({"general", "critical"})
CREATED = Scope("prod-karpenter", OWN, created_cluster=True, deleted_namespaces=frozenset({"karpenter"}),
                control_plane_log_group="/aws/eks/prod-karpenter/cluster")
ADOPTED = Scope("legacy-cas", OWN, created_cluster=False, deleted_namespaces=frozenset({"karpenter"}))
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBstackcluster\n-----END CERTIFICATE-----"
OTHER_CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBothercluster\n-----END CERTIFICATE-----"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[TlsFiles, TlsFiles]:
    """Two clusters' certificates: the stack's, and another cluster's."""
    folder = tmp_path_factory.mktemp("certs")
    pair = self_signed(folder, "stack"), self_signed(folder, "other")
    if pair[0] is None or pair[1] is None:
        pytest.skip("needs the openssl command to make the fake API server's TLS certificates")
    return pair[0], pair[1]


def pool(name: str) -> dict[str, object]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": {}}


@pytest.fixture
def fake() -> Iterator[tuple[FakeCluster, KubeApi]]:
    cluster = FakeCluster([pool("general"), pool("critical"), pool("batch-spot")])
    with cluster.serving() as url:
        config = kubernetes.client.Configuration()
        config.host = url
        yield cluster, KubeApi(kubernetes.client.ApiClient(config))


def with_other_workloads(cluster: FakeCluster) -> None:
    """An adopted cluster's own life: node group nodes, workloads, load balancers and ingresses, volumes."""
    cluster.add_group_node("ip-10-0-0-1.ec2.internal", "core")
    cluster.add_deployment("shop", "web", replicas=3)
    cluster.add_service("shop", "web", type_="LoadBalancer")
    cluster.add_ingress("shop", "public", hostname="k8s-shop-public-123.us-west-2.elb.amazonaws.com")
    cluster.add_ingress("shop", "alb", class_name="alb")
    cluster.add_persistent_volume("pvc-db", ("shop", "data-db-0"), policy="Retain", ebs_volume="vol-0db")
    cluster.add_persistent_volume("pvc-cache", ("shop", "cache"), ebs_volume="vol-0cache")


# --- what a destroy would strand ------------------------------------------------------------------------------

def test_a_clean_cluster_passes(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("general-abc", "general")
    cluster.add_service("web", "frontend")  # ClusterIP: no load balancer
    cluster.add_ingress("web", "internal", class_name="nginx")  # no cloud LB reported
    check(api, CREATED)


def test_a_load_balancer_service_on_a_created_cluster_is_refused_with_the_command(
        fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_service("web", "frontend", type_="LoadBalancer")
    with pytest.raises(TeardownRefused) as refused:
        check(api, CREATED)
    message = str(refused.value)
    assert "Service web/frontend" in message
    assert "kubectl delete service -n web frontend" in message
    assert "pulumi destroy --run-program" in message and "aws eks update-kubeconfig --name prod-karpenter" in message


def test_ingresses_with_a_cloud_load_balancer_on_a_created_cluster_are_refused(
        fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_ingress("web", "public", hostname="k8s-web-public-123.us-east-1.elb.amazonaws.com")
    cluster.add_ingress("shop", "alb", class_name="alb")  # the ALB controller makes one before status says so
    found = blockers(api, CREATED)
    assert [(b.kind, b.namespace, b.name) for b in found] == [("Ingress", "web", "public"),
                                                              ("Ingress", "shop", "alb")]
    assert found[0].command == "kubectl delete ingress -n web public"


def test_an_adopted_clusters_load_balancers_are_its_own(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    with_other_workloads(cluster)
    assert blockers(api, ADOPTED) == []
    assert {b.kind for b in blockers(api, CREATED)} == {"Service", "Ingress"}


@pytest.mark.parametrize("scope", [CREATED, ADOPTED], ids=["created", "adopted"])
def test_a_foreign_nodeclaim_the_stacks_controller_serves_is_refused(fake: tuple[FakeCluster, KubeApi],
                                                                     scope: Scope) -> None:
    cluster, api = fake
    cluster.add_claim("batch-spot-xyz", "batch-spot")  # a consumer stack's pool (examples/team-batch)
    with pytest.raises(TeardownRefused) as refused:
        check(api, scope)
    assert "NodeClaim batch-spot-xyz" in str(refused.value)
    assert "kubectl delete nodepool batch-spot" in str(refused.value)


def test_drain_deletes_own_pools_and_waits_for_their_nodeclaims(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("general-a", "general")
    cluster.add_claim("critical-b", "critical")
    drain(api, CREATED, timeout=5, poll=0.01)
    assert not cluster.nodeclaims
    assert cluster.deleted_pools == OWN
    assert "batch-spot" in cluster.nodepools  # not this stack's


def test_drain_refuses_when_nodeclaims_do_not_go(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_claim("general-a", "general")
    cluster.stuck_claims.add("general-a")  # a PodDisruptionBudget blocks the drain
    with pytest.raises(TeardownRefused) as refused:
        drain(api, CREATED, timeout=0.2, poll=0.01)
    assert "general-a" in str(refused.value) and "kubectl describe nodeclaim" in str(refused.value)


def test_durations() -> None:
    assert _seconds("10m") == 600 and _seconds("1h30m") == 5400 and _seconds("90s") == 90
    with pytest.raises(ValueError):
        _seconds("ten minutes")


# --- what a destroy would leak --------------------------------------------------------------------------------

def test_a_created_clusters_destroy_leaks_retained_volumes_those_of_kept_claims_and_the_log_group(
        fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    cluster.add_persistent_volume("pvc-1", ("shop", "data"), policy="Retain", ebs_volume="vol-0retain")
    cluster.add_persistent_volume("pvc-2", ("shop", "cache"), ebs_volume="vol-0kept", in_tree=True)
    cluster.add_persistent_volume("pvc-3", ("karpenter", "scratch"), ebs_volume="vol-0gone")  # deleted with it
    cluster.add_persistent_volume("pvc-4", ("shop", "files"), policy="Retain")  # not EBS: nothing to list
    found = leaks(api, CREATED)
    assert [leak.what for leak in found] == ["EBS volume vol-0retain (PersistentVolume pvc-1)",
                                             "EBS volume vol-0kept (PersistentVolume pvc-2)",
                                             "log group /aws/eks/prod-karpenter/cluster"]
    assert found[0].command.startswith("aws ec2 delete-volume --volume-id vol-0retain")
    assert "reclaimPolicy Retain" in found[0].why and "shop/cache" in found[1].why
    assert "aws logs delete-log-group --log-group-name /aws/eks/prod-karpenter/cluster" in found[2].command


def test_an_adopted_clusters_destroy_leaks_only_retained_volumes_of_namespaces_it_deletes(
        fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    with_other_workloads(cluster)  # the cluster's own volumes stay in use: not this destroy's
    cluster.add_persistent_volume("pvc-k", ("karpenter", "state"), policy="Retain", ebs_volume="vol-0k")
    cluster.add_persistent_volume("pvc-d", ("karpenter", "scratch"), ebs_volume="vol-0d")
    assert [leak.what for leak in leaks(api, ADOPTED)] == ["EBS volume vol-0k (PersistentVolume pvc-k)"]


# --- only the stack's own cluster -----------------------------------------------------------------------------

def test_a_client_is_the_stacks_cluster_only_at_its_endpoint_trusting_its_certificate() -> None:
    ca = base64.b64encode(CA_PEM).decode()
    endpoint = "https://ABC.gr7.us-west-2.eks.amazonaws.com"
    assert cluster_mismatch(ClusterIdentity(endpoint + "/", CA_PEM + b"\n", True), "c", endpoint, ca) is None
    assert "not to cluster c's endpoint" in str(cluster_mismatch(
        ClusterIdentity("https://XYZ.gr7.us-west-2.eks.amazonaws.com", CA_PEM, True), "c", endpoint, ca))
    assert "another certificate authority" in str(cluster_mismatch(
        ClusterIdentity(endpoint, OTHER_CA_PEM, True), "c", endpoint, ca))
    assert "another certificate authority" in str(cluster_mismatch(ClusterIdentity(endpoint, None, True), "c",
                                                                   endpoint, ca))
    assert "does not verify" in str(cluster_mismatch(ClusterIdentity(endpoint, CA_PEM, False), "c", endpoint, ca))
    assert "holds no endpoint" in str(cluster_mismatch(ClusterIdentity(endpoint, CA_PEM, True), "c", "", ca))


def kubeconfig(server: str, ca: bytes) -> ClusterAccess:
    """How the client reaches a cluster, as the program resolves it for the stack's (a token minted in-process
    from the test's static AWS credentials)."""
    return ClusterAccess("stack", server, base64.b64encode(ca).decode(), "us-east-1")


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Static AWS credentials: the hooks' client signs its EKS token with them, offline."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def hooks_for(scope: Scope, config: ClusterAccess | None, endpoint: str, ca: bytes) -> TeardownHooks:
    """The hooks as the program builds them, without a Pulumi runtime: their callbacks, not their registration."""
    target = object.__new__(StackCluster)
    target.cluster, target.access = scope.cluster, config
    target.endpoint, target.certificate_authority = endpoint, base64.b64encode(ca).decode()
    hooks = object.__new__(TeardownHooks)
    hooks.scope, hooks.cluster, hooks.drain_timeout, hooks.poll, hooks.namespace = scope, target, 5.0, 0.01, None
    return hooks


ARGS = pulumi.ResourceHookArgs(urn="urn:x", id="x", name="x", type="t")


@pytest.mark.parametrize("aimed_at", ["endpoint", "certificate", "no kubeconfig"])
def test_a_hook_given_a_client_for_another_cluster_refuses_and_deletes_nothing(
        aimed_at: str, certs: tuple[TlsFiles, TlsFiles]) -> None:
    stack, other = certs
    cluster = FakeCluster([pool("general"), pool("critical")])
    cluster.add_claim("general-a", "general")
    with cluster.serving(other) as url:  # another cluster, which the client was pointed at
        stack_endpoint = "https://ABC.gr7.us-west-2.eks.amazonaws.com" if aimed_at == "endpoint" else url
        config = None if aimed_at == "no kubeconfig" else kubeconfig(url, other.ca_pem)
        hooks = hooks_for(CREATED, config, stack_endpoint, stack.ca_pem)
        for hook in (hooks._check, hooks._drain):
            with pytest.raises(TeardownRefused) as refused:
                hook(ARGS)
            assert "checks, drains and deletes nothing" in str(refused.value)
    assert not cluster.deleted_pools and "general-a" in cluster.nodeclaims
    assert cluster.requests == []  # not even a read


def test_a_server_that_cannot_prove_it_is_the_stacks_cluster_is_not_acted_on(
        certs: tuple[TlsFiles, TlsFiles]) -> None:
    """The client is the stack's (its endpoint, trusting its CA alone), but the server answering there holds
    another cluster's certificate: the TLS handshake fails before any request."""
    stack, other = certs
    cluster = FakeCluster([pool("general"), pool("critical")])
    cluster.add_claim("general-a", "general")
    with cluster.serving(other) as url:
        hooks = hooks_for(CREATED, kubeconfig(url, stack.ca_pem), url, stack.ca_pem)
        with pytest.raises(KubeError, match="cannot reach the Kubernetes API"):
            hooks._drain(ARGS)
    assert not cluster.deleted_pools and cluster.requests == []


def test_the_runbooks_phase_1_rollback_works_on_a_cluster_with_other_workloads(
        monkeypatch: pytest.MonkeyPatch, certs: tuple[TlsFiles, TlsFiles]) -> None:
    """`pulumi destroy` of the brownfield stack: the check passes beside the cluster's own load balancers, says
    which volumes it leaks, and the drain removes only this stack's pools."""
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: warned.append(message))
    cluster = FakeCluster([pool("general"), pool("critical"), pool("batch-spot")])
    with_other_workloads(cluster)
    cluster.add_claim("general-a", "general")
    cluster.add_persistent_volume("pvc-k", ("karpenter", "state"), policy="Retain", ebs_volume="vol-0k")
    stack = certs[0]
    with cluster.serving(stack) as url:
        hooks = hooks_for(ADOPTED, kubeconfig(url, stack.ca_pem), url, stack.ca_pem)
        hooks._check(ARGS)
        hooks._drain(ARGS)
    assert cluster.deleted_pools == OWN and not cluster.nodeclaims
    assert "batch-spot" in cluster.nodepools  # no claims: nobody's nodes, left alone
    assert len(cluster.services) == 1 and len(cluster.ingresses) == 2  # the cluster's own, untouched
    [warning] = warned
    assert "vol-0k" in warning and "vol-0db" not in warning and "log group" not in warning


def test_the_hooks_on_a_created_cluster_refuse_before_deleting_a_single_pool(
        certs: tuple[TlsFiles, TlsFiles]) -> None:
    stack = certs[0]
    cluster = FakeCluster([pool("general"), pool("critical")])
    cluster.add_claim("general-a", "general")
    cluster.add_service("web", "frontend", type_="LoadBalancer")
    with cluster.serving(stack) as url:
        hooks = hooks_for(CREATED, kubeconfig(url, stack.ca_pem), url, stack.ca_pem)
        with pytest.raises(TeardownRefused):
            hooks._check(ARGS)
        with pytest.raises(TeardownRefused):
            hooks._drain(ARGS)
        assert not cluster.deleted_pools
        cluster.services.clear()
        hooks._check(ARGS)
        hooks._drain(ARGS)
    assert cluster.deleted_pools == OWN and not cluster.nodeclaims


# --- on the plan ------------------------------------------------------------------------------------------------

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
    assert controller.options["hooks"] == {"beforeDelete": [DRAIN_HOOK], "afterCreate": [OWNER_HOOK],
                                           "afterUpdate": [OWNER_HOOK]}


def test_each_stacks_destroy_scope() -> None:
    project = ProgramProject.load(REPO)
    dev, brownfield = (_teardown_scope(validated_stack_config(project, s)) for s in ("dev", "brownfield"))
    assert dev.created_cluster and dev.control_plane_log_group == "/aws/eks/dev-karpenter/cluster"
    assert not brownfield.created_cluster and brownfield.control_plane_log_group is None
    assert brownfield.own_pools == {"default"}
    assert brownfield.deleted_namespaces == frozenset()  # Karpenter and NTH go to kube-system, which stays


def test_a_release_deleted_from_another_namespace_is_a_move_and_drains_nothing() -> None:
    """A replacement that moves the controller's namespace runs its before-delete hooks: the guard must not take
    it for a destroy and drain every pool (the diff refuses the move; this is the last line)."""
    cluster = FakeCluster([pool("general")])
    cluster.add_claim("general-a", "general")
    hooks = hooks_for(CREATED, None, "https://ABC.gr7.us-west-2.eks.amazonaws.com", b"ca")
    hooks.namespace = "karpenter"
    moved = pulumi.ResourceHookArgs(urn="urn:x", id="x", name="karpenter-controller", type="t",
                                    old_inputs={"namespace": "kube-system"})
    hooks._check(moved)
    hooks._drain(moved)  # would refuse (no kubeconfig) if it tried to reach the cluster
    assert cluster.requests == [] and not cluster.deleted_pools
    hooks.namespace = "kube-system"
    with pytest.raises(TeardownRefused):
        hooks._drain(moved)
