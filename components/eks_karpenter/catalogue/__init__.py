"""The EC2 instance-type catalogue shipped with the library, and NodePool admission against it.

Generated from Karpenter's own data (labels, allocatable resources, us-east-1 on-demand prices) by
`generate.py`; every figure taken from it is printed with `Catalogue.provenance()`. Other regions' on-demand prices:
`regional_prices.py` (generated from Apache Libcloud's price table by `generate_prices.py`), and the one rule for
which price a type has in a region: `prices.py`.
"""

from eks_karpenter.catalogue.match import (
    Admission,
    Requirement,
    admitted,
    admitted_for,
    ami_family_of,
    requirements_of,
)
from eks_karpenter.catalogue.model import Catalogue, InstanceType, load_catalogue

__all__ = [
    "Admission",
    "Catalogue",
    "InstanceType",
    "Requirement",
    "admitted",
    "admitted_for",
    "ami_family_of",
    "load_catalogue",
    "requirements_of",
]
