"""How the program itself reaches a cluster's API (the preflight, the CRD look-up, the destroy guard's hooks): the
endpoint and CA, and an EKS bearer token minted in-process as the deployer, the identity the stack's Kubernetes
provider uses (`aws:profile`, the last role of `aws:assumeRoles`).

The token is what `aws eks get-token` prints: `k8s-aws-v1.` and the base64url of a presigned STS
GetCallerIdentity URL whose signature covers the `x-k8s-aws-id: <cluster>` header (EKS's aws-iam-authenticator
checks both). Minting it here needs botocore (a dependency, through boto3), not the AWS CLI, and no network call
unless a role is assumed. EKS accepts a token for 15 minutes: `TokenSource` mints a new one after `REFRESH_AFTER`.

The stack's Kubernetes provider is another process (Pulumi's pulumi-kubernetes plugin): its kubeconfig runs
`aws eks get-token` (cluster/plan.py, `exec_kubeconfig`), so `up`, `preview` and `destroy` need the AWS CLI on
the PATH, which a real run checks first (`aws_cli_missing`).
"""

from __future__ import annotations

import base64
import shutil
import time
from dataclasses import dataclass
from typing import Any

from eks_karpenter.arns import dns_suffix, partition_of

TOKEN_PREFIX = "k8s-aws-v1."
CLUSTER_ID_HEADER = "x-k8s-aws-id"
PRESIGN_SECONDS = 60
"""How long the presigned URL is valid for (what `aws eks get-token` signs it for)."""
REFRESH_AFTER = 10 * 60
"""Seconds after which a token is minted again (EKS accepts one for 15 minutes)."""
SESSION_NAME = "eks-karpenter"


@dataclass(frozen=True)
class ClusterAccess:
    """A cluster's API endpoint and CA, and whose credentials sign the token."""

    cluster_name: str
    endpoint: str
    certificate_authority: str
    """Base64 PEM, as EKS reports it (empty: the system's trust store)."""
    region: str
    role_arn: str | None = None
    """A role to assume first (`aws eks get-token --role-arn`)."""
    profile: str | None = None
    """An AWS profile for the credentials (`--profile`); None: the process's own (environment, SSO, instance)."""


def sts_url(region: str) -> str:
    """STS's regional GetCallerIdentity URL for `region`'s partition."""
    return (f"https://sts.{region}.{dns_suffix(partition_of(region))}/?Action=GetCallerIdentity"
            "&Version=2011-06-15")


def _credentials(region: str, role_arn: str | None, profile: str | None) -> Any:
    import botocore.session

    session = botocore.session.Session(profile=profile)
    if role_arn:
        sts = session.create_client("sts", region_name=region)
        found = sts.assume_role(RoleArn=role_arn, RoleSessionName=SESSION_NAME)["Credentials"]
        from botocore.credentials import Credentials

        return Credentials(found["AccessKeyId"], found["SecretAccessKey"], found["SessionToken"])
    credentials = session.get_credentials()
    if credentials is None:
        raise TokenError("no AWS credentials to sign the EKS token with (environment, profile or role)")
    return credentials


def aws_session(region: str, role_arn: str | None = None, profile: str | None = None) -> Any:
    """A boto3 session with the stack's AWS identity (`aws:profile`, then `aws:assumeRoles`' role), as its
    provider acts: the look-ups the program makes itself read the account the stack deploys to."""
    import boto3

    if not role_arn:
        return boto3.Session(profile_name=profile, region_name=region or None)
    found = _credentials(region, role_arn, profile).get_frozen_credentials()
    return boto3.Session(aws_access_key_id=found.access_key, aws_secret_access_key=found.secret_key,
                         aws_session_token=found.token, region_name=region or None)


class TokenError(Exception):
    """No token could be minted (no credentials, a role that cannot be assumed)."""


def eks_token(access: ClusterAccess) -> str:
    """A bearer token for `access.cluster_name`, signed with the deployer's credentials."""
    import botocore.exceptions
    import botocore.session
    from botocore.signers import RequestSigner

    try:
        credentials = _credentials(access.region, access.role_arn, access.profile)
    except botocore.exceptions.BotoCoreError as exc:
        raise TokenError(f"AWS credentials for the EKS token: {exc}") from None
    except botocore.exceptions.ClientError as exc:
        raise TokenError(f"assuming {access.role_arn} for the EKS token: {exc}") from None
    session = botocore.session.Session()
    signer = RequestSigner(session.get_service_model("sts").service_id, access.region, "sts", "v4", credentials,
                           session.get_component("event_emitter"))
    url = signer.generate_presigned_url(
        {"method": "GET", "url": sts_url(access.region), "body": {}, "context": {},
         "headers": {CLUSTER_ID_HEADER: access.cluster_name}},
        region_name=access.region, expires_in=PRESIGN_SECONDS, operation_name="")
    return TOKEN_PREFIX + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


class TokenSource:
    """The current token for one cluster, minted again when it is `REFRESH_AFTER` old."""

    def __init__(self, access: ClusterAccess, clock: Any = time.monotonic) -> None:
        self.access = access
        self._clock = clock
        self._token = ""
        self._minted = 0.0

    def token(self) -> str:
        now = self._clock()
        if not self._token or now - self._minted >= REFRESH_AFTER:
            self._token, self._minted = eks_token(self.access), now
        return self._token


def token_kubeconfig(access: ClusterAccess, token: str) -> dict[str, Any]:
    """A kubeconfig with a bearer token (no exec plugin: nothing outside this process is run)."""
    cluster: dict[str, Any] = {"server": access.endpoint}
    if access.certificate_authority:
        cluster["certificate-authority-data"] = access.certificate_authority
    name = access.cluster_name
    return {"apiVersion": "v1", "kind": "Config", "current-context": name,
            "clusters": [{"name": name, "cluster": cluster}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "users": [{"name": name, "user": {"token": token}}]}


def aws_cli_missing(which: Any = shutil.which) -> str | None:
    """Why the stack's Kubernetes provider could not get a token (None: the `aws` command is on the PATH)."""
    if which("aws"):
        return None
    return ("the AWS CLI (`aws`) is not on the PATH: the stack's Kubernetes provider runs `aws eks get-token` for "
            "its token, at `pulumi preview`, `up` and `destroy`. Install AWS CLI v2 "
            "(docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html) where Pulumi runs")
