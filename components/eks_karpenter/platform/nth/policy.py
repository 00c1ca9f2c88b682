"""The NTH controller's IAM policy in queue mode (pure data). Its role's trust policies are the shared builders
of `platform/iam/policy.py` (Pod Identity, IRSA), with their checks."""

from __future__ import annotations

from typing import Any

from eks_karpenter.platform.nth.values import MANAGED_TAG


def nth_controller_policy(queue_arn: str) -> dict[str, Any]:
    """The controller's permissions: read and delete messages on its own queue only; complete lifecycle actions
    only on groups carrying the managed tag; and the read-only lookups (which IAM cannot scope to resources)
    that map an event to a node and check its tag."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ConsumeOwnQueue",
                "Effect": "Allow",
                "Action": ["sqs:DeleteMessage", "sqs:ReceiveMessage"],
                "Resource": queue_arn,
            },
            {
                "Sid": "CompleteLifecycleActionOnManagedGroups",
                "Effect": "Allow",
                "Action": "autoscaling:CompleteLifecycleAction",
                "Resource": "*",
                "Condition": {"Null": {f"autoscaling:ResourceTag/{MANAGED_TAG}": "false"}},
            },
            {
                "Sid": "DescribeInstancesAndGroups",
                "Effect": "Allow",
                "Action": ["autoscaling:DescribeAutoScalingInstances", "autoscaling:DescribeTags",
                           "ec2:DescribeInstances"],
                "Resource": "*",
            },
        ],
    }
