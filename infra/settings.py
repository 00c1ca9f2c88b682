"""Read this stack's config from the Pulumi runtime and validate it before anything is registered."""

from __future__ import annotations

import pulumi
from pulumi.runtime import config as _runtime_config

from components.stack import StackConfig, load_stack_config

STACK_CONFIG_DIR = "stacks"


def stack_file(stack: str) -> str:
    """The file a user edits for this stack (Pulumi.yaml sets `stackConfigDir: stacks`)."""
    return f"{STACK_CONFIG_DIR}/Pulumi.{stack}.yaml"


def read_stack_config() -> StackConfig:
    """The validated config of the running stack; raises `ConfigError` (a `pulumi.RunError`) when invalid."""
    # The runtime's full config map is read so that misspelt top-level keys are reported too.
    flat = dict(_runtime_config.CONFIG.get())
    project = pulumi.get_project()
    return load_stack_config(flat, stack_file(pulumi.get_stack()), project=project)
