"""Cross-field and cross-object rules for node pools and their classes (rules on a class alone live in
class_rules.py). Single-value checks live on the types.

Together with the types, these reject every object the Karpenter 1.14 CRDs (OpenAPI schema and CEL rules)
would reject, so a bad pool fails at `pulumi preview` instead of at apply time. A few rules go further where the
CRD lets through something Karpenter or EC2 refuses later (noted where they are).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from eks_karpenter.catalogue.match import Requirement, allowed_values
from eks_karpenter.catalogue.names import NameProblem, family_problem, type_problem
from eks_karpenter.config.errors import Issue, KeyPath, render_path, suggest
from eks_karpenter.labels import ARCH, CAPACITY_TYPE, INSTANCE_CATEGORY, INSTANCE_FAMILY, INSTANCE_TYPE, OS, ZONE
from eks_karpenter.platform.nodepool.admission import FIELD_BY_ALIAS, admission_issues, admission_warnings
from eks_karpenter.platform.nodepool.class_rules import class_architectures, class_issues
from eks_karpenter.platform.nodepool.config import Disruption, NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.nodepool.config import Requirement as RequirementConfig
from eks_karpenter.platform.nodepool.instances import INSTANCE_CATEGORIES, family_arch
from eks_karpenter.platform.nodepool.manifests import SHORTCUT_KEYS, expand_sizes, pool_requirements
from eks_karpenter.platform.nodepool.window_rules import window_issues
from eks_karpenter.quantities import bytes_issue, unitless_bytes

_NUMERIC = ("Gt", "Lt", "Gte", "Lte")
_KNOWN_VALUES: dict[str, tuple[str, ...]] = {
    CAPACITY_TYPE: ("spot", "on-demand", "reserved"), ARCH: ("amd64", "arm64"), OS: ("linux", "windows")}


MAX_BUDGETS = 50
"""`spec.disruption.budgets` maxItems in the NodePool CRD."""


def validate_node_config(pools: Sequence[NodePoolConfig], classes: Sequence[NodeClassConfig], zones: list[str],
                         interruption_handled: bool, at_pools: KeyPath, at_classes: KeyPath) -> list[Issue]:
    """Every rule on `eks-karpenter:nodePools` and `eks-karpenter:nodeClasses`, with the key path to fix.

    `zones` are the network's zones; `interruption_handled` says whether Karpenter gets an interruption queue.
    """
    issues: list[Issue] = []
    issues += _duplicates([c.name for c in classes], at_classes, "node class")
    issues += _duplicates([p.name for p in pools], at_pools, "node pool")
    for i, cls in enumerate(classes):
        issues += class_issues(cls, at_classes + (i,))
    by_name = {c.name: c for c in classes}
    for i, pool in enumerate(pools):
        at = at_pools + (i,)
        found = _pool_issues(pool, at) + _pool_context_issues(pool, by_name, zones, interruption_handled, at,
                                                             at_classes)
        issues += found
        if not found:  # what a well-formed pool can launch (a malformed one has its own errors)
            issues += admission_issues(pool, by_name[pool.node_class], at)
    return issues


def _duplicates(names: list[str], at: KeyPath, what: str) -> list[Issue]:
    return [Issue(at + (i, "name"), f"{what} names must be unique", name)
            for i, name in enumerate(names) if name in names[:i]]

# --- NodePool --------------------------------------------------------------------------------------------------

def _req_path(at: KeyPath, req: Requirement, *rest: str | int) -> KeyPath:
    """Where a rendered requirement comes from: its shortcut key, or the raw requirement's field."""
    if isinstance(req.source, int):
        return at + ("requirements", req.source) + rest
    return at + (req.source,)


def _non_negative_int(text: str) -> bool:
    return re.fullmatch(r"[0-9]+", text) is not None and int(text) < 2**63


def _pool_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    issues = [issue for j, r in enumerate(pool.requirements)
              for issue in _requirement_issues(pool, r, at + ("requirements", j))]
    issues += _disruption_issues(pool.disruption, at + ("disruption",))
    issues += window_issues(pool, at)
    issues += _taint_issues(pool, at)
    issues += _instance_issues(pool, at)
    issues += _label_issues(pool, at)
    issues += _limits_issues(pool, at)
    issues += _category_issues(pool, at)
    issues += _arch_issues(pool, at)
    issues += [Issue(path, problem.message, value) for path, value, problem in _catalogue_names(pool, at)
               if not problem.warning]
    return issues


def _requirement_issues(pool: NodePoolConfig, r: RequirementConfig, rp: KeyPath) -> list[Issue]:
    """One raw requirement: its values for its operator, `minValues`, known values, and a shortcut it overrides."""
    issues = _operator_issues(r, rp)
    values = r.values or []
    if r.operator == "In" and r.min_values is not None and len(values) < r.min_values:
        issues.append(Issue(rp + ("minValues",), f"requirements with 'minValues' must have at least that many "
                            f"values specified in 'values' (has {len(values)})", r.min_values))
    known = _KNOWN_VALUES.get(r.key)
    if known and r.operator in ("In", "NotIn"):
        issues += [Issue(rp + ("values", k), f"{r.key} is one of {', '.join(known)}", v)
                   for k, v in enumerate(values) if v not in known]
    for alias, key in SHORTCUT_KEYS.items():
        if key == r.key and pool.is_set(FIELD_BY_ALIAS[alias]):
            issues.append(Issue(rp + ("key",), f"`{alias}` already sets {key}; a raw requirement on the same key "
                                f"replaces it, so keep only one of them", r.key))
    return issues


def _operator_issues(r: RequirementConfig, rp: KeyPath) -> list[Issue]:
    """The values an operator takes: the CRD's rules for `In` and the numeric operators, and (beyond the CRD)
    Kubernetes' own for `NotIn`, `Exists` and `DoesNotExist`, which Karpenter enforces at runtime."""
    values = r.values or []
    given = r.values is not None
    if r.operator == "In" and not values:
        return [Issue(rp + ("values",), "requirements with operator 'In' must have a value defined", r.values,
                      has_value=given)]
    if r.operator == "NotIn" and not values:
        return [Issue(rp + ("values",), "operator 'NotIn' needs at least one value", r.values, has_value=given)]
    if r.operator in ("Exists", "DoesNotExist") and values:
        return [Issue(rp + ("values",), f"operator '{r.operator}' takes no values", values)]
    if r.operator in _NUMERIC and (len(values) != 1 or not _non_negative_int(values[0])):
        return [Issue(rp + ("values",), "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single "
                      "non-negative integer value", r.values, has_value=given)]
    return []


def _disruption_issues(d: Disruption, at: KeyPath) -> list[Issue]:
    """Budgets with a schedule and a duration together, windows with a time zone and a length, and not more of
    them than Karpenter takes."""
    issues = []
    for k, b in enumerate(d.budgets):
        if (b.schedule is None) != (b.duration is None):
            missing = "duration" if b.duration is None else "schedule"
            issues.append(Issue(at + ("budgets", k, missing), "'schedule' must be set with 'duration'", None,
                                has_value=False))
    if d.windows and d.time_zone is None:
        issues.append(Issue(at + ("timeZone",), "windows are in local time: give the IANA time zone, "
                            "e.g. Europe/Berlin", None, has_value=False))
    if len(d.budgets) + len(d.windows) > MAX_BUDGETS:
        issues.append(Issue(at + ("windows",), f"budgets and windows together exceed Karpenter's "
                            f"{MAX_BUDGETS} budgets per pool", len(d.budgets) + len(d.windows)))
    for k, w in enumerate(d.windows):
        if w.start == w.end:
            issues.append(Issue(at + ("windows", k, "end"), "equals start: a window needs a length "
                                "(use a budget without schedule for all day)", w.end))
    return issues


def _catalogue_names(pool: NodePoolConfig, at: KeyPath) -> list[tuple[KeyPath, str, NameProblem]]:
    """Instance families and types the pool names that the catalogue does not have (typos, or newer names)."""
    named: list[tuple[KeyPath, str, bool]] = []  # (path, value, is a family)
    named += [(at + ("instanceFamilies", k), f, True) for k, f in enumerate(pool.instance_families or ())]
    named += [(at + ("instanceTypes", k), t, False) for k, t in enumerate(pool.instance_types or ())]
    for j, r in enumerate(pool.requirements):
        if r.operator in ("In", "NotIn") and r.key in (INSTANCE_FAMILY, INSTANCE_TYPE):
            named += [(at + ("requirements", j, "values", k), v, r.key == INSTANCE_FAMILY)
                      for k, v in enumerate(r.values or ())]
    found = []
    for path, value, is_family in named:
        problem = family_problem(value) if is_family else type_problem(value)
        if problem is not None:
            found.append((path, value, problem))
    return found


# Resource names a NodePool limit can cap: Kubernetes' standard node resources, plus `nodes`; any extended resource
# must be domain-qualified (`nvidia.com/gpu`), so an unqualified unknown name (`cpus`) is a typo Karpenter would
# silently ignore, leaving the pool without the cap the stack file shows.
LIMIT_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods", "nodes")
COMMON_EXTENDED_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore",
                             "aws.amazon.com/neurondevice", "habana.ai/gaudi", "vpc.amazonaws.com/efa",
                             "vpc.amazonaws.com/pod-eni")
def _limits_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    for name, value in pool.limits.items():
        path = at + ("limits", name)
        if "/" not in name and name not in LIMIT_RESOURCES and not name.startswith("hugepages-"):
            hint = suggest(name, LIMIT_RESOURCES + COMMON_EXTENDED_RESOURCES)
            issues.append(Issue(path, f"not a resource a limit can cap{hint} (limits take {', '.join(LIMIT_RESOURCES)}"
                                ", hugepages-<size>, or a domain-qualified extended resource like nvidia.com/gpu); "
                                "Karpenter would ignore it", value))
        elif unitless_bytes(name, value):
            issues.append(bytes_issue(path, name, value))
    return issues


def _category_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    found: list[tuple[KeyPath, str]] = []
    if pool.is_set("instance_categories"):
        found += [(at + ("instanceCategories", k), c) for k, c in enumerate(pool.instance_categories or ())]
    for j, r in enumerate(pool.requirements):
        if r.key == INSTANCE_CATEGORY and r.operator == "In":
            found += [(at + ("requirements", j, "values", k), c) for k, c in enumerate(r.values or ())]
    for path, category in found:
        if category not in INSTANCE_CATEGORIES:
            issues.append(Issue(path, f"no EC2 instance category has this name{suggest(category, INSTANCE_CATEGORIES)}"
                                f" (categories: {', '.join(sorted(INSTANCE_CATEGORIES))})", category))
    return issues


def _arch_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    """Instance families or types of an architecture the pool does not allow can never launch."""
    reqs = pool_requirements(pool)
    arches = allowed_values(reqs, ARCH, _KNOWN_VALUES[ARCH])
    arch_req = _first(reqs, ARCH)
    where = "its requirements" if arch_req is not None and isinstance(arch_req.source, int) else "arch"
    named: list[tuple[KeyPath, str, str]] = []
    named += [(at + ("instanceFamilies", k), f, f) for k, f in enumerate(pool.instance_families or ())]
    named += [(at + ("instanceTypes", k), t, t.partition(".")[0]) for k, t in enumerate(pool.instance_types or ())]
    for j, r in enumerate(pool.requirements):
        if r.operator == "In" and r.key in (INSTANCE_FAMILY, INSTANCE_TYPE):
            named += [(at + ("requirements", j, "values", k), v, v.partition(".")[0])
                      for k, v in enumerate(r.values or ())]
    issues: list[Issue] = []
    for path, value, family in named:
        arch = family_arch(family)
        if arch is not None and arch not in arches:
            allowed = ", ".join(arches) or "no architecture"
            issues.append(Issue(path, f"{family} is {arch} only, but the pool allows {allowed} ({where}): no instance "
                                "of it can launch", value))
    return issues


def _taint_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    for field, taints in (("taints", pool.taints), ("startupTaints", pool.startup_taints)):
        seen: set[tuple[str, str]] = set()
        for k, t in enumerate(taints):
            if (t.key, t.effect) in seen:  # the Node API refuses two taints with one key and effect
                issues.append(Issue(at + (field, k), "duplicate taint: same key and effect as an earlier one",
                                    t.dump()))
            seen.add((t.key, t.effect))
    return issues


def _family_parts(family: str) -> tuple[str, int] | None:
    match = re.match(r"^([a-z]+)([0-9]+)", family)
    return (match.group(1), int(match.group(2))) if match else None


def _instance_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    """Shortcuts that contradict each other leave no instance type to launch (pools that never scale up)."""
    issues: list[Issue] = []
    if pool.min_cpu is not None and pool.max_cpu is not None and pool.min_cpu > pool.max_cpu:
        issues.append(Issue(at + ("minCpu",), f"must not exceed maxCpu ({pool.max_cpu})", pool.min_cpu))
    sizes = set(expand_sizes(pool.instance_sizes or ()))
    excluded = set(expand_sizes(pool.exclude_instance_sizes or ()))
    for k, size in enumerate(pool.exclude_instance_sizes or ()):
        if size in (pool.instance_sizes or ()):
            issues.append(Issue(at + ("excludeInstanceSizes", k), "also listed in instanceSizes", size))

    rendered = {r.source: r for r in pool_requirements(pool) if isinstance(r.source, str)}
    categories = set(rendered["instanceCategories"].values) if "instanceCategories" in rendered else None
    min_gen = int(rendered["minGeneration"].values[0]) + 1 if "minGeneration" in rendered else None

    def family_problem(family: str) -> str | None:
        parts = _family_parts(family)
        if parts is None:
            return None
        if categories is not None and parts[0] not in categories:
            return f"family {family} is outside instanceCategories {sorted(categories)}"
        if min_gen is not None and parts[1] < min_gen:
            return f"family {family} is older than minGeneration {min_gen}"
        return None

    for k, family in enumerate(pool.instance_families or ()):
        problem = family_problem(family)
        if problem:
            issues.append(Issue(at + ("instanceFamilies", k), f"{problem}: no instance would match", family))
    families = set(pool.instance_families or ())
    for k, itype in enumerate(pool.instance_types or ()):
        family, _, size = itype.partition(".")
        problem = family_problem(family)
        if families and family not in families:
            problem = f"family {family} is not in instanceFamilies"
        elif sizes and size not in sizes:
            problem = f"size {size} is not in instanceSizes"
        elif size in excluded:
            problem = f"size {size} is in excludeInstanceSizes"
        if problem:
            issues.append(Issue(at + ("instanceTypes", k), f"{problem}: this type can never launch", itype))
    return issues


def _label_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    reqs = pool_requirements(pool)
    for r in reqs:
        if r.key not in pool.labels:
            continue
        value = pool.labels[r.key]
        if r.operator == "Exists" or (r.operator == "In" and value in r.values):
            continue
        # A node carries the label, so a requirement excluding its value matches no node at all.
        message = (f"conflicts with label {r.key}={value}: when both are set the requirement must be In (including "
                   f"{value!r}) or Exists")
        if isinstance(r.source, int):
            field = "values" if r.operator == "In" else "operator"
            issues.append(Issue(_req_path(at, r, field), message, list(r.values) if field == "values" else r.operator))
        else:
            issues.append(Issue(at + ("labels", r.key), f"conflicts with `{r.source}` ({list(r.values)})", value))
    if len(reqs) + len(pool.labels) > 100:
        issues.append(Issue(at + ("labels",), f"requirements ({len(reqs)}) and labels ({len(pool.labels)}) may "
                            "not exceed 100 together", len(pool.labels)))
    return issues


def _first(reqs: list[Requirement], key: str) -> Requirement | None:
    return next((r for r in reqs if r.key == key), None)


def _pool_context_issues(pool: NodePoolConfig, classes: dict[str, NodeClassConfig], zones: list[str],
                         interruption_handled: bool, at: KeyPath, at_classes: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    reqs = pool_requirements(pool)
    cls = classes.get(pool.node_class)
    if cls is None:
        known = ", ".join(sorted(classes)) or "none"
        issues.append(Issue(at + ("nodeClass",), f"no {render_path(at_classes)} entry has this name (defined: "
                            f"{known})", pool.node_class))

    for r in reqs:
        if r.key != ZONE or r.operator not in ("In", "NotIn"):
            continue
        for k, zone in enumerate(r.values):
            if zone not in zones:
                path = _req_path(at, r, "values", k) if isinstance(r.source, int) else at + (r.source, k)
                issues.append(Issue(path, f"zone is not one of the network's zones ({', '.join(zones)})", zone))

    capacity = allowed_values(reqs, CAPACITY_TYPE, _KNOWN_VALUES[CAPACITY_TYPE])
    cap_req = _first(reqs, CAPACITY_TYPE)
    cap_path = _req_path(at, cap_req, "values") if cap_req else at + ("capacityTypes",)
    if "spot" in capacity and not interruption_handled and not pool.spot_without_interruption_handling:
        issues.append(Issue(cap_path, "spot capacity needs interruption handling: enable eks-karpenter:interruption "
                            "(Karpenter then drains nodes on the two-minute spot notice), remove spot, or opt out "
                            "explicitly with spotWithoutInterruptionHandling: true", capacity))
    if cls is None:
        return issues
    if "reserved" in capacity and not cls.capacity_reservation_selector_terms:
        issues.append(Issue(cap_path, f"reserved capacity needs capacityReservationSelectorTerms on node class "
                            f"{cls.name!r}", capacity))
    family = cls.family
    if family and family != "Custom":
        want = "windows" if family.startswith("Windows") else "linux"
        os_values = allowed_values(reqs, OS, _KNOWN_VALUES[OS])
        os_req = _first(reqs, OS)
        if os_values != [want]:
            issues.append(Issue(_req_path(at, os_req, "values") if os_req else at + ("os",), f"node class "
                                f"{cls.name!r} runs {family} AMIs, so os must be [{want}]", os_values))
        arch_req = _first(reqs, ARCH)
        if want == "windows" and "arm64" in allowed_values(reqs, ARCH, _KNOWN_VALUES[ARCH]):
            issues.append(Issue(_req_path(at, arch_req, "values") if arch_req else at + ("arch",), "Windows AMIs "
                                "are amd64 only", list(arch_req.values) if arch_req else None))
    ami_arches = class_architectures(cls)
    if ami_arches is not None:
        arches = allowed_values(reqs, ARCH, _KNOWN_VALUES[ARCH])
        arch_req = _first(reqs, ARCH)
        missing = [a for a in arches if a not in ami_arches]
        if missing:
            issues.append(Issue(_req_path(at, arch_req, "values") if arch_req else at + ("arch",), f"node class "
                                f"{cls.name!r} selects only {'/'.join(sorted(ami_arches))} AMIs (amiSelectorTerms), so "
                                f"{', '.join(missing)} nodes could not boot", arches))
    return issues


# --- warnings --------------------------------------------------------------------------------------------------

def warnings_for(pools: Sequence[NodePoolConfig], classes: Sequence[NodeClassConfig], protected: bool) -> list[str]:
    """Legal but risky settings, one line each (printed, never fatal)."""
    out: list[str] = []
    for cls in classes:
        where = f"nodeClasses[{cls.name}]"
        alias = cls.alias
        if alias and alias.endswith("@latest"):
            if protected:
                out.append(f"{where}: alias {alias} on a protected stack: every new AMI release drifts and replaces "
                           "every node of the pools using this class; pin a version (e.g. al2023@v20240625)")
            else:
                out.append(f"{where}: alias {alias} rolls every node on each AMI release; pin a version before "
                           "production")
        meta = cls.metadata_options
        if meta.http_tokens == "optional":
            out.append(f"{where}: metadataOptions.httpTokens optional enables IMDSv1 (unauthenticated credential "
                       "reads)")
        if meta.http_put_response_hop_limit > 2:
            out.append(f"{where}: httpPutResponseHopLimit {meta.http_put_response_hop_limit}: 2 is enough for pods; "
                       "higher only widens who can reach the node role's credentials")
        if meta.http_endpoint == "disabled":
            out.append(f"{where}: IMDS disabled: EKS nodes read their bootstrap data from it and may never join")
        if cls.associate_public_ip_address:
            out.append(f"{where}: associatePublicIPAddress puts nodes on the internet; prefer private subnets")
    for pool in pools:
        where = f"nodePools[{pool.name}]"
        if not pool.limits:
            out.append(f"{where}: no limits: nothing caps how much capacity (and spend) the pool can add")
        spot = "spot" in allowed_values(pool_requirements(pool), CAPACITY_TYPE, _KNOWN_VALUES[CAPACITY_TYPE])
        if pool.spot_without_interruption_handling and spot:
            out.append(f"{where}: spot without interruption handling: reclaimed nodes vanish with their pods")
    for pool in pools:
        for path, value, problem in _catalogue_names(pool, ()):
            if problem.warning:
                out.append(f"nodePools[{pool.name}].{render_path(path)}: {value}: {problem.message}")
    out += admission_warnings(pools, classes)
    return out
