"""NodeTerminationHandler component: the aws-node-termination-handler release, and in queue mode its queue,
EventBridge rules, lifecycle hooks, tags and IAM role."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from eks_karpenter import versions
from eks_karpenter.config.namespaces import in_namespace
from eks_karpenter.platform.adopted import release_marker
from eks_karpenter.platform.iam.policy import irsa_trust_policy, pod_identity_trust_policy
from eks_karpenter.platform.interruption.events import QUEUE_RETENTION_SECONDS, queue_policy
from eks_karpenter.platform.nth.config import NthConfig
from eks_karpenter.platform.nth.events import asg_lifecycle_event, nth_events
from eks_karpenter.platform.nth.policy import nth_controller_policy
from eks_karpenter.platform.nth.values import MANAGED_TAG, RELEASE_NAME, SERVICE_ACCOUNT, nth_values
from eks_karpenter.platform.wiring import child_options

LIFECYCLE_HOOK_NAME = "aws-node-termination-handler"
HEARTBEAT_TIMEOUT_SECONDS = 300
TARGET_ID = "aws-node-termination-handler-queue"


class NodeTerminationHandlerArgs(TypedDict):
    """Inputs of the NodeTerminationHandler component."""

    config: NthConfig
    """Validated NTH config (must be enabled)."""
    clusterName: str
    """The cluster; names the queue (`<cluster>-nth`) and the Pod Identity association."""
    tags: dict[str, str]
    """Tags for every taggable AWS resource (already merged with the stack-wide tags)."""
    oidcProviderArn: NotRequired[pulumi.Input[str] | None]
    """Queue mode with `identity: irsa`: the cluster's IAM OIDC provider ARN."""
    oidcIssuer: NotRequired[pulumi.Input[str] | None]
    """Queue mode with `identity: irsa`: the OIDC issuer (with or without `https://`)."""
    autoScalingGroupNames: NotRequired[Sequence[pulumi.Input[str]]]
    """Queue mode: more Auto Scaling groups (names) than the config lists, e.g. a consumer's self-managed groups
    or the groups behind EKS managed node groups. Each gets a lifecycle hook and the managed tag."""
    extraValues: NotRequired[Mapping[str, Any]]
    """Chart values merged over the config's (top-level keys replaced), e.g. `nth_monitor_values` for scraping."""
    permissionsBoundary: NotRequired[str | None]
    """Permissions boundary (a managed policy ARN) on the queue-mode role; None: no boundary."""
    releaseHooks: NotRequired[pulumi.ResourceHookBinding]
    """Resource hooks of the Helm release (the ownership label: `release_owner`)."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "-", text).strip("-").lower() or "asg"


class NodeTerminationHandler(pulumi.ComponentResource):
    """aws-node-termination-handler for the nodes Karpenter does not manage.

    IMDS mode: only the Helm release (a DaemonSet on the selected spot nodes, never on Karpenter's).
    Queue mode: an SQS queue `<cluster>-nth` (SSE-SQS, TLS only) fed by EventBridge; a termination lifecycle
    hook and the `aws-node-termination-handler/managed` tag (propagated at launch) on each listed Auto Scaling
    group; an IAM role for the controller (Pod Identity or IRSA) limited to that queue and to tagged groups; and
    the release as a Deployment that acts on tagged instances only. Instances launched before the tag was added
    are not tagged: roll the groups once.

    The AWS and Kubernetes providers come from `opts` (`providers=`); every child is parented to this component.
    """

    release_name: pulumi.Output[str]
    """Helm release name."""
    namespace: pulumi.Output[str]
    """Namespace of the release."""
    queue_arn: pulumi.Output[str | None]
    """Queue mode: NTH's queue ARN (None in IMDS mode)."""
    queue_url: pulumi.Output[str | None]
    """Queue mode: NTH's queue URL (None in IMDS mode)."""
    role_arn: pulumi.Output[str | None]
    """Queue mode: the controller's IAM role ARN (None in IMDS mode)."""

    def __init__(self, name: str, args: NodeTerminationHandlerArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        cfg = args["config"]
        if not cfg.enabled:
            raise ValueError("NodeTerminationHandler: the config has enabled: false; don't construct the component")
        if cfg.mode == "queue" and cfg.identity == "irsa" and (args.get("oidcProviderArn") is None
                                                               or args.get("oidcIssuer") is None):
            raise ValueError("NodeTerminationHandler: identity irsa needs oidcProviderArn and oidcIssuer")
        super().__init__("eks-karpenter:index:NodeTerminationHandler", name, None, opts)
        child = child_options(self, opts)
        cluster, tags = args["clusterName"], args["tags"]

        none: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        self.queue_arn, self.queue_url, self.role_arn = none, none, none
        depends_on: list[pulumi.Resource] = []
        extra = dict(args.get("extraValues", {}))
        if cfg.mode == "imds":
            values: pulumi.Input[Mapping[str, Any]] = {**nth_values(cfg, queue_url=None, irsa_role_arn=None),
                                                       **extra}
        else:
            queue, role, depends_on = self._queue_mode(name, cfg, cluster, tags, args, child)
            self.queue_arn, self.queue_url, self.role_arn = queue.arn, queue.url, role.arn
            irsa = cfg.identity == "irsa"
            values = pulumi.Output.all(queue.url, role.arn).apply(
                lambda ur: {**nth_values(cfg, queue_url=ur[0], irsa_role_arn=ur[1] if irsa else None), **extra})

        release = k8s.helm.v3.Release(
            f"{name}-release",
            name=RELEASE_NAME,
            # The published OCI chart (held to scripts/upstream.lock.json by the tests), not a Helm repository.
            chart=versions.NTH_CHART,
            version=cfg.version,
            # The namespace must exist (the platform creates it as a Namespace the release depends on): Helm's
            # createNamespace would leave one behind that nothing manages or deletes.
            namespace=cfg.namespace,
            values=values,
            # How a preflight tells this stack's release from one another tool installed under the same name.
            description=release_marker(pulumi.get_project(), pulumi.get_stack()),
            opts=pulumi.ResourceOptions.merge(child_options(self, opts, *depends_on),
                                              pulumi.ResourceOptions(hooks=args.get("releaseHooks"))))

        self.release_name = release.name.apply(lambda n: n or RELEASE_NAME)
        self.namespace = release.namespace.apply(lambda n: n or cfg.namespace)
        self.register_outputs({"releaseName": self.release_name, "namespace": self.namespace,
                               "queueArn": self.queue_arn, "queueUrl": self.queue_url, "roleArn": self.role_arn})

    def _queue_mode(
        self, name: str, cfg: NthConfig, cluster: str, tags: dict[str, str], args: NodeTerminationHandlerArgs,
        child: pulumi.ResourceOptions,
    ) -> tuple[aws.sqs.Queue, aws.iam.Role, list[pulumi.Resource]]:
        """Queue, EventBridge rules, hooks and tags, and the role; returns what the release must wait for."""
        # Groups by a stable resource-name key: the name itself when known now, the position otherwise.
        groups: dict[str, pulumi.Input[str]] = {_slug(g): g for g in cfg.auto_scaling_group_names}
        for i, group in enumerate(args.get("autoScalingGroupNames", ())):
            if isinstance(group, str):
                groups.setdefault(_slug(group), group)
            else:
                groups[f"extra-{i}"] = group
        if not groups:
            pulumi.log.warn(in_namespace(
                "NTH queue mode without Auto Scaling groups: no lifecycle hooks and no managed tag are created, so "
                "NTH acts only on instances you tag aws-node-termination-handler/managed yourself. List groups in "
                "eks-karpenter:nodeTerminationHandler.autoScalingGroupNames or pass autoScalingGroupNames.",
                pulumi.get_project()), resource=self)

        queue = aws.sqs.Queue(f"{name}-queue", name=f"{cluster}-nth", message_retention_seconds=QUEUE_RETENTION_SECONDS,
                              sqs_managed_sse_enabled=True, tags=tags, opts=child)
        aws.sqs.QueuePolicy(f"{name}-queue-policy", queue_url=queue.url,
                            policy=queue.arn.apply(lambda arn: json.dumps(queue_policy(arn))), opts=child)

        for key, group in groups.items():
            aws.autoscaling.LifecycleHook(
                f"{name}-hook-{key}", name=LIFECYCLE_HOOK_NAME, autoscaling_group_name=group,
                lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING", default_result="CONTINUE",
                heartbeat_timeout=HEARTBEAT_TIMEOUT_SECONDS, opts=child)
            aws.autoscaling.Tag(
                f"{name}-managed-{key}", autoscaling_group_name=group,
                tag=aws.autoscaling.TagTagArgs(key=MANAGED_TAG, value="true", propagate_at_launch=True), opts=child)

        rules = [(e.name, pulumi.Output.from_input(json.dumps(e.pattern))) for e in nth_events()]
        if groups:  # narrowed to these groups; names only known at deploy time are resolved first
            rules.insert(0, ("asg-lifecycle", pulumi.Output.all(*groups.values()).apply(
                lambda ns: json.dumps(asg_lifecycle_event([str(n) for n in ns]).pattern))))
        for short, pattern in rules:
            rule = aws.cloudwatch.EventRule(
                f"{name}-{short}", description=f"aws-node-termination-handler for {cluster}: {short}",
                event_pattern=pattern, tags=tags, opts=child)
            aws.cloudwatch.EventTarget(f"{name}-{short}", rule=rule.name, arn=queue.arn, target_id=TARGET_ID,
                                       opts=child)

        if cfg.identity == "irsa":
            trust = pulumi.Output.all(args.get("oidcProviderArn"), args.get("oidcIssuer")).apply(lambda pi: json.dumps(
                irsa_trust_policy(pi[0], pi[1], cfg.namespace, SERVICE_ACCOUNT)))
        else:
            trust = pulumi.Output.from_input(json.dumps(pod_identity_trust_policy()))
        role = aws.iam.Role(f"{name}-role", assume_role_policy=trust,
                            description=f"aws-node-termination-handler (queue mode) for {cluster}", tags=tags,
                            permissions_boundary=args.get("permissionsBoundary"), opts=child)
        policy = aws.iam.RolePolicy(f"{name}-policy", role=role.id,
                           policy=queue.arn.apply(lambda arn: json.dumps(nth_controller_policy(arn))), opts=child)
        ready: list[pulumi.Resource] = [policy]
        if cfg.identity == "podIdentity":
            ready.append(aws.eks.PodIdentityAssociation(
                f"{name}-pod-identity", cluster_name=cluster, namespace=cfg.namespace,
                service_account=SERVICE_ACCOUNT, role_arn=role.arn, tags=tags, opts=child))
        return queue, role, ready
