"""The stack's own cluster as its resource hooks reach it: the kubeconfig of the stack's Kubernetes provider, and
a check, before any call, that the client goes to the endpoint and trusts the certificate authority the stack's
cluster resource holds. No fallback to the operator's kubeconfig: a hook that cannot build this client, or builds
one for another cluster, acts on nothing.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import pulumi
import yaml

from eks_karpenter.platform.kube import ClusterIdentity, KubeApi

__all__ = ["ClusterIdentity", "OtherCluster", "StackCluster", "cluster_mismatch"]


class OtherCluster(Exception):
    """The client would reach another cluster than the stack's (or none the stack can name): the message says why."""


def _pem(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True).strip() or None
    except (binascii.Error, ValueError):
        return None


def cluster_mismatch(reached: ClusterIdentity, cluster: str, endpoint: str, certificate_authority: str) -> str | None:
    """Why `reached` is not the stack's cluster (its `endpoint` and base64 `certificate_authority`, from the stack's
    own cluster resource), or None when it is: the client goes to that endpoint and trusts that CA alone, so the
    TLS handshake proves the server is the cluster."""
    expected = _pem(certificate_authority)
    if not endpoint or expected is None:
        return f"the stack holds no endpoint or certificate authority for cluster {cluster}"
    if reached.server.rstrip("/").lower() != endpoint.rstrip("/").lower():
        return f"the client talks to {reached.server}, not to cluster {cluster}'s endpoint {endpoint}"
    if not reached.verifies:
        return "the client does not verify the API server's certificate"
    if reached.certificate_authority is None or reached.certificate_authority.strip() != expected:
        return f"the client trusts another certificate authority than cluster {cluster}'s"
    return None


class StackCluster:
    """The stack's cluster for its hooks: remembers the provider's kubeconfig and the cluster's endpoint and CA as
    the program resolves them; `api()` gives a client only once it is shown to be that cluster's."""

    def __init__(self, cluster: str, kubeconfig: pulumi.Output[str], endpoint: pulumi.Input[str],
                 certificate_authority: pulumi.Input[str]) -> None:
        self.cluster = cluster
        self.kubeconfig: dict[str, Any] = {}
        self.endpoint = ""
        self.certificate_authority = ""
        kubeconfig.apply(self._remember)
        pulumi.Output.all(endpoint, certificate_authority).apply(self._expect)

    def _remember(self, text: str) -> None:
        loaded = yaml.safe_load(text) if text else None
        if isinstance(loaded, dict):
            self.kubeconfig.update(loaded)

    def _expect(self, values: list[Any]) -> None:
        self.endpoint, self.certificate_authority = str(values[0] or ""), str(values[1] or "")

    def api(self) -> KubeApi:
        """A `KubeApi` for the stack's cluster; `OtherCluster` when there is none to build, or it is another's."""
        if not self.kubeconfig:
            raise OtherCluster(f"the program did not resolve the kubeconfig of cluster {self.cluster} (the stack's "
                               "Kubernetes provider's), and no other kubeconfig is used")
        api = KubeApi.from_kubeconfig(self.kubeconfig)
        why = cluster_mismatch(api.identity(), self.cluster, self.endpoint, self.certificate_authority)
        if why is not None:
            raise OtherCluster(why)
        return api
