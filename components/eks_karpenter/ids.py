"""EC2 resource ids (`vpc-`, `subnet-`, `sg-`, `ami-`, `cr-`, `pg-`, `igw-`, `nat-`, `eni-`, `lt-`, ...): one
pattern, one named type per prefix the config takes.

An EC2 id is a prefix, a dash and 8 lowercase hex digits (ids from before 2018) or 17 (every id since); no other
length exists, so `subnet-0a1b2c3d4e5f6` (13 digits) is a truncated copy, refused before EC2 answers "does not
exist" at apply time (or before a selector term matches nothing and no node launches).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints


def ec2_id_pattern(prefix: str) -> str:
    """The pattern of an EC2 id with `prefix` (`subnet`): 8 or 17 lowercase hex digits after the dash."""
    return rf"^{prefix}-([0-9a-f]{{8}}|[0-9a-f]{{17}})$"


VpcId = Annotated[str, StringConstraints(pattern=ec2_id_pattern("vpc"))]
SubnetId = Annotated[str, StringConstraints(pattern=ec2_id_pattern("subnet"))]
SecurityGroupId = Annotated[str, StringConstraints(pattern=ec2_id_pattern("sg"))]
AmiId = Annotated[str, StringConstraints(pattern=ec2_id_pattern("ami"))]
CapacityReservationId = Annotated[str, StringConstraints(pattern=ec2_id_pattern("cr"))]
PlacementGroupId = Annotated[str, StringConstraints(pattern=ec2_id_pattern("pg"))]
