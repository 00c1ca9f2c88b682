"""The program's own calls to a cluster (preflight, CRD look-up, destroy hooks) authenticate with an EKS token
minted in-process, as `aws eks get-token` would make it, and mint a new one before the old one expires; checked
on the token itself and against the fake API server through the platform's client."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from eks_karpenter.platform.cluster_access import (
    REFRESH_AFTER,
    TOKEN_PREFIX,
    ClusterAccess,
    TokenSource,
    aws_cli_missing,
    eks_token,
    token_kubeconfig,
)
from eks_karpenter.platform.kube import KubeApi, KubeError
from eks_karpenter.tools.engine import run_plan

from tests.support import REPO
from tests.support.fake_kube import FakeCluster


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Static AWS credentials in the environment: presigning needs no network."""
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")


def presigned(token: str) -> tuple[str, dict[str, list[str]]]:
    assert token.startswith(TOKEN_PREFIX) and "=" not in token
    body = token.removeprefix(TOKEN_PREFIX)
    url = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}", parse_qs(parts.query)


@pytest.mark.usefixtures("credentials")
@pytest.mark.parametrize(("region", "host"), [("eu-west-1", "https://sts.eu-west-1.amazonaws.com/"),
                                              ("cn-north-1", "https://sts.cn-north-1.amazonaws.com.cn/")])
def test_the_token_is_a_presigned_get_caller_identity_bound_to_the_cluster(region: str, host: str) -> None:
    where, query = presigned(eks_token(ClusterAccess("prod-karpenter", "https://x", "", region)))
    assert where == host
    assert query["Action"] == ["GetCallerIdentity"] and query["Version"] == ["2011-06-15"]
    assert query["X-Amz-Expires"] == ["60"]
    assert query["X-Amz-SignedHeaders"] == ["host;x-k8s-aws-id"]
    assert query["X-Amz-Credential"][0].startswith("AKIAIOSFODNN7EXAMPLE/") and f"/{region}/sts/" in \
        query["X-Amz-Credential"][0]


def test_without_credentials_no_token_is_minted(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(KubeError, match="EKS token for prod-karpenter: no AWS credentials"):
        KubeApi.for_cluster(ClusterAccess("prod-karpenter", "http://127.0.0.1:9", "", "us-east-1"))


def test_a_token_is_minted_again_once_it_is_ten_minutes_old(monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_karpenter.platform import cluster_access

    minted = iter(["t1", "t2"])
    monkeypatch.setattr(cluster_access, "eks_token", lambda access: next(minted))
    now = [0.0]
    source = TokenSource(ClusterAccess("c", "https://x", "", "us-east-1"), clock=lambda: now[0])
    assert source.token() == "t1"
    now[0] = REFRESH_AFTER - 1
    assert source.token() == "t1"
    now[0] = REFRESH_AFTER
    assert source.token() == "t2"


def test_the_kubeconfig_has_a_token_and_runs_nothing() -> None:
    config = token_kubeconfig(ClusterAccess("c", "https://x", "Q0E=", "us-east-1"), "k8s-aws-v1.abc")
    assert config["users"] == [{"name": "c", "user": {"token": "k8s-aws-v1.abc"}}]
    assert config["clusters"][0]["cluster"] == {"server": "https://x", "certificate-authority-data": "Q0E="}


@pytest.fixture
def fake() -> Iterator[tuple[FakeCluster, str]]:
    cluster = FakeCluster([])
    with cluster.serving() as url:
        yield cluster, url


@pytest.mark.usefixtures("credentials")
def test_the_client_sends_the_token_to_the_api_server(fake: tuple[FakeCluster, str]) -> None:
    cluster, url = fake
    api = KubeApi.for_cluster(ClusterAccess("prod-karpenter", url, "", "us-east-1"))
    assert api.list_crds() == []
    [sent] = cluster.authorizations
    assert sent.startswith(f"Bearer {TOKEN_PREFIX}")
    where, _ = presigned(sent.removeprefix("Bearer "))
    assert where == "https://sts.us-east-1.amazonaws.com/"


def test_the_aws_cli_is_needed_only_for_the_kubernetes_provider() -> None:
    assert aws_cli_missing(lambda name: "/usr/local/bin/aws") is None
    assert "runs `aws eks get-token`" in str(aws_cli_missing(lambda name: None))


@pytest.mark.slow
def test_a_real_run_without_the_aws_cli_stops_before_registering_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_karpenter.platform import build

    monkeypatch.setattr(build, "offline", lambda: False)
    monkeypatch.setattr(build, "aws_cli_missing", lambda: aws_cli_missing(lambda name: None))
    result = run_plan(REPO, "dev")
    assert "the AWS CLI (`aws`) is not on the PATH" in str(result.error)
    assert [r for r in result.document.resources if r.custom] == []
