"""Amazon Managed Service for Prometheus, for clusters without a Prometheus of their own (`metrics: ampScraper`),
as plain data: the managed scraper's configuration, the in-cluster RBAC it needs, and the alert rules as an AMP
rule group namespace (the same rules as the PrometheusRule, evaluated by AMP).

The scraper reads the controller's metrics Service (`karpenter`, port `http-metrics`) and, when it runs, the
termination handler's pods (`aws-node-termination-handler`, its metrics server) through Kubernetes service
discovery; it authenticates as the Kubernetes user `aps-collector-user`, mapped by an access entry to the
scraper's service-linked role.
"""

from __future__ import annotations

from typing import Any

import yaml

from eks_karpenter.platform.observability.alerts import alerts
from eks_karpenter.platform.observability.config import ObservabilityConfig

COLLECTOR_USER = "aps-collector-user"
"""Kubernetes user name AMP's managed scrapers authenticate as (the access entry maps the scraper role to it)."""
COLLECTOR_ROLE = "eks-karpenter:amp-collector"


def scrape_configuration(karpenter_namespace: str, nth_namespace: str | None) -> str:
    """The scraper's Prometheus configuration (YAML), keeping only the platform's metrics endpoints."""
    jobs: list[dict[str, Any]] = [{
        "job_name": "karpenter",
        "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": [karpenter_namespace]}}],
        "relabel_configs": [
            {"source_labels": ["__meta_kubernetes_service_name", "__meta_kubernetes_endpoint_port_name"],
             "regex": "karpenter;http-metrics", "action": "keep"},
        ],
    }]
    if nth_namespace is not None:
        jobs.append({
            "job_name": "aws-node-termination-handler",
            "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [nth_namespace]}}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name",
                                   "__meta_kubernetes_pod_container_port_name"],
                 "regex": "aws-node-termination-handler;http-metrics", "action": "keep"},
            ],
        })
    return yaml.safe_dump({"global": {"scrape_interval": "30s"}, "scrape_configs": jobs}, sort_keys=False)


def rule_groups(cfg: ObservabilityConfig) -> str:
    """The alert rules as an AMP rule group namespace's data (Prometheus rule file YAML)."""
    return yaml.safe_dump({"groups": [{"name": "karpenter", "rules": [a.rule() for a in alerts(cfg)]}]},
                          sort_keys=False)


def collector_cluster_role() -> dict[str, Any]:
    """What the scraper reads: service discovery objects and the metrics endpoints (read-only)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": COLLECTOR_ROLE},
        "rules": [
            {"apiGroups": [""], "resources": ["nodes", "nodes/proxy", "nodes/metrics", "services", "endpoints",
                                              "pods", "configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
        ],
    }


def collector_binding() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": COLLECTOR_ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": COLLECTOR_ROLE},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": COLLECTOR_USER}],
    }


def alert_manager_definition(topic_arn: str, region: str) -> str:
    """The workspace's Alertmanager configuration: every alert to the SNS topic (the topic's policy must let
    `aps.amazonaws.com` publish), grouped per alert name, repeated every four hours while it fires."""
    return yaml.safe_dump({"alertmanager_config": yaml.safe_dump({
        "route": {"receiver": "sns", "group_by": ["alertname"], "repeat_interval": "4h"},
        "receivers": [{"name": "sns", "sns_configs": [{
            "topic_arn": topic_arn, "sigv4": {"region": region},
            "attributes": {"severity": "{{ .CommonLabels.severity }}"}}]}],
    }, sort_keys=False)}, sort_keys=False)


def workspace_id(arn: str) -> str:
    """`ws-...` from `arn:aws:aps:<region>:<account>:workspace/ws-...`."""
    return arn.rsplit("/", 1)[-1]
