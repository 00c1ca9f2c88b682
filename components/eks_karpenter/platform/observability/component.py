"""Observability component: the PrometheusRule and the Grafana dashboard ConfigMap in the Karpenter namespace.

The ServiceMonitors come from the charts' own values (`monitor_values`), and the interruption queue's alarms
belong to the InterruptionQueue component (they exist whenever the queue does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NotRequired, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from eks_karpenter.arns import partition_of
from eks_karpenter.platform.observability import amp
from eks_karpenter.platform.observability.alerts import prometheus_rule
from eks_karpenter.platform.observability.config import ObservabilityConfig
from eks_karpenter.platform.observability.dashboard import PoolPrice, dashboard, dashboard_configmap
from eks_karpenter.platform.observability.monitors import PROMETHEUS_RULE, has_kind
from eks_karpenter.platform.wiring import caller_identity, child_options


class ObservabilityArgs(TypedDict):
    """Inputs of the Observability component."""

    config: ObservabilityConfig
    """Validated observability config (enabled)."""
    namespace: str
    """The Karpenter namespace: the rule and the dashboard live next to the controller."""
    clusterName: str
    """The cluster, named in the dashboard's title."""
    poolPrices: Mapping[str, PoolPrice | None]
    """Catalogue prices per NodePool, for the dashboard's cost table."""
    region: NotRequired[str]
    """With `ampScraper`: the cluster's region."""
    subnetIds: NotRequired[pulumi.Input[Sequence[str]]]
    """With `ampScraper`: subnets the scraper's ENIs go in (the cluster's private subnets)."""
    securityGroupIds: NotRequired[Sequence[pulumi.Input[str]]]
    """With `ampScraper`: security groups of the scraper's ENIs (the cluster security group)."""
    operatorCrds: NotRequired[frozenset[str] | None]
    """The Prometheus Operator CRDs the cluster has (see `monitors.OPERATOR_CRDS`): without the PrometheusRule's,
    the rule is left out (a new cluster has none). Absent or None: taken as there."""
    nthNamespace: NotRequired[str | None]
    """With `ampScraper`: the termination handler's namespace when it runs (its pods are scraped too)."""
    tags: NotRequired[dict[str, str]]
    """Tags for the AWS resources (AMP workspace, scraper, rule group namespace, access entry)."""


class Observability(pulumi.ComponentResource):
    """Alert rules (PrometheusRule, with a Prometheus Operator) and the Grafana dashboard ConfigMap."""

    rule_name: pulumi.Output[str | None]
    """Name of the PrometheusRule (None when `metrics` is not `prometheusOperator`, or the cluster lacks its
    CRD)."""
    dashboard_name: pulumi.Output[str | None]
    """Name of the dashboard ConfigMap (None when `dashboard` is false)."""

    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Observability", name, None, opts)
        cfg, namespace = args["config"], args["namespace"]
        child = child_options(self, opts)
        self.rule_name = pulumi.Output.from_input(None)
        self.dashboard_name = pulumi.Output.from_input(None)
        if cfg.metrics == "prometheusOperator" and has_kind(args.get("operatorCrds"), PROMETHEUS_RULE):
            rule = prometheus_rule(cfg, namespace)
            k8s.apiextensions.CustomResource(f"{name}-rules", api_version=rule["apiVersion"], kind=rule["kind"],
                                             metadata=rule["metadata"], spec=rule["spec"], opts=child)
            self.rule_name = pulumi.Output.from_input(rule["metadata"]["name"])
        if cfg.dashboard:
            cm = dashboard_configmap(dashboard(args["poolPrices"], args["clusterName"]), namespace)
            k8s.core.v1.ConfigMap(f"{name}-dashboard", metadata=cm["metadata"], data=cm["data"], opts=child)
            self.dashboard_name = pulumi.Output.from_input(cm["metadata"]["name"])
        if cfg.metrics == "ampScraper":
            self._amp(name, args, opts)
        self.register_outputs({"ruleName": self.rule_name, "dashboardName": self.dashboard_name})


    def _amp(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None) -> None:
        """The AMP workspace (unless given), the managed scraper, its in-cluster access, and the alert rules."""
        cfg, cluster, tags = args["config"], args["clusterName"], args.get("tags", {})
        child = child_options(self, opts)
        if cfg.amp_workspace_arn:
            workspace_arn: pulumi.Input[str] = cfg.amp_workspace_arn
            workspace_id: pulumi.Input[str] = amp.workspace_id(cfg.amp_workspace_arn)
        else:
            workspace = aws.amp.Workspace(f"{name}-workspace", alias=cluster, tags=tags, opts=child)
            workspace_arn, workspace_id = workspace.arn, workspace.id
        region = args["region"]
        cluster_arn = caller_identity(self).apply(
            lambda c: f"arn:{partition_of(region)}:eks:{region}:{c.account_id}:cluster/{cluster}")
        role, binding = amp.collector_cluster_role(), amp.collector_binding()
        cluster_role = k8s.rbac.v1.ClusterRole(f"{name}-amp-collector", metadata=role["metadata"],
                                               rules=role["rules"], opts=child)
        k8s.rbac.v1.ClusterRoleBinding(f"{name}-amp-collector", metadata=binding["metadata"],
                                       role_ref=binding["roleRef"], subjects=binding["subjects"],
                                       opts=child_options(self, opts, cluster_role))
        scraper = aws.amp.Scraper(
            f"{name}-scraper", alias=f"{cluster}-karpenter",
            source=aws.amp.ScraperSourceArgs(eks=aws.amp.ScraperSourceEksArgs(
                cluster_arn=cluster_arn, subnet_ids=args.get("subnetIds", []),
                security_group_ids=list(args.get("securityGroupIds", [])) or None)),
            destination=aws.amp.ScraperDestinationArgs(amp=aws.amp.ScraperDestinationAmpArgs(
                workspace_arn=workspace_arn)),
            scrape_configuration=amp.scrape_configuration(args["namespace"], args.get("nthNamespace")),
            tags=tags, opts=child)
        # The scraper's role reaches the API as the user the ClusterRoleBinding names.
        aws.eks.AccessEntry(f"{name}-amp-collector", cluster_name=cluster, principal_arn=scraper.role_arn,
                            user_name=amp.COLLECTOR_USER, type="STANDARD", tags=tags, opts=child)
        aws.amp.RuleGroupNamespace(f"{name}-rules", name="karpenter", workspace_id=workspace_id,
                                   data=amp.rule_groups(cfg), opts=child)
        # A workspace has one Alertmanager definition: set it only on the workspace this stack creates.
        if cfg.alarm_topic_arn and not cfg.amp_workspace_arn:
            aws.amp.AlertManagerDefinition(f"{name}-alerts", workspace_id=workspace_id,
                                           definition=amp.alert_manager_definition(cfg.alarm_topic_arn, region),
                                           opts=child)
