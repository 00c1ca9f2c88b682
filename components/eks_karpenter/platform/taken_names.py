"""Fixed names a first `up` can find taken, looked up at preview before anything is registered.

Two resources of this stack have names fixed by others, and an account that ran a cluster of the same name
before may still hold them:

- the control-plane log group `/aws/eks/<cluster>/cluster` (its name is EKS's): EKS creates it when logging is
  on and does not delete it with the cluster, and may write to it after a `pulumi destroy` deleted it, so a
  re-created cluster finds it. `CreateLogGroup` then fails (ResourceAlreadyExistsException);
- the interruption queue, named after the cluster (Karpenter's getting-started CloudFormation stack names its
  queue the same way). SQS's `CreateQueue` returns an existing queue of the same name and attributes, so the
  stack would take it over silently and a `pulumi destroy` would delete another tool's queue.

Either is this stack's when it carries the stack's cluster tag (`tags.CLUSTER_TAG_KEY`, on everything this
library creates): the program then registers it with `import` (a no-op while the state holds it; an adoption
when the user tagged it to keep it). Found without the tag, it is refused, naming the resource and the ways out,
so nothing is deleted or taken over by surprise. Offline the mocks answer as a fresh account: neither exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi_aws as aws

from eks_karpenter.config.errors import ConfigError, Issue, KeyPath
from eks_karpenter.platform.cluster.plan import control_plane_log_group
from eks_karpenter.tags import CLUSTER_TAG_KEY

LOG_GROUPS_TOKEN = "aws:cloudwatch/getLogGroups:getLogGroups"
LOG_GROUP_TOKEN = "aws:cloudwatch/getLogGroup:getLogGroup"
QUEUES_TOKEN = "aws:sqs/getQueues:getQueues"
QUEUE_TOKEN = "aws:sqs/getQueue:getQueue"


@dataclass(frozen=True)
class Found:
    """A resource of the name this stack gives one, as the account has it."""

    name: str
    import_id: str
    """Its Pulumi id (a log group's name, a queue's URL)."""
    arn: str
    tags: Mapping[str, str] = field(default_factory=dict)

    def owned_by(self, cluster: str) -> bool:
        return self.tags.get(CLUSTER_TAG_KEY) == cluster


@dataclass(frozen=True)
class Adopted:
    """Pulumi ids of the fixed-name resources that exist and are this stack's: registered with `import`."""

    log_group: str | None = None
    queue: str | None = None


def own_tag(cluster: str) -> str:
    return f"{CLUSTER_TAG_KEY}={cluster}"


def log_group_issue(found: Found, cluster: str, region: str, at: KeyPath, value: object) -> Issue | None:
    """A control-plane log group this stack did not create (no cluster tag of its own)."""
    if found.owned_by(cluster):
        return None
    return Issue(at, f"the log group {found.name} already exists in this account ({region}) and this stack did not "
                 f"create it: EKS keeps a cluster's log group when the cluster is deleted, so an earlier cluster named "
                 f"{cluster} left it, and `pulumi up` would stop on CreateLogGroup (ResourceAlreadyExistsException). "
                 "To keep its logs under this stack, mark it as this cluster's (`aws logs tag-resource --region "
                 f"{region} --resource-arn {found.arn} --tags {own_tag(cluster)}`): the next `up` adopts it (sets its "
                 "retention and tags; a destroy then deletes it with its logs). Or delete it with its logs "
                 f"(`aws logs delete-log-group --region {region} --log-group-name {found.name}`), or turn "
                 "control-plane logging off (`logTypes: []`)", value)


def queue_issue(found: Found, cluster: str, region: str, at: KeyPath, value: object) -> Issue | None:
    """An interruption queue of the cluster's name that this stack did not create."""
    if found.owned_by(cluster):
        return None
    return Issue(at, f"an SQS queue {found.name} already exists in this account ({region}) and this stack did not "
                 "create it (Karpenter's getting-started CloudFormation stack creates one named after the cluster): "
                 "SQS returns an existing queue of the same name to CreateQueue, so this stack would take it over "
                 "unnoticed and a `pulumi destroy` would delete it. Remove it where it was made once nothing reads "
                 f"it (that stack: `aws cloudformation delete-stack --region {region} --stack-name Karpenter-{cluster}`"
                 f", which deletes its IAM roles too; else `aws sqs delete-queue --region {region} --queue-url "
                 f"{found.import_id}`); or, to manage it from "
                 f"this stack, mark it as this cluster's (`aws sqs tag-queue --region {region} --queue-url "
                 f"{found.import_id} --tags {own_tag(cluster)}`): the next `up` adopts it, and a destroy deletes it",
                 value)


def find_log_group(name: str) -> Found | None:
    """The log group `name`: listed by prefix (which answers an empty list when there is none), then read for
    its tags."""
    if name not in (aws.cloudwatch.get_log_groups(log_group_name_prefix=name).log_group_names or []):
        return None
    group = aws.cloudwatch.get_log_group(name=name)
    return Found(name, name, str(group.arn), dict(group.tags or {}))


def find_queue(name: str) -> Found | None:
    """The queue `name`: listed by prefix (an empty list when there is none), then read for its URL and tags."""
    urls = aws.sqs.get_queues(queue_name_prefix=name).queue_urls or []
    if not any(url.rsplit("/", 1)[-1] == name for url in urls):
        return None
    queue = aws.sqs.get_queue(name=name)
    return Found(name, str(queue.url), str(queue.arn), dict(queue.tags or {}))


def check_taken_names(cluster: str, region: str, *, log_types: list[str] | None, queue: bool, project: str,
                      source: str) -> Adopted:
    """Look up the control-plane log group (`log_types`: the created cluster's, None for an adopted cluster,
    whose group is not this stack's) and the interruption queue (`queue`: the stack creates one); raises
    `ConfigError` on one this stack did not create, returns those it did."""
    issues: list[Issue] = []
    adopted = Adopted()
    group = find_log_group(control_plane_log_group(cluster)) if log_types else None
    if group is not None:
        found = log_group_issue(group, cluster, region, (f"{project}:cluster", "logTypes"), log_types)
        issues += [found] if found else []
        adopted = Adopted(log_group=None if found else group.import_id)
    taken = find_queue(cluster) if queue else None
    if taken is not None:
        found = queue_issue(taken, cluster, region, (f"{project}:interruption", "enabled"), True)
        issues += [found] if found else []
        adopted = Adopted(adopted.log_group, None if found else taken.import_id)
    if issues:
        raise ConfigError(source, issues)
    return adopted
