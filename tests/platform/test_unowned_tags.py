"""Tags this stack writes onto resources it does not own survive `pulumi destroy` (issue 10, item 8)."""

from __future__ import annotations

from tests.support import plan_stack

TAG = "aws:ec2/tag:Tag"


def test_tags_on_adopted_subnets_are_retained_on_delete() -> None:
    tags = [t for t in plan_stack("brownfield").by_type(TAG) if "::network$" in t.urn or t.name.startswith("network-")]
    assert {t.inputs["key"] for t in tags} >= {"karpenter.sh/discovery", "kubernetes.io/role/internal-elb",
                                               "kubernetes.io/role/elb"}
    for t in tags:
        assert t.options.get("retainOnDelete") is True, t.name


def test_tag_on_an_adopted_clusters_security_group_is_retained_on_delete() -> None:
    (tag,) = [t for t in plan_stack("brownfield").by_type(TAG) if t.name == "cluster-sg-discovery"]
    assert tag.options.get("retainOnDelete") is True


def test_tag_on_a_created_clusters_security_group_goes_with_the_cluster() -> None:
    # The stack owns that group: destroy removes the tag, then the cluster and its group.
    (tag,) = [t for t in plan_stack("dev").by_type(TAG) if t.name == "cluster-sg-discovery"]
    assert "retainOnDelete" not in tag.options
