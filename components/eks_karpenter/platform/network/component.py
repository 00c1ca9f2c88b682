"""Network component: a VPC with private/public subnets and NAT, or tags on an adopted VPC's subnets."""

from __future__ import annotations

import json
from typing import NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from eks_karpenter import tags as T
from eks_karpenter.platform.network import plan as P
from eks_karpenter.platform.network.config import FlowLogsConfig, NetworkConfig
from eks_karpenter.platform.network.plan import nat_zones, plan_subnets, slug, vpc_name


class NetworkArgs(TypedDict):
    """Inputs of the Network component."""

    clusterName: str
    """Cluster the subnets serve: the value of the discovery tag."""
    config: NetworkConfig
    """Validated network config."""
    tags: dict[str, str]
    """Tags for every resource (already merged with the stack-wide tags)."""
    protect: NotRequired[bool]
    """Protect what holds state (the VPC, its subnets, the flow-log group) from deletion and replacement. Only
    those: route tables, gateways and the rest are replaceable and must stay so for routine changes."""
    permissionsBoundary: NotRequired[str | None]
    """Permissions boundary (a managed policy ARN) on every role this component creates; None: no boundary."""


class Network(pulumi.ComponentResource):
    """The subnets Karpenter discovers: private subnets tagged `karpenter.sh/discovery=<cluster>`.

    Security groups are not created here: the cluster layer tags the EKS cluster security group as the one
    discovery-tagged group (see docs/config-reference.md, "Security groups").
    """

    vpc_id: pulumi.Output[str]
    """VPC id (created or adopted)."""
    private_subnet_ids: pulumi.Output[dict[str, str]]
    """Private subnet ids by availability zone."""
    public_subnet_ids: pulumi.Output[dict[str, str]]
    """Public subnet ids by availability zone (empty when adopting without public subnets)."""
    discovery_tag_value: pulumi.Output[str]
    """Value of `karpenter.sh/discovery` on the private subnets (the cluster name)."""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Network", name, None, opts)
        cfg, cluster = args["config"], args["clusterName"]
        tags = {**args["tags"], **cfg.tags}
        child = pulumi.ResourceOptions(parent=self)
        self._stateful = pulumi.ResourceOptions(parent=self, protect=args.get("protect", False) or None)
        self._boundary = args.get("permissionsBoundary")

        if cfg.adopting:
            private, public = self._adopt(name, cfg, cluster)
            self.vpc_id = pulumi.Output.from_input(str(cfg.vpc_id))
        else:
            private, public = self._create(name, cfg, cluster, tags, child)

        self.private_subnet_ids = pulumi.Output.all(**private).apply(dict) if private else pulumi.Output.from_input({})
        self.public_subnet_ids = pulumi.Output.all(**public).apply(dict) if public else pulumi.Output.from_input({})
        self.discovery_tag_value = pulumi.Output.from_input(cluster)
        self.register_outputs({
            "vpcId": self.vpc_id,
            "privateSubnetIds": self.private_subnet_ids,
            "publicSubnetIds": self.public_subnet_ids,
            "discoveryTagValue": self.discovery_tag_value,
        })

    def _create(
        self, name: str, cfg: NetworkConfig, cluster: str, tags: dict[str, str], child: pulumi.ResourceOptions
    ) -> tuple[dict[str, pulumi.Output[str]], dict[str, pulumi.Output[str]]]:
        zones = list(cfg.availability_zones or [])
        vpc = aws.ec2.Vpc(f"{name}-vpc", cidr_block=cfg.vpc_cidr, enable_dns_hostnames=True,
                          enable_dns_support=True, tags=T.name_tag(tags, vpc_name(cluster)), opts=self._stateful)
        self.vpc_id = vpc.id
        if cfg.flow_logs.enabled:
            self._flow_logs(name, cfg.flow_logs, cluster, vpc, tags, child)
        # The provider moves a gateway to another VPC in place, detaching it from a VPC whose public addresses
        # still need it (DependencyViolation, or lost egress): a new VPC gets a new gateway instead.
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=T.name_tag(tags, f"{cluster}-igw"),
                                      opts=pulumi.ResourceOptions(parent=self, replace_on_changes=["vpcId"]))
        public_rt = aws.ec2.RouteTable(f"{name}-public", vpc_id=vpc.id,
                                       tags=T.name_tag(tags, f"{cluster}-public"), opts=child)
        aws.ec2.Route(f"{name}-public-default", route_table_id=public_rt.id, destination_cidr_block="0.0.0.0/0",
                      gateway_id=igw.id, opts=child)

        private: dict[str, pulumi.Output[str]] = {}
        public: dict[str, pulumi.Output[str]] = {}
        public_subnets: dict[str, aws.ec2.Subnet] = {}
        for plan in plan_subnets(cfg.vpc_cidr, zones):
            z = plan.zone
            pub = aws.ec2.Subnet(
                f"{name}-public-{z}", vpc_id=vpc.id, cidr_block=plan.public_cidr, availability_zone=z,
                map_public_ip_on_launch=False,
                tags=T.name_tag({**tags, **T.public_subnet_tags()}, f"{cluster}-public-{z}"),
                opts=self._stateful)
            aws.ec2.RouteTableAssociation(f"{name}-public-{z}", subnet_id=pub.id, route_table_id=public_rt.id,
                                          opts=child)
            priv = aws.ec2.Subnet(
                f"{name}-private-{z}", vpc_id=vpc.id, cidr_block=plan.private_cidr, availability_zone=z,
                tags=T.name_tag({**tags, **T.private_subnet_tags(cluster)}, f"{cluster}-private-{z}"),
                opts=self._stateful)
            public_subnets[z], public[z], private[z] = pub, pub.id, priv.id

        nats: dict[str, aws.ec2.NatGateway] = {}
        for z in nat_zones(zones, cfg.nat_gateways):
            eip = aws.ec2.Eip(f"{name}-nat-{z}", domain="vpc", tags=T.name_tag(tags, f"{cluster}-nat-{z}"),
                              opts=child)
            nats[z] = aws.ec2.NatGateway(f"{name}-nat-{z}", allocation_id=eip.id,
                                         subnet_id=public_subnets[z].id,
                                         tags=T.name_tag(tags, f"{cluster}-nat-{z}"),
                                         # Its Elastic IP stays: a replacement created first would find the
                                         # address still held by the old gateway, so the old one goes first.
                                         opts=pulumi.ResourceOptions(parent=self, depends_on=[igw],
                                                                     delete_before_replace=True))
        for z, subnet_id in private.items():
            nat = nats.get(z) or nats[zones[0]]
            rt = aws.ec2.RouteTable(f"{name}-private-{z}", vpc_id=vpc.id,
                                    tags=T.name_tag(tags, f"{cluster}-private-{z}"), opts=child)
            aws.ec2.Route(f"{name}-private-{z}-default", route_table_id=rt.id,
                          destination_cidr_block="0.0.0.0/0", nat_gateway_id=nat.id, opts=child)
            aws.ec2.RouteTableAssociation(f"{name}-private-{z}", subnet_id=subnet_id, route_table_id=rt.id,
                                          opts=child)
        return private, public

    def _flow_logs(self, name: str, cfg: FlowLogsConfig, cluster: str, vpc: aws.ec2.Vpc, tags: dict[str, str],
                   child: pulumi.ResourceOptions) -> None:
        common = {"vpc_id": vpc.id, "traffic_type": cfg.traffic_type,
                  "max_aggregation_interval": cfg.max_aggregation_interval,
                  "tags": T.name_tag(tags, f"{cluster}-vpc-flow-logs")}
        if cfg.destination == "s3":
            aws.ec2.FlowLog(f"{name}-flow-logs", log_destination_type="s3", log_destination=cfg.s3_bucket_arn,
                            opts=child, **common)  # type: ignore[arg-type]
            return
        group = aws.cloudwatch.LogGroup(f"{name}-flow-logs", name=P.flow_logs_log_group(cluster),
                                        retention_in_days=cfg.retention_in_days, tags=tags, opts=self._stateful)
        role = aws.iam.Role(f"{name}-flow-logs", description=f"VPC flow logs of {cluster} to CloudWatch Logs",
                            assume_role_policy=group.arn.apply(lambda a: json.dumps(P.flow_logs_trust_policy(a))),
                            permissions_boundary=self._boundary, tags=tags, opts=child)
        write = aws.iam.RolePolicy(f"{name}-flow-logs", role=role.id,
                                   policy=group.arn.apply(lambda a: json.dumps(P.flow_logs_write_policy(a))),
                                   opts=child)
        aws.ec2.FlowLog(f"{name}-flow-logs", log_destination_type="cloud-watch-logs", log_destination=group.arn,
                        iam_role_arn=role.arn, opts=pulumi.ResourceOptions(parent=self, depends_on=[write]),
                        **common)  # type: ignore[arg-type]

    def _adopt(
        self, name: str, cfg: NetworkConfig, cluster: str
    ) -> tuple[dict[str, pulumi.Output[str]], dict[str, pulumi.Output[str]]]:
        # Adopted subnets belong to another tool (its next apply may strip tags it does not know): nothing is
        # written on them unless the stack asks. What is written outlives the stack (retained on delete): the ELB
        # role tags may have been there before, and a Tag resource cannot tell.
        retained = pulumi.ResourceOptions(parent=self, retain_on_delete=True)
        discovery = T.discovery_tags(cluster) if cfg.write_discovery_tags else {}
        internal_elb, elb = ({T.INTERNAL_ELB_KEY: "1"}, T.public_subnet_tags()) if cfg.write_load_balancer_tags \
            else ({}, {})
        tiers = (("private", cfg.private_subnet_ids or {}, {**discovery, **internal_elb}),
                 ("public", cfg.public_subnet_ids or {}, elb))
        ids: dict[str, dict[str, pulumi.Output[str]]] = {"private": {}, "public": {}}
        for tier, subnets, tier_tags in tiers:
            for zone, subnet_id in sorted(subnets.items()):
                for key, value in tier_tags.items():
                    aws.ec2.Tag(f"{name}-{tier}-{zone}-{slug(key)}", resource_id=subnet_id, key=key, value=value,
                                opts=retained)
                ids[tier][zone] = pulumi.Output.from_input(subnet_id)
        return ids["private"], ids["public"]
