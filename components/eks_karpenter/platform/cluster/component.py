"""Cluster component: the EKS control plane, its system node group and add-ons, or an existing cluster."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NotRequired, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from eks_karpenter import tags as T
from eks_karpenter.config.errors import ConfigError, Issue, Path
from eks_karpenter.platform.access.config import ProviderCredentials
from eks_karpenter.platform.cluster import plan as P
from eks_karpenter.platform.cluster.config import ClusterConfig
from eks_karpenter.platform.iam.component import NodeRole, iam_name
from eks_karpenter.platform.iam.policy import partition_of
from eks_karpenter.platform.preflight.facts import ACCESS_ENTRY_MODES
from eks_karpenter.platform.wiring import caller_identity


class ClusterArgs(TypedDict):
    """Inputs of the Cluster component."""

    config: ClusterConfig
    """Validated cluster config."""
    region: str
    """AWS region (for the partition and, for existing clusters, the kubeconfig)."""
    vpcId: pulumi.Input[str]
    """VPC the cluster runs in."""
    privateSubnetIds: pulumi.Input[Sequence[str]]
    """Private subnets (at least two zones) for the control plane's interfaces and the node groups."""
    tags: dict[str, str]
    """Tags for every AWS resource."""
    awsAuthRoleArns: Sequence[pulumi.Input[str]]
    """Node roles to map in aws-auth; used only in the explicit API_AND_CONFIG_MAP compatibility mode."""
    lookupOidcProvider: bool
    """For an existing cluster: look up its IAM OIDC provider (needed for IRSA only)."""
    deletionProtection: bool
    """EKS deletion protection (set for protected stacks, on top of Pulumi's `protect`)."""
    tagSecurityGroup: NotRequired[bool]
    """Tag the cluster security group `karpenter.sh/discovery` (default True). An adopted cluster's group is
    another tool's: tagged only when the stack asks (`network.writeDiscoveryTags`); EC2NodeClasses then select
    it by ID."""
    existingCluster: NotRequired[aws.eks.GetClusterResult | None]
    """For an existing cluster: its `lookup_existing_cluster` result, when the caller looked it up first."""
    source: NotRequired[str]
    """The stack file, for errors only the look-up of an existing cluster finds."""
    configPath: NotRequired[Path]
    """Key path of the cluster config in the stack file (`eks-karpenter:cluster`)."""
    providerCredentials: NotRequired[ProviderCredentials]
    """How this program's Kubernetes provider gets its token (role to assume, AWS CLI profile); default: the
    process's AWS credentials. The exported `kubeconfig` never carries them."""


class Cluster(pulumi.ComponentResource):
    """An EKS cluster ready for Karpenter: access-entry auth, OIDC, a tainted on-demand system node group for
    CoreDNS and the Karpenter controller, pinned add-ons, and the EKS cluster security group tagged as the one
    security group Karpenter discovers. With `existing: true` the cluster is looked up, not created."""

    cluster_name: pulumi.Output[str]
    """EKS cluster name."""
    endpoint: pulumi.Output[str]
    """API server endpoint."""
    certificate_authority: pulumi.Output[str]
    """Base64 cluster CA bundle."""
    oidc_issuer: pulumi.Output[str]
    """OIDC issuer host and path, without `https://`."""
    oidc_provider_arn: pulumi.Output[str]
    """IAM OIDC provider ARN (empty for an existing cluster when not looked up)."""
    cluster_security_group_id: pulumi.Output[str]
    """The EKS cluster security group: the one group tagged `karpenter.sh/discovery`."""
    kubeconfig: pulumi.Output[str]
    """Kubeconfig JSON (secret)."""
    provider: k8s.Provider
    """Kubernetes provider for this cluster, for downstream components."""
    provider_kubeconfig: pulumi.Output[str]
    """The provider's kubeconfig (secret): `kubeconfig` plus `providerCredentials` in `aws eks get-token`."""
    ready: list[pulumi.Resource]
    """What in-cluster components must wait for (and what they are deleted before): node groups, add-ons."""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Cluster", name, None, opts)
        cfg = args["config"]
        self.ready = []
        if cfg.existing:
            self._adopt(name, args)
        else:
            self._create(name, args)
        # The provider authenticates like the exported kubeconfig, plus the stack's own credentials options
        # (a CI deploy role, a local profile); the exported kubeconfig stays neutral for other stacks.
        creds = args.get("providerCredentials") or ProviderCredentials()
        region = args["region"]
        token_kubeconfig: pulumi.Output[str] = pulumi.Output.all(self.endpoint, self.certificate_authority).apply(
            lambda a: P.exec_kubeconfig(cfg.name, a[0], a[1], region, role_arn=creds.role_arn,
                                        profile=creds.profile))
        self.provider_kubeconfig = pulumi.Output.secret(token_kubeconfig)
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.provider_kubeconfig,
                                     opts=pulumi.ResourceOptions(parent=self))
        # On an adopted cluster the security group is not ours: destroy leaves the tag (Karpenter on that cluster,
        # or a stack that re-adopts it, may still select on it). A created cluster's group goes with the cluster.
        if args.get("tagSecurityGroup", True):
            aws.ec2.Tag(f"{name}-sg-discovery", resource_id=self.cluster_security_group_id, key=T.DISCOVERY_KEY,
                        value=cfg.name,
                        opts=pulumi.ResourceOptions(parent=self, retain_on_delete=cfg.existing or None))
        self.register_outputs({
            "clusterName": self.cluster_name,
            "endpoint": self.endpoint,
            "certificateAuthority": self.certificate_authority,
            "oidcIssuer": self.oidc_issuer,
            "oidcProviderArn": self.oidc_provider_arn,
            "clusterSecurityGroupId": self.cluster_security_group_id,
            "kubeconfig": self.kubeconfig,
        })

    def _create(self, name: str, args: ClusterArgs) -> None:
        cfg, tags = args["config"], args["tags"]
        child = pulumi.ResourceOptions(parent=self)
        key_arn: pulumi.Input[str] | None = cfg.kms_key_arn
        if cfg.secrets_encryption and key_arn is None:
            account = caller_identity(self).account_id
            partition = partition_of(args["region"])
            key = aws.kms.Key(f"{name}-secrets", description=f"EKS secrets envelope encryption for {cfg.name}",
                              policy=account.apply(lambda a: json.dumps(
                                  P.secrets_key_policy(partition, a, args["region"]), sort_keys=True)),
                              enable_key_rotation=True, rotation_period_in_days=365, deletion_window_in_days=30,
                              tags=tags, opts=child)
            aws.kms.Alias(f"{name}-secrets", name=f"alias/eks/{cfg.name}", target_key_id=key.key_id, opts=child)
            key_arn = key.arn

        # Created before the cluster, so EKS finds it instead of creating one that never expires. Its name is
        # fixed by EKS: a group left by an earlier cluster of this name must be imported (docs/UPGRADING.md).
        log_groups: list[pulumi.Resource] = []
        if cfg.log_types:
            log_groups.append(aws.cloudwatch.LogGroup(
                f"{name}-control-plane-logs", name=P.control_plane_log_group(cfg.name),
                retention_in_days=cfg.log_retention_in_days, tags=tags, opts=child))

        mappings = [eks.RoleMappingArgs(role_arn=arn, username="system:node:{{EC2PrivateDNSName}}",
                                        groups=["system:bootstrappers", "system:nodes"])
                    for arn in args["awsAuthRoleArns"]] if cfg.aws_auth_compatibility else None
        cluster = eks.Cluster(
            f"{name}-eks",
            name=cfg.name,
            version=cfg.version,
            vpc_id=args["vpcId"],
            private_subnet_ids=args["privateSubnetIds"],
            authentication_mode=eks.AuthenticationMode(cfg.authentication_mode),
            role_mappings=mappings,
            create_oidc_provider=True,
            endpoint_private_access=cfg.endpoint_private_access,
            endpoint_public_access=cfg.endpoint_public_access,
            public_access_cidrs=cfg.public_access_cidrs or None,
            enabled_cluster_log_types=list(cfg.log_types),
            # Explicit: EKS's default (EXTENDED) bills extended support on a cluster left on an old minor.
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=cfg.upgrade_policy.support_type),
            encryption_config_key_arn=key_arn,
            # Node groups and security groups are ours: the EKS cluster SG is the single discovery SG.
            skip_default_node_group=True,
            skip_default_security_groups=True,
            # Add-ons are pinned and ordered below instead of left to pulumi-eks' defaults.
            use_default_vpc_cni=True,
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),
            kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(enabled=False),
            deletion_protection=args["deletionProtection"],
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=log_groups),
        )
        self.cluster_name = pulumi.Output.from_input(cfg.name)
        # Endpoint and CA come from the kubeconfig pulumi-eks renders: plain data, no resource-typed outputs.
        kube = cluster.kubeconfig_json.apply(P.kubeconfig_cluster)
        self.endpoint = kube.apply(lambda c: str(c["server"]))
        self.certificate_authority = kube.apply(lambda c: str(c.get("certificate-authority-data", "")))
        self.oidc_issuer = cluster.oidc_issuer
        self.oidc_provider_arn = cluster.oidc_provider_arn
        self.cluster_security_group_id = cluster.cluster_security_group_id
        self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig_json)

        # EKS creates the access entries of managed node groups' roles itself.
        role = NodeRole(f"{name}-managed-nodes", {
            "roleName": iam_name(cfg.name, "managed-nodes"), "region": args["region"], "tags": tags,
            "description": f"EKS managed node groups of cluster {cfg.name}", "additionalPolicyArns": [],
            "instanceProfile": False}, opts=child)
        sys_cfg = cfg.system_node_group
        system = self._node_group(
            name, P.SYSTEM_GROUP, cluster=cluster, cfg=cfg, role_arn=role.role_arn, capacity_type="ON_DEMAND",
            instance_types=sys_cfg.instance_types, ami_type=sys_cfg.ami_type, disk_size=sys_cfg.disk_size,
            hop_limit=sys_cfg.http_put_response_hop_limit, subnet_ids=args["privateSubnetIds"],
            sizes=(sys_cfg.min_size, sys_cfg.desired_size, sys_cfg.max_size), labels=P.system_labels(cfg),
            taints=[P.mng_taint(P.CRITICAL_ADDONS_TAINT)], tags=tags)
        groups: list[pulumi.Resource] = [system]
        for group in cfg.spot_node_groups:
            groups.append(self._node_group(
                name, group.name, cluster=cluster, cfg=cfg, role_arn=role.role_arn, capacity_type="SPOT",
                instance_types=group.instance_types, ami_type=group.ami_type, disk_size=group.disk_size,
                hop_limit=group.http_put_response_hop_limit, subnet_ids=args["privateSubnetIds"],
                sizes=(group.min_size, group.desired_size, group.max_size), labels=dict(group.labels),
                taints=[P.mng_taint(t) for t in group.taints], tags=tags, resource=f"{name}-spot-{group.name}"))

        addon_opts = pulumi.ResourceOptions(parent=self, depends_on=[system])
        pinned = P.addon_versions(cfg)
        addons = []
        for addon in P.ADDONS:
            config = P.coredns_configuration() if addon == "coredns" else None
            addons.append(aws.eks.Addon(
                f"{name}-{addon}", cluster_name=cfg.name, addon_name=addon, addon_version=pinned[addon],
                configuration_values=json.dumps(config, sort_keys=True) if config else None,
                resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
                tags=tags, opts=addon_opts))
        self.ready = [*groups, *addons]

    def _node_group(self, name: str, group: str, *, cluster: eks.Cluster, cfg: ClusterConfig,
                    role_arn: pulumi.Input[str], capacity_type: str, instance_types: Sequence[str], ami_type: str,
                    disk_size: int, hop_limit: int, subnet_ids: pulumi.Input[Sequence[str]],
                    sizes: tuple[int, int, int], labels: dict[str, str], taints: list[dict[str, str]],
                    tags: dict[str, str], resource: str | None = None) -> eks.ManagedNodeGroup:
        """A managed node group with its own launch template, named by prefix so replacements create first."""
        resource = resource or f"{name}-{group}"
        child = pulumi.ResourceOptions(parent=self)
        template = aws.ec2.LaunchTemplate(
            f"{resource}-lt", description=f"EKS managed node group {group} of cluster {cfg.name}",
            **P.launch_template(ami_type=ami_type, disk_size=disk_size, hop_limit=hop_limit,
                                node_name=f"{cfg.name}-{group}", tags=tags),
            tags=tags, opts=child)
        return eks.ManagedNodeGroup(
            resource,
            cluster=cluster.core,
            node_group_name_prefix=P.node_group_name_prefix(group),
            node_role_arn=role_arn,
            capacity_type=capacity_type,
            instance_types=list(instance_types),
            ami_type=ami_type,
            # With a launch template pulumi-eks no longer defaults the version: pin it, so a cluster upgrade
            # rolls the group's nodes to the new version's AMI.
            version=cfg.version,
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)),
            subnet_ids=subnet_ids,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=sizes[0], desired_size=sizes[1], max_size=sizes[2]),
            labels=labels,
            taints=taints,
            # The system group's size may be raised by hand, the spot groups' by Cluster Autoscaler: not reverted.
            ignore_scaling_changes=True,
            tags=tags,
            opts=child,
        )

    def _adopt(self, name: str, args: ClusterArgs) -> None:
        cfg, region = args["config"], args["region"]
        # One invoke per stack: the cluster's endpoint, CA, issuer and security group (given by the caller when
        # it already looked the cluster up, before registering anything).
        found = args.get("existingCluster") or lookup_existing_cluster(
            cfg.name, args.get("source", "stack config"), args.get("configPath", ("cluster",)), parent=self)
        self.cluster_name = pulumi.Output.from_input(found.name)
        self.endpoint = pulumi.Output.from_input(found.endpoint)
        self.certificate_authority = pulumi.Output.from_input(found.certificate_authorities[0].data or "")
        issuer_url = pulumi.Output.from_input(found.identities[0].oidcs[0].issuer or "")
        self.oidc_issuer = issuer_url.apply(lambda u: u.removeprefix("https://"))
        self.cluster_security_group_id = pulumi.Output.from_input(found.vpc_config.cluster_security_group_id)
        if args["lookupOidcProvider"]:
            provider = aws.iam.get_open_id_connect_provider_output(
                url=issuer_url, opts=pulumi.InvokeOutputOptions(parent=self))
            self.oidc_provider_arn = provider.arn
        else:
            self.oidc_provider_arn = pulumi.Output.from_input("")
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(self.endpoint, self.certificate_authority).apply(
            lambda a: P.exec_kubeconfig(cfg.name, a[0], a[1], region)))


def lookup_existing_cluster(cluster_name: str, source: str, at: Path,
                            parent: pulumi.Resource | None = None) -> aws.eks.GetClusterResult:
    """Look an existing cluster up (a blocking invoke) and refuse one whose nodes could never join.

    Karpenter's nodes join through an EC2_LINUX access entry, which a CONFIG_MAP-only cluster ignores: nodes
    would launch and never become Ready. Known only from the cluster itself, so checked here; call it before
    registering anything, so the refusal leaves nothing half-created.
    """
    found = aws.eks.get_cluster(name=cluster_name, opts=pulumi.InvokeOptions(parent=parent))
    modes = [c.authentication_mode for c in found.access_configs or []]
    mode = modes[0] if modes else "CONFIG_MAP"  # clusters from before access entries report none
    if mode not in ACCESS_ENTRY_MODES:
        raise ConfigError(source, [Issue(
            at + ("existing",), f"the existing cluster {cluster_name!r} uses authentication mode {mode}, in which "
            "access entries (Karpenter's nodes, eks-karpenter:access) do not work: switch it first with `aws eks "
            f"update-cluster-config --name {cluster_name} --access-config authenticationMode=API_AND_CONFIG_MAP` "
            "(aws-auth keeps working; the switch cannot be undone), then run again", True)])
    return found
