"""The in-cluster look-up of a real run: the adopted cluster's API server, asked as the deployer (the same
`aws eks get-token` credentials as the stack's Kubernetes provider). Needs the `kubernetes` package
(`eks-karpenter[smoke]`); the offline plan never gets here (its mocks answer instead)."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

from eks_karpenter.labels import RELEASE_OWNER_LABEL
from eks_karpenter.platform.cluster.plan import exec_kubeconfig
from eks_karpenter.platform.kube import KubeApi, KubeError
from eks_karpenter.platform.preflight.checks import CRD_GROUPS


def probe(request: dict[str, Any]) -> dict[str, Any]:
    """Answer an in-cluster request (see lookup.py) from the cluster's API server."""
    kubeconfig = json.loads(exec_kubeconfig(request["clusterName"], request["endpoint"],
                                            request["certificateAuthority"], request["region"],
                                            role_arn=request.get("roleArn"), profile=request.get("profile")))
    try:
        api = KubeApi.from_kubeconfig(kubeconfig)
    except KubeError as exc:
        return {"reachable": False, "error": f"{exc} (install it with `pip install 'eks-karpenter[smoke]'`, or set "
                "eks-karpenter:cluster.preflight: false to skip these checks)"}
    return answer(api, request)


def answer(api: KubeApi, request: dict[str, Any]) -> dict[str, Any]:
    """What the preflight asks, read through `api` (tested against the fake API server)."""
    try:
        # Every CRD the chosen release installs (capacity buffers and node overlays too), and any other of
        # Karpenter's groups (an older Karpenter's).
        wanted_crds = set(request.get("crds", []))
        crds = [_crd(c) for c in api.list_crds()
                if c["metadata"]["name"] in wanted_crds or c["spec"]["group"] in CRD_GROUPS]
        wanted = sorted(set(request.get("releases", [])))
        # Only the releases named like this stack's: every release's every revision would be megabytes.
        releases = [_release(s) for s in api.list_secrets(f"owner=helm,name in ({','.join(wanted)})")
                    if s["metadata"].get("labels", {}).get("name") in wanted] if wanted else []
        deployments: dict[str, int] = {}
        for ref in request.get("deployments", []):
            namespace, name = ref.split("/", 1)
            found = api.get_deployment(namespace, name)
            if found is not None:
                deployments[ref] = int(found.get("spec", {}).get("replicas", 1))
    except KubeError as exc:
        return {"reachable": exc.reachable, "status": exc.status, "error": str(exc)}
    # A release has one Secret per revision: the newest says what is installed.
    newest: dict[tuple[str, str], dict[str, Any]] = {}
    for r in releases:
        key = (r["namespace"], r["name"])
        if key not in newest or r["revision"] > newest[key]["revision"]:
            newest[key] = r
    return {"reachable": True, "crds": crds, "deployments": deployments,
            "helmReleases": [{k: v for k, v in r.items() if k != "revision"} for _, r in sorted(newest.items())]}


def _crd(crd: dict[str, Any]) -> dict[str, Any]:
    annotations = crd["metadata"].get("annotations") or {}
    return {"name": crd["metadata"]["name"], "releaseName": annotations.get("meta.helm.sh/release-name"),
            "releaseNamespace": annotations.get("meta.helm.sh/release-namespace"),
            "versions": [v["name"] for v in crd["spec"].get("versions", [])]}


def _release(secret: dict[str, Any]) -> dict[str, Any]:
    labels = secret["metadata"].get("labels", {})
    description = ""
    try:  # Helm stores the release as base64(gzip(JSON)), and the Secret's data is base64 again
        raw = base64.b64decode(base64.b64decode(secret.get("data", {}).get("release", "")))
        description = str(json.loads(gzip.decompress(raw)).get("info", {}).get("description", ""))
    except (ValueError, OSError, AttributeError):
        pass
    return {"namespace": secret["metadata"]["namespace"], "name": labels.get("name", ""),
            "status": labels.get("status", "unknown"), "revision": int(labels.get("version", "0") or 0),
            "description": description, "owner": labels.get(RELEASE_OWNER_LABEL, "")}
