"""The whole platform from one validated stack config: config -> components -> outputs (`build_platform`).

Any Pulumi program can call it (this repository's `infra/program.py` and the template's do, in two lines).

Order matters twice: for `pulumi up` (a component is created after what it reads) and for `pulumi destroy`,
which runs the dependency graph backwards: NodePools, then EC2NodeClasses, then the Karpenter controller, then
the node groups and the cluster. Deleting pools while the controller still runs lets Karpenter drain and
terminate the instances it launched instead of leaving them running.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pulumi

from eks_karpenter import tags
from eks_karpenter.config.running import locate_stack_file, read_stack_config
from eks_karpenter.config.stack import StackConfig
from eks_karpenter.platform.access import Access, access_entries
from eks_karpenter.platform.cluster import Cluster
from eks_karpenter.platform.cluster.component import lookup_existing_cluster
from eks_karpenter.platform.cluster.rules import instance_type_warnings, version_warnings
from eks_karpenter.platform.iam import KarpenterIam, NodeRole, iam_name
from eks_karpenter.platform.interruption import InterruptionQueue
from eks_karpenter.platform.karpenter import Karpenter
from eks_karpenter.platform.karpenter.fargate import KarpenterFargateProfile
from eks_karpenter.platform.namespaces import Namespaces, platform_namespaces
from eks_karpenter.platform.network import Network
from eks_karpenter.platform.nodepool import (
    NodeClass,
    NodePool,
    render_node_class,
    render_node_pool,
    scheduling_for,
    warnings_for,
)
from eks_karpenter.platform.nodepool.config import NodeClassConfig, SecurityGroupSelectorTerm
from eks_karpenter.platform.nth import NodeTerminationHandler


def today() -> date:
    """The day of the plan (UTC): EKS support windows are judged against it."""
    return datetime.now(UTC).date()


def build_platform(cfg: StackConfig) -> None:
    """Register the platform for one validated stack config and export its outputs."""
    name = cfg.cluster.name
    for warning in [*version_warnings(cfg.cluster, today()), *instance_type_warnings(cfg.cluster),
                    *warnings_for(cfg.node_pools, cfg.node_classes, protected=cfg.protect)]:
        pulumi.log.warn(warning)
    stack_tags = tags.base_tags(name, cfg.tags)
    stateful = pulumi.ResourceOptions(protect=cfg.protect)
    kcfg = cfg.karpenter

    project = pulumi.get_project()  # errors name the keys as the user's stack file spells them
    _, source = locate_stack_file(project, pulumi.get_stack())
    # An existing cluster is looked up before anything is registered: if it cannot take Karpenter's nodes, the
    # error leaves nothing half-created.
    existing = lookup_existing_cluster(name, source, (f"{project}:cluster",)) if cfg.cluster.existing else None

    network = Network("network", {"clusterName": name, "config": cfg.network, "tags": stack_tags}, opts=stateful)
    private_subnets = network.private_subnet_ids.apply(lambda by_zone: [by_zone[z] for z in sorted(by_zone)])

    # An explicit name: EC2NodeClasses name the role (or its instance profile) before it exists.
    node_role_name = iam_name(name, "karpenter-node")
    node_role = NodeRole("karpenter-node-role", {
        "roleName": node_role_name, "description": f"Nodes Karpenter launches for EKS cluster {name}",
        "region": cfg.region, "tags": stack_tags,
        "additionalPolicyArns": list(kcfg.node_role.additional_policy_arns),
        "instanceProfile": kcfg.node_role.instance_profile,
    })

    cluster = Cluster("cluster", {
        "config": cfg.cluster, "region": cfg.region, "vpcId": network.vpc_id, "privateSubnetIds": private_subnets,
        "tags": stack_tags, "awsAuthRoleArns": [node_role.role_arn],
        "lookupOidcProvider": kcfg.identity == "irsa", "deletionProtection": cfg.protect,
        "providerCredentials": cfg.access.provider_credentials, "source": source,
        "configPath": (f"{project}:cluster",), "existingCluster": existing,
    }, opts=stateful)

    # People, CI roles and consumer stacks' deploy roles: access entries with access-policy associations.
    access = Access("access", {
        "clusterName": name, "region": cfg.region, "config": cfg.access, "configPath": (f"{project}:access",),
        "source": source, "clusterCreatedHere": not cfg.cluster.existing,
        "tags": stack_tags,
    }, opts=pulumi.ResourceOptions(depends_on=[cluster], providers={"kubernetes": cluster.provider})) \
        if cfg.access.cluster_admins or cfg.access.teams else None

    queue = InterruptionQueue("interruption", {"clusterName": name, "tags": stack_tags}) \
        if cfg.interruption.enabled else None

    iam = KarpenterIam("karpenter-iam", {
        "clusterName": name, "region": cfg.region, "identity": kcfg.identity, "namespace": kcfg.namespace,
        "nodeRoleArn": node_role.role_arn, "interruptionQueueArn": queue.queue_arn if queue else None,
        "zonalShift": kcfg.zonal_shift,
        "oidcProviderArn": cluster.oidc_provider_arn, "oidcIssuer": cluster.oidc_issuer,
        "spotServiceLinkedRole": kcfg.spot_service_linked_role, "tags": stack_tags,
    }, opts=pulumi.ResourceOptions(depends_on=[cluster]))

    in_cluster = pulumi.ResourceOptions(providers={"kubernetes": cluster.provider})
    wanted = platform_namespaces(
        karpenter=kcfg.namespace,
        node_termination_handler=cfg.node_termination_handler.namespace if cfg.node_termination_handler.enabled
        else None,
        teams=[(team.name, team.namespaces) for team in cfg.access.teams])
    namespaces = Namespaces("namespaces", {"namespaces": wanted, "deleteTimeout": kcfg.delete_timeout},
                            opts=in_cluster) if wanted else None

    def namespace(name: str) -> list[pulumi.Resource]:
        return namespaces.for_namespace(name) if namespaces else []

    # Everything the controller needs running before it starts, and still there while it drains nodes on
    # destroy (NodePools and EC2NodeClasses depend on the controller, so they are deleted first): node groups
    # and add-ons, every piece of its IAM (the attachments are the role's children, which a depends_on on the
    # IAM component would not reach), the interruption queue with its policy and rules, and its namespace.
    # The node role too: the EC2NodeClasses name it, and depending on the controller alone (not on each piece of the
    # role as well) keeps one dependency per class while destroy still removes every class before the role.
    controller_needs: list[pulumi.Resource] = [*cluster.ready, *iam.ready, *node_role.ready,
                                               *([queue] if queue else []),
                                               *namespace(kcfg.namespace)]
    if kcfg.controller_on_fargate:
        controller_needs.append(KarpenterFargateProfile("karpenter-fargate", {
            "clusterName": name, "region": cfg.region, "namespace": kcfg.namespace, "subnetIds": private_subnets,
            "tags": stack_tags}, opts=pulumi.ResourceOptions(depends_on=[cluster])))

    karpenter = Karpenter("karpenter", {
        "config": kcfg, "clusterName": name, "clusterEndpoint": cluster.endpoint,
        "interruptionQueueName": queue.queue_name if queue else None,
        "controllerRoleArn": iam.controller_role_arn, "dependsOn": controller_needs,
        "deleteTimeout": kcfg.delete_timeout, "systemNodeGroup": not cfg.cluster.existing,
    }, opts=in_cluster)

    # Classes and pools belong to the Karpenter layer and need its CRDs and a running controller; destroy removes
    # them first, while the controller (and through it its IAM, access entry and queue) still runs to drain and
    # terminate their nodes. Their finalizers hold each delete until then: bounded by `deleteTimeout`.
    finalized = pulumi.CustomTimeouts(delete=kcfg.delete_timeout)
    classes: dict[str, NodeClass] = {}
    for node_class in cfg.node_classes:
        if kcfg.node_role.instance_profile and not (node_class.role or node_class.instance_profile):
            node_class = node_class.model_copy(update={"instance_profile": node_role_name})
        node_class = with_node_security_groups(node_class, name, cfg.cluster.node_security_group_ids)
        classes[node_class.name] = NodeClass(
            f"nodeclass-{node_class.name}",
            {"manifest": render_node_class(node_class, name, node_role_name, stack_tags)},
            opts=pulumi.ResourceOptions(parent=karpenter, depends_on=[karpenter.controller],
                                        custom_timeouts=finalized))
    for pool in cfg.node_pools:
        NodePool(f"nodepool-{pool.name}", {"manifest": render_node_pool(pool)},
                 opts=pulumi.ResourceOptions(parent=karpenter,
                                             depends_on=[karpenter.controller, classes[pool.node_class]],
                                             custom_timeouts=finalized))

    if cfg.node_termination_handler.enabled:
        NodeTerminationHandler("node-termination-handler", {
            "config": cfg.node_termination_handler, "clusterName": name, "tags": stack_tags,
            "oidcProviderArn": cluster.oidc_provider_arn, "oidcIssuer": cluster.oidc_issuer,
        }, opts=pulumi.ResourceOptions(
            providers={"kubernetes": cluster.provider},
            depends_on=[*cluster.ready, *namespace(cfg.node_termination_handler.namespace)]))

    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterEndpoint", cluster.endpoint)
    pulumi.export("clusterCertificateAuthority", cluster.certificate_authority)
    pulumi.export("oidcIssuer", cluster.oidc_issuer)
    pulumi.export("oidcProviderArn", cluster.oidc_provider_arn)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("clusterSecurityGroupId", cluster.cluster_security_group_id)
    pulumi.export("nodeRoleName", node_role.role_name)
    pulumi.export("nodeRoleArn", node_role.role_arn)
    pulumi.export("expectedNodeRoleName", node_role_name)
    pulumi.export("controllerRoleArn", iam.controller_role_arn)
    pulumi.export("karpenterVersion", karpenter.version)
    pulumi.export("interruptionQueueName", queue.queue_name if queue else None)
    pulumi.export("nodePools", [p.name for p in cfg.node_pools])
    pulumi.export("workloadScheduling", {p.name: scheduling_for(p) for p in cfg.node_pools})
    pulumi.export("accessPrincipals", [e.principal_arn for e in access_entries(cfg.access)] if access else [])
    pulumi.export("teamNamespaces", {team.name: list(team.namespaces) for team in cfg.access.teams})
    pulumi.export("vpcId", network.vpc_id)
    pulumi.export("privateSubnetIds", network.private_subnet_ids)
    pulumi.export("publicSubnetIds", network.public_subnet_ids)
    pulumi.export("discoveryTagValue", network.discovery_tag_value)


def with_node_security_groups(node_class: NodeClassConfig, cluster_name: str,
                              group_ids: list[str]) -> NodeClassConfig:
    """The class with the existing nodes' security groups added, by id, to its selector terms (the discovery
    tag when it sets none), so Karpenter's nodes get them alongside the cluster security group."""
    if not group_ids:
        return node_class
    terms = list(node_class.security_group_selector_terms or
                 [SecurityGroupSelectorTerm(tags=tags.discovery_tags(cluster_name))])
    have = {t.id for t in terms}
    terms += [SecurityGroupSelectorTerm(id=sg) for sg in group_ids if sg not in have]
    return node_class.model_copy(update={"security_group_selector_terms": terms})


def main() -> None:
    """A whole program in one call: the running stack's validated config, then the platform."""
    build_platform(read_stack_config())
