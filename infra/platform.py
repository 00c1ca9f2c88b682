"""The composition root of this repository's own program: config -> validation -> components -> outputs."""

from __future__ import annotations

import pulumi

from components import Network, tags
from components.stack import StackConfig
from infra.settings import read_stack_config


def build(cfg: StackConfig) -> None:
    """Register the platform for one validated stack config and export its outputs."""
    cluster_name = cfg.cluster.name
    stack_tags = tags.base_tags(cluster_name, cfg.tags)
    stateful = pulumi.ResourceOptions(protect=cfg.protect)

    network = Network("network", {"clusterName": cluster_name, "config": cfg.network, "tags": stack_tags},
                      opts=stateful)

    pulumi.export("vpcId", network.vpc_id)
    pulumi.export("privateSubnetIds", network.private_subnet_ids)
    pulumi.export("publicSubnetIds", network.public_subnet_ids)
    pulumi.export("discoveryTagValue", network.discovery_tag_value)


def main() -> None:
    build(read_stack_config())
