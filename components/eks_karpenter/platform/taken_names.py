"""Fixed names a first `up` can find taken, looked up at preview before anything is registered.

Two resources of this stack have names fixed by others, and an account that ran a cluster of the same name
before (or runs one from another stack) may hold them:

- the control-plane log group `/aws/eks/<cluster>/cluster` (its name is EKS's): EKS creates it when logging is
  on and does not delete it with the cluster, and may write to it after a `pulumi destroy` deleted it, so a
  re-created cluster finds it. `CreateLogGroup` then fails (ResourceAlreadyExistsException);
- the interruption queue, named after the cluster (Karpenter's getting-started CloudFormation stack names its
  queue the same way). SQS's `CreateQueue` returns an existing queue of the same name and attributes, so the
  stack would take it over silently and a `pulumi destroy` would delete another tool's queue.

Either is this stack's when its stack tag (`tags.STACK_TAG_KEY`, `<organization>/<project>/<stack>`, which the
platform sets on both) names this stack: the program then registers it with `import` (a no-op while the state
holds it; an adoption when the user tagged it to keep it). The cluster tag alone does not do: two stacks of one
cluster name in an account (a copied stack file) would adopt each other's, and a destroy of one would delete the
other's logs and queue. One that CloudFormation created is never adopted, whatever its tags: deleting that
CloudFormation stack would delete it. Anything else found is refused, naming the resource and the ways out, so
nothing is deleted or taken over by surprise. Offline the mocks answer as a fresh account: neither exists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import pulumi
import pulumi_aws as aws

from eks_karpenter.config.errors import ConfigError, Issue, KeyPath
from eks_karpenter.platform.cluster.plan import control_plane_log_group
from eks_karpenter.tags import CLOUDFORMATION_STACK_TAG_KEY, CLUSTER_TAG_KEY, STACK_TAG_KEY, stack_owner_tags

LOG_GROUPS_TOKEN = "aws:cloudwatch/getLogGroups:getLogGroups"
LOG_GROUP_TOKEN = "aws:cloudwatch/getLogGroup:getLogGroup"
QUEUES_TOKEN = "aws:sqs/getQueues:getQueues"
QUEUE_TOKEN = "aws:sqs/getQueue:getQueue"
READ_ACTIONS: dict[str, tuple[str, ...]] = {
    LOG_GROUPS_TOKEN: ("logs:DescribeLogGroups",),
    # The group, then its tags by ARN (the data source's `@Tags(identifierAttribute="arn")`).
    LOG_GROUP_TOKEN: ("logs:DescribeLogGroups", "logs:ListTagsForResource"),
    QUEUES_TOKEN: ("sqs:ListQueues",),
    # The queue's URL by name, its ARN, then its tags.
    QUEUE_TOKEN: ("sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ListQueueTags"),
}
"""What each look-up calls (evidence in tools/deploy_actions.py, which grants them): a failed one names its own."""

T = TypeVar("T")


@dataclass(frozen=True)
class Found:
    """A resource of the name this stack gives one, as the account has it."""

    name: str
    import_id: str
    """Its Pulumi id (a log group's name, a queue's URL)."""
    arn: str
    tags: Mapping[str, str] = field(default_factory=dict)

    def owned_by(self, cluster: str, stack: str) -> bool:
        """Tagged as `stack`'s; or, without a stack tag, as `cluster`'s: what an earlier release of this library
        tagged, for this very stack (it set no stack tag), and the next `up` adds the stack tag."""
        if CLOUDFORMATION_STACK_TAG_KEY in self.tags:
            return False
        if STACK_TAG_KEY in self.tags:
            return self.tags[STACK_TAG_KEY] == stack
        return self.tags.get(CLUSTER_TAG_KEY) == cluster


@dataclass(frozen=True)
class Adopted:
    """Pulumi ids of the fixed-name resources that exist and are this stack's: registered with `import`."""

    log_group: str | None = None
    queue: str | None = None
    owner_tags: dict[str, str] = field(default_factory=dict)
    """The stack tag both carry (`tags.stack_owner_tags`): set on the planned log group and queue."""


def own_tags(cluster: str, stack: str) -> str:
    """The tags that mark a resource as this stack's, as the AWS CLI's `--tags` takes them."""
    return f"{CLUSTER_TAG_KEY}={cluster},{STACK_TAG_KEY}={stack}"


def _not_ours(found: Found, kind: str, stack: str, region: str, retag: str) -> str | None:
    """Why `found` is not this stack's to adopt when it is another tool's or another stack's (None otherwise)."""
    if (cfn := found.tags.get(CLOUDFORMATION_STACK_TAG_KEY)) is not None:
        return (f"the {kind} {found.name} already exists in this account ({region}) and belongs to the "
                f"CloudFormation stack {cfn} (its tag {CLOUDFORMATION_STACK_TAG_KEY}), so it is never adopted: "
                f"`aws cloudformation delete-stack` of that stack would delete it under this one. Once nothing "
                f"reads it, delete that stack (`aws cloudformation delete-stack --region {region} --stack-name "
                f"{cfn}`, which deletes whatever else it made) or remove the {kind} from that stack's template "
                "(the stack update deletes it); the next `up` creates this stack's own")
    other = found.tags.get(STACK_TAG_KEY)
    if other is None or other == stack:
        return None
    return (f"the {kind} {found.name} already exists in this account ({region}) and is the Pulumi stack {other}'s "
            f"(its tag {STACK_TAG_KEY}): two stacks cannot share the cluster name, and adopting it would let a "
            f"destroy of this stack delete that stack's {kind}. Give this stack's cluster another `name`; if {other} "
            f"is this very stack under an earlier name (a renamed stack or project, another backend), retag it "
            f"({retag} {STACK_TAG_KEY}={stack}`)")


def log_group_issue(found: Found, cluster: str, stack: str, region: str, at: KeyPath, value: object) -> Issue | None:
    """A control-plane log group this stack did not create (no stack or cluster tag of its own)."""
    if found.owned_by(cluster, stack):
        return None
    tag = f"`aws logs tag-resource --region {region} --resource-arn {found.arn} --tags"
    if reason := _not_ours(found, "log group", stack, region, tag):
        return Issue(at, reason, value)
    return Issue(at, f"the log group {found.name} already exists in this account ({region}) and this stack did not "
                 f"create it: EKS keeps a cluster's log group when the cluster is deleted, so an earlier cluster named "
                 f"{cluster} left it, and `pulumi up` would stop on CreateLogGroup (ResourceAlreadyExistsException); "
                 "or it is this stack's own group, whose tags were removed. To keep its logs under this stack, mark "
                 f"it as this stack's ({tag} {own_tags(cluster, stack)}`): the next `up` adopts it (sets "
                 "its retention and tags; a destroy then deletes it with its logs). Or delete it with its logs "
                 f"(`aws logs delete-log-group --region {region} --log-group-name {found.name}`), or turn "
                 "control-plane logging off (`logTypes: []`)", value)


def queue_issue(found: Found, cluster: str, stack: str, region: str, at: KeyPath, value: object) -> Issue | None:
    """An interruption queue of the cluster's name that this stack did not create."""
    if found.owned_by(cluster, stack):
        return None
    tag = f"`aws sqs tag-queue --region {region} --queue-url {found.import_id} --tags"
    if reason := _not_ours(found, "SQS queue", stack, region, tag):
        return Issue(at, reason, value)
    return Issue(at, f"an SQS queue {found.name} already exists in this account ({region}) and this stack did not "
                 "create it (Karpenter's getting-started CloudFormation stack creates one named after the cluster): "
                 "SQS returns an existing queue of the same name to CreateQueue, so this stack would take it over "
                 "unnoticed and a `pulumi destroy` would delete it. Remove it where it was made once nothing reads "
                 f"it (that stack: `aws cloudformation delete-stack --region {region} --stack-name Karpenter-{cluster}`"
                 f", which deletes its IAM roles too; else `aws sqs delete-queue --region {region} --queue-url "
                 f"{found.import_id}`); or, if no CloudFormation stack made it, manage it from this stack: mark it as "
                 f"this stack's ({tag} {own_tags(cluster, stack)}`), the next `up` adopts it, and a destroy deletes it",
                 value)


def _look_up(token: str, at: KeyPath, source: str, call: Callable[[], T]) -> T:
    """`call`'s answer; a failed invoke (access denied, throttling) is refused, naming what the look-up needs."""
    try:
        return call()
    except Exception as err:  # the provider reports every failure as a failed invoke, whatever its type
        actions = ", ".join(READ_ACTIONS[token])
        raise ConfigError(source, [Issue(at, f"looking up the fixed-name resources a first `up` may find taken "
                                             f"failed ({err}): the identity running the preview needs {actions} "
                                             "(docs/UPGRADING.md lists them for existing deploy and preview roles)",
                                         has_value=False)]) from err


def find_log_group(name: str, at: KeyPath = (), source: str = "") -> Found | None:
    """The log group `name`: listed by prefix (which answers an empty list when there is none), then read for
    its tags."""
    listed = _look_up(LOG_GROUPS_TOKEN, at, source, lambda: aws.cloudwatch.get_log_groups(log_group_name_prefix=name))
    if name not in (listed.log_group_names or []):
        return None
    group = _look_up(LOG_GROUP_TOKEN, at, source, lambda: aws.cloudwatch.get_log_group(name=name))
    return Found(name, name, str(group.arn), dict(group.tags or {}))


def find_queue(name: str, at: KeyPath = (), source: str = "") -> Found | None:
    """The queue `name`: listed by prefix (an empty list when there is none), then read for its URL and tags."""
    listed = _look_up(QUEUES_TOKEN, at, source, lambda: aws.sqs.get_queues(queue_name_prefix=name))
    if not any(url.rsplit("/", 1)[-1] == name for url in listed.queue_urls or []):
        return None
    queue = _look_up(QUEUE_TOKEN, at, source, lambda: aws.sqs.get_queue(name=name))
    return Found(name, str(queue.url), str(queue.arn), dict(queue.tags or {}))


def check_taken_names(cluster: str, region: str, *, log_types: list[str] | None, queue: bool, project: str,
                      source: str) -> Adopted:
    """Look up the control-plane log group (`log_types`: the created cluster's, None for an adopted cluster,
    whose group is not this stack's) and the interruption queue (`queue`: the stack creates one); raises
    `ConfigError` on one this stack did not create, returns those it did and the stack tag both carry."""
    owner = stack_owner_tags(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack())
    stack = owner[STACK_TAG_KEY]
    log_at, queue_at = (f"{project}:cluster", "logTypes"), (f"{project}:interruption", "enabled")
    group = find_log_group(control_plane_log_group(cluster), log_at, source) if log_types else None
    taken = find_queue(cluster, queue_at, source) if queue else None
    issues: list[Issue] = []
    if group is not None and (issue := log_group_issue(group, cluster, stack, region, log_at, log_types)):
        issues.append(issue)
    if taken is not None and (issue := queue_issue(taken, cluster, stack, region, queue_at, True)):
        issues.append(issue)
    if issues:
        raise ConfigError(source, issues)
    return Adopted(group.import_id if group else None, taken.import_id if taken else None, owner)
