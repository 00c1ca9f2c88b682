"""The platform's small Kubernetes client: the few API calls the preflight, the destroy guard and the smoke test
make, over the official `kubernetes` client, as plain dicts.

Every call asks for the raw response (`_preload_content=False`) and decodes the JSON itself: the runner works on
the same camelCase dicts as the rest of this library, and NodeClaims need no generated models.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eks_karpenter.labels import KARPENTER_GROUP

KARPENTER_VERSION = "v1"
INSTALL_HINT = "pip install 'eks-karpenter[smoke]'"


@dataclass(frozen=True)
class ClusterIdentity:
    """Which API server a client talks to and which certificate authority it trusts to prove it."""

    server: str
    certificate_authority: bytes | None
    """PEM the client verifies the server's certificate with (None: the system's trust store)."""
    verifies: bool
    """TLS verification is on (off: any server at that address would do)."""


class KubeError(Exception):
    """An API call failed in a way the caller cannot work around (unreachable server, forbidden, ...)."""

    def __init__(self, message: str, status: int | None = None, reachable: bool = True) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status the API server answered with (None: no answer, or not an HTTP error)."""
        self.reachable = reachable
        """False when the API server could not be reached at all."""


def _client() -> Any:
    try:
        import kubernetes
    except ImportError:
        raise KubeError(f"the smoke test needs the `kubernetes` package: {INSTALL_HINT}") from None
    return kubernetes


class KubeApi:
    """Typed wrappers of the endpoints the platform and its tools use (and only those: the test server speaks
    these)."""

    def __init__(self, api_client: Any) -> None:
        k = _client()
        self.api_client = api_client
        self.core = k.client.CoreV1Api(api_client)
        self.apps = k.client.AppsV1Api(api_client)
        self.custom = k.client.CustomObjectsApi(api_client)
        self.extensions = k.client.ApiextensionsV1Api(api_client)
        self._api_exception = k.client.ApiException
        self.server = str(api_client.configuration.host)

    @staticmethod
    def from_kubeconfig(kubeconfig: Mapping[str, Any], context: str | None = None) -> KubeApi:
        k = _client()
        try:
            api_client = k.config.new_client_from_config_dict(dict(kubeconfig), context=context)
        except k.config.ConfigException as exc:
            raise KubeError(f"kubeconfig: {exc}") from None
        return KubeApi(api_client)

    @staticmethod
    def from_file(path: str | None, context: str | None = None) -> KubeApi:
        k = _client()
        try:
            return KubeApi(k.config.new_client_from_config(config_file=path, context=context))
        except (k.config.ConfigException, OSError) as exc:
            raise KubeError(f"kubeconfig {path or '(default)'}: {exc}") from None

    def _call(self, fn: Any, *args: Any, missing_ok: bool = False, **kwargs: Any) -> Any:
        try:
            response = fn(*args, _preload_content=False, _request_timeout=30, **kwargs)
        except self._api_exception as exc:
            if missing_ok and exc.status == 404:
                return None
            message = exc.reason
            with contextlib.suppress(TypeError, ValueError, AttributeError):
                message = json.loads(exc.body).get("message", message)
            raise KubeError(f"{fn.__name__}: HTTP {exc.status}: {message}", status=exc.status) from None
        except OSError as exc:  # urllib3's connection errors are OSErrors too
            raise KubeError(f"cannot reach the Kubernetes API at {self.server}: {exc}", reachable=False) from None
        except Exception as exc:
            if type(exc).__module__.startswith("urllib3"):
                raise KubeError(f"cannot reach the Kubernetes API at {self.server}: {exc}", reachable=False) from None
            raise
        data = response.data
        return json.loads(data) if data else {}

    # --- namespaces ----------------------------------------------------------------------------------------
    def create_namespace(self, body: Mapping[str, Any]) -> None:
        self._call(self.core.create_namespace, dict(body))

    def delete_namespace(self, name: str) -> bool:
        """Delete it (and so everything in it); False when it was already gone."""
        return self._call(self.core.delete_namespace, name, missing_ok=True,
                          propagation_policy="Background") is not None

    def list_namespaces(self, label_selector: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_namespace, label_selector=label_selector)["items"]
        return items

    # --- workloads -----------------------------------------------------------------------------------------
    def create_deployment(self, body: Mapping[str, Any]) -> None:
        self._call(self.apps.create_namespaced_deployment, body["metadata"]["namespace"], dict(body))

    def scale_deployment(self, namespace: str, name: str, replicas: int) -> None:
        self._call(self.apps.patch_namespaced_deployment_scale, name, namespace, {"spec": {"replicas": replicas}},
                   missing_ok=True)

    def list_pods(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_namespaced_pod, namespace,
                                                 label_selector=label_selector)["items"]
        return items

    def pods_on_node(self, node: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_pod_for_all_namespaces,
                                                 field_selector=f"spec.nodeName={node}")["items"]
        return items

    def get_deployment(self, namespace: str, name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._call(self.apps.read_namespaced_deployment, name, namespace,
                                                  missing_ok=True)
        return found

    def pending_pods(self) -> list[dict[str, Any]]:
        """Every Pending pod of the cluster."""
        items: list[dict[str, Any]] = self._call(self.core.list_pod_for_all_namespaces,
                                                 field_selector="status.phase=Pending")["items"]
        return items

    def list_secrets(self, label_selector: str) -> list[dict[str, Any]]:
        """Secrets of every namespace (Helm keeps its releases in them)."""
        items: list[dict[str, Any]] = self._call(self.core.list_secret_for_all_namespaces,
                                                 label_selector=label_selector)["items"]
        return items

    def label_secrets(self, namespace: str, label_selector: str, labels: Mapping[str, str]) -> list[str]:
        """Add `labels` to every Secret of `namespace` that `label_selector` matches; returns their names."""
        items = self._call(self.core.list_namespaced_secret, namespace, label_selector=label_selector)["items"]
        names: list[str] = []
        for secret in items:
            name = secret["metadata"]["name"]
            self._call(self.core.patch_namespaced_secret, name, namespace, {"metadata": {"labels": dict(labels)}})
            names.append(name)
        return names

    def list_crds(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.extensions.list_custom_resource_definition)["items"]
        return items

    # --- nodes and Karpenter objects -----------------------------------------------------------------------
    def get_node(self, name: str) -> dict[str, Any] | None:
        node: dict[str, Any] | None = self._call(self.core.read_node, name, missing_ok=True)
        return node

    def list_nodes(self, label_selector: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_node, label_selector=label_selector)["items"]
        return items

    def list_nodeclaims(self, label_selector: str = "") -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(
            self.custom.list_cluster_custom_object, KARPENTER_GROUP, KARPENTER_VERSION, "nodeclaims",
            label_selector=label_selector)["items"]
        return items

    def delete_nodeclaim(self, name: str) -> None:
        self._call(self.custom.delete_cluster_custom_object, KARPENTER_GROUP, KARPENTER_VERSION, "nodeclaims",
                   name, missing_ok=True)

    def delete_nodepool(self, name: str) -> None:
        self._call(self.custom.delete_cluster_custom_object, KARPENTER_GROUP, KARPENTER_VERSION, "nodepools",
                   name, missing_ok=True)

    # --- what destroy would leave behind (platform/karpenter/teardown.py) -------------------------------------
    def list_services(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_service_for_all_namespaces)["items"]
        return items

    def list_ingresses(self) -> list[dict[str, Any]]:
        k = _client()
        networking = k.client.NetworkingV1Api(self.api_client)
        items: list[dict[str, Any]] = self._call(networking.list_ingress_for_all_namespaces)["items"]
        return items

    def list_persistent_volumes(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_persistent_volume)["items"]
        return items

    def identity(self) -> ClusterIdentity:
        """The API server this client goes to and the certificate authority it verifies it with."""
        conf = self.api_client.configuration
        ca: bytes | None = None
        if conf.ssl_ca_cert:
            with open(conf.ssl_ca_cert, "rb") as pem:
                ca = pem.read()
        return ClusterIdentity(str(conf.host), ca, bool(conf.verify_ssl))

    def get_nodepool(self, name: str) -> dict[str, Any] | None:
        pool: dict[str, Any] | None = self._call(
            self.custom.get_cluster_custom_object, KARPENTER_GROUP, KARPENTER_VERSION, "nodepools", name,
            missing_ok=True)
        return pool

    # --- events --------------------------------------------------------------------------------------------
    def events_for(self, kind: str, name: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Events about one object (cluster-scoped objects' events live in `default`: searched everywhere)."""
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        if namespace:
            data = self._call(self.core.list_namespaced_event, namespace, field_selector=selector)
        else:
            data = self._call(self.core.list_event_for_all_namespaces, field_selector=selector)
        items: list[dict[str, Any]] = data["items"]
        return items

    def namespace_events(self, namespace: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call(self.core.list_namespaced_event, namespace)["items"]
        return items
