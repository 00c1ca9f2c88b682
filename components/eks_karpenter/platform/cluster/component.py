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
from eks_karpenter.arns import partition_of
from eks_karpenter.config.errors import ConfigError, Issue, KeyPath
from eks_karpenter.config.namespaces import in_namespace
from eks_karpenter.platform.access.component import entry_aliases
from eks_karpenter.platform.access.config import Deployer, ProviderCredentials
from eks_karpenter.platform.access.plan import deployer_entries, former_entry_keys, policy_arn
from eks_karpenter.platform.adopted import ACCESS_ENTRY_MODES
from eks_karpenter.platform.cluster import plan as P
from eks_karpenter.platform.cluster.config import ClusterConfig
from eks_karpenter.platform.iam.component import NodeRole
from eks_karpenter.platform.iam.names import IamNames
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
    configPath: NotRequired[KeyPath]
    """Key path of the cluster config in the stack file (`eks-karpenter:cluster`)."""
    providerCredentials: NotRequired[ProviderCredentials]
    """How this program's Kubernetes provider gets its token (role to assume, AWS CLI profile); default: the
    process's AWS credentials. The exported `kubeconfig` never carries them."""
    deployers: NotRequired[Sequence[Deployer]]
    """Identities that run `pulumi up` / `preview`: each gets an access entry the Kubernetes provider waits for."""
    clusterAdmins: NotRequired[Sequence[str]]
    """Principals with AmazonEKSClusterAdminPolicy on the cluster (`access.clusterAdmins`): any of them may run
    `pulumi up`, so their entries are awaited like the deployers' (no destroy deletes its runner's entry first)."""
    adminsComponent: NotRequired[str]
    """Name of the Access component whose entries a deployer's or cluster admin's may take over: a principal
    moved from a team (or, before this component held them, from `clusterAdmins`) keeps its entry (an alias),
    instead of a second entry that EKS refuses."""
    accessTeams: NotRequired[Sequence[str]]
    """Names of the `access.teams`, whose former entry names a deployer's entry also aliases."""
    protect: NotRequired[bool]
    """Protect what holds state (the EKS control plane, its secrets KMS key, its log group) from deletion and
    replacement. Only those: node groups, launch templates, add-ons and the Kubernetes provider stay
    replaceable, so routine changes go through."""
    systemReleaseVersion: NotRequired[str | None]
    """The system node group's AMI release (`<minor>.<patch>-<date>`): the AMI pin's, looked up at preview
    (`lookups.check_pins`), so the group runs the image Karpenter's nodes run and a move of the pin rolls it.
    None: EKS's newest release when the group is created, never moved after."""
    iamNames: NotRequired[IamNames]
    """How the managed node groups' role is named (default: per region)."""
    permissionsBoundary: NotRequired[str | None]
    """Permissions boundary (a managed policy ARN) on every role this component creates, pulumi-eks' cluster role
    included; None: no boundary."""
    adoptLogGroup: NotRequired[bool]
    """The control-plane log group exists and is this stack's by its tags: registered with `import` (a no-op
    while the state holds it), so CreateLogGroup does not fail on it (platform/taken_names.py)."""
    ownerTags: NotRequired[dict[str, str]]
    """The tag naming this Pulumi stack (`tags.stack_owner_tags`), on the control-plane log group only: what the
    preview checks before adopting a group of the cluster's name (platform/taken_names.py)."""


class Cluster(pulumi.ComponentResource):
    """An EKS cluster ready for Karpenter: access-entry auth with an explicit entry per deployer and cluster admin
    (no bootstrap creator admin), tcp/443 rules for the sources `apiAccess` admits, OIDC, a tainted on-demand
    system node group for CoreDNS and the Karpenter controller, pinned add-ons, and the EKS cluster security group
    tagged as the one security group Karpenter discovers. With `existing: true` the cluster is looked up, not
    created."""

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
    api_access: list[pulumi.Resource]
    """The tcp/443 ingress rules of `apiAccess` on the cluster security group."""
    deployer_access: list[pulumi.Resource]
    """The deployers' and cluster admins' access entries and policy associations, which the Kubernetes provider
    depends on."""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Cluster", name, None, opts)
        cfg = args["config"]
        self.ready = []
        self.api_access = []
        if cfg.existing:
            self._adopt(name, args)
        else:
            self._create(name, args)
        # The provider authenticates like the exported kubeconfig, as the AWS provider's identity (its role and
        # profile: `providerCredentials`, which follow aws:assumeRoles and aws:profile); the exported kubeconfig
        # stays neutral for other stacks.
        creds = args.get("providerCredentials") or ProviderCredentials()
        region = args["region"]
        token_kubeconfig: pulumi.Output[str] = pulumi.Output.all(self.endpoint, self.certificate_authority).apply(
            lambda a: P.exec_kubeconfig(cfg.name, a[0], a[1], region, role_arn=creds.role_arn,
                                        profile=creds.profile))
        self.provider_kubeconfig = pulumi.Output.secret(token_kubeconfig)
        self.deployer_access = self._deployers(name, args)
        # Every in-cluster resource uses this provider, so it is created after the deployers' entries and the
        # endpoint's rules exist (no 401, no timeout racing them) and deleted before them on destroy.
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.provider_kubeconfig, opts=pulumi.ResourceOptions(
            parent=self, depends_on=[*self.api_access, *self.deployer_access]))
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
        key_arn = self._secrets_key(name, args)
        log_groups = self._log_groups(name, args)
        cluster = self._control_plane(name, args, key_arn, log_groups)
        self.cluster_name = pulumi.Output.from_input(cfg.name)
        # Endpoint and CA come from the kubeconfig pulumi-eks renders: plain data, no resource-typed outputs.
        kube = cluster.kubeconfig_json.apply(P.kubeconfig_cluster)
        self.endpoint = kube.apply(lambda c: str(c["server"]))
        self.certificate_authority = kube.apply(lambda c: str(c.get("certificate-authority-data", "")))
        self.oidc_issuer = cluster.oidc_issuer
        self.oidc_provider_arn = cluster.oidc_provider_arn
        self.cluster_security_group_id = cluster.cluster_security_group_id
        self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig_json)
        self._cluster = cluster
        self.api_access = self._api_ingress(name, cfg, tags)
        system, groups = self._node_groups(name, args, cluster)
        self.ready = [*groups, *self._addons(name, cfg, tags, system)]

    def _secrets_key(self, name: str, args: ClusterArgs) -> pulumi.Input[str] | None:
        """The secrets envelope-encryption key: the given one, or a new key with an explicit policy."""
        cfg, tags = args["config"], args["tags"]
        if not cfg.secrets_encryption or cfg.kms_key_arn is not None:
            return cfg.kms_key_arn
        child = pulumi.ResourceOptions(parent=self)
        account = caller_identity(self).account_id
        partition = partition_of(args["region"])
        key = aws.kms.Key(f"{name}-secrets", description=f"EKS secrets envelope encryption for {cfg.name}",
                          policy=account.apply(lambda a: json.dumps(
                              P.secrets_key_policy(partition, a, args["region"]), sort_keys=True)),
                          enable_key_rotation=True, rotation_period_in_days=365, deletion_window_in_days=30,
                          tags=tags, opts=self._stateful(args))
        aws.kms.Alias(f"{name}-secrets", name=f"alias/eks/{cfg.name}", target_key_id=key.key_id, opts=child)
        return key.arn

    def _stateful(self, args: ClusterArgs) -> pulumi.ResourceOptions:
        """Options of what holds state (control plane, KMS key, log group): protected when the stack says so.
        Only those: `protect` on this component would reach node groups and add-ons too."""
        return pulumi.ResourceOptions(parent=self, protect=args.get("protect", False) or None)

    def _log_groups(self, name: str, args: ClusterArgs) -> list[pulumi.Resource]:
        """Created before the cluster, so EKS finds it instead of creating one that never expires. Its name is
        fixed by EKS: a group an earlier cluster of this name left is refused at preview unless tagged as this
        cluster's, and then adopted (`adoptLogGroup`)."""
        cfg, tags = args["config"], args["tags"]
        if not cfg.log_types:
            return []
        group = P.control_plane_log_group(cfg.name)
        opts = pulumi.ResourceOptions.merge(self._stateful(args), pulumi.ResourceOptions(
            import_=group if args.get("adoptLogGroup") else None))
        return [aws.cloudwatch.LogGroup(f"{name}-control-plane-logs", name=group,
                                        retention_in_days=cfg.log_retention_in_days,
                                        tags={**tags, **args.get("ownerTags", {})}, opts=opts)]

    def _control_plane(self, name: str, args: ClusterArgs, key_arn: pulumi.Input[str] | None,
                       log_groups: list[pulumi.Resource]) -> eks.Cluster:
        cfg = args["config"]
        mappings = [eks.RoleMappingArgs(role_arn=arn, username="system:node:{{EC2PrivateDNSName}}",
                                        groups=["system:bootstrappers", "system:nodes"])
                    for arn in args["awsAuthRoleArns"]] if cfg.aws_auth_compatibility else None
        bounded = args.get("permissionsBoundary")
        boundary = [permissions_boundary(bounded)] if bounded else []
        return eks.Cluster(
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
            tags=args["tags"],
            # No bootstrap admin for the creator: every deployer is an explicit access entry (`_deployers`).
            opts=pulumi.ResourceOptions.merge(self._stateful(args), pulumi.ResourceOptions(
                depends_on=log_groups, transforms=[no_creator_admin, *boundary])),
        )

    def _api_ingress(self, name: str, cfg: ClusterConfig, tags: dict[str, str]) -> list[pulumi.Resource]:
        """tcp/443 from each `apiAccess` source to the cluster security group. Separate rules, never the
        cluster's own security-group inputs: editing a source creates or deletes a rule, never the cluster."""
        return [aws.vpc.SecurityGroupIngressRule(
            f"{name}-{key}", security_group_id=self.cluster_security_group_id, tags=tags,
            opts=pulumi.ResourceOptions(parent=self), **inputs)
            for key, inputs in P.api_ingress_rules(cfg.api_access, cfg.name)]

    def _node_groups(self, name: str, args: ClusterArgs,
                     cluster: eks.Cluster) -> tuple[eks.ManagedNodeGroup, list[pulumi.Resource]]:
        """The system group and the CAS-era spot groups, sharing one node role (EKS creates the access entries of
        managed node groups' roles itself)."""
        cfg, tags = args["config"], args["tags"]
        names = args.get("iamNames") or IamNames(cfg.name, args["region"])
        role = NodeRole(f"{name}-managed-nodes", {
            "roleName": names.role("managed-nodes"), "region": args["region"], "tags": tags,
            "description": f"EKS managed node groups of cluster {cfg.name}", "additionalPolicyArns": [],
            "instanceProfile": False, "permissionsBoundary": args.get("permissionsBoundary")},
            opts=pulumi.ResourceOptions(parent=self))
        sys_cfg = cfg.system_node_group
        system = self._node_group(
            name, P.SYSTEM_GROUP, cluster=cluster, cfg=cfg, role_arn=role.role_arn, capacity_type="ON_DEMAND",
            instance_types=sys_cfg.instance_types, ami_type=sys_cfg.ami_type, disk_size=sys_cfg.disk_size,
            hop_limit=sys_cfg.http_put_response_hop_limit, subnet_ids=args["privateSubnetIds"],
            sizes=(sys_cfg.min_size, sys_cfg.desired_size, sys_cfg.max_size), labels=P.system_labels(cfg),
            taints=[P.mng_taint(P.CRITICAL_ADDONS_TAINT)], tags=tags, release=args.get("systemReleaseVersion"))
        groups: list[pulumi.Resource] = [system]
        for group in cfg.spot_node_groups:
            groups.append(self._node_group(
                name, group.name, cluster=cluster, cfg=cfg, role_arn=role.role_arn, capacity_type="SPOT",
                instance_types=group.instance_types, ami_type=group.ami_type, disk_size=group.disk_size,
                hop_limit=group.http_put_response_hop_limit, subnet_ids=args["privateSubnetIds"],
                sizes=(group.min_size, group.desired_size, group.max_size), labels=dict(group.labels),
                taints=[P.mng_taint(t) for t in group.taints], tags=tags, resource=f"{name}-spot-{group.name}"))
        return system, groups

    def _addons(self, name: str, cfg: ClusterConfig, tags: dict[str, str],
                system: pulumi.Resource) -> list[pulumi.Resource]:
        """The pinned EKS add-ons, after the system group (CoreDNS runs there)."""
        addon_opts = pulumi.ResourceOptions(parent=self, depends_on=[system])
        pinned = P.addon_versions(cfg)
        addons: list[pulumi.Resource] = []
        for addon in P.ADDONS:
            config = P.coredns_configuration() if addon == "coredns" else None
            addons.append(aws.eks.Addon(
                f"{name}-{addon}", cluster_name=cfg.name, addon_name=addon, addon_version=pinned[addon],
                configuration_values=json.dumps(config, sort_keys=True) if config else None,
                resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
                tags=tags, opts=addon_opts))
        return addons

    def _deployers(self, name: str, args: ClusterArgs) -> list[pulumi.Resource]:
        """One access entry and policy association per declared deployer and cluster admin (whoever may run
        `pulumi up`), after the cluster (and, when this stack creates it, its endpoint rules). The Kubernetes
        provider depends on all of them: every in-cluster resource is created after them and deleted before them."""
        cfg = args["config"]
        partition = partition_of(args["region"])
        # The entries need the cluster; the cluster name alone carries no dependency on it.
        after = pulumi.ResourceOptions(parent=self, depends_on=[] if cfg.existing else [self._cluster])
        homes = {"cluster": name, "access": args.get("adminsComponent")}
        teams = list(args.get("accessTeams") or [])
        deployers = list(args.get("deployers") or [])
        out: list[pulumi.Resource] = []
        names: list[str | None] = [*(d.name for d in deployers), *(None for _ in args.get("clusterAdmins") or [])]
        for deployer, entry in zip(names, deployer_entries(deployers, list(args.get("clusterAdmins") or [])),
                                   strict=True):
            # One entry per principal, whichever list holds it: the former names are aliases (access/plan.py).
            former = former_entry_keys(entry.principal_arn, deployer=deployer, teams=teams)
            moved, moved_assoc = entry_aliases(entry.key, "cluster", homes, former)
            resource = aws.eks.AccessEntry(
                f"{name}-{entry.key}", cluster_name=cfg.name, principal_arn=entry.principal_arn, type="STANDARD",
                kubernetes_groups=list(entry.groups) or None, tags=args["tags"],
                opts=pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(aliases=moved)))
            out.append(resource)
            if entry.policy is None:  # a preview: its Kubernetes group's roles are all it reads
                continue
            out.append(aws.eks.AccessPolicyAssociation(
                f"{name}-{entry.key}", cluster_name=resource.cluster_name, principal_arn=resource.principal_arn,
                policy_arn=policy_arn(partition, entry.policy),
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions(parent=resource, aliases=moved_assoc)))
        return out

    def _node_group(self, name: str, group: str, *, cluster: eks.Cluster, cfg: ClusterConfig,
                    role_arn: pulumi.Input[str], capacity_type: str, instance_types: Sequence[str], ami_type: str,
                    disk_size: int, hop_limit: int, subnet_ids: pulumi.Input[Sequence[str]],
                    sizes: tuple[int, int, int], labels: dict[str, str], taints: list[dict[str, str]],
                    tags: dict[str, str], resource: str | None = None,
                    release: str | None = None) -> eks.ManagedNodeGroup:
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
            # The AMI release within that version (the pin's, for the system group): a new one rolls the nodes.
            release_version=release,
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


def permissions_boundary(arn: str) -> pulumi.ResourceTransform:
    """Transform of pulumi-eks' Cluster component: the roles it creates (its cluster service role) get `arn` as
    their permissions boundary. pulumi-eks has no input for it; an update in place, never a new role."""

    def boundary(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ != P.IAM_ROLE_TYPE:
            return None
        return pulumi.ResourceTransformResult(props={**args.props, "permissionsBoundary": arn}, opts=args.opts)

    return boundary


def no_creator_admin(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
    """Transform of pulumi-eks' Cluster component: its `aws.eks.Cluster` child gets no bootstrap creator admin
    (`P.without_creator_admin`). Transforms reach the children of a remote component; nothing else changes."""
    if args.type_ != P.EKS_CLUSTER_TYPE:
        return None
    return pulumi.ResourceTransformResult(props=P.without_creator_admin(dict(args.props)), opts=args.opts)



def lookup_existing_cluster(cluster_name: str, source: str, at: KeyPath,
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
            at + ("existing",), in_namespace(
                f"the existing cluster {cluster_name!r} uses authentication mode {mode}, in which access entries "
                "(Karpenter's nodes, eks-karpenter:access) do not work: switch it first with `aws eks "
                f"update-cluster-config --name {cluster_name} --access-config authenticationMode=API_AND_CONFIG_MAP` "
                "(aws-auth keeps working; the switch cannot be undone), then run again", pulumi.get_project()),
            True)])
    return found
