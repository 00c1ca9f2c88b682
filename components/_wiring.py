"""Small Pulumi wiring helpers shared by the components."""

from __future__ import annotations

import pulumi


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None,
                  *depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
    """Options for a component's child: parented, and waiting for what the component was told to wait for.

    A component's `depends_on` delays only the component's own registration; the engine orders its children by
    their own edges. Without this, a child (say a NodePool) can be created before the resources its component
    was made to depend on (the Karpenter controller) exist, and deleted after them.
    """
    given = opts.depends_on if opts else None
    inherited: list[pulumi.Resource] = (
        [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given])  # type: ignore[list-item]
    return pulumi.ResourceOptions(parent=parent, depends_on=[*inherited, *depends_on])
