"""The workload file of `eks-karpenter simulate`: typed deployments (and DaemonSets) to place on the pools, or
Kubernetes manifests (Deployments, StatefulSets, Jobs, Pods ..., as `kubectl get -o yaml` prints them: `manifests`).

Keys are spelled as Kubernetes spells them (camelCase: `nodeSelector`, `tolerations`), unknown keys are errors, and
a bad file gets one error naming the file, the line and the key path, like a bad stack file:

    workloads/web.yaml:12: deployments[1].cpu: not a Kubernetes quantity ... (got "one")
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, ValidationError

from eks_karpenter.config.errors import Issue, KeyPath, issues_from_validation_error, render_path, show
from eks_karpenter.config.model import Model, empty_dict, empty_list
from eks_karpenter.config.stackfile import parse_yaml, parse_yaml_documents
from eks_karpenter.labels import ARCH
from eks_karpenter.platform.nodepool.workload import tolerates
from eks_karpenter.quantities import cpu_millis, memory_bytes, quantity_value
from eks_karpenter.tools.simulate.manifests import is_manifest, read_manifests


def quantity(text: str) -> Decimal:
    """A non-negative Kubernetes quantity (`500m`, `1`, `1.5Gi`, `128974848`, `129e6`) as an exact number."""
    return quantity_value(text.strip())


def _number_as_str(value: Any) -> Any:
    # YAML reads `cpu: 1` and `cpu: 0.5` as numbers; Kubernetes accepts them unquoted too.
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _valid_quantity(value: str) -> str:
    quantity(value)
    return value


Quantity = Annotated[str, BeforeValidator(_number_as_str), AfterValidator(_valid_quantity)]
"""A Kubernetes quantity: `500m`, `2`, `512Mi`, `1Gi` (a bare number is accepted)."""
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]


class Toleration(Model):
    """A pod toleration, as in a pod spec."""

    key: str | None = None
    """Taint key to tolerate; empty with `operator: Exists` tolerates every taint."""
    operator: Literal["Equal", "Exists"] = "Equal"
    """`Equal` matches `value`; `Exists` matches any value."""
    value: str | None = None
    """Taint value (with `Equal`)."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    """Effect to tolerate; empty tolerates every effect."""

    def tolerates(self, key: str, value: str | None, effect: str) -> bool:
        """Kubernetes' matching rule for one taint."""
        return tolerates({"key": self.key, "operator": self.operator, "value": self.value, "effect": self.effect},
                         {"key": key, "value": value, "effect": effect})


class Deployment(Model):
    """One Deployment: `replicas` identical pods with these requests and scheduling constraints."""

    name: Name
    """Deployment name (unique in the file)."""
    replicas: int = Field(ge=0, le=100_000)
    """Number of pods."""
    cpu: Quantity
    """CPU request per pod, e.g. `250m` or `1`."""
    memory: Quantity = "0"
    """Memory request per pod, e.g. `512Mi`."""
    node_selector: dict[str, str] = Field(default_factory=empty_dict)
    """Node labels the pods require (`karpenter.sh/capacity-type: on-demand`, `workload-tier: critical`, an
    instance label such as `karpenter.k8s.aws/instance-family: c7i`)."""
    tolerations: list[Toleration] = Field(default_factory=empty_list)
    """Taints the pods tolerate."""
    architecture: Literal["amd64", "arm64", "any"] = "amd64"
    """CPU architecture of the image: `any` for multi-arch images. Most images are built for amd64 only."""

    @property
    def cpu_millis(self) -> int:
        return cpu_millis(self.cpu)

    @property
    def memory_bytes(self) -> int:
        return memory_bytes(self.memory)

    def selector(self) -> dict[str, str]:
        """The node selector with the architecture folded in (as `kubernetes.io/arch`)."""
        out = dict(self.node_selector)
        if self.architecture != "any":
            out.setdefault(ARCH, self.architecture)
        return out


class DaemonSet(Model):
    """A DaemonSet: one pod on every node (the VPC CNI, kube-proxy, log and metrics agents ...)."""

    name: Name
    """DaemonSet name."""
    cpu: Quantity = "0"
    """CPU request of its pod."""
    memory: Quantity = "0"
    """Memory request of its pod."""


class Workload(Model):
    """A workload file: the pods to place, and optionally the DaemonSets every node runs."""

    deployments: list[Deployment] = Field(min_length=1)
    """The Deployments whose pods are placed."""
    daemon_sets: list[DaemonSet] = Field(default_factory=empty_list)
    """DaemonSets: their requests are taken off every node (Karpenter's and the fixed group's) before pods are
    placed, and one pod slot each. Default: none modelled."""

    @property
    def pods(self) -> int:
        return sum(d.replicas for d in self.deployments)


def validate_workload(workload: Workload) -> list[Issue]:
    """Rules across fields: unique names, an architecture that does not contradict the node selector."""
    issues: list[Issue] = []
    seen: dict[str, int] = {}
    for i, d in enumerate(workload.deployments):
        if d.name in seen:
            issues.append(Issue(("deployments", i, "name"), f"duplicate name (also deployments[{seen[d.name]}])",
                                d.name))
        seen.setdefault(d.name, i)
        pinned = d.node_selector.get(ARCH)
        if pinned is not None and d.architecture != "any" and pinned != d.architecture:
            issues.append(Issue(("deployments", i, "nodeSelector", ARCH),
                                f"contradicts architecture: {d.architecture}", pinned))
    names = [s.name for s in workload.daemon_sets]
    for i, name in enumerate(names):
        if name in names[:i]:
            issues.append(Issue(("daemonSets", i, "name"), "duplicate name", name))
    return issues


class WorkloadError(Exception):
    """A bad workload file: every problem with its file, line and key path."""

    def __init__(self, source: str, problems: Iterable[tuple[int | None, Issue]]) -> None:
        self.source = source
        ordered = sorted(problems, key=lambda p: (p[0] or 0, render_path(p[1].path), p[1].message))
        self.lines = [_render(source, line, issue) for line, issue in ordered]
        noun = "problem" if len(self.lines) == 1 else "problems"
        super().__init__(f"invalid workload file, {len(self.lines)} {noun}:\n" + "\n".join(self.lines))


def _render(source: str, line: int | None, issue: Issue) -> str:
    where = f"{source}:{line}" if line else source
    key = f"{render_path(issue.path)}: " if issue.path else ""
    if issue.has_value:
        got = f" (got {show(issue.value)})"
    else:
        got = " (got nothing)" if issue.message == "Field required" else ""
    return f"{where}: {key}{issue.message}{got}"


def _line_of(lines: dict[KeyPath, int], path: KeyPath) -> int | None:
    """The line of the key path, or of its nearest written ancestor (a missing key: its parent's line)."""
    for end in range(len(path), -1, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def parse_workload(text: str, source: str) -> Workload:
    """Validate a workload file's text, or read Kubernetes manifests (see `manifests`). Raises one `WorkloadError`
    naming `source`, lines and keys."""
    docs, stream_problems = parse_yaml_documents(text)
    if not stream_problems and any(is_manifest(body) for body, _ in docs):
        return _from_manifests(docs, source)
    # The stack files' reader: the same YAML reading (yaml.v3's), duplicate keys refused, every key path's line.
    data, lines, problems = parse_yaml(text)
    if lines:  # the document itself is where its first key or item is (the reader records keys and items only)
        lines.setdefault((), min(lines.values()))
    if problems:
        raise WorkloadError(source, [(i.line or _line_of(lines, i.path), i) for i in problems])
    if not isinstance(data, dict):
        raise WorkloadError(source, [(_line_of(lines, ()), Issue(
            (), f"expected a mapping with a `deployments:` list (got {show(data)})", has_value=False))])
    try:
        workload = Workload.model_validate(data)
    except ValidationError as err:
        issues = issues_from_validation_error(err, schema=Workload)
        raise WorkloadError(source, [(_line_of(lines, i.path), i) for i in issues]) from None
    issues = validate_workload(workload)
    if issues:
        raise WorkloadError(source, [(_line_of(lines, i.path), i) for i in issues])
    return workload


def _from_manifests(docs: list[tuple[Any, dict[KeyPath, int]]], source: str) -> Workload:
    content, origins, problems = read_manifests(docs)
    if problems:
        raise WorkloadError(source, problems)
    try:
        workload = Workload.model_validate(content)
    except ValidationError as err:  # a value the manifest reader passed on but the workload model refuses
        issues = issues_from_validation_error(err)
        raise WorkloadError(source, [(None, Issue(
            (), f"{origins[i.path[1]] if len(i.path) > 1 and isinstance(i.path[1], int) else 'manifests'}: "
                f"{render_path(i.path[2:])}: {i.message}", i.value, i.has_value)) for i in issues]) from None
    return workload


def load_workload(path: str) -> Workload:
    """Read and validate a workload file."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise WorkloadError(path, [(None, Issue((), exc.strerror or str(exc), has_value=False))]) from None
    except UnicodeDecodeError:
        raise WorkloadError(path, [(None, Issue((), "not UTF-8 text", has_value=False))]) from None
    return parse_workload(text, path)
