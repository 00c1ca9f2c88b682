"""The CrossGuard policy pack, as shipped: written out to a folder `pulumi preview --policy-pack` can run.

The pack's one source is the repository's `policy/` folder; the wheel carries a copy as `eks_karpenter/policypack/`
(pyproject.toml force-includes it). An editable install reads the checkout's `policy/` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

PACK_FILES = ("PulumiPolicy.yaml", "__main__.py", "guardrails.py", "requirements.txt")


def pack_source() -> Path:
    """The folder holding the pack's files: the wheel's copy, else this checkout's `policy/`."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "policypack"
    if shipped.is_dir():
        return shipped
    return package.parent.parent / "policy"  # components/eks_karpenter -> the repository root


def write_pack(out: Path, virtualenv: str | None = None) -> list[Path]:
    """Write the pack's files into `out` (created). The pack runs with the Python of `virtualenv` (a path
    relative to `out`, as Pulumi reads it) or, without it, with the `python3` on PATH, e.g. the consumer's
    activated venv, which already has `eks-karpenter` and needs `pulumi-policy` (the pack's requirements.txt)."""
    source = pack_source()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in PACK_FILES:
        text = (source / name).read_text(encoding="utf-8")
        if name == "PulumiPolicy.yaml":
            text = _pack_yaml(text, virtualenv)
        target = out / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def _pack_yaml(text: str, virtualenv: str | None) -> str:
    """PulumiPolicy.yaml for the written-out pack: the checkout's `../.venv` means nothing there."""
    body: dict[str, Any] = yaml.safe_load(text)
    options = body.setdefault("runtime", {}).setdefault("options", {})
    options.pop("virtualenv", None)
    if virtualenv:
        options["virtualenv"] = virtualenv
    header = "# eks-karpenter's CrossGuard policy pack: pulumi preview --policy-pack <this folder>\n"
    return header + yaml.safe_dump(body, sort_keys=False, width=120)
