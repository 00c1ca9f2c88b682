"""The preflight's rules: what an adopted cluster must be like before this stack registers anything on it.

Pure: facts in (see facts.py), problems out, each at the stack-file key that fixes it and with the command to
run where one helps.
"""

from __future__ import annotations

from dataclasses import dataclass

from eks_karpenter.config.errors import Issue, KeyPath, render_path
from eks_karpenter.labels import AWS_GROUP, KARPENTER_GROUP
from eks_karpenter.platform.access.rules import adopted_group_imds_issue
from eks_karpenter.platform.adopted import (
    ACCESS_ENTRY_MODES,
    ClusterFacts,
    Crd,
    InCluster,
    NodeGroup,
    label_release_command,
)
from eks_karpenter.platform.karpenter.releases import release_of
from eks_karpenter.platform.stack import StackConfig

CRD_GROUPS = (KARPENTER_GROUP, AWS_GROUP)
LEGACY_CRDS = ("awsnodetemplates.karpenter.k8s.aws", "machines.karpenter.sh", "provisioners.karpenter.sh")
"""v1alpha5's: an older Karpenter was (or still is) installed."""
ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


@dataclass(frozen=True)
class OurRelease:
    """A Helm release this stack installs: where, under which resource, and the key that governs it."""

    namespace: str
    name: str
    resource_type: str
    resource_name: str
    parent_urn: str
    key: KeyPath
    value: object
    """The value at `key` (the namespace; `enabled: true` for the node termination handler)."""
    alternative: str = ""


@dataclass(frozen=True)
class Findings:
    """What the preflight found: problems that refuse the stack, and those found only on answers the offline
    plan's mocks made up (warnings: they say nothing about the real cluster)."""

    issues: list[Issue]
    on_placeholders: list[Issue]


def preflight_issues(cfg: StackConfig, facts: ClusterFacts, *, releases: list[OurRelease], marker: str,
                     owner: str, project: str) -> Findings:
    """Every problem the facts show, in the order a person would fix them (access first)."""
    at_cluster: KeyPath = (f"{project}:cluster",)
    found = Findings([], [])

    def add(issues: list[Issue], placeholder: bool) -> None:
        (found.on_placeholders if placeholder else found.issues).extend(issues)

    add(_authentication_mode(facts, at_cluster), facts.placeholder)
    if facts.in_cluster is not None:
        here = facts.in_cluster
        reach = _reach(facts, here, at_cluster, project)
        add(reach, here.placeholder)
        if not reach:
            add(_releases(here, releases, marker, owner), here.placeholder)
            add(_crds(cfg, here, project), here.placeholder)
            add(_cluster_autoscaler(cfg, here, project), here.placeholder)
    for issue, placeholder in _node_groups(cfg, facts, project):
        add([issue], placeholder)
    for issue, placeholder in _adopted_groups(cfg, facts, project):
        add([issue], placeholder)
    return found


def _adopted_groups(cfg: StackConfig, facts: ClusterFacts, project: str) -> list[tuple[Issue, bool]]:
    """With teams: each of the cluster's node groups whose nodes hand team pods the node role's credentials
    (`adopted_group_imds_issue`), with whether the group is an offline placeholder."""
    teams = [t.name for t in cfg.access.teams]
    if not teams:
        return []
    at: KeyPath = (f"{project}:access", "teams")
    if isinstance(facts.adopted_groups, str):
        return [(Issue(at, f"the node groups of cluster {facts.name!r} could not be read ({facts.adopted_groups}): "
                       "with teams, each is checked for nodes that hand pods the node role's credentials; the "
                       "deployer needs eks:ListNodegroups, eks:DescribeNodegroup and "
                       "ec2:DescribeLaunchTemplateVersions", teams), False)]
    found = ((adopted_group_imds_issue(g, facts.name, teams, at), g.placeholder) for g in facts.adopted_groups)
    return [(issue, placeholder) for issue, placeholder in found if issue is not None]


def placeholder_warnings(facts: ClusterFacts, on_placeholders: list[Issue], stack: str) -> list[str]:
    """What the offline plan made up about the cluster, said as such, and the problems found only on it: never
    errors, since they say nothing about the real cluster."""
    made_up = [f"node group {g.name!r} ({g.capacity_type}, {g.min_size} to {g.max_size} nodes, "
               f"{g.desired_size} running)" for g in facts.node_groups.values()
               if isinstance(g, NodeGroup) and g.placeholder]
    adopted = () if isinstance(facts.adopted_groups, str) else facts.adopted_groups
    made_up += [f"node group {g.name!r} (untainted, on {g.source})" for g in adopted if g.placeholder]
    if facts.placeholder:
        made_up.append(f"Kubernetes {facts.version} and authentication mode {facts.authentication_mode}")
    if facts.in_cluster is not None and facts.in_cluster.placeholder:
        made_up.append("the API server's answers (no Helm releases or Karpenter CRDs; Cluster Autoscaler at the "
                       "replicas asked)")
    if not made_up:
        return []
    record = (f"record the real ones with `eks-karpenter preflight --stack {stack} --record facts.json` (AWS "
              f"credentials and access to the cluster) and plan with `eks-karpenter plan --stack {stack} --facts "
              "facts.json`")
    warnings = [f"offline placeholders, not the facts of cluster {facts.name!r}: {'; '.join(made_up)}. The plan "
                f"shows them as the mocks made them up; {record}"]
    return warnings + [placeholder_issue(issue) for issue in on_placeholders]


def placeholder_issue(issue: Issue) -> str:
    """A problem found only on the offline plan's made-up facts, as the warning it is."""
    return (f"offline placeholder facts: {render_path(issue.path)}: {issue.message} (not an error: the real cluster "
            "may differ; `pulumi preview`, or a plan with --facts, checks it)")


def _authentication_mode(facts: ClusterFacts, at: KeyPath) -> list[Issue]:
    # Karpenter's nodes join through an EC2_LINUX access entry, which a CONFIG_MAP-only cluster ignores: nodes
    # would launch and never become Ready.
    if facts.authentication_mode in ACCESS_ENTRY_MODES:
        return []
    return [Issue(at + ("existing",), f"the existing cluster {facts.name!r} uses authentication mode "
                  f"{facts.authentication_mode}, in which access entries (Karpenter's nodes, eks-karpenter:access) do "
                  f"not work: switch it first with `aws eks update-cluster-config --name {facts.name} --access-config "
                  "authenticationMode=API_AND_CONFIG_MAP` (aws-auth keeps working; the switch cannot be undone), "
                  "then run again", True)]


def _reach(facts: ClusterFacts, found: InCluster, at: KeyPath, project: str) -> list[Issue]:
    if not found.reachable:
        if not facts.endpoint_public_access:
            how = ("its endpoint is private (endpointPublicAccess: false): run from a host inside the cluster's VPC "
                   "(or connected to it by VPN, peering or a bastion)")
        elif facts.public_access_cidrs and "0.0.0.0/0" not in facts.public_access_cidrs:
            how = (f"its public endpoint admits only {', '.join(facts.public_access_cidrs)}: run from one of "
                   "those networks, or add this host's address with `aws eks update-cluster-config --name "
                   f"{facts.name} --resources-vpc-config publicAccessCidrs=...`")
        else:
            how = "check this host's network path and proxy settings"
        return [Issue(at + ("existing",), f"cannot reach the API server of {facts.name!r} at {facts.endpoint} "
                      f"({found.error}): {how}", True)]
    if found.status == 401:
        return [Issue((f"{project}:access", "providerCredentials"), f"the API server of {facts.name!r} refused the "
                      f"deployer's credentials ({facts.deployer_arn}): give that principal an access entry "
                      f"(`aws eks create-access-entry --cluster-name {facts.name} --principal-arn "
                      f"{facts.deployer_arn}` and `aws eks associate-access-policy --cluster-name {facts.name} "
                      f"--principal-arn {facts.deployer_arn} --policy-arn {ADMIN_POLICY} --access-scope "
                      "type=cluster`), or deploy as a role that has one (`aws:assumeRoles`: the Kubernetes "
                      "provider acts as the AWS provider's identity)", None, has_value=False)]
    if found.status == 403:
        return [Issue((f"{project}:access", "providerCredentials"), f"the deployer ({facts.deployer_arn}) "
                      f"authenticates to {facts.name!r} but may not read what this stack installs ({found.error}): "
                      f"it needs cluster-wide admin ({ADMIN_POLICY})", None, has_value=False)]
    if found.status is not None or found.error:
        return [Issue(at + ("existing",), f"the API server of {facts.name!r} answered with an error "
                      f"(HTTP {found.status}: {found.error})", True)]
    return []


def _releases(found: InCluster, ours: list[OurRelease], marker: str, owner: str) -> list[Issue]:
    issues: list[Issue] = []
    for want in ours:
        for release in found.helm_releases:
            # The ownership label survives upgrades, rollbacks and `pulumi import`; the description marks releases
            # installed before the label, until a rollback replaces it.
            if release.name != want.name or release.owner == owner or (not release.owner
                                                                       and release.description == marker):
                continue
            label = label_release_command(release.namespace, release.name, owner)
            if release.owner:
                fix = (f"it belongs to another eks-karpenter stack ({release.owner}): destroy that stack, or remove "
                       "this release from one of them")
                what = "two stacks would manage one release"
            elif release.namespace == want.namespace:
                fix = (f"adopt it: `pulumi import {want.resource_type} {want.resource_name} "
                       f"{release.namespace}/{release.name} --parent '{want.parent_urn}'` (skip this if the stack "
                       f"already holds it) and mark it as this stack's: `{label}`; then run again"
                       f"{want.alternative}; or uninstall it first")
                what = "Helm would refuse to install over it"
            else:
                fix = f"uninstall it (`helm uninstall -n {release.namespace} {release.name}`){want.alternative}"
                what = f"a second copy in {want.namespace} would act on the same nodes"
            issues.append(Issue(want.key, f"a Helm release {release.namespace}/{release.name} (status "
                                f"{release.status}) already exists and this stack does not manage it: {what}; {fix}",
                                want.value))
    return issues


def _crds(cfg: StackConfig, found: InCluster, project: str) -> list[Issue]:
    at: KeyPath = (f"{project}:karpenter",)
    from eks_karpenter.platform.karpenter.component import CRD_RELEASE

    namespace = cfg.karpenter.namespace
    issues: list[Issue] = []
    legacy = sorted(c.name for c in found.crds if c.name in LEGACY_CRDS)
    if legacy:
        issues.append(Issue(at, f"an older Karpenter's CRDs are installed ({', '.join(legacy)}): convert its "
                            "Provisioners and AWSNodeTemplates with `eks-karpenter import-legacy`, uninstall it and "
                            "delete those CRDs before this stack installs Karpenter v1 (two controllers would "
                            "launch and remove the same nodes)", None, has_value=False))

    installs = release_of(cfg.karpenter.version).crds

    def foreign(crd: Crd) -> bool:
        return crd.name in installs and (crd.release_name, crd.release_namespace) != (CRD_RELEASE, namespace)

    taken = sorted(c.name for c in found.crds if foreign(c))
    if taken and not cfg.karpenter.adopt_existing_crds:
        owners = sorted({f"Helm release {c.release_namespace}/{c.release_name}" if c.release_name
                         else "no Helm release" for c in found.crds if foreign(c)})
        names = " ".join(taken)
        issues.append(Issue(at + ("adoptExistingCrds",), f"CRDs Karpenter {cfg.karpenter.version} installs already "
                            f"exist ({', '.join(taken)}; owned "
                            f"by {', '.join(owners)}), so installing the {CRD_RELEASE} chart would fail on them: set "
                            "adoptExistingCrds: true to take them over (the objects in them are kept), or mark them "
                            f"for Helm yourself: `kubectl label crd {names} app.kubernetes.io/managed-by=Helm "
                            f"--overwrite` and `kubectl annotate crd {names} meta.helm.sh/release-name="
                            f"{CRD_RELEASE} meta.helm.sh/release-namespace={namespace} --overwrite`", False))
    return issues


def _cluster_autoscaler(cfg: StackConfig, found: InCluster, project: str) -> list[Issue]:
    if cfg.migration is None:
        return []
    ca = cfg.migration.cluster_autoscaler
    at: KeyPath = (f"{project}:migration", "clusterAutoscaler")
    key = f"{ca.namespace}/{ca.name}"
    if key not in found.deployments:
        return [Issue(at + ("name",), f"no Deployment {key} in the cluster: name Cluster Autoscaler's Deployment "
                      "(`kubectl get deploy -A | grep -i autoscaler`)", ca.name)]
    running = found.deployments[key]
    if cfg.migration.phase == 1 and running not in (0, ca.replicas):
        return [Issue(at + ("replicas",), f"Cluster Autoscaler runs {running} replicas, not this count: phase 1 "
                      "(and a rollback to it) would set this one", ca.replicas)]
    return []


def _node_groups(cfg: StackConfig, facts: ClusterFacts, project: str) -> list[tuple[Issue, bool]]:
    """Problems of the node groups, each with whether the group it is about is an offline placeholder."""
    from eks_karpenter.labels import NODEGROUP_LABEL
    from eks_karpenter.platform.migration.rules import controller_node_group

    issues: list[tuple[Issue, bool]] = []

    def add(group: NodeGroup | str | None, issue: Issue) -> None:
        issues.append((issue, isinstance(group, NodeGroup) and group.placeholder))

    stable = None if cfg.karpenter.controller_on_fargate else controller_node_group(cfg.karpenter)
    if stable is not None:
        at: KeyPath = (f"{project}:karpenter", "nodeSelector", NODEGROUP_LABEL)
        group = facts.node_groups.get(stable)
        if not isinstance(group, NodeGroup):
            add(group, Issue(at, f"no managed node group {stable!r} in cluster {facts.name!r} ({group}): name the "
                                "stable on-demand group the controller runs on", stable))
        elif group.capacity_type != "ON_DEMAND":
            add(group, Issue(at, f"node group {stable!r} is {group.capacity_type} capacity: the controller needs "
                                "on-demand nodes nothing takes away", stable))
        elif group.min_size < cfg.karpenter.replicas:
            add(group, Issue(at, f"node group {stable!r} may shrink to {group.min_size} nodes (minSize), fewer "
                                f"than the controller's {cfg.karpenter.replicas} replicas, each on its own node: "
                                f"raise its minSize to at least {cfg.karpenter.replicas}", stable))
    migration = cfg.migration
    if migration is None:
        return issues
    at_groups: KeyPath = (f"{project}:migration", "nodeGroups")
    for i, want in enumerate(migration.node_groups):
        if not migration.manages_node_groups and want.after_migration == "handBack":
            continue
        found = facts.node_groups.get(want.name)
        if not isinstance(found, NodeGroup):
            if migration.manages_node_groups:
                add(found, Issue(at_groups + (i, "name"), f"no managed node group {want.name!r} in cluster "
                                    f"{facts.name!r} ({found})", want.name))
            continue
        if migration.phase == 1 and found.min_size != found.max_size and \
                (found.min_size, found.max_size) != (want.min_size, want.max_size):
            add(found, Issue(at_groups + (i, "minSize"), f"node group {want.name!r} scales {found.min_size} to "
                                f"{found.max_size} today: give those bounds (minSize, maxSize), so importing it "
                                "changes nothing and a rollback restores them", want.min_size))
        if not migration.manages_node_groups and found.desired_size > 0:
            add(found, Issue(at_groups + (i, "afterMigration"), f"node group {want.name!r} still has "
                                f"{found.desired_size} nodes: drain it in phase 3 (drainTo: 0) before phase 4 deletes "
                                "it, or hand it back", want.after_migration))
    return issues
