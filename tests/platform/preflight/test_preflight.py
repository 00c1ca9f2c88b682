"""The preflight of an adopted cluster: every failure refuses the plan with its message, before anything is
registered. The look-ups are answered by the offline plan's mocks; each test changes one answer."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.adopted import IN_CLUSTER_TOKEN, label_release_command, release_marker, release_owner
from eks_karpenter.platform.kube import KubeApi
from eks_karpenter.platform.preflight.probe import answer
from eks_karpenter.tools.engine import PlanResult, plan_program, run_plan
from eks_karpenter.tools.engine import mocks as engine_mocks

from tests.support import REPO, UPSTREAM, invoke_tokens, requires_upstream, stack_config

GET_CLUSTER = "aws:eks/getCluster:getCluster"
GET_NODE_GROUP = "aws:eks/getNodeGroup:getNodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
SOURCE = "stacks/Pulumi.brownfield.yaml"
OURS = release_marker("eks-karpenter", "brownfield")
OWNER = release_owner("eks-karpenter", "brownfield")
LABEL_KARPENTER = label_release_command("kube-system", "karpenter", OWNER)
KARPENTER_URN = "urn:pulumi:brownfield::eks-karpenter::eks-karpenter:index:Karpenter::karpenter"


def in_cluster(**answer: Any) -> Any:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        return {**engine_mocks.placeholder_answer(IN_CLUSTER_TOKEN, request, "us-west-2", recorded=True), **answer}
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
        found = engine_mocks.placeholder_answer(GET_CLUSTER, args, "us-west-2", recorded=True)
        found["vpcConfig"] = {**found["vpcConfig"], "endpointPublicAccess": False, "publicAccessCidrs": []}
        return found
    [line] = refused({GET_CLUSTER: private, IN_CLUSTER_TOKEN: in_cluster(reachable=False, error="timed out")})
    endpoint = engine_mocks._invoke(GET_CLUSTER, {"name": "legacy-cas"}, "us-west-2")["endpoint"]
    assert line == (f"{SOURCE}: eks-karpenter:cluster.existing: cannot reach the API server of 'legacy-cas' at "
                    f"{endpoint} (timed out): its endpoint is private (endpointPublicAccess: false): run from a host "
                    "inside the cluster's VPC (or connected to it by VPN, peering or a bastion) (got true)")


def test_a_public_endpoint_limited_to_other_networks() -> None:
    def limited(args: dict[str, Any]) -> dict[str, Any]:
        found = engine_mocks.placeholder_answer(GET_CLUSTER, args, "us-west-2", recorded=True)
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
                    "it; adopt it: `pulumi import kubernetes:helm.sh/v3:Release karpenter-controller "
                    f"kube-system/karpenter --parent '{KARPENTER_URN}'` (skip this if the stack already holds it) "
                    f"and mark it as this stack's: `{LABEL_KARPENTER}`; then run again; or uninstall it first "
                    '(got "kube-system")')


def test_the_printed_fix_does_not_loop() -> None:
    """After the import and the label the fix names, the release is the stack's, whatever its description."""
    found = [{"namespace": "kube-system", "name": "karpenter", "description": "Install complete"}]
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})
    label = re.search(r"eks-karpenter\.io/stack=(\S+) --overwrite", line)
    assert label and label[1] == OWNER == "eks-karpenter.brownfield"
    marked = [{**found[0], "owner": label[1]}]
    assert plan_program(REPO, "brownfield", invoke_results={IN_CLUSTER_TOKEN: in_cluster(helmReleases=marked)})


@pytest.mark.parametrize("description", ["Rollback to 2", "Upgrade \"karpenter\" failed: timed out", OURS])
def test_own_releases_are_known_by_their_label_after_a_rollback(description: str) -> None:
    """`helm rollback` and a failed atomic upgrade's rollback replace the description; Helm copies the label."""
    found = [{"namespace": "kube-system", "name": name, "description": description, "owner": OWNER}
             for name in ("karpenter", "karpenter-crd", "aws-node-termination-handler")]
    assert plan_program(REPO, "brownfield", invoke_results={IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})


def test_a_release_another_stack_labelled_is_not_adopted() -> None:
    found = [{"namespace": "kube-system", "name": "karpenter", "description": "eks-karpenter platform/prod",
              "owner": "platform.prod"}]
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(helmReleases=found)})
    assert "two stacks would manage one release; it belongs to another eks-karpenter stack (platform.prod)" in line
    assert "pulumi import" not in line


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
    assert line.startswith(f"{SOURCE}: eks-karpenter:karpenter.adoptExistingCrds: CRDs Karpenter 1.14.1 installs "
                           "already exist "
                           "(nodeclaims.karpenter.sh, nodepools.karpenter.sh; owned by Helm release "
                           "karpenter/karpenter, no Helm release), so installing the karpenter-crd chart would fail on "
                           "them: set adoptExistingCrds: true")
    assert "meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=kube-system" in line


@pytest.mark.parametrize("crd", ["capacitybuffers.autoscaling.x-k8s.io", "nodeoverlays.karpenter.sh"])
def test_every_crd_the_release_installs_is_checked(crd: str) -> None:
    found = [{"name": crd, "releaseName": "cluster-autoscaler", "releaseNamespace": "kube-system"}]
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(crds=found)})
    assert f"CRDs Karpenter 1.14.1 installs already exist ({crd}; owned by Helm release " \
           "kube-system/cluster-autoscaler)" in line


def test_a_crd_the_chosen_release_does_not_install_is_not_in_the_way() -> None:
    karpenter = {**stack_config("brownfield")["eks-karpenter:karpenter"], "version": "1.13.1"}
    found = [{"name": "capacitybuffers.autoscaling.x-k8s.io", "releaseName": "cluster-autoscaler",
              "releaseNamespace": "kube-system"}]
    doc = plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:karpenter": json.dumps(karpenter)},
                       invoke_results={IN_CLUSTER_TOKEN: in_cluster(crds=found)})
    [ask] = [i for i in doc.invokes if i.token == IN_CLUSTER_TOKEN]
    assert "capacitybuffers.autoscaling.x-k8s.io" not in ask.args["crds"]
    assert "nodeoverlays.karpenter.sh" in ask.args["crds"]


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
        return {**engine_mocks.placeholder_answer(GET_NODE_GROUP, args, "us-west-2", recorded=True), **change}
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

def helm_secret(namespace: str, name: str, revision: int, description: str, owner: str = "") -> dict[str, Any]:
    """A release revision as Helm v3 stores it: labels owner, name, status, version, and any custom label."""
    release = base64.b64encode(gzip.compress(json.dumps({"info": {"description": description}}).encode()))
    labels = {"owner": "helm", "name": name, "status": "deployed", "version": str(revision)}
    return {"metadata": {"namespace": namespace, "name": f"sh.helm.release.v1.{name}.v{revision}",
                         "labels": {**labels, **({"eks-karpenter.io/stack": owner} if owner else {})}},
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
                {"metadata": {"name": "capacitybuffers.autoscaling.x-k8s.io"},
                 "spec": {"group": "autoscaling.x-k8s.io", "versions": [{"name": "v1beta1"}]}},
                {"metadata": {"name": "certificates.cert-manager.io"}, "spec": {"group": "cert-manager.io"}}]

    def list_secrets(self, label_selector: str) -> list[dict[str, Any]]:
        assert label_selector == "owner=helm,name in (karpenter)"
        return [helm_secret("kube-system", "karpenter", 1, "Install complete"),
                helm_secret("kube-system", "karpenter", 2, OURS), helm_secret("default", "web", 1, "")]

    def get_deployment(self, namespace: str, name: str) -> dict[str, Any] | None:
        return {"spec": {"replicas": 1}} if name == "cluster-autoscaler" else None


def test_the_probe_reads_releases_crds_and_deployments() -> None:
    got = answer(StubApi(), {"releases": ["karpenter"],  # type: ignore[arg-type]
                             "crds": ["capacitybuffers.autoscaling.x-k8s.io", "nodepools.karpenter.sh"],
                             "deployments": ["kube-system/cluster-autoscaler", "kube-system/gone"]})
    assert got == {"reachable": True, "deployments": {"kube-system/cluster-autoscaler": 1},
                   "crds": [{"name": "nodepools.karpenter.sh", "releaseName": "karpenter-crd",
                             "releaseNamespace": "kube-system", "versions": ["v1"]},
                            {"name": "capacitybuffers.autoscaling.x-k8s.io", "releaseName": None,
                             "releaseNamespace": None, "versions": ["v1beta1"]}],
                   "helmReleases": [{"namespace": "kube-system", "name": "karpenter", "status": "deployed",
                                     "description": OURS, "owner": ""}]}


def test_the_probe_reports_what_failed() -> None:
    from eks_karpenter.platform.kube import KubeError

    got = answer(StubApi(KubeError("list: HTTP 401: Unauthorized", status=401)), {})  # type: ignore[arg-type]
    assert got == {"reachable": True, "status": 401, "error": "list: HTTP 401: Unauthorized"}
    got = answer(StubApi(KubeError("cannot reach", reachable=False)), {})  # type: ignore[arg-type]
    assert got["reachable"] is False


def test_the_probe_speaks_to_a_kubernetes_api_server() -> None:
    kubernetes = pytest.importorskip("kubernetes")

    from tests.support.fake_kube import FakeCluster

    fake = FakeCluster([])
    fake.crds = StubApi().list_crds()
    fake.secrets = [helm_secret("kube-system", "aws-node-termination-handler", 3, "Rollback to 2", OWNER),
                    helm_secret("kube-system", "web", 1, "")]
    fake.add_deployment("kube-system", "cluster-autoscaler", replicas=2)
    with fake.serving() as url:
        config = kubernetes.client.Configuration()
        config.host = url
        got = answer(KubeApi(kubernetes.client.ApiClient(config)),
                     {"releases": ["karpenter", "aws-node-termination-handler"],
                      "deployments": ["kube-system/cluster-autoscaler"]})
    assert got["helmReleases"] == [{"namespace": "kube-system", "name": "aws-node-termination-handler",
                                    "status": "deployed", "description": "Rollback to 2", "owner": OWNER}]
    assert [c["name"] for c in got["crds"]] == ["nodepools.karpenter.sh"]
    assert got["deployments"] == {"kube-system/cluster-autoscaler": 2}
    assert ("GET", "/api/v1/secrets") in fake.requests


# --- previews from CI, and the offline plan's placeholders ------------------------------------------------------

def test_a_preview_that_cannot_authenticate_skips_the_in_cluster_checks_with_a_warning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_karpenter.platform.preflight import lookup

    monkeypatch.setattr(lookup, "_previewing", lambda: True)
    for status in (401, 403):
        doc = plan_program(REPO, "brownfield", invoke_results={
            IN_CLUSTER_TOKEN: in_cluster(status=status, error="Unauthorized", crds=CRDS)})
        assert doc.by_type(RELEASE)  # not refused, though the answer would have been
        [skipped] = [w for w in doc.warnings if w.startswith("preview: the in-cluster checks")]
        assert f"HTTP {status}" in skipped and "`pulumi up` runs them and refuses there" in skipped


def test_an_up_that_cannot_authenticate_is_still_refused() -> None:
    [line] = refused({IN_CLUSTER_TOKEN: in_cluster(status=401, error="Unauthorized")})
    assert "refused the deployer's credentials" in line


def test_the_offline_plan_labels_its_made_up_cluster_facts() -> None:
    doc = plan_program(REPO, "brownfield")
    [made_up] = [w for w in doc.warnings if w.startswith("offline placeholders")]
    assert "node group 'core' (ON_DEMAND, 2 to 3 nodes, 2 running)" in made_up
    assert "node group 'spot-4vcpu-16gb' (SPOT, 0 to 10 nodes, 3 running)" in made_up
    assert "Kubernetes 1.33" in made_up and "the API server's answers" in made_up
    assert "eks-karpenter preflight --stack brownfield --record facts.json" in made_up


def test_problems_on_placeholder_facts_are_warnings_not_errors() -> None:
    """The mocks' invented bounds (0 to 10) differ from the stack's: a warning offline, not a refusal."""
    migration = stack_config("brownfield")["eks-karpenter:migration"]
    groups = [{**g, "minSize": 1, "maxSize": 6} for g in migration["nodeGroups"]]
    doc = plan_program(REPO, "brownfield", config_overrides={
        "eks-karpenter:migration": json.dumps({**migration, "nodeGroups": groups})})
    unsure = [w for w in doc.warnings if w.startswith("offline placeholder facts:")]
    assert len(unsure) == 2
    assert unsure[0].startswith("offline placeholder facts: eks-karpenter:migration.nodeGroups[0].minSize: node "
                                "group 'spot-4vcpu-16gb' scales 0 to 10 today")
    assert "(not an error: the real cluster may differ" in unsure[0]
    # the same answer, recorded from the cluster, refuses
    recorded = {GET_NODE_GROUP: node_groups()}
    lines = refused(recorded, migration={"nodeGroups": groups})
    assert len(lines) == 2 and "scales 0 to 10 today" in lines[0]


# --- the ownership label, set by the stack's hook ---------------------------------------------------------------

def test_every_release_the_stack_installs_is_labelled_after_create_and_update() -> None:
    from eks_karpenter.platform.release_owner import HOOK

    doc = plan_program(REPO, "brownfield")
    for release in doc.by_type(RELEASE):
        hooks = release.options["hooks"]
        assert hooks["afterCreate"] == [HOOK] and hooks["afterUpdate"] == [HOOK], release.name


def owner_hook(url: str, ca: bytes | None = None) -> Any:
    """The hook as the program builds it, without a Pulumi runtime, for the cluster at `url`."""
    from eks_karpenter.platform.release_owner import ReleaseOwner
    from eks_karpenter.platform.stack_cluster import StackCluster

    target = object.__new__(StackCluster)
    target.cluster = "legacy-cas"
    target.kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "s",
                         "clusters": [{"name": "s", "cluster": {"server": url, **(
                             {"certificate-authority-data": base64.b64encode(ca).decode()} if ca else {})}}],
                         "users": [{"name": "s", "user": {"token": "t"}}],
                         "contexts": [{"name": "s", "context": {"cluster": "s", "user": "s"}}]}
    target.endpoint, target.certificate_authority = url, base64.b64encode(ca or b"CA").decode()
    hook = object.__new__(ReleaseOwner)
    hook.cluster, hook.owner = target, OWNER
    return hook


def test_the_hook_labels_every_revision_so_any_rollback_keeps_it(tmp_path: Path) -> None:
    """Helm copies a rollback target's labels: every revision is labelled, not only the newest."""
    import pulumi
    from eks_karpenter.platform.preflight.probe import answer as probe

    from tests.support.fake_kube import FakeCluster, self_signed

    tls = self_signed(tmp_path)
    if tls is None:
        pytest.skip("needs the openssl command to make the fake API server's TLS certificate")
    fake = FakeCluster([])
    fake.secrets = [helm_secret("kube-system", "karpenter", 1, OURS), helm_secret("kube-system", "karpenter", 2, OURS),
                    helm_secret("kube-system", "web", 1, "")]
    with fake.serving(tls) as url:
        hook = owner_hook(url, tls.ca_pem)
        hook._label(pulumi.ResourceHookArgs(
            urn="u", id="i", name="karpenter-controller", type=RELEASE,
            new_outputs={"namespace": "kube-system", "name": "karpenter"}))
        fake.secrets.append(helm_secret("kube-system", "karpenter", 3, "Rollback to 1",
                                        fake.secrets[0]["metadata"]["labels"].get("eks-karpenter.io/stack", "")))
        got = probe(hook.cluster.api(), {"releases": ["karpenter"]})
    assert [s["metadata"]["labels"].get("eks-karpenter.io/stack") for s in fake.secrets] == [OWNER, OWNER, None, OWNER]
    assert got["helmReleases"][0]["owner"] == OWNER and got["helmReleases"][0]["description"] == "Rollback to 1"


def test_a_label_the_hook_cannot_set_is_a_warning_with_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi

    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: warned.append(message))
    from tests.support.fake_kube import FakeCluster

    fake = FakeCluster([])
    with fake.serving() as url:  # plain HTTP: the client cannot be shown to be the stack's cluster
        owner_hook(url)._label(pulumi.ResourceHookArgs(
            urn="u", id="i", name="karpenter-crd", type=RELEASE,
            new_outputs={"namespace": "kube-system", "name": "karpenter-crd"}))
    assert fake.requests == []
    [warning] = warned
    assert label_release_command("kube-system", "karpenter-crd", OWNER) in warning


def test_a_version_problem_on_the_placeholder_version_is_a_warning() -> None:
    """The mocks' Kubernetes 1.33 has no AL2 AMIs; the real cluster may run 1.32: a warning offline."""
    classes = [{**c, "amiSelectorTerms": [{"alias": "al2@latest"}]}
               for c in stack_config("brownfield")["eks-karpenter:nodeClasses"]]
    overrides = {"eks-karpenter:nodeClasses": json.dumps(classes)}
    doc = plan_program(REPO, "brownfield", config_overrides=overrides)
    assert any(w.startswith("offline placeholder facts: eks-karpenter:nodeClasses") for w in doc.warnings)

    def recorded(version: str) -> Any:
        def answer(args: dict[str, Any]) -> dict[str, Any]:
            return {**engine_mocks.placeholder_answer(GET_CLUSTER, args, "us-west-2", recorded=True),
                    "version": version}
        return answer
    result = run_plan(REPO, "brownfield", config_overrides=overrides, invoke_results={GET_CLUSTER: recorded("1.33")})
    assert isinstance(result.error, ConfigError) and "nodeClasses" in str(result.error)


@requires_upstream
def test_the_preflight_asks_for_every_crd_of_the_pinned_crd_chart() -> None:
    templates = UPSTREAM / "charts" / "karpenter-crd" / "templates"
    names = {re.search(r"(?m)^metadata:\n(?:  .*\n)*?  name: ([a-z0-9.-]+)$", p.read_text())[1]  # type: ignore[index]
             for p in templates.glob("*_*.yaml")}
    [ask] = [i for i in plan_program(REPO, "brownfield").invokes if i.token == IN_CLUSTER_TOKEN]
    assert {"capacitybuffers.autoscaling.x-k8s.io", "nodeoverlays.karpenter.sh"} <= names <= set(ask.args["crds"])
