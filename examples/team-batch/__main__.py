"""A consumer of eks-karpenter: a team adds its own NodePool + EC2NodeClass and a Deployment pinned to it, on a
cluster another stack (the platform) owns. It reads the platform through a StackReference and uses the
library's typed config, rendering and workload helpers, so its objects pass the same rules as the platform's.

Access: this stack runs (in CI) as the team's deploy role, which the platform stack lists under
`eks-karpenter:access` `teams` (`batch`: AmazonEKSEditPolicy on namespace `batch`, plus `nodePools: true` for
its cluster-scoped NodePool and EC2NodeClass). It connects with the platform's `kubeconfig` output, which runs
`aws eks get-token` with whatever AWS credentials this stack's `pulumi up` has: its own role, never the
platform's. The namespace itself is the platform's (created there, kept on destroy).

Admission: the platform exports the admission policies it applies (`teamPolicies`); this program evaluates them on
the NodePool, EC2NodeClass and the Deployment's pods it would send, as the team would send them, so what `pulumi up`
would be refused fails the preview naming this stack's keys, and the provider never connects. The evaluator is the
library's `consumer` extra, which requirements.txt installs (`eks-karpenter[consumer]`)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from eks_karpenter import (
    ConfigError,
    Issue,
    NodeClass,
    NodeClassConfig,
    NodePool,
    NodePoolConfig,
    consumer_access_warnings,
    consumer_admission,
    issues_from_validation_error,
    render_node_pool,
    scheduling_for,
    validate_node_config,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

config = pulumi.Config()
SOURCE = f"stacks/Pulumi.{pulumi.get_stack()}.yaml"
PROJECT = pulumi.get_project()


class Workload(BaseModel):
    """The team's Deployment."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    image: str
    replicas: int = Field(2, ge=1, le=100)
    cpu: str = "500m"
    memory: str = "1Gi"


def load() -> tuple[str, NodeClassConfig, NodePoolConfig, Workload]:
    """Validate the team's config before anything is registered: one error naming the file and keys."""
    issues: list[Issue] = []
    parsed: dict[str, Any] = {}
    for key, model in (("nodeClass", NodeClassConfig), ("nodePool", NodePoolConfig), ("workload", Workload)):
        try:
            parsed[key] = model.model_validate(config.require_object(key))
        except ValidationError as err:
            issues += issues_from_validation_error(err, (f"{PROJECT}:{key}",))
    if not issues:
        # Zones are the platform's (every zone allowed); the platform runs Karpenter's interruption queue.
        issues += validate_node_config([parsed["nodePool"]], [parsed["nodeClass"]], zones=[],
                                       interruption_handled=True, at_pools=(f"{PROJECT}:nodePool",),
                                       at_classes=(f"{PROJECT}:nodeClass",))
    if issues:
        raise ConfigError(SOURCE, issues)
    return config.require("team"), parsed["nodeClass"], parsed["nodePool"], parsed["workload"]


team, node_class_cfg, pool_cfg, workload = load()
# The team's namespace, created by the platform; the team's access entry is scoped to it.
namespace = config.require("namespace")
platform_stack = config.require("platformStack")
platform = pulumi.StackReference(platform_stack)
# Deploying where the platform grants this team nothing fails only at `pulumi up` (403 from the cluster): say so
# at plan time, naming this stack's key and the platform's (a platform that exports no `teamNamespaces` is not
# checked).
# The platform's keys are in its own project's namespace: `<org>/<project>/<stack>` names it.
platform_key = f"{platform_stack.split('/')[-2]}:access" if platform_stack.count("/") == 2 else "the platform's access"


def warn_access(granted: dict[str, list[str]] | None) -> None:
    for warning in consumer_access_warnings(team, namespace, granted, team_key=f"{PROJECT}:team",
                                            namespace_key=f"{PROJECT}:namespace", platform=platform_stack,
                                            platform_key=platform_key) if granted is not None else []:
        pulumi.log.warn(warning)


platform.get_output("teamNamespaces").apply(warn_access)

# What this stack sends, rendered before anything is registered, so the platform's admission policies can judge it.
class_tags = {"team": team}
class_manifest = NodeClass.manifest_for(node_class_cfg, cluster_name=platform.require_output("clusterName"),
                                        node_role_name=platform.require_output("nodeRoleName"), tags=class_tags)
pool_manifest = render_node_pool(pool_cfg)
labels = {"app.kubernetes.io/name": workload.name, "team": team}
deployment: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": workload.name, "namespace": namespace, "labels": labels},
    "spec": {
        "replicas": workload.replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                # nodeSelector, tolerations and affinity that land these pods on the team's pool only
                **scheduling_for(pool_cfg),
                "containers": [{
                    "name": workload.name,
                    "image": workload.image,
                    "resources": {"requests": {"cpu": workload.cpu, "memory": workload.memory},
                                  "limits": {"memory": workload.memory}},
                }],
            },
        },
    },
}


def admitted(args: list[Any]) -> bool:
    """The platform's admission policies (its `teamPolicies` output) on this stack's objects: what `pulumi up`
    would be refused fails the preview, naming this stack's keys."""
    policies, node_class_manifest = args
    checked = consumer_admission(team, namespace, policies, [
        (f"{PROJECT}:nodeClass", node_class_manifest), (f"{PROJECT}:nodePool", pool_manifest),
        (f"{PROJECT}:workload", deployment)], platform=platform_stack)
    for warning in checked.warnings:
        pulumi.log.warn(warning)
    checked.raise_if_denied(SOURCE)
    return True


# The provider gets its kubeconfig only once the check has passed: a refused object never reaches the cluster.
check = pulumi.Output.all(platform.get_output("teamPolicies"), class_manifest).apply(admitted)
provider = k8s.Provider("platform", kubeconfig=pulumi.Output.all(check, platform.require_output("kubeconfig")).apply(
    lambda a: a[1]))

node_class = NodeClass.from_config(
    f"{team}-class", node_class_cfg, cluster_name=platform.require_output("clusterName"),
    node_role_name=platform.require_output("nodeRoleName"), tags=class_tags,
    opts=pulumi.ResourceOptions(provider=provider, custom_timeouts=pulumi.CustomTimeouts(delete="15m")))
# On destroy the pool's finalizer waits for Karpenter to drain its nodes: bounded, so a stuck drain fails.
pool = NodePool(f"{team}-pool", {"manifest": pool_manifest},
                opts=pulumi.ResourceOptions(provider=provider, depends_on=[node_class],
                                            custom_timeouts=pulumi.CustomTimeouts(delete="15m")))
k8s.apps.v1.Deployment(workload.name, metadata=deployment["metadata"], spec=deployment["spec"],
                       opts=pulumi.ResourceOptions(provider=provider, depends_on=[pool]))

pulumi.export("nodePool", pool.object_name)
pulumi.export("nodeClass", node_class.object_name)
pulumi.export("scheduling", scheduling_for(pool_cfg))
