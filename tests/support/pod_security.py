"""Test support: the Pod Security Standards' baseline checks that keep a pod off the node's own identity, as the
pod-security-admission library applies them (version 1.0 of each check): privileged containers, host namespaces,
hostPath volumes and added capabilities. `restricted` includes every baseline check; `privileged` checks nothing.

Only these four families are modelled (the escalation paths a tenant with `edit` would take); the test that holds
this model to upstream's own pass/fail fixtures reads them from a checkout of kubernetes/pod-security-admission.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
"""Capabilities a baseline pod may add (Pod Security Standards, baseline, "Capabilities")."""
FAMILIES = ("privileged", "hostnamespaces", "hostpathvolumes", "capabilities_baseline")


def _containers(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        yield from spec.get(key) or []


def violations(pod: dict[str, Any], level: str) -> list[str]:
    """The checks `pod` fails at `level` (`privileged`, `baseline` or `restricted`), by family name."""
    if level == "privileged":
        return []
    spec = pod.get("spec") or {}
    found = []
    if any(((c.get("securityContext") or {}).get("privileged")) for c in _containers(pod)):
        found.append("privileged")
    if any(spec.get(key) for key in ("hostNetwork", "hostPID", "hostIPC")):
        found.append("hostnamespaces")
    if any("hostPath" in v for v in spec.get("volumes") or []):
        found.append("hostpathvolumes")
    added = {cap for c in _containers(pod)
             for cap in (((c.get("securityContext") or {}).get("capabilities") or {}).get("add") or [])}
    if added - BASELINE_CAPABILITIES:
        found.append("capabilities_baseline")
    return found


def admitted(pod: dict[str, Any], namespace_labels: dict[str, str]) -> bool:
    """Whether a namespace with these labels admits `pod` (its enforced level; none enforced admits all)."""
    return not violations(pod, namespace_labels.get("pod-security.kubernetes.io/enforce", "privileged"))
