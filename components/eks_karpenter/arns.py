"""AWS regions, partitions, account ids and ARNs, as pure checks shared by the concerns' rules.

An ARN from another partition, region or account is accepted by every type check and fails only at apply time
(EKS refuses a KMS key of another region; IAM refuses a policy of another partition), or, worse, points a
production cluster at a key in an account it does not own. Offline the account is unknown unless the stack says
it: `aws:allowedAccountIds` (which the AWS provider also enforces) names the accounts ARNs may point to.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.partitions import PARTITIONS, SOURCE

REGION_KEY, ALLOWED_ACCOUNTS_KEY = "aws:region", "aws:allowedAccountIds"
ACCOUNT_ID = re.compile(r"^[0-9]{12}$")
_ARN = re.compile(r"^arn:(?P<partition>[a-z-]+):(?P<service>[a-z0-9-]+):(?P<region>[a-z0-9-]*):"
                  r"(?P<account>[0-9]{12}|aws|):(?P<resource>.+)$")
# The one table of partitions and regions every module reads: AWS's own, generated from botocore (partitions.py).
PARTITION_REGEX = {partition: re.compile(regex) for partition, regex, _, _ in PARTITIONS}
DNS_SUFFIX = {partition: suffix for partition, _, suffix, _ in PARTITIONS}
# A region's shape, whatever its partition: two to four letters, dash-separated words, a number.
_REGION_SHAPE = re.compile(r"[a-z]{2,4}(-[a-z]+)+-\d{1,2}", re.ASCII)
REGIONS: dict[str, str] = {region: partition for partition, regex, _, regions in PARTITIONS for region in regions
                           if re.match(regex, region)}  # `aws-global` and the like are endpoints, not regions
"""Every region AWS lists, and its partition."""


ZONE_LETTERS_AS_OF = "2025-09-30"
ZONE_LETTERS_SOURCE = ("AWS's Regions and Availability Zones page (aws.amazon.com/about-aws/global-infrastructure/"
                       "regions_az) and `aws ec2 describe-availability-zones --all-availability-zones` per region")
ZONE_LETTERS: dict[str, str] = {
    # The zone letters each region has (as of ZONE_LETTERS_AS_OF, from ZONE_LETTERS_SOURCE). An account sees a
    # subset of some (us-west-1: two of a-c; ap-northeast-1: b only for older accounts) and letters map to
    # physical zones per account; a region missing here (new or isolated) gets no zone check.
    "af-south-1": "abc", "ap-east-1": "abc", "ap-east-2": "abc", "ap-northeast-1": "abcd", "ap-northeast-2": "abcd",
    "ap-northeast-3": "abc", "ap-south-1": "abc", "ap-south-2": "abc", "ap-southeast-1": "abc",
    "ap-southeast-2": "abc", "ap-southeast-3": "abc", "ap-southeast-4": "abc", "ap-southeast-5": "abc",
    "ap-southeast-6": "abc", "ap-southeast-7": "abc", "ca-central-1": "abd", "ca-west-1": "abc",
    "cn-north-1": "abd", "cn-northwest-1": "abc", "eu-central-1": "abc", "eu-central-2": "abc", "eu-north-1": "abc",
    "eu-south-1": "abc", "eu-south-2": "abc", "eu-west-1": "abc", "eu-west-2": "abc", "eu-west-3": "abc",
    "il-central-1": "abc", "me-central-1": "abc", "me-south-1": "abc", "mx-central-1": "abc", "sa-east-1": "abc",
    "us-east-1": "abcdef", "us-east-2": "abc", "us-gov-east-1": "abc", "us-gov-west-1": "abc", "us-west-1": "abc",
    "us-west-2": "abcd",
}


EKS_UNSUPPORTED_ZONE_IDS: dict[str, tuple[str, ...]] = {
    "us-east-1": ("use1-az3",), "us-west-1": ("usw1-az2",), "ca-central-1": ("cac1-az3",),
}
"""Zone IDs whose subnets EKS refuses for a cluster (UnsupportedAvailabilityZoneException): AWS's list in the EKS
User Guide, "View Amazon EKS networking requirements for VPC and subnets" (awsdocs/amazon-eks-user-guide,
latest/ug/networking/network-reqs.adoc, 2024-12). By zone ID: which letter is which ID differs per account."""


def zone_issue(zone: str, region: str) -> str | None:
    """Why `zone` is not a zone of `region` (None when it is, or when the region's letters are not known)."""
    if not zone.startswith(region) or len(zone) != len(region) + 1:
        return f"zone is not in the stack's region {region} (aws:region)"
    letters = ZONE_LETTERS.get(region)
    if letters is not None and zone[-1] not in letters:
        return (f"{region} has no zone {zone[-1]!r}: its zones are {', '.join(region + x for x in letters)} "
                f"(as of {ZONE_LETTERS_AS_OF})")
    return None

def partition_of(region: str) -> str:
    """The ARN partition of a region (`aws`, `aws-cn`, `aws-us-gov`, `aws-eusc`, ...): a listed region's, else
    that of the partition whose region pattern it matches (as botocore resolves it); `aws` for any other
    well-formed region (the config refuses such a region before anything is built, see `region_issues`).

    Raises ValueError for a string that is not shaped like a region, so a typo cannot yield a commercial ARN.
    """
    if not _REGION_SHAPE.fullmatch(region):
        raise ValueError(f"not an AWS region: {region!r}")
    listed = REGIONS.get(region)
    if listed is not None:
        return listed
    return next((p for p, pattern in PARTITION_REGEX.items() if pattern.match(region)), "aws")


def dns_suffix(partition: str) -> str:
    """The DNS suffix of a partition's endpoints and service principals (CloudFormation's AWS::URLSuffix)."""
    try:
        return DNS_SUFFIX[partition]
    except KeyError:
        raise ValueError(f"unknown AWS partition: {partition!r}") from None


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
    if region not in REGIONS:
        close = difflib.get_close_matches(region, list(REGIONS), n=1, cutoff=0.6)
        hint = f": did you mean `{close[0]}`?" if close else " (like eu-west-1)"
        return [Issue((REGION_KEY,), f"not an AWS region{hint} (regions of every partition, from {SOURCE})",
                      region)]
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


def arn_issues(value: str, at: KeyPath, *, service: str, region: str, accounts: tuple[str, ...],
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


EXAMPLE_ACCOUNT = "123456789012"
"""The account id AWS's documentation uses in examples, and the shipped stacks' ARNs use: the offline plan runs
as it, and a real run refuses a stack that still names it (`example_account_issues`)."""


def example_account_issues(data: object, at: KeyPath) -> list[Issue]:
    """Every ARN under `data` (a stack file's values, as written) that names `EXAMPLE_ACCOUNT`: an example copied
    and not yet filled in. Each distinct ARN once, at the first key that gives it."""
    found: dict[str, Issue] = {}

    def walk(value: object, path: KeyPath) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, path + (str(key),))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, path + (i,))
        elif isinstance(value, str) and value not in found:
            arn = parse_arn(value)
            if arn is not None and arn.account == EXAMPLE_ACCOUNT:
                found[value] = Issue(path, f"account {EXAMPLE_ACCOUNT} is the example account of the shipped "
                                     "stacks and AWS's documentation: put your own account's ARN here", value)

    walk(data, at)
    return list(found.values())
