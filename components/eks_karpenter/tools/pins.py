"""`eks-karpenter pins`: every pin of `versions.py` with its source and age; `--live` the newest valid value;
`--write` moves the pins to it and notes the move in docs/UPGRADING.md.

    eks-karpenter pins                          # offline: pin, source, age (AMI older than --max-ami-age flagged)
    eks-karpenter pins --live --region eu-west-1  # + newest: EKS DescribeAddonVersions, the public SSM AMI
                                                  #   parameters, the charts' OCI registries (needs boto3, creds)
    eks-karpenter pins --live --write           # + rewrite versions.py and add UPGRADING notes

`--live` reads AWS with the caller's credentials (boto3: `pip install 'eks-karpenter[live]'`) and the public
OCI registries anonymously. A Karpenter release newer than the supported table is reported, never written:
supporting it means adding its row to `versions.KARPENTER_RELEASES` and locking its upstream files. The
scheduled workflow `.github/workflows/pins.yml` runs `--live --write` and opens a pull request whose plan diff
shows what the new pins roll.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from eks_karpenter import versions
from eks_karpenter.checkout import library_checkout
from eks_karpenter.platform.lookups import alias_parameter, newest_alias, newest_parameter, version_key
from eks_karpenter.tools.project import program_root

DEFAULT_MAX_AMI_AGE = 30
"""Days after which the pinned AMI release is flagged: nodes would run an image missing that long's patches."""

Get = Callable[[str, Mapping[str, str]], bytes]
"""GET `url` with `headers`, return the body (the OCI registry transport; tests pass a fake)."""


@dataclass(frozen=True)
class Pin:
    """One pinned value of `versions.py`."""

    name: str
    """What is pinned (`karpenter`, `nth`, `ami`, `kubernetes`, `addon:<name>`)."""
    value: str
    source: str
    """Where the value is published (and where `--live` looks)."""
    since: date
    """The value's release date when known, else when it was last set in versions.py."""
    since_kind: str
    """`released` or `pinned`."""
    newest: str | None = None
    """`--live`: the newest valid value."""
    note: str = ""
    """Why the pin needs attention (missing, too old, newer release unsupported)."""

    def age(self, today: date) -> int:
        return (today - self.since).days


def ami_release_date(alias: str) -> date | None:
    """The release date of a dated alias (`al2023@v20260815` -> 2026-08-15)."""
    match = re.fullmatch(r"[a-z0-9]+@v([0-9]{4})([0-9]{2})([0-9]{2})", alias)
    return date(int(match[1]), int(match[2]), int(match[3])) if match else None


def ami_age_note(alias: str, today: date, max_age: int, checkout: bool = True) -> str:
    """A note when the pinned AMI release is older than `max_age` days ("" otherwise), with how to move it: in
    the library's repository (`checkout`) `--live --write`; in an installed library, an upgrade of it."""
    released = ami_release_date(alias)
    if released and (today - released).days > max_age:
        fix = ("move it with `eks-karpenter pins --live --write`" if checkout else
               "upgrade the eks-karpenter library, or set a newer alias in your stack's "
               "nodeClasses[].amiSelectorTerms")
        return (f"AMI release is {(today - released).days} days old (over {max_age}): nodes run an image without "
                f"the patches since; {fix}")
    return ""


def current_pins(minor: str = versions.KUBERNETES_VERSION, today: date | None = None,
                 max_ami_age: int = DEFAULT_MAX_AMI_AGE) -> list[Pin]:
    """Every pin, for the add-ons of Kubernetes `minor`."""
    today = today or datetime.now(UTC).date()
    karpenter = versions.KARPENTER_RELEASES[versions.KARPENTER_VERSION]
    kubernetes = versions.EKS_KUBERNETES_SUPPORT[versions.KUBERNETES_VERSION]
    family = versions.AMI_ALIAS.partition("@")[0]
    pins = [
        Pin("karpenter", versions.KARPENTER_VERSION, f"{versions.KARPENTER_CHART} (+ -crd)", karpenter.released,
            "released"),
        Pin("nth", versions.NTH_VERSION, versions.NTH_CHART, versions.NTH_VERSION_PINNED, "pinned"),
        Pin("kubernetes", versions.KUBERNETES_VERSION, "EKS Kubernetes release calendar", kubernetes.released,
            "released"),
        Pin("ami", versions.AMI_ALIAS, f"SSM {newest_parameter(family, minor, 'amd64')}",
            ami_release_date(versions.AMI_ALIAS) or versions.ADDON_VERSIONS_PINNED, "released",
            note=ami_age_note(versions.AMI_ALIAS, today, max_ami_age, library_checkout() is not None)),
    ]
    for name, value in sorted(versions.ADDON_VERSIONS[minor].items()):
        pins.append(Pin(f"addon:{name}", value, f"EKS DescribeAddonVersions (Kubernetes {minor})",
                        versions.ADDON_VERSIONS_PINNED, "pinned"))
    return pins


# --- --live ------------------------------------------------------------------------------------------------------


def http_get(url: str, headers: Mapping[str, str]) -> bytes:  # pragma: no cover - the network
    request = urllib.request.Request(url, headers={"User-Agent": "eks-karpenter-pins", **headers})
    with urllib.request.urlopen(request, timeout=60) as response:
        return bytes(response.read())


def oci_tags(chart: str, get: Get) -> list[str]:
    """The tags of an OCI chart (`oci://REGISTRY/REPOSITORY`), read anonymously."""
    match = re.fullmatch(r"oci://([^/]+)/(.+)", chart)
    if not match:
        raise ValueError(f"not an OCI chart reference: {chart}")
    registry, repository = match[1], match[2]
    scope = urllib.parse.quote(f"repository:{repository}:pull", safe=":/")
    token = json.loads(get(f"https://{registry}/token/?scope={scope}", {}))["token"]
    body = json.loads(get(f"https://{registry}/v2/{repository}/tags/list", {"Authorization": f"Bearer {token}"}))
    return [str(t) for t in body.get("tags") or []]


def newest_release(tags: list[str]) -> str | None:
    """The newest plain `X.Y.Z` tag (pre-releases and others left out)."""
    plain = [t for t in tags if re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", t)]
    return max(plain, key=version_key) if plain else None


def addon_versions(eks: Any, name: str, minor: str) -> list[str]:
    """Every version EKS offers of add-on `name` for Kubernetes `minor` (DescribeAddonVersions, all pages)."""
    found: list[str] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"addonName": name, "kubernetesVersion": minor}
        if token:
            kwargs["nextToken"] = token
        answer = eks.describe_addon_versions(**kwargs)
        for addon in answer.get("addons", []):
            found += [v["addonVersion"] for v in addon.get("addonVersions", [])]
        token = answer.get("nextToken")
        if not token:
            return sorted(set(found), key=version_key)


def nearest(pin: str, offered: list[str]) -> list[str]:
    """The offered versions either side of `pin`: the newest older one and the oldest newer one."""
    key = version_key(pin)
    below = [v for v in offered if version_key(v) < key]
    above = [v for v in offered if version_key(v) > key]
    return [*([max(below, key=version_key)] if below else []), *([min(above, key=version_key)] if above else [])]


def _ssm_value(ssm: Any, name: str) -> str | None:
    try:
        return str(ssm.get_parameter(Name=name)["Parameter"]["Value"])
    except Exception as err:  # botocore's ParameterNotFound is generated per client: match it by code
        if getattr(err, "response", {}).get("Error", {}).get("Code") == "ParameterNotFound":
            return None
        raise


def live_pins(pins: list[Pin], minor: str, *, eks: Any, ssm: Any, get: Get) -> list[Pin]:
    """`pins` with the newest valid value of each, and a note where the pin does not exist or is unsupported."""
    out = []
    for pin in pins:
        if pin.name.startswith("addon:"):
            offered = addon_versions(eks, pin.name.removeprefix("addon:"), minor)
            newest = offered[-1] if offered else None
            note = "" if pin.value in offered else (
                f"not offered for Kubernetes {minor}; nearest: {', '.join(nearest(pin.value, offered)) or 'none'}")
            out.append(replace(pin, newest=newest, note=note))
        elif pin.name == "ami":
            family = pin.value.partition("@")[0]
            value = _ssm_value(ssm, newest_parameter(family, minor, "amd64") or "")
            newest = newest_alias(family, value) if value else None
            exists = _ssm_value(ssm, alias_parameter(pin.value, minor, "amd64") or "") is not None
            note = pin.note if exists else f"does not resolve for Kubernetes {minor}; newest: {newest}"
            out.append(replace(pin, newest=newest, note=note))
        elif pin.name in ("karpenter", "nth"):
            chart = versions.KARPENTER_CHART if pin.name == "karpenter" else versions.NTH_CHART
            newest = newest_release(oci_tags(chart, get))
            note = ""
            if pin.name == "karpenter" and newest and newest not in versions.KARPENTER_RELEASES:
                note = (f"{newest} is not in versions.KARPENTER_RELEASES: add its row and lock its upstream files "
                        "before moving to it")
            out.append(replace(pin, newest=newest, note=note))
        else:
            out.append(pin)
    return out


def live_invoke_results(eks: Any, ssm: Any) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """Answers for the program's pin look-ups (platform/lookups.py) from AWS, for `infra plan --live`: the rest
    of the plan stays offline. A missing SSM parameter fails the invoke as the provider does; a look-up that
    fails for want of credentials, a region, rights or the network fails the plan with what to do about it
    (`live_failure`), one line like `pins --live`."""
    from eks_karpenter.platform.lookups import ADDON_TOKEN, SSM_TOKEN
    from eks_karpenter.tools.engine import PlanError
    from eks_karpenter.tools.engine.mocks import InvokeFailure

    def explained(answer: Callable[[Mapping[str, Any]], dict[str, Any]]) -> Callable[[Mapping[str, Any]],
                                                                                      dict[str, Any]]:
        def call(args: Mapping[str, Any]) -> dict[str, Any]:
            try:
                return answer(args)
            except InvokeFailure:
                raise
            except Exception as err:  # what fails is AWS or the network: say what to fix, not where it broke
                fix = live_failure(err, offline="plan")
                if fix is None:
                    raise
                raise PlanError(fix) from None
        return call

    def parameter(args: Mapping[str, Any]) -> dict[str, Any]:
        name = str(args["name"])
        value = _ssm_value(ssm, name)
        if value is None:
            raise InvokeFailure(f"ParameterNotFound: {name}")
        return {"name": name, "value": value, "insecureValue": value, "type": "String", "id": name}

    def addon(args: Mapping[str, Any]) -> dict[str, Any]:
        name, minor = str(args["addonName"]), str(args["kubernetesVersion"])
        answer = eks.describe_addon_versions(addonName=name, kubernetesVersion=minor)
        offered = [(v["addonVersion"], any(c.get("defaultVersion") for c in v.get("compatibilities", [])))
                   for a in answer.get("addons", []) for v in a.get("addonVersions", [])]
        if not offered:
            raise InvokeFailure(f"no {name} versions for Kubernetes {minor}", "addonName")
        newest = max((v for v, _ in offered), key=version_key)
        default = next((v for v, is_default in offered if is_default), newest)
        return {"addonName": name, "kubernetesVersion": minor, "version": newest if args.get("mostRecent") else default,
                "id": name}

    return {SSM_TOKEN: explained(parameter), ADDON_TOKEN: explained(addon)}


# --- --write -----------------------------------------------------------------------------------------------------


def _set(source: str, pattern: str, value: str, what: str) -> str:
    updated, count = re.subn(pattern, lambda m: m[1] + value + m[2], source, count=1, flags=re.MULTILINE)
    if count != 1:
        raise ValueError(f"versions.py: cannot find {what}")
    return updated


def write_pins(pins: list[Pin], minor: str, versions_file: Path, upgrading_file: Path, today: date) -> list[str]:
    """Move every pin whose newest value differs (and may be written) in `versions_file`; add one bullet per move
    to the top entry's **Other** list of `upgrading_file`. Returns the moves, as written."""
    source = versions_file.read_text()
    moves: list[str] = []
    addons_moved = False
    for pin in pins:
        if not pin.newest or pin.newest == pin.value:
            continue
        if pin.name == "karpenter" and pin.newest not in versions.KARPENTER_RELEASES:
            continue  # a release this library does not know: reported, never written
        if pin.name.startswith("addon:"):
            name = pin.name.removeprefix("addon:")
            block = re.search(rf'(?ms)^    "{re.escape(minor)}": \{{.*?\}},?$', source)
            if not block:
                raise ValueError(f"versions.py: no ADDON_VERSIONS entry for {minor}")
            text = _set(block[0], rf'("{re.escape(name)}": ")[^"]+(")', pin.newest, f"{name} for {minor}")
            source = source[:block.start()] + text + source[block.end():]
            addons_moved = True
            moves.append(f"EKS add-on {name} for Kubernetes {minor}: {pin.value} -> {pin.newest}")
        elif pin.name == "ami":
            source = _set(source, r'^(AMI_ALIAS = ")[^"]+(")', pin.newest, "AMI_ALIAS")
            moves.append(f"AMI alias {pin.value} -> {pin.newest}: every Karpenter node drifts and is replaced "
                         "within its NodePool's disruption budgets")
        elif pin.name == "nth":
            source = _set(source, r'^(NTH_VERSION = ")[^"]+(")', pin.newest, "NTH_VERSION")
            source = _set(source, r"^(NTH_VERSION_PINNED = date\()[^)]*(\))",
                          f"{today.year}, {today.month}, {today.day}", "NTH_VERSION_PINNED")
            moves.append(f"aws-node-termination-handler chart {pin.value} -> {pin.newest}")
        elif pin.name == "karpenter":
            source = _set(source, r'^(KARPENTER_VERSION = ")[^"]+(")', pin.newest, "KARPENTER_VERSION")
            moves.append(f"Karpenter {pin.value} -> {pin.newest} (karpenter-crd first, then the controller)")
    if addons_moved:
        source = _set(source, r"^(ADDON_VERSIONS_PINNED = date\()[^)]*(\))",
                      f"{today.year}, {today.month}, {today.day}", "ADDON_VERSIONS_PINNED")
    if moves:
        versions_file.write_text(source)
        _note_upgrades(upgrading_file, moves, today)
    return moves


def _note_upgrades(path: Path, moves: list[str], today: date) -> None:
    """Add bullets to the first release entry's **Other** list (the unreleased one, at the top)."""
    text = path.read_text()
    entry = re.search(r"(?m)^## [0-9].*$", text)
    other = re.compile(r"(?m)^- \*\*Other\*\*:.*\n").search(text, entry.end()) if entry else None
    if other is None:
        raise ValueError(f"{path}: no `- **Other**:` list in the top release entry")
    bullets = "".join(f"  - **Pins ({today.isoformat()})**: {move}.\n" for move in moves)
    path.write_text(text[:other.end()] + bullets + text[other.end():])


# --- the command -------------------------------------------------------------------------------------------------


def render(pins: list[Pin], today: date, live: bool) -> str:
    rows = [("pin", "value", "age", "source", *(("newest",) if live else ()), "note")]
    for pin in pins:
        age = f"{pin.age(today)}d since {pin.since_kind}"
        rows.append((pin.name, pin.value, age, pin.source, *((pin.newest or "?",) if live else ()), pin.note))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)).rstrip()
                   + (f"  {r[-1]}" if r[-1] else "") + "\n" for r in rows)


def add_parser(sub: Any) -> None:
    cmd = sub.add_parser("pins", help="every pinned version with its source and age; --live the newest, --write "
                                      "moves versions.py to it")
    cmd.add_argument("--live", action="store_true", help="look up the newest valid values (AWS credentials, boto3)")
    cmd.add_argument("--write", action="store_true", help="with --live: update versions.py and docs/UPGRADING.md")
    cmd.add_argument("--kubernetes", default=versions.KUBERNETES_VERSION, metavar="MINOR",
                     help=f"Kubernetes minor of the add-on and AMI pins (default {versions.KUBERNETES_VERSION})")
    cmd.add_argument("--region", help="AWS region of the look-ups (default: the AWS configuration's)")
    cmd.add_argument("--max-ami-age", type=int, default=DEFAULT_MAX_AMI_AGE, metavar="DAYS",
                     help=f"flag an AMI release older than this (default {DEFAULT_MAX_AMI_AGE})")
    cmd.add_argument("--versions-file", type=Path, default=Path(versions.__file__), help=argparse.SUPPRESS)


def run(args: argparse.Namespace, *, clients: tuple[Any, Any] | None = None, get: Get = http_get,
        today: date | None = None) -> int:
    """The `pins` command; `clients` (eks, ssm) and `get` replace AWS and the registries in tests."""
    today = today or datetime.now(UTC).date()
    if args.kubernetes not in versions.ADDON_VERSIONS:
        print(f"error: no pins for Kubernetes {args.kubernetes}; pinned: {', '.join(versions.ADDON_VERSIONS)}",
              file=sys.stderr)
        return 1
    if args.write and not args.live:
        print("error: --write needs --live (it writes the newest values)", file=sys.stderr)
        return 1
    checkout = library_checkout(args.versions_file)
    if args.write and checkout is None:
        print(f"error: --write moves the pins in eks-karpenter's own repository; {args.versions_file} belongs to "
              "an installed package, which changes only by upgrading it: upgrade the library for newer pins, or "
              "name a newer AMI in your stack (nodeClasses[].amiSelectorTerms: [{alias: al2023@v<YYYYMMDD>}])",
              file=sys.stderr)
        return 1
    pins = current_pins(args.kubernetes, today, args.max_ami_age)
    if args.live:
        if clients is None:
            try:
                import boto3
            except ImportError:
                print("error: --live needs boto3: pip install 'eks-karpenter[live]'", file=sys.stderr)
                return 1
            session = boto3.Session(region_name=args.region)
            if not session.region_name:
                print(f"error: {NO_REGION}", file=sys.stderr)
                return 1
            clients = (session.client("eks"), session.client("ssm"))
        eks, ssm = clients
        try:
            pins = live_pins(pins, args.kubernetes, eks=eks, ssm=ssm, get=get)
        except Exception as err:  # what fails is AWS or the network: say what to fix, not where it broke
            fix = live_failure(err)
            if fix is None:
                raise
            print(f"error: {fix}", file=sys.stderr)
            return 1
    sys.stdout.write(render(pins, today, args.live))
    if args.write:
        assert checkout is not None  # refused above
        upgrading = checkout / "docs" / "UPGRADING.md"
        for move in write_pins(pins, args.kubernetes, args.versions_file, upgrading, today):
            print(f"wrote: {move}", file=sys.stderr)
    for note in override_notes(program_root(None)):
        print(f"note: {note}", file=sys.stderr)
    if args.write:
        return 0
    # The full existence check (the preview's look-up sees only EKS's default and newest add-on versions).
    missing = [p.name for p in pins if p.note.startswith(MISSING_NOTES)]
    if missing:
        print(f"error: pinned but not offered for Kubernetes {args.kubernetes}: {', '.join(missing)} (see the "
              "notes; --write moves them)", file=sys.stderr)
        return 3
    return 0


MISSING_NOTES = ("not offered for Kubernetes", "does not resolve for Kubernetes")
"""The notes `live_pins` gives a pin that does not exist."""


NO_REGION = ("--live needs an AWS region: pass --region REGION, or set AWS_REGION (or a region in the AWS "
             "profile's config)")


def live_failure(err: BaseException, offline: str = "list") -> str | None:
    """What to do about a `--live` look-up that failed for want of a region, credentials (none, or expired),
    permissions or the network; None for anything else (a bug, shown as such). `offline` names what the command
    gives without `--live` (`pins`: the list, `plan`: the plan)."""
    import urllib.error

    from botocore import exceptions as boto

    without = f"drop --live for the offline {offline}"
    if isinstance(err, boto.NoRegionError):
        return NO_REGION
    if isinstance(err, boto.NoCredentialsError | boto.PartialCredentialsError):
        return ("--live needs AWS credentials and found none: set AWS_PROFILE (and `aws sso login`), or run with "
                f"a role (AWS_ROLE_ARN and a web identity token in CI); without them, {without}")
    expired = isinstance(err, boto.TokenRetrievalError | boto.SSOError | boto.CredentialRetrievalError) or (
        isinstance(err, boto.ClientError) and err.response.get("Error", {}).get("Code") in EXPIRED_CODES)
    if expired:
        return ("--live: the AWS credentials are expired or not valid: renew them (`aws sso login`, or a fresh "
                f"session for AWS_PROFILE) and run it again, or {without}")
    if isinstance(err, boto.EndpointConnectionError | boto.ConnectTimeoutError | boto.ReadTimeoutError):
        return (f"--live needs the network: {err}. Run it where the AWS APIs (EKS, SSM) and public.ecr.aws are "
                f"reachable, or {without}")
    if isinstance(err, boto.ClientError):
        code = err.response.get("Error", {}).get("Code", "an error")
        operation = getattr(err, "operation_name", "a look-up")
        return (f"--live: AWS answered {operation} with {code}: the identity needs eks:DescribeAddonVersions and "
                "ssm:GetParameter on arn:aws:ssm:<region>::parameter/aws/service/* (public parameters)")
    if isinstance(err, urllib.error.URLError | TimeoutError | ConnectionError):
        reason = getattr(err, "reason", err)
        return (f"--live needs the network: the charts' OCI registries are out of reach ({reason}). Run it where "
                f"public.ecr.aws is reachable, or {without}")
    return None


EXPIRED_CODES = frozenset({"ExpiredToken", "ExpiredTokenException", "RequestExpired", "InvalidClientTokenId",
                           "UnrecognizedClientException"})
"""Error codes AWS answers a call signed with expired or unknown credentials (STS, EKS and SSM spell them
differently)."""


def override_notes(root: Path) -> list[str]:
    """The project's stack files whose EC2NodeClasses name their own AMI alias: the library's pin (what `--write`
    moves) does not reach those classes. Nothing when `root` holds no Pulumi project."""
    from eks_karpenter.tools.engine.runner import ProgramProject, read_flat_config

    if not (root / "Pulumi.yaml").is_file():
        return []
    try:
        project = ProgramProject.load(root.resolve())
    except Exception:  # not a project this command can read: nothing to say about its stacks
        return []
    notes = []
    for path in sorted(project.stack_config_dir.glob("Pulumi.*.yaml")):
        try:
            classes = json.loads(read_flat_config(path, project.name).get(f"{project.name}:nodeClasses") or "[]")
        except Exception:  # a broken stack file is the plan's to report
            continue
        for node_class in classes if isinstance(classes, list) else []:
            aliases = [t["alias"] for t in node_class.get("amiSelectorTerms") or [] if t.get("alias")]
            if aliases:
                notes.append(f"{path.relative_to(project.root)}: EC2NodeClass {node_class.get('name')!r} names its "
                             f"own AMI alias ({', '.join(aliases)}), so it does not follow versions.AMI_ALIAS "
                             f"({versions.AMI_ALIAS}): remove its amiSelectorTerms to follow the pin, or move it "
                             "yourself")
    return notes
