"""Where the library runs from: its own repository (a checkout, installed editable or put on the path), where
`eks-karpenter pins --write` moves the pins and notes them in docs/UPGRADING.md; or an installed package (a
wheel or `pip install <url>` in a project's site-packages), where the pins move only with a new release and a
stack names a newer AMI itself. Messages that tell the user how to move a pin ask this first."""

from __future__ import annotations

from pathlib import Path

from eks_karpenter import versions


def library_checkout(versions_file: Path | None = None) -> Path | None:
    """The repository `versions_file` (default: this library's `versions.py`) is part of, None when it is an
    installed package's: a checkout holds `components/eks_karpenter/versions.py` beside `pyproject.toml` and
    `docs/UPGRADING.md`."""
    path = (versions_file or Path(versions.__file__)).resolve()
    root = path.parents[2] if len(path.parents) > 2 else path.parent
    layout = (root / "pyproject.toml", root / "docs" / "UPGRADING.md")
    if path == root / "components" / "eks_karpenter" / "versions.py" and all(p.is_file() for p in layout):
        return root
    return None
