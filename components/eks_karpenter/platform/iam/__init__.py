"""IAM layer: Karpenter controller and node identities."""

from eks_karpenter.platform.iam.component import KarpenterIam, KarpenterIamArgs, NodeRole, NodeRoleArgs
from eks_karpenter.platform.iam.names import IamNames, IamNameStyle, iam_name, regional_iam_name
from eks_karpenter.platform.iam.policy import PolicyScope, controller_policies

__all__ = ["IamNameStyle", "IamNames", "KarpenterIam", "KarpenterIamArgs", "NodeRole", "NodeRoleArgs", "PolicyScope",
           "controller_policies", "iam_name", "regional_iam_name"]
