"""Fixed names a first `up` can find taken, looked up at preview before anything is registered.

The control-plane log group `/aws/eks/<cluster>/cluster` has a name fixed by EKS, and an account that ran a
cluster of the same name before may still hold it: EKS creates it when logging is on and does not delete it with
the cluster, and may write to it after a `pulumi destroy` deleted it, so a re-created cluster finds it.
`CreateLogGroup` then fails (ResourceAlreadyExistsException).

It is this stack's when it carries the stack's cluster tag (`tags.CLUSTER_TAG_KEY`, on everything this
library creates): the program then registers it with `import` (a no-op while the state holds it; an adoption
when the user tagged it to keep it). Found without the tag, it is refused, naming the resource and the ways out,
so nothing is deleted or taken over by surprise. Offline the mocks answer as a fresh account: it does not exist.
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


@dataclass(frozen=True)
class Found:
    """A resource of the name this stack gives one, as the account has it."""

    name: str
    import_id: str
    """Its Pulumi id (a log group's name)."""
    arn: str
    tags: Mapping[str, str] = field(default_factory=dict)

    def owned_by(self, cluster: str) -> bool:
        return self.tags.get(CLUSTER_TAG_KEY) == cluster


@dataclass(frozen=True)
class Adopted:
    """Pulumi ids of the fixed-name resources that exist and are this stack's: registered with `import`."""

    log_group: str | None = None


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


def find_log_group(name: str) -> Found | None:
    """The log group `name`: listed by prefix (which answers an empty list when there is none), then read for
    its tags."""
    if name not in (aws.cloudwatch.get_log_groups(log_group_name_prefix=name).log_group_names or []):
        return None
    group = aws.cloudwatch.get_log_group(name=name)
    return Found(name, name, str(group.arn), dict(group.tags or {}))


def check_taken_names(cluster: str, region: str, *, log_types: list[str] | None, project: str, source: str) -> Adopted:
    """Look up the control-plane log group (`log_types`: the created cluster's, None for an adopted cluster,
    whose group is not this stack's); raises `ConfigError` on one this stack did not create, returns those it
    did."""
    issues: list[Issue] = []
    adopted = Adopted()
    group = find_log_group(control_plane_log_group(cluster)) if log_types else None
    if group is not None:
        found = log_group_issue(group, cluster, region, (f"{project}:cluster", "logTypes"), log_types)
        issues += [found] if found else []
        adopted = Adopted(log_group=None if found else group.import_id)
    if issues:
        raise ConfigError(source, issues)
    return adopted
