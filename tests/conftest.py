"""Fixtures shared by every test; the helpers they use live in tests/support."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import support
from tests.support import MISSING_UPSTREAM, NO_SKIPS


def _upstream() -> Path:
    if not support.UPSTREAM.is_dir():
        if os.environ.get(NO_SKIPS) == "1":
            pytest.fail(f"{MISSING_UPSTREAM} ({NO_SKIPS}=1: upstream comparisons may not be skipped)", pytrace=False)
        pytest.skip(MISSING_UPSTREAM)
    return support.UPSTREAM


@pytest.fixture
def upstream_files() -> Path:
    """The upstream folder, read at each use (a test may point `tests.support.UPSTREAM` elsewhere); skips the
    test when there is none (fails it when EKS_KARPENTER_NO_SKIPS=1)."""
    return _upstream()


@pytest.fixture(scope="module")
def upstream_module() -> Path:
    """`upstream_files` for module-scoped fixtures that read upstream files: pytest sets up wider-scoped fixtures
    first, so such a fixture must request this one, or it reads a missing file (an error, not a skip) before
    any function-scoped skip runs."""
    return _upstream()
