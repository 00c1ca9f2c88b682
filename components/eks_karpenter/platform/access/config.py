"""Who can reach the cluster (stack key `eks-karpenter:access`): admins, teams, and how Pulumi itself connects.

EKS access entries (authentication mode `API` or `API_AND_CONFIG_MAP`) map an IAM principal to Kubernetes
permissions through AWS-managed access policies; no aws-auth ConfigMap and no RBAC objects are needed. ARNs are
checked in rules.py (partition, account, resource type) so a typo fails the plan, not the `up`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from eks_karpenter.config.model import Model, empty_list
from eks_karpenter.platform.namespaces.plan import PodSecurityLevel, PodSecurityMode
from eks_karpenter.platform.nodepool.fields import Quantity

TeamName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=40)]
Namespace = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
Arn = Annotated[str, StringConstraints(min_length=1, max_length=2048)]
"""An IAM principal ARN; its shape is checked in rules.py, with a message saying what is wrong."""
Profile = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.@+=,-]+$", max_length=128)]

TeamPolicy = Literal["admin", "edit", "view"]
DeployerName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=40)]


class Deployer(Model):
    """An identity that runs `pulumi up` or `pulumi preview` on this stack (the program's Kubernetes provider
    authenticates as it): it gets an explicit access entry, which every in-cluster resource waits for on create
    and outlives on destroy. The cluster's creator gets no implicit entry (EKS's bootstrap creator admin is off)."""

    name: DeployerName
    """Short name (lowercase, digits, dashes), used in resource names: `laptop`, `ci`, `preview`."""
    principal_arn: Arn
    """The IAM role or user, as IAM shows it: an IAM Identity Center role with its
    `aws-reserved/sso.amazonaws.com/[<region>/]` path (`aws iam get-role --role-name AWSReservedSSO_... --query
    Role.Arn`), never the `assumed-role` session ARN `aws sts get-caller-identity` prints."""
    role: Literal["deploy", "preview"] = "deploy"
    """`deploy`: AmazonEKSClusterAdminPolicy (the program creates CRDs, cluster roles, Helm releases).
    `preview`: no EKS access policy, only the Kubernetes group `eks-karpenter:preview`, whose roles read what a
    preview, the preflight and the drift check read back: the cluster-scoped objects the stack manages, the CRDs
    and NodeClaims, and in the namespaces where the stack puts objects (the platform's, never a team's) those
    objects' kinds, Helm's release Secrets among them. Nothing of a team's workloads (Pods, logs, ConfigMaps,
    Secrets). Where the server-side dry run of a change is refused, the Kubernetes provider previews client-side
    instead (docs/deploy.md says what that misses)."""


class NodePoolCeiling(Model):
    """The most a team's NodePool may set as its `limits` (each pool: an admission policy sees one object)."""

    cpu: Quantity = "100"
    """Largest `limits.cpu` of a team's NodePool, e.g. `"100"` (vCPUs)."""
    memory: Quantity = "400Gi"
    """Largest `limits.memory` of a team's NodePool, e.g. `400Gi`."""


class Team(Model):
    """A team whose principals get one access policy, scoped to the team's namespaces."""

    name: TeamName
    """Team name (lowercase, digits, dashes), used in resource names."""
    namespaces: list[Namespace] = Field(min_length=1)
    """Namespaces the team may use. The platform creates them (kept on destroy: they hold the team's
    workloads); built-in namespaces such as `kube-system` are refused."""
    principal_arns: list[Arn] = Field(min_length=1)
    """IAM roles or users of the team, e.g. its CI deploy role (`arn:aws:iam::<account>:role/<name>`) and its
    IAM Identity Center role (`arn:aws:iam::<account>:role/aws-reserved/sso.amazonaws.com/<region>/
    AWSReservedSSO_<set>_<suffix>`, the path kept: access entries accept role paths)."""
    policy: TeamPolicy = "edit"
    """EKS access policy within the namespaces: `admin` (AmazonEKSAdminPolicy: also Roles and RoleBindings),
    `edit` (AmazonEKSEditPolicy: workloads, no RBAC), or `view` (AmazonEKSViewPolicy: read-only, no Secrets)."""
    node_pools: bool = False
    """Let the team's principals manage Karpenter NodePools and EC2NodeClasses (cluster-scoped objects, which no
    namespace-scoped access policy reaches): a ClusterRole bound to the Kubernetes group
    `eks-karpenter:team:<name>`, which the team's access entries carry. Needed by a consumer stack that adds its
    own pool (like examples/team-batch). Classes can only use roles the controller may pass (the node role).
    An admission policy (Kubernetes 1.30+) holds the team to its own objects, named `<team>-...` or labelled
    `eks-karpenter/team: <team>`, and refuses user data, AMIs other than an alias, a role or instance profile
    other than the platform's, security groups other than the platform's, and pool limits above
    `nodePoolLimits`."""
    node_pool_limits: NodePoolCeiling = Field(default_factory=NodePoolCeiling)
    """With `nodePools: true`: the ceiling of each of the team's NodePools' `limits` (both must be set)."""
    pod_security: PodSecurityLevel = "baseline"
    """The Pod Security Standard enforced in the team's namespaces: `baseline` (no privileged containers, host
    network, PID or IPC, hostPath volumes or added capabilities: what would give a pod the node, its role's
    credentials or the kubelet's identity), `restricted` (also non-root, no privilege escalation, a seccomp
    profile), or `privileged` (nothing enforced: an exception the platform grants a team on purpose). Audit and
    warn run one level stricter."""


class ProviderCredentials(Model):
    """How this program's Kubernetes provider authenticates (`aws eks get-token` in its kubeconfig). Unset, it
    uses the AWS credentials `pulumi up` runs with. Not part of the exported `kubeconfig`: consumer stacks
    connect with their own credentials."""

    role_arn: Arn | None = None
    """Role to assume for the Kubernetes API (`aws eks get-token --role-arn`). Defaults to the AWS provider's
    own (the last role of `aws:assumeRoles`); any other role is refused, so that both providers act as one
    identity, a declared deployer."""
    profile: Profile | None = None
    """AWS CLI profile for the token (`aws eks get-token --profile`). Defaults to `aws:profile`; any other
    profile is refused."""


class AccessConfig(Model):
    """Cluster access: the deployers, admins, namespace-scoped teams, and the Kubernetes provider's credentials.

    Nobody has access unless listed here: the identity that creates the cluster gets no bootstrap entry. EKS
    allows one access entry per principal, so each principal appears once across these lists.
    """

    deployers: list[Deployer] = Field(default_factory=empty_list)
    """Every identity that runs `pulumi up` or `pulumi preview` (a laptop admin, the CI deploy role, the PR
    preview role). Required for a cluster this stack creates."""
    cluster_admins: list[Arn] = Field(default_factory=empty_list)
    """IAM roles, users or IAM Identity Center roles with AmazonEKSClusterAdminPolicy on the whole cluster. Each may
    also run `pulumi up`: their entries are created before, and deleted after, everything in the cluster."""
    teams: list[Team] = Field(default_factory=empty_list)
    """Teams with an access policy scoped to their namespaces (consumer stacks' deploy roles go here)."""
    pod_security_mode: PodSecurityMode = "enforce"
    """`enforce` (default): each team namespace refuses pods that break the team's `podSecurity` level. `audit`:
    nothing is refused; audit and warn run at the team's level, so a running stack sees which workloads break it
    before it enforces (docs/operations.md, "Tenancy")."""
    provider_credentials: ProviderCredentials = Field(default_factory=ProviderCredentials)
    """Credentials of this program's own Kubernetes provider (for a CI role or a local profile)."""
