"""Small Pulumi wiring helpers shared by the components."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi.runtime.settings
import pulumi_aws as aws


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


_CALLER_IDENTITY_TOKEN = "aws:index/getCallerIdentity:getCallerIdentity"
# The run (its resource monitor) the memo belongs to, and the look-up per explicit AWS provider (None: default).
_caller_identities: tuple[object, dict[pulumi.ProviderResource | None, pulumi.Output[Any]]] | None = None


def caller_identity(parent: pulumi.Resource) -> pulumi.Output[aws.GetCallerIdentityResult]:
    """The identity running the program, looked up once per run and AWS provider and shared by every component
    (IAM trust and key policies, the observability scraper's cluster ARN): a `pulumi preview` makes one call,
    not one per component. `parent` gives the invoke its provider; the first caller with that provider parents
    the call."""
    global _caller_identities
    monitor = pulumi.runtime.settings.get_monitor()
    if _caller_identities is None or _caller_identities[0] is not monitor:
        # A new run (the offline plan runs several stacks in one process): the last run's outputs are dead.
        _caller_identities = (monitor, {})
    by_provider = _caller_identities[1]
    provider = parent.get_provider(_CALLER_IDENTITY_TOKEN)
    if provider not in by_provider:
        by_provider[provider] = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=parent))
    found: pulumi.Output[aws.GetCallerIdentityResult] = by_provider[provider]
    return found
