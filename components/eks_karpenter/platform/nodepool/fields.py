"""The value types pool and class config share (names, durations, quantities, label keys and values), each
carrying the constraints Karpenter's CRDs put on one value. The well-known label keys are in `labels.py`."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, StringConstraints

from eks_karpenter.labels import (
    AWS_GROUP,
    AWS_LABEL_KEYS,
    CAPACITY_TYPE,
    HOSTNAME,
    KARPENTER_GROUP,
    NODEPOOL_LABEL,
    WELL_KNOWN_KEYS,
)
from eks_karpenter.quantities import quantity_value

# Kubelets may not label themselves in these domains (NodeRestriction), so Karpenter refuses them on NodePools,
# except for the well-known keys and the sub-domains below.
_KUBELET_DOMAINS = ("kubernetes.io", "k8s.io")
_KUBELET_DOMAIN_EXCEPTIONS = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")

# --- scalar types ----------------------------------------------------------------------------------------------

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

ResourceName = Annotated[str, StringConstraints(pattern=rf"^{_DNS_LABEL}$", max_length=63)]
"""A DNS-1123 label: the object name, and the value of the `karpenter.sh/nodepool` node label."""
LabelValue = Annotated[str, StringConstraints(max_length=63, pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")]
Duration = Annotated[str, StringConstraints(pattern=r"^(([0-9]+[smh])+|Never)$")]
"""`720h`, `1h30m`, `90s`, or `Never`."""
GraceDuration = Annotated[str, StringConstraints(pattern=r"^([0-9]+[smh])+$")]
BudgetDuration = Annotated[str, StringConstraints(pattern=r"^([0-9]+h[0-9]+m|[0-9]+[hm])(0s)?$")]
"""Hours and minutes only (`8h`, `90m`, `1h30m`): budgets are cron-driven, and cron has no seconds."""
AvailabilityZone = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9][a-z]$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
QUANTITY_PATTERN = r"([0-9]+(\.[0-9]+)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][0-9]+)?"


def _int_as_str(value: Any) -> Any:
    # YAML turns `nodes: 0` or `cpu: 1000` into numbers; the API wants strings, and users should not have to quote.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _evaluable(value: str) -> str:
    # The pattern admits `1e9999999`, which no rule (limits vs the cheapest node, cost) could then compare.
    quantity_value(value)
    return value


# The pattern before the BeforeValidator: pydantic then checks it in the str schema itself.
Quantity = Annotated[str, StringConstraints(pattern=rf"^{QUANTITY_PATTERN}$"), BeforeValidator(_int_as_str),
                     AfterValidator(_evaluable)]
"""A non-negative Kubernetes quantity: `1000`, `500m`, `1000Gi`."""
BudgetNodes = Annotated[str, StringConstraints(pattern=r"^((100|[0-9]{1,2})%|[0-9]+)$"), BeforeValidator(_int_as_str)]
"""A node count (`"0"`, `"5"`) or a percentage of the pool (`"10%"`)."""


def qualified_name(value: str) -> str:
    prefix, _, name = value.rpartition("/")
    if "/" in prefix or (prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix))):
        raise ValueError("prefix must be a lowercase DNS subdomain, like example.com/")
    if len(name) > 63 or not _NAME_PART.match(name):
        raise ValueError("name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric")
    return value


def _domain(key: str) -> str:
    return key.split("/", 1)[0]


def _karpenter_key(key: str) -> str:
    """The restrictions Karpenter's CRDs put on requirement keys and template label keys."""
    domain = _domain(key)
    if key == NODEPOOL_LABEL:
        raise ValueError(f'label "{NODEPOOL_LABEL}" is restricted: Karpenter sets it to the pool name')
    if key == HOSTNAME:
        raise ValueError(f'label "{HOSTNAME}" is restricted: every node gets its own')
    if domain.endswith(KARPENTER_GROUP) and key != CAPACITY_TYPE:
        raise ValueError('label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type is allowed)')
    if domain.endswith(AWS_GROUP) and key not in AWS_LABEL_KEYS:
        raise ValueError(f'label domain "{AWS_GROUP}" is restricted to Karpenter\'s well-known instance labels')
    in_kubelet_domain = any(domain == d or domain.endswith("." + d) for d in _KUBELET_DOMAINS)
    excepted = any(domain == d or domain.endswith("." + d) for d in _KUBELET_DOMAIN_EXCEPTIONS)
    if in_kubelet_domain and not excepted and key not in WELL_KNOWN_KEYS:
        raise ValueError("kubelets may not set labels in the kubernetes.io and k8s.io domains; use your own "
                         "domain (node.kubernetes.io/ is allowed)")
    return key


QualifiedName = Annotated[str, StringConstraints(max_length=316), AfterValidator(qualified_name)]
LabelKey = Annotated[QualifiedName, AfterValidator(_karpenter_key)]
"""A node label key Karpenter accepts on a NodePool (requirements and template labels)."""


def _label_value_like(value: str) -> str:
    if not _NAME_PART.match(value) or len(value) > 63:
        raise ValueError("taint values are 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric")
    return value


TaintValue = Annotated[str, AfterValidator(_label_value_like)]
