"""The Pod Security model the tenancy tests use (tests/support/pod_security.py), held to upstream's own pass/fail pods
from kubernetes/pod-security-admission, for the four baseline checks a tenant would break to reach its node."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.support.pod_security import FAMILIES, violations

PSA_FIXTURES = "EKS_KARPENTER_PSA_FIXTURES"
"""A kubernetes/pod-security-admission checkout's `test/testdata` (e.g. at v0.36.2): upstream's pass/fail pods."""


@pytest.mark.parametrize("level", ["baseline", "restricted"])
def test_the_model_agrees_with_upstreams_pass_and_fail_pods(level: str) -> None:
    root = os.environ.get(PSA_FIXTURES)
    if not root:
        pytest.skip(f"set {PSA_FIXTURES} to a kubernetes/pod-security-admission checkout's test/testdata")
    checked = 0
    for verdict in ("pass", "fail"):
        for path in sorted((Path(root) / level / "v1.0" / verdict).glob("*.yaml")):
            family = path.stem.rstrip("0123456789")
            if family not in FAMILIES:
                continue
            found = violations(yaml.safe_load(path.read_text()), level)
            assert (family in found) == (verdict == "fail"), (path, found)
            checked += 1
    assert checked >= 10, f"too few {level} fixtures of {FAMILIES} under {root}"
