"""What this library renders differently for each supported Karpenter release (`versions.KARPENTER_RELEASES`).

The table in `versions.py` holds the facts (read off each release's upstream files); this module turns them into
what the rendering code asks and what a stack is refused: the chart values keys a release lacks, the config a
release cannot honour, and the summary of what an upgrade changes (IAM, values, CRDs) for the plan diff.
Pure: no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass

from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.karpenter.config import KarpenterConfig

REFRESH_SETTINGS = ("amiRefreshInterval", "subnetRefreshInterval")
"""Chart `settings.*` keys from 1.13 on."""
CAPACITY_BUFFER_GATE = "capacityBuffer"
"""Chart `settings.featureGates.*` key from 1.14 on."""
ZONAL_SHIFT_ACTION = "arc-zonal-shift:GetManagedResource"
DESCRIBE_INSTANCE_STATUS = "ec2:DescribeInstanceStatus"


def release_of(version: str) -> versions.KarpenterRelease:
    """The table row of `version`; ValueError naming the supported releases for any other."""
    try:
        return versions.KARPENTER_RELEASES[version]
    except KeyError:
        raise ValueError(f"Karpenter {version} is not supported; supported releases: "
                         f"{', '.join(versions.KARPENTER_VERSIONS)}") from None


def release_issues(cfg: KarpenterConfig, release: versions.KarpenterRelease, at: KeyPath) -> list[Issue]:
    """Config that `release` cannot honour: a setting or gate its chart does not have, zonal shift without the
    IAM permission its template grants."""
    issues: list[Issue] = []
    name = f"Karpenter {release.version}"
    if cfg.zonal_shift and not release.zonal_shift_policy:
        issues.append(Issue(at + ("zonalShift",), f"{name}'s IAM template has no zonal-shift permission "
                            f"({ZONAL_SHIFT_ACTION}, from 1.13): upgrade Karpenter or leave zonalShift off", True))
    if not release.refresh_intervals:
        for key, field in zip(REFRESH_SETTINGS, ("ami_refresh_interval", "subnet_refresh_interval"), strict=True):
            if field in cfg.settings.model_fields_set:
                issues.append(Issue(at + ("settings", key), f"{name}'s chart has no settings.{key} (from 1.13)",
                                    getattr(cfg.settings, field)))
    if not release.capacity_buffer and cfg.feature_gates.capacity_buffer:
        issues.append(Issue(at + ("featureGates", CAPACITY_BUFFER_GATE), f"{name} has no capacityBuffer feature "
                            "gate nor CapacityBuffer CRD (from 1.14)", True))
    return issues


def omitted_values(release: versions.KarpenterRelease) -> tuple[str, ...]:
    """Dotted chart values keys this library renders for the newest release but not for `release`."""
    omitted: list[str] = []
    if not release.refresh_intervals:
        omitted += [f"settings.{key}" for key in REFRESH_SETTINGS]
    if not release.capacity_buffer:
        omitted.append(f"settings.featureGates.{CAPACITY_BUFFER_GATE}")
    return tuple(omitted)


def iam_actions(release: versions.KarpenterRelease, zonal_shift: bool) -> frozenset[str]:
    """The version-dependent controller IAM actions granted for `release` (the rest are the same for all);
    the zonal-shift one only when the stack enables zonal shift."""
    actions = {DESCRIBE_INSTANCE_STATUS} if release.describe_instance_status else set()
    return frozenset(actions | ({ZONAL_SHIFT_ACTION} if release.zonal_shift_policy and zonal_shift else set()))


@dataclass(frozen=True)
class UpgradeChanges:
    """What moving from one supported release to another changes in what this library renders."""

    old: str
    new: str
    iam_added: tuple[str, ...]
    iam_removed: tuple[str, ...]
    values_added: tuple[str, ...]
    values_removed: tuple[str, ...]
    crds_added: tuple[str, ...]
    crds_removed: tuple[str, ...]

    def lines(self) -> list[str]:
        """One line per kind of change, for the plan diff (empty when nothing but the chart version moves)."""
        out = []
        for label, added, removed in (("IAM actions", self.iam_added, self.iam_removed),
                                      ("chart values", self.values_added, self.values_removed),
                                      ("CRDs", self.crds_added, self.crds_removed)):
            parts = [*(f"+ {x}" for x in added), *(f"- {x}" for x in removed)]
            if parts:
                out.append(f"{label}: {', '.join(parts)}")
        if self.crds_added or self.crds_removed:
            out.append("the karpenter-crd release is upgraded first, in the same update, so the new CRDs exist "
                       "before the controller that watches them")
        return out


def upgrade_changes(old: str, new: str, zonal_shift: bool = False) -> UpgradeChanges:
    """IAM actions, chart values keys and CRDs that differ between Karpenter `old` and `new` (both supported),
    for a stack with zonal shift on or off."""
    a, b = release_of(old), release_of(new)
    values_a, values_b = set(omitted_values(a)), set(omitted_values(b))
    return UpgradeChanges(
        old=old, new=new,
        iam_added=tuple(sorted(iam_actions(b, zonal_shift) - iam_actions(a, zonal_shift))),
        iam_removed=tuple(sorted(iam_actions(a, zonal_shift) - iam_actions(b, zonal_shift))),
        values_added=tuple(sorted(values_a - values_b)),
        values_removed=tuple(sorted(values_b - values_a)),
        crds_added=tuple(sorted(set(b.crds) - set(a.crds))),
        crds_removed=tuple(sorted(set(a.crds) - set(b.crds))),
    )
