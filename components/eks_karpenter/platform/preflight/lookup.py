"""The preflight's look-ups: AWS through Pulumi invokes (the offline plan's mocks answer them), the cluster's API
through `in_cluster_lookup` (the offline plan answers it too; a real run asks the API server). Also which CRDs
a cluster has (`cluster_crds`), for a created cluster too; with teams, every node group of the adopted cluster with
its taints and metadata options (`adopted_groups`, asked like the in-cluster look-up: boto3 in a real run)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pulumi
import pulumi_aws as aws

from eks_karpenter.config.errors import ConfigError
from eks_karpenter.config.namespaces import in_namespace
from eks_karpenter.platform.adopted import (
    CRDS_TOKEN,
    IN_CLUSTER_TOKEN,
    NODE_GROUP_METADATA_TOKEN,
    OFFLINE_PLACEHOLDER,
    AdoptedGroup,
    ClusterFacts,
    InCluster,
    NodeGroup,
    release_marker,
    release_owner,
)
from eks_karpenter.platform.preflight.checks import LEGACY_CRDS, OurRelease, placeholder_warnings, preflight_issues
from eks_karpenter.platform.preflight.hook import in_cluster as ask_cluster
from eks_karpenter.platform.stack import StackConfig


def our_releases(cfg: StackConfig, project: str, stack: str) -> list[OurRelease]:
    """The Helm releases this stack installs, with what adopting each takes."""
    from eks_karpenter.platform.karpenter.component import CONTROLLER_RELEASE, CRD_RELEASE
    from eks_karpenter.platform.nth.values import RELEASE_NAME

    release = "kubernetes:helm.sh/v3:Release"
    karpenter_urn = f"urn:pulumi:{stack}::{project}::eks-karpenter:index:Karpenter::karpenter"
    ns = cfg.karpenter.namespace
    at_ns = (f"{project}:karpenter", "namespace")
    out = [OurRelease(ns, CRD_RELEASE, release, "karpenter-crd", karpenter_urn, at_ns, ns),
           OurRelease(ns, CONTROLLER_RELEASE, release, "karpenter-controller", karpenter_urn, at_ns, ns)]
    nth = cfg.node_termination_handler
    if nth.enabled:
        out.append(OurRelease(
            nth.namespace, RELEASE_NAME, release, "node-termination-handler-release",
            f"urn:pulumi:{stack}::{project}::eks-karpenter:index:NodeTerminationHandler::node-termination-handler",
            (f"{project}:nodeTerminationHandler", "enabled"), True,
            alternative=" (or keep yours: set nodeTerminationHandler.enabled: false)"))
    return out


def in_cluster_request(cfg: StackConfig, project: str, stack: str, endpoint: str,
                       certificate_authority: str) -> dict[str, Any]:
    """What the in-cluster look-up asks the API server (see probe.py): this stack's releases and the CRDs its
    Karpenter release installs, Cluster Autoscaler's Deployment, and how to authenticate as the deployer."""
    from eks_karpenter.platform.karpenter.releases import release_of

    creds = cfg.access.provider_credentials
    ca = cfg.migration.cluster_autoscaler if cfg.migration else None
    return {"clusterName": cfg.cluster.name, "endpoint": endpoint, "region": cfg.region,
            "certificateAuthority": certificate_authority, "roleArn": creds.role_arn, "profile": creds.profile,
            "releases": sorted({r.name for r in our_releases(cfg, project, stack)}),
            "crds": sorted({*release_of(cfg.karpenter.version).crds, *LEGACY_CRDS}),
            "deployments": [f"{ca.namespace}/{ca.name}"] if ca else []}


def _previewing() -> bool:
    return pulumi.runtime.is_dry_run()


def unauthenticated_preview(found: InCluster, cluster: str, deployer: str, previewing: bool) -> str | None:
    """The warning a preview gives instead of refusing when its identity may not read the cluster (a CI preview
    role without an access entry yet): `pulumi up`, as a deployer, runs the in-cluster checks. None otherwise."""
    if not previewing or found.status not in (401, 403):
        return None
    return (f"preview: the in-cluster checks of {cluster!r} are skipped: its API server refused this identity "
            f"({deployer}; HTTP {found.status}: {found.error}). `pulumi up` runs them and refuses there. Give the "
            "preview identity an access entry to run them in previews too (docs/migrate-from-cluster-autoscaler.md, "
            "\"Previews from CI\")")


def run_preflight(cfg: StackConfig, source: str, project: str, stack: str) -> tuple[aws.eks.GetClusterResult,
                                                                                   ClusterFacts]:
    """Look the adopted cluster up and check it (see checks.py); raise one `ConfigError` with every problem.
    Call it before registering anything: a refusal then leaves nothing half-created. Problems found only on the
    offline plan's placeholder answers are warnings, labelled as such."""
    name = cfg.cluster.name
    found = aws.eks.get_cluster(name=name)
    modes = [c.authentication_mode for c in found.access_configs or []]
    vpc = found.vpc_config
    caller = aws.get_caller_identity()
    # An assumed role's session ARN names the session; access entries name the role.
    deployer = aws.iam.get_session_context(arn=caller.arn).issuer_arn or caller.arn
    releases = our_releases(cfg, project, stack)
    in_cluster = None
    if cfg.cluster.preflight:
        request = in_cluster_request(cfg, project, stack, found.endpoint,
                                     found.certificate_authorities[0].data or "")
        in_cluster = InCluster.from_answer(ask_cluster(request, IN_CLUSTER_TOKEN))
        skipped = unauthenticated_preview(in_cluster, name, deployer, _previewing())
        if skipped:
            pulumi.log.warn(skipped)
            in_cluster = None
    facts = ClusterFacts(
        name=name, authentication_mode=modes[0] if modes else "CONFIG_MAP",  # clusters from before access entries
        endpoint=found.endpoint, endpoint_public_access=bool(getattr(vpc, "endpoint_public_access", True)),
        public_access_cidrs=tuple(getattr(vpc, "public_access_cidrs", None) or ()), deployer_arn=deployer,
        in_cluster=in_cluster, node_groups=_node_groups(cfg), version=found.version,
        placeholder=bool((found.tags or {}).get(OFFLINE_PLACEHOLDER)), adopted_groups=adopted_groups(cfg))
    findings = preflight_issues(cfg, facts, releases=releases, marker=release_marker(project, stack),
                                owner=release_owner(project, stack), project=project)
    if findings.issues:
        raise ConfigError(source, [replace(i, message=in_namespace(i.message, project)) for i in findings.issues])
    for warning in placeholder_warnings(facts, findings.on_placeholders, stack):
        pulumi.log.warn(warning)
    return found, facts


def node_group_names(cfg: StackConfig) -> list[str]:
    """The node groups the preflight reads: the controller's, and the migration's it imports or deletes."""
    from eks_karpenter.platform.migration.rules import controller_node_group

    names = [] if cfg.karpenter.controller_on_fargate else [controller_node_group(cfg.karpenter)]
    if cfg.migration is not None:
        names += [g.name for g in cfg.migration.node_groups
                  if cfg.migration.manages_node_groups or g.after_migration == "delete"]
    return sorted({n for n in names if n})


def _node_groups(cfg: StackConfig) -> dict[str, NodeGroup | str]:
    out: dict[str, NodeGroup | str] = {}
    for name in node_group_names(cfg):
        try:
            group = aws.eks.get_node_group(cluster_name=cfg.cluster.name, node_group_name=name)
        except Exception as exc:  # an invoke error: the group does not exist, or may not be read
            out[name] = _reason(exc)
            continue
        scaling = group.scaling_configs[0]
        out[name] = NodeGroup(name=name, capacity_type=group.capacity_type, min_size=scaling.min_size,
                              max_size=scaling.max_size, desired_size=scaling.desired_size,
                              node_role_arn=group.node_role_arn, subnet_ids=tuple(group.subnet_ids),
                              status=group.status, placeholder=bool((group.tags or {}).get(OFFLINE_PLACEHOLDER)))
    return out


def adopted_groups(cfg: StackConfig) -> tuple[AdoptedGroup, ...] | str:
    """With teams, every managed node group of the adopted cluster with its taints and metadata options (on an
    adopted cluster this stack creates none), or why they could not be read. Without teams, none: their nodes
    are no tenant's concern then, and the deployer needs no permission to read them."""
    if not cfg.access.teams:
        return ()
    # AWS lists every group; `nodeGroups` (those the stack file names) is what the offline plan's mocks answer.
    creds = cfg.access.provider_credentials
    request = {"clusterName": cfg.cluster.name, "region": cfg.region, "nodeGroups": node_group_names(cfg),
               "roleArn": creds.role_arn, "profile": creds.profile}
    # Unset credentials are left out, as an invoke drops them: the recorded request is the one made.
    answer = ask_cluster({k: v for k, v in request.items() if v is not None}, NODE_GROUP_METADATA_TOKEN)
    if answer.get("error"):
        return str(answer["error"])
    return tuple(AdoptedGroup.from_answer(name, found) for name, found in sorted((answer.get("groups") or {}).items()))


def _reason(exc: Exception) -> str:
    """The provider's reason, without the SDK's wrapping (`invoke of <token> failed: <reason> (<property>)`)."""
    text = (str(exc) or type(exc).__name__).splitlines()[0]
    return re.sub(r"^invoke of \S+ failed: ", "", text).removesuffix(" ()")


def warn_unchecked(cfg: StackConfig) -> None:
    """Say so when the in-cluster checks are off: a failed install is then the first sign of a collision."""
    if cfg.cluster.existing and not cfg.cluster.preflight:
        pulumi.log.warn("cluster.preflight is off: existing Helm releases, Karpenter CRDs and the deployer's access "
                        "to the cluster's API are not checked before installing")


def cluster_crds(cfg: StackConfig, existing: aws.eks.GetClusterResult | None,
                 groups: tuple[str, ...]) -> tuple[frozenset[str], str]:
    """(names of the cluster's CRDs in `groups`, why none could be read: "" when they were). Asked at preview,
    before anything is registered: a created cluster that does not exist yet (its first `up`) has none, and is
    not asked; one that exists, or an adopted one, is asked through its API as the deployer."""
    cluster = existing
    if cluster is None:
        try:
            cluster = aws.eks.get_cluster(name=cfg.cluster.name)
        except Exception as exc:  # the provider reports a missing cluster as a failed invoke, whatever its type
            reason = _reason(exc)
            if "notfound" not in reason.replace(" ", "").lower():
                _unknown_crds(cfg, f"cluster {cfg.cluster.name} could not be looked up ({reason})")
            return frozenset(), f"cluster {cfg.cluster.name} is not there to ask ({reason}): a cluster not " \
                "created yet has none"
    creds = cfg.access.provider_credentials
    request = {
        "clusterName": cfg.cluster.name, "endpoint": cluster.endpoint, "region": cfg.region,
        "certificateAuthority": cluster.certificate_authorities[0].data or "",
        "roleArn": creds.role_arn, "profile": creds.profile, "groups": list(groups),
    }
    # Unset credentials are left out, as an invoke drops them: the recorded request is the one made.
    answer = ask_cluster({k: v for k, v in request.items() if v is not None}, CRDS_TOKEN)
    if answer.get("error") or not answer.get("reachable", True):
        why = f"its CRDs could not be listed: {answer.get('error') or 'API server unreachable'}"
        _unknown_crds(cfg, f"cluster {cfg.cluster.name}: {why}")
        return frozenset(), why
    return frozenset(str(c) for c in answer.get("crds", [])), ""


def _unknown_crds(cfg: StackConfig, why: str) -> None:
    """An `up` that cannot tell whether the cluster runs the Prometheus Operator stops: planning as if it did not
    would delete the alert rule and the charts' monitors of a running stack on a passing error. A preview goes on
    (it changes nothing) and warns what it left out."""
    if not pulumi.runtime.is_dry_run():
        raise pulumi.RunError(f"{why}: cannot tell whether the Prometheus Operator's CRDs are there, and without "
                              "them this `up` would delete the alert rule and the charts' monitors; run it again "
                              "when the cluster answers (or set observability.metrics to another mode on purpose)")
