"""The preflight of an adopted cluster: every failure refuses the plan with its message, before anything is
registered. The look-ups are answered by the offline plan's mocks; each test changes one answer."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.adopted import IN_CLUSTER_TOKEN, release_marker
from eks_karpenter.platform.preflight.probe import answer
from eks_karpenter.tools.engine import PlanResult, plan_program, run_plan
from eks_karpenter.tools.engine import mocks as engine_mocks

from tests.support import REPO, invoke_tokens, stack_config

GET_CLUSTER = "aws:eks/getCluster:getCluster"
GET_NODE_GROUP = "aws:eks/getNodeGroup:getNodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
SOURCE = "stacks/Pulumi.brownfield.yaml"
OURS = release_marker("eks-karpenter", "brownfield")
KARPENTER_URN = "urn:pulumi:brownfield::eks-karpenter::eks-karpenter:index:Karpenter::karpenter"


def in_cluster(**answer: Any) -> Any:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        return {**engine_mocks._invoke(IN_CLUSTER_TOKEN, request, "us-west-2"), **answer}
    return reply


def refused(invoke_results: dict[str, Any], **sections: Any) -> list[str]:
    """The plan's refusal, one line per problem; asserts nothing was registered."""
    overrides = {f"eks-karpenter:{k}": json.dumps({**stack_config("brownfield")[f"eks-karpenter:{k}"], **v})
                 for k, v in sections.items()}
    result: PlanResult = run_plan(REPO, "brownfield", config_overrides=overrides, invoke_results=invoke_results)
    assert isinstance(result.error, ConfigError), result.error
    assert result.document.resources == []
    lines = str(result.error).splitlines()
    assert lines[0].startswith("invalid stack config, ")
    return lines[1:]


def test_the_default_answers_pass_and_ask_the_cluster_once() -> None:
    doc = plan_program(REPO, "brownfield")
    assert invoke_tokens(doc).count(IN_CLUSTER_TOKEN) == 1
    [ask] = [i for i in doc.invokes if i.token == IN_CLUSTER_TOKEN]
    assert ask.args["releases"] == ["aws-node-termination-handler", "karpenter", "karpenter-crd"]
    assert ask.args["deployments"] == ["kube-system/cluster-autoscaler-aws-cluster-autoscaler"]
    # every release this stack installs says it is this stack's, which is how the next preflight knows it
    assert {r.inputs["description"] for r in doc.by_type(RELEASE)} == {OURS}


def test_a_private_endpoint_the_deployer_cannot_reach() -> None:
    def private(args: dict[str, Any]) -> dict[str, Any]:
        found = engine_mocks._invoke(GET_CLUSTER, args, "us-west-2")
        found["vpcConfig"] = {**found["vpcConfig"], "endpointPublicAccess": False, "publicAccessCidrs": []}
        return found
    [line] = refused({GET_CLUSTER: private, IN_CLUSTER_TOKEN: in_cluster(reachable=False, error="timed out")})
    endpoint = engine_mocks._invoke(GET_CLUSTER, {"name": "legacy-cas"}, "us-west-2")["endpoint"]
    assert line == (f"{SOURCE}: eks-karpenter:cluster.existing: cannot reach the API server of 'legacy-cas' at "
                    f"{endpoint} (timed out): its endpoint is private (endpointPublicAccess: false): run from a host "
                    "inside the cluster's VPC (or connected to it by VPN, peering or a bastion) (got true)")


def test_a_public_endpoint_limited_to_other_networks() -> None:
    def limited(args: dict[str, Any]) -> dict[str, Any]:
        found = engine_mocks._invoke(GET_CLUSTER, args, "us-west-2")
        found["vpcConfig"] = {**found["vpcConfig"], "publicAccessCidrs": ["203.0.113.0/24"]}
        return found
    [line] = refused({GET_CLUSTER: limited, IN_CLUSTER_TOKEN: in_cluster(reachable=False, error="refused")})
    assert "its public endpoint admits only 203.0.113.0/24: run from one of those networks" in line


def test_credentials_the_api_server_refuses() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(status=401, error="Unauthorized")})
    deployer = "arn:aws:iam::123456789012:user/plan"
    assert line.startswith(f"{SOURCE}: eks-karpenter:access.providerCredentials: the API server of 'legacy-cas' "
                           f"refused the deployer's credentials ({deployer}): give that principal an access entry "
                           f"(`aws eks create-access-entry --cluster-name legacy-cas --principal-arn {deployer}`")
    assert "AmazonEKSClusterAdminPolicy --access-scope type=cluster" in line


def test_an_assumed_role_is_named_by_its_role() -> None:
    session = "arn:aws:sts::123456789012:assumed-role/deployer/ci-run-7"
    role = "arn:aws:iam::123456789012:role/deployer"
    [line] = refused({
        "aws:index/getCallerIdentity:getCallerIdentity": {"accountId": "123456789012", "arn": session,
                                                          "userId": "AROA:ci-run-7"},
        "aws:iam/getSessionContext:getSessionContext": {"arn": session, "issuerArn": role, "id": session},
        IN_CLUSTER_TOKEN: in_cluster(status=401, error="Unauthorized")})
    assert f"--principal-arn {role}`" in line and session not in line


def test_a_deployer_without_rights_to_read_the_cluster() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(status=403, error="secrets is forbidden")})
    assert line.startswith(f"{SOURCE}: eks-karpenter:access.providerCredentials: the deployer "
                           "(arn:aws:iam::123456789012:user/plan) authenticates to 'legacy-cas' but may not read what "
                           "this stack installs (secrets is forbidden): it needs cluster-wide admin")


def test_a_karpenter_release_another_tool_installed_is_reported_with_the_import_command() -> None:
    found = [{"namespace": "kube-system", "name": "karpenter", "status": "deployed", "description": "Install complete"}]
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})
    assert line == (f"{SOURCE}: eks-karpenter:karpenter.namespace: a Helm release kube-system/karpenter (status "
                    "deployed) already exists and this stack does not manage it: Helm would refuse to install over "
                    "it; adopt it with `pulumi import kubernetes:helm.sh/v3:Release karpenter-controller "
                    f"kube-system/karpenter --parent '{KARPENTER_URN}'` (then run again), or uninstall it first "
                    '(got "kube-system")')


def test_this_stacks_own_releases_pass() -> None:
    found = [{"namespace": "kube-system", "name": name, "description": OURS}
             for name in ("karpenter", "karpenter-crd", "aws-node-termination-handler")]
    doc = plan_program(REPO, "brownfield", invoke_results={IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})
    assert doc.by_type(RELEASE)


def test_a_node_termination_handler_already_installed_offers_keeping_it() -> None:
    found = [{"namespace": "kube-system", "name": "aws-node-termination-handler", "description": ""}]
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})
    assert line.startswith(f"{SOURCE}: eks-karpenter:nodeTerminationHandler.enabled: a Helm release "
                           "kube-system/aws-node-termination-handler (status deployed) already exists")
    assert "pulumi import kubernetes:helm.sh/v3:Release node-termination-handler-release " \
           "kube-system/aws-node-termination-handler --parent 'urn:pulumi:brownfield::eks-karpenter::" \
           "eks-karpenter:index:NodeTerminationHandler::node-termination-handler'" in line
    assert "(or keep yours: set nodeTerminationHandler.enabled: false)" in line


def test_a_karpenter_in_another_namespace_would_fight_over_the_nodes() -> None:
    found = [{"namespace": "karpenter", "name": "karpenter", "description": ""}]
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})
    assert "a second copy in kube-system would act on the same nodes; uninstall it (`helm uninstall -n karpenter " \
           "karpenter`)" in line


CRDS = [{"name": "nodepools.karpenter.sh", "versions": ["v1"]},
        {"name": "nodeclaims.karpenter.sh", "releaseName": "karpenter", "releaseNamespace": "karpenter"},
        {"name": "ec2nodeclasses.karpenter.k8s.aws", "releaseName": "karpenter-crd",
         "releaseNamespace": "kube-system"}]


def test_existing_karpenter_crds_are_reported_with_the_adoption_option() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(crds=CRDS)})
    assert line.startswith(f"{SOURCE}: eks-karpenter:karpenter.adoptExistingCrds: Karpenter's CRDs already exist "
                           "(nodeclaims.karpenter.sh, nodepools.karpenter.sh; owned by Helm release "
                           "karpenter/karpenter, no Helm release), so installing the karpenter-crd chart would fail on "
                           "them: set adoptExistingCrds: true")
    assert "meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=kube-system" in line


def test_adopting_existing_crds_takes_them_over_in_the_crd_release() -> None:
    karpenter = {**stack_config("brownfield")["eks-karpenter:karpenter"], "adoptExistingCrds": True}
    doc = plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:karpenter": json.dumps(karpenter)},
                       invoke_results={IN_CLUSTER_TOKEN: in_cluster(crds=CRDS)})
    assert doc.get(RELEASE, "karpenter-crd").inputs["takeOwnership"] is True
    assert "takeOwnership" not in plan_program(REPO, "brownfield").get(RELEASE, "karpenter-crd").inputs


def test_an_older_karpenter_is_reported() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(crds=[{"name": "provisioners.karpenter.sh"}])})
    assert line.startswith(f"{SOURCE}: eks-karpenter:karpenter: an older Karpenter's CRDs are installed "
                           "(provisioners.karpenter.sh): convert its Provisioners and AWSNodeTemplates with "
                           "`eks-karpenter import-legacy`")


def test_cluster_autoscaler_not_where_the_stack_says() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(deployments={})})
    assert line == (f"{SOURCE}: eks-karpenter:migration.clusterAutoscaler.name: no Deployment "
                    "kube-system/cluster-autoscaler-aws-cluster-autoscaler in the cluster: name Cluster Autoscaler's "
                    "Deployment (`kubectl get deploy -A | grep -i autoscaler`) "
                    '(got "cluster-autoscaler-aws-cluster-autoscaler")')


def test_cluster_autoscaler_replicas_must_be_what_runs_today() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(
        deployments={"kube-system/cluster-autoscaler-aws-cluster-autoscaler": 2})})
    assert line == (f"{SOURCE}: eks-karpenter:migration.clusterAutoscaler.replicas: Cluster Autoscaler runs 2 "
                    "replicas, not this count: phase 1 (and a rollback to it) would set this one (got 1)")


def node_groups(**by_name: dict[str, Any] | engine_mocks.LookupFailed) -> Any:
    def reply(args: dict[str, Any]) -> dict[str, Any]:
        change = by_name.get(args["nodeGroupName"].replace("-", "_"), {})
        if isinstance(change, engine_mocks.LookupFailed):
            raise change
        return {**engine_mocks._invoke(GET_NODE_GROUP, args, "us-west-2"), **change}
    return reply


def test_the_controllers_group_must_exist() -> None:
    lines = refused({GET_NODE_GROUP: node_groups(core=engine_mocks.LookupFailed("couldn't find resource"))})
    assert lines == [f"{SOURCE}: eks-karpenter:karpenter.nodeSelector.eks.amazonaws.com/nodegroup: no managed node "
                     "group 'core' in cluster 'legacy-cas' (couldn't find resource): name the stable on-demand group "
                     'the controller runs on (got "core")']


@pytest.mark.parametrize(("change", "fragment"), [
    ({"capacityType": "SPOT"}, "node group 'core' is SPOT capacity: the controller needs on-demand nodes"),
    ({"scalingConfigs": [{"minSize": 1, "maxSize": 3, "desiredSize": 2}]},
     "node group 'core' may shrink to 1 nodes (minSize), fewer than the controller's 2 replicas"),
])
def test_the_controllers_group_must_be_stable(change: dict[str, Any], fragment: str) -> None:
    [line] = refused({GET_NODE_GROUP: node_groups(core=change)})
    assert line.startswith(f"{SOURCE}: eks-karpenter:karpenter.nodeSelector.eks.amazonaws.com/nodegroup: {fragment}")


def test_a_legacy_group_that_does_not_exist() -> None:
    [line] = refused({GET_NODE_GROUP: node_groups(spot_8vcpu_32gb=engine_mocks.LookupFailed("couldn't find resource"))})
    assert line == (f"{SOURCE}: eks-karpenter:migration.nodeGroups[1].name: no managed node group 'spot-8vcpu-32gb' "
                    "in cluster 'legacy-cas' (couldn't find resource) (got \"spot-8vcpu-32gb\")")


def test_a_legacy_groups_bounds_must_be_todays_in_phase_1() -> None:
    [line] = refused({GET_NODE_GROUP: node_groups(
        spot_4vcpu_16gb={"scalingConfigs": [{"minSize": 1, "maxSize": 20, "desiredSize": 4}]})})
    assert line == (f"{SOURCE}: eks-karpenter:migration.nodeGroups[0].minSize: node group 'spot-4vcpu-16gb' scales "
                    "1 to 20 today: give those bounds (minSize, maxSize), so importing it changes nothing and a "
                    "rollback restores them (got 0)")


def test_every_problem_is_reported_at_once() -> None:
    lines = refused({IN_CLUSTER_TOKEN: in_cluster(crds=CRDS, deployments={}),
                     GET_NODE_GROUP: node_groups(core={"capacityType": "SPOT"})})
    assert [line.split(": ")[1] for line in lines] == [
        "eks-karpenter:karpenter.adoptExistingCrds", "eks-karpenter:karpenter.nodeSelector.eks.amazonaws.com/nodegroup",
        "eks-karpenter:migration.clusterAutoscaler.name"]


def test_in_cluster_checks_can_be_switched_off_and_say_so() -> None:
    cluster = {**stack_config("brownfield")["eks-karpenter:cluster"], "preflight": False}
    doc = plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:cluster": json.dumps(cluster)},
                       invoke_results={IN_CLUSTER_TOKEN: in_cluster(status=401)})
    assert IN_CLUSTER_TOKEN not in invoke_tokens(doc)
    assert any("cluster.preflight is off" in w for w in doc.warnings)


# --- the real in-cluster look-up, on a stand-in API -------------------------------------------------------------

def helm_secret(namespace: str, name: str, revision: int, description: str) -> dict[str, Any]:
    release = base64.b64encode(gzip.compress(json.dumps({"info": {"description": description}}).encode()))
    return {"metadata": {"namespace": namespace, "name": f"sh.helm.release.v1.{name}.v{revision}",
                         "labels": {"owner": "helm", "name": name, "status": "deployed", "version": str(revision)}},
            "data": {"release": base64.b64encode(release).decode()}}


class StubApi:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def list_crds(self) -> list[dict[str, Any]]:
        if self.error:
            raise self.error
        return [{"metadata": {"name": "nodepools.karpenter.sh", "annotations": {
                    "meta.helm.sh/release-name": "karpenter-crd", "meta.helm.sh/release-namespace": "kube-system"}},
                 "spec": {"group": "karpenter.sh", "versions": [{"name": "v1"}]}},
                {"metadata": {"name": "certificates.cert-manager.io"}, "spec": {"group": "cert-manager.io"}}]

    def list_secrets(self, label_selector: str) -> list[dict[str, Any]]:
        assert label_selector == "owner=helm,name in (karpenter)"
        return [helm_secret("kube-system", "karpenter", 1, "Install complete"),
                helm_secret("kube-system", "karpenter", 2, OURS), helm_secret("default", "web", 1, "")]

    def get_deployment(self, namespace: str, name: str) -> dict[str, Any] | None:
        return {"spec": {"replicas": 1}} if name == "cluster-autoscaler" else None


def test_the_probe_reads_releases_crds_and_deployments() -> None:
    got = answer(StubApi(), {"releases": ["karpenter"],  # type: ignore[arg-type]
                             "deployments": ["kube-system/cluster-autoscaler", "kube-system/gone"]})
    assert got == {"reachable": True, "deployments": {"kube-system/cluster-autoscaler": 1},
                   "crds": [{"name": "nodepools.karpenter.sh", "releaseName": "karpenter-crd",
                             "releaseNamespace": "kube-system", "versions": ["v1"]}],
                   "helmReleases": [{"namespace": "kube-system", "name": "karpenter", "status": "deployed",
                                     "description": OURS}]}


def test_the_probe_reports_what_failed() -> None:
    from eks_karpenter.platform.kube import KubeError

    got = answer(StubApi(KubeError("list: HTTP 401: Unauthorized", status=401)), {})  # type: ignore[arg-type]
    assert got == {"reachable": True, "status": 401, "error": "list: HTTP 401: Unauthorized"}
    got = answer(StubApi(KubeError("cannot reach", reachable=False)), {})  # type: ignore[arg-type]
    assert got["reachable"] is False


def test_the_probe_speaks_to_a_kubernetes_api_server() -> None:
    kubernetes = pytest.importorskip("kubernetes")
    from eks_karpenter.platform.kube import KubeApi

    from tests.support.fake_kube import FakeCluster

    fake = FakeCluster([])
    fake.crds = StubApi().list_crds()
    fake.secrets = [helm_secret("kube-system", "aws-node-termination-handler", 3, "eks-charts"),
                    helm_secret("kube-system", "web", 1, "")]
    fake.add_deployment("kube-system", "cluster-autoscaler", replicas=2)
    with fake.serving() as url:
        config = kubernetes.client.Configuration()
        config.host = url
        got = answer(KubeApi(kubernetes.client.ApiClient(config)),
                     {"releases": ["karpenter", "aws-node-termination-handler"],
                      "deployments": ["kube-system/cluster-autoscaler"]})
    assert got["helmReleases"] == [{"namespace": "kube-system", "name": "aws-node-termination-handler",
                                    "status": "deployed", "description": "eks-charts"}]
    assert [c["name"] for c in got["crds"]] == ["nodepools.karpenter.sh"]
    assert got["deployments"] == {"kube-system/cluster-autoscaler": 2}
    assert ("GET", "/api/v1/secrets") in fake.requests
