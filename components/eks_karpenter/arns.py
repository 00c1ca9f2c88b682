"""AWS regions, partitions, account ids and ARNs, as pure checks shared by the concerns' rules.

An ARN from another partition, region or account is accepted by every type check and fails only at apply time
(EKS refuses a KMS key of another region; IAM refuses a policy of another partition), or, worse, points a
production cluster at a key in an account it does not own. Offline the account is unknown unless the stack says
it: `aws:allowedAccountIds` (which the AWS provider also enforces) names the accounts ARNs may point to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from eks_karpenter.config.errors import Issue, Path

REGION_KEY, ALLOWED_ACCOUNTS_KEY = "aws:region", "aws:allowedAccountIds"
REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$")
ACCOUNT_ID = re.compile(r"^[0-9]{12}$")
_ARN = re.compile(r"^arn:(?P<partition>[a-z-]+):(?P<service>[a-z0-9-]+):(?P<region>[a-z0-9-]*):"
                  r"(?P<account>[0-9]{12}|aws|):(?P<resource>.+)$")
# Region prefixes of the partitions other than `aws` (longest first).
_PARTITIONS = (("us-isob-", "aws-iso-b"), ("us-isof-", "aws-iso-f"), ("eu-isoe-", "aws-iso-e"),
               ("us-iso-", "aws-iso"), ("us-gov-", "aws-us-gov"), ("cn-", "aws-cn"))


def partition_of(region: str) -> str:
    """The ARN partition of a region: `aws`, `aws-cn`, `aws-us-gov`, ..."""
    return next((p for prefix, p in _PARTITIONS if region.startswith(prefix)), "aws")


@dataclass(frozen=True)
class Arn:
    partition: str
    service: str
    region: str
    account: str
    resource: str


def parse_arn(text: str) -> Arn | None:
    match = _ARN.match(text)
    return Arn(**match.groupdict()) if match else None


def region_issues(config: Mapping[str, str]) -> list[Issue]:
    """`aws:region` present and spelled as a region."""
    region = config.get(REGION_KEY)
    if not region:
        return [Issue((REGION_KEY,), "required: the AWS region to deploy to", None, has_value=False)]
    if not REGION.match(region):
        return [Issue((REGION_KEY,), "not an AWS region name (like eu-west-1)", region)]
    return []


def allowed_accounts(config: Mapping[str, str]) -> tuple[tuple[str, ...], list[Issue]]:
    """The accounts `aws:allowedAccountIds` names (empty when unset), and problems with how it is written."""
    text = config.get(ALLOWED_ACCOUNTS_KEY)
    if text is None:
        return (), []
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = text
    at = (ALLOWED_ACCOUNTS_KEY,)
    if not isinstance(value, list) or not value:
        return (), [Issue(at, "a list of 12-digit account ids", value)]
    issues = []
    for i, account in enumerate(value):
        if isinstance(account, (int, float)) and not isinstance(account, bool):
            issues.append(Issue(at + (i,), "quote account ids: unquoted, YAML reads them as numbers (and one "
                                "starting with 0 as an octal or float)", account))
        elif not isinstance(account, str) or not ACCOUNT_ID.match(account):
            issues.append(Issue(at + (i,), "an account id is 12 digits", account))
    if issues:
        return (), issues
    return tuple(value), []


def arn_issues(value: str, at: Path, *, service: str, region: str, accounts: tuple[str, ...],
               regional: bool = True, what: str = "resource") -> list[Issue]:
    """Problems with an ARN the stack points at: malformed, another service, partition, region or account."""
    arn = parse_arn(value)
    if arn is None:
        return [Issue(at, f"not an ARN (arn:PARTITION:{service}:REGION:ACCOUNT:RESOURCE)", value)]
    if arn.service != service:
        return [Issue(at, f"not a {service} ARN (this is a {arn.service} ARN)", value)]
    issues: list[Issue] = []
    partition = partition_of(region)
    if arn.partition != partition:
        issues.append(Issue(at, f"partition {arn.partition} does not match the stack's region {region} "
                            f"(partition {partition}, aws:region)", value))
    if regional and arn.region != region:
        issues.append(Issue(at, f"the {what} is in region {arn.region or '(none)'}, not the stack's region "
                            f"{region} (aws:region): AWS only uses a {what} of the same region", value))
    if accounts and arn.account not in (*accounts, "aws"):
        issues.append(Issue(at, f"account {arn.account} is not one of aws:allowedAccountIds "
                            f"({', '.join(accounts)})", value))
    return issues
