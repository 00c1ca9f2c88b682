"""Migration helpers: bring Karpenter objects written for older APIs into this library's stack config."""

from eks_karpenter.migrate.legacy import (
    Conversion,
    Doc,
    LegacyImportError,
    convert_documents,
    parse_documents,
    render_config,
    render_manifests,
)

__all__ = [
    "Conversion",
    "Doc",
    "LegacyImportError",
    "convert_documents",
    "parse_documents",
    "render_config",
    "render_manifests",
]
