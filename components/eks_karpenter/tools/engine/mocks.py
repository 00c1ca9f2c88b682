"""Mock resource monitor and deterministic placeholders for values only the cloud knows."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2

from eks_karpenter import versions
from eks_karpenter.arns import ZONE_LETTERS, dns_suffix
from eks_karpenter.labels import INSTANCE_GENERATION
from eks_karpenter.platform.access.plan import aws_provider_identity, parse_principal
from eks_karpenter.platform.adopted import (
    ADDON_VERSIONS_TOKEN,
    CRDS_TOKEN,
    IN_CLUSTER_TOKEN,
    NODE_GROUP_METADATA_TOKEN,
    OFFLINE_PLACEHOLDER,
)
from eks_karpenter.tools.engine.document import PlannedInvoke, PlannedResource
from eks_karpenter.tools.engine.outputs import ACCOUNT_ID, CA_DATA, digest, partition, provider_state

__all__ = ["ACCOUNT_ID", "CapturingMonitor", "InvokeFailure", "LookupFailed", "PlanMocks", "PlanReferenceError",
           "digest", "partition"]


class PlanReferenceError(Exception):
    """A StackReference the offline plan has no outputs for."""

    def __init__(self, ref: str, known: list[str]) -> None:
        hint = f"known: {', '.join(known)}" if known else "none were given"
        super().__init__(f"no offline outputs for stack reference {ref!r} ({hint}); pass the platform's "
                         "project with --platform DIR (its offline plan answers <org>/<project>/<stack>), or its "
                         "outputs with --stack-outputs FILE")


class LookupFailed(Exception):
    """Raised by an `invoke_results` answer: the look-up fails as the provider would fail it."""


class PlanMocks(pulumi.runtime.Mocks):
    """Answers registrations and invokes with deterministic placeholder state."""

    def __init__(self, region: str, invoke_results: dict[str, Any] | None = None,
                 stack_outputs: dict[str, dict[str, Any]] | None = None, caller_arn: str | None = None) -> None:
        self.region = region
        self.invoke_results = invoke_results or {}
        self.stack_outputs = stack_outputs or {}
        self.caller_arn = caller_arn
        """Who the plan runs as (`getCallerIdentity`), as STS names it (`plan_caller`)."""
        self.invokes: list[PlannedInvoke] = []

    def new_resource(self, args: _mocks.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            ref = str(args.inputs.get("name") or args.name)
            if ref not in self.stack_outputs:
                raise PlanReferenceError(ref, sorted(self.stack_outputs))
            return ref, {"name": ref, "outputs": self.stack_outputs[ref], "secretOutputNames": []}
        return provider_state(args.typ, args.name, dict(args.inputs), self.region, args.resource_id or None)

    def call(self, args: _mocks.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]]]:
        try:
            return self.answer(args.token, dict(args.args)), []
        except InvokeFailure as failure:  # as the provider reports e.g. a missing SSM parameter
            return {}, [(failure.property, failure.reason)]
        except LookupFailed as exc:  # as a provider reports a failed look-up (a node group that is not there)
            return {}, [("", str(exc))]

    def answer(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        """A look-up's answer (recorded as an invoke): the test's `invoke_results`, else a placeholder. Also
        answers the preflight's in-cluster look-up, which a real run asks the cluster's API server."""
        self.invokes.append(PlannedInvoke(token=token, args=_plain(args)))
        if token in self.invoke_results:
            result = self.invoke_results[token]
            return dict(result(args) if callable(result) else result)
        if token == CALLER_TOKEN and self.caller_arn:
            return {"accountId": ACCOUNT_ID, "arn": self.caller_arn, "userId": "PLAN"}
        return dict(_invoke(token, args, self.region))


CALLER_TOKEN = "aws:index/getCallerIdentity:getCallerIdentity"
PLAN_SESSION = "eks-karpenter-plan"


def plan_caller(config: Mapping[str, str], project: str) -> str | None:
    """Who an offline plan runs as, as STS would name it: the last role of `aws:assumeRoles`, else the stack's first
    `deploy` deployer (or the `deployerArn` shortcut), else its first cluster admin; a role as an assumed-role
    session, which carries no IAM path (like a real one). None: nobody is declared (the mocks' placeholder user)."""
    principal = aws_provider_identity(config).role_arn
    if principal is None:
        try:
            access = json.loads(config.get(f"{project}:access") or "{}")
        except ValueError:
            access = {}
        access = access if isinstance(access, dict) else {}
        deployers = [d for d in access.get("deployers") or [] if isinstance(d, dict)]
        admins = [str(a) for a in access.get("clusterAdmins") or []]
        principal = next((str(d["principalArn"]) for d in deployers
                          if d.get("role", "deploy") == "deploy" and d.get("principalArn")), None) \
            or config.get(f"{project}:deployerArn") or next(iter(admins), None)
    found = parse_principal(principal) if principal else None
    if found is not None and found.kind == "role":
        return f"arn:{found.partition}:sts::{found.account}:assumed-role/{found.name}/{PLAN_SESSION}"
    return principal


class InvokeFailure(Exception):
    """Raised by an `invoke_results` fixture: the invoke fails as a provider's would (the program sees
    `invoke of <token> failed: <reason> (<property>)`), e.g. `InvokeFailure("ParameterNotFound")`."""

    def __init__(self, reason: str, property: str = "name") -> None:
        super().__init__(reason)
        self.reason, self.property = reason, property


def _ssm_value(name: str) -> str:
    """Offline answers for the public SSM parameters the pin look-ups read: every AMI exists, and the newest
    release is the one `versions.AMI_ALIAS` pins (platform/lookups.py). A release version is
    `<minor>.<patch>-<date>`: the date of the release the parameter names (the pin's for `recommended`), the
    patch of the minor's pinned kube-proxy (what EKS builds its AMIs of the minor with, near enough offline)."""
    if name.endswith("/image_id"):
        return f"ami-{digest(name, 17)}"
    minor = name.split("/optimized-ami/", 1)[-1].split("/", 1)[0]
    if name.endswith("/release_version"):
        dated = re.search(r"-v([0-9]{8})/release_version$", name)
        day = dated[1] if dated else versions.AMI_ALIAS.partition("@v")[2]
        proxy = versions.ADDON_VERSIONS.get(minor, {}).get("kube-proxy", f"v{minor}.0")
        patch = proxy.lstrip("v").split("-")[0].split(".")[2]
        return f"{minor}.{patch}-{day}"
    return "1.0.0-00000000"  # bottlerocket image_version: no pin of this library names one


def placeholder_answer(token: str, args: dict[str, Any], region: str, recorded: bool = False) -> dict[str, Any]:
    """The mocks' answer to a look-up, marked as made up (`OFFLINE_PLACEHOLDER`); `recorded`: the base a recorded
    fact is laid over, so no longer marked."""
    found = dict(_invoke(token, args, region))
    if recorded:
        found.pop(OFFLINE_PLACEHOLDER, None)
        if isinstance(found.get("tags"), dict):
            found["tags"] = {k: v for k, v in found["tags"].items() if k != OFFLINE_PLACEHOLDER}
    return found


_DIRECTIONS = {"north": "n", "south": "s", "east": "e", "west": "w", "central": "c", "northeast": "ne",
               "northwest": "nw", "southeast": "se", "southwest": "sw", "gov": "g", "iso": "i", "isob": "ib"}
_ZONE_IDS = {
    # As many older accounts see them: us-east-1e is use1-az3, a zone EKS refuses and without current types.
    "us-east-1": {"a": "use1-az1", "b": "use1-az2", "c": "use1-az4", "d": "use1-az6", "e": "use1-az3", "f": "use1-az5"},
    # An account sees two of us-west-1's zones.
    "us-west-1": {"a": "usw1-az1", "c": "usw1-az3"},
}
LEGACY_ZONE_IDS = frozenset({"use1-az3"})
"""Zones the mocks offer only older instance types in (generation 4 and before), as use1-az3 does."""


def zone_ids(region: str) -> dict[str, str]:
    """The mock account's zones: name -> zone ID (the letters of `arns.ZONE_LETTERS`, numbered in order)."""
    if region in _ZONE_IDS:
        return {f"{region}{letter}": zone_id for letter, zone_id in _ZONE_IDS[region].items()}
    parts = region.split("-")
    prefix = parts[0] + "".join(_DIRECTIONS.get(p, p[:1]) for p in parts[1:-1]) + parts[-1]
    return {f"{region}{letter}": f"{prefix}-az{ord(letter) - ord('a') + 1}"
            for letter in ZONE_LETTERS.get(region, "abc")}


def _offerings(zones: list[str], patterns: list[str], region: str) -> dict[str, Any]:
    """The catalogued instance types matching `patterns` (`m7i.large`, `m7i.*`) in each zone asked about, but only
    older ones in `LEGACY_ZONE_IDS`."""
    from eks_karpenter.catalogue import load_catalogue

    ids = zone_ids(region)
    matching = [t for t in load_catalogue() if any(fnmatch.fnmatchcase(t.name, p) for p in patterns)]
    pairs = [(t.name, zone) for zone in zones if zone in ids for t in matching
             if ids[zone] not in LEGACY_ZONE_IDS or int(t.labels.get(INSTANCE_GENERATION, "0") or 0) <= 4]
    return {"instanceTypes": [t for t, _ in pairs], "locations": [z for _, z in pairs],
            "locationTypes": ["availability-zone"] * len(pairs), "locationType": "availability-zone", "id": region}


_ACCOUNT_TOKENS = ("aws:index/getAvailabilityZones:getAvailabilityZones",
                   "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings", "aws:ec2/getVpcs:getVpcs")


def _account(token: str, args: dict[str, Any], region: str) -> dict[str, Any]:
    """The account's zones, the instance types offered there, and no VPC of this stack yet (a first `up`; tests
    answer `getVpcs` with invoke_results for a used stack)."""
    if token == _ACCOUNT_TOKENS[0]:
        ids = zone_ids(region)
        return {"names": list(ids), "zoneIds": list(ids.values()), "groupNames": [region] * len(ids),
                "id": region, "state": "available"}
    if token == _ACCOUNT_TOKENS[1]:
        values = {str(f.get("name")): [str(v) for v in f.get("values") or []] for f in args.get("filters") or []}
        return _offerings(values.get("location", []), values.get("instance-type", ["*"]), region)
    return {"ids": [], "id": region, "tags": args.get("tags") or {}}


_LIBRARY_LOOKUPS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # The cluster as a first install finds it: reachable, nothing named like this stack's, Cluster Autoscaler's
    # Deployment at one replica.
    IN_CLUSTER_TOKEN: lambda args: {"reachable": True, "helmReleases": [], "crds": [],
                                    "deployments": dict.fromkeys(args.get("deployments", []), 1),
                                    OFFLINE_PLACEHOLDER: True},
    # Offline nobody knows what EKS offers: no list, so the pins are held to EKS's default and newest only.
    ADDON_VERSIONS_TOKEN: lambda args: {"versions": None},
    # A new cluster: none of the CRDs asked about (a cluster running, say, the Prometheus Operator is a test's).
    CRDS_TOKEN: lambda args: {"reachable": True, "crds": []},
    # The groups the stack file names, each as Cluster Autoscaler's era made them: untainted, on EKS's default
    # launch template (IMDSv1 on, hop limit 2 taken), so a brownfield stack with teams plans with a warning per
    # group, which a real run refuses unless the group is closed (platform/access/rules.py).
    NODE_GROUP_METADATA_TOKEN: lambda args: {"groups": {
        str(name): {"taints": [], "source": "EKS's default launch template", OFFLINE_PLACEHOLDER: True}
        for name in args.get("nodeGroups") or []}},
}
"""The library's own look-ups (answered by the cluster or AWS in a real run), as the offline plan answers them;
tests answer them otherwise with invoke_results."""


_NOT_YET: dict[str, dict[str, Any]] = {
    # A fresh account has no resource of the fixed names a first `up` creates (platform/taken_names.py); tests
    # answer these for an account a cluster of the same name ran in before.
    "aws:cloudwatch/getLogGroups:getLogGroups": {"arns": [], "logGroupNames": []},
    "aws:sqs/getQueues:getQueues": {"queueUrls": []},
}


def _invoke(token: str, args: dict[str, Any], region: str) -> dict[str, Any]:
    if token == "aws:index/getCallerIdentity:getCallerIdentity":
        return {"accountId": ACCOUNT_ID, "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/plan", "userId": "PLAN"}
    if token == "aws:index/getPartition:getPartition":
        part = partition(region)
        return {"partition": part, "dnsSuffix": dns_suffix(part), "id": part}
    if token == "aws:index/getRegion:getRegion":
        return {"region": region, "name": region, "id": region}
    if token == "aws:eks/getCluster:getCluster":
        cluster = args.get("name", "cluster")
        issuer = f"https://oidc.eks.{region}.amazonaws.com/id/{digest(cluster, 32).upper()}"
        return {
            "name": cluster,
            "arn": f"arn:aws:eks:{region}:{ACCOUNT_ID}:cluster/{cluster}",
            "endpoint": f"https://{digest(cluster, 32).upper()}.gr7.{region}.eks.amazonaws.com",
            "certificateAuthorities": [{"data": CA_DATA}],
            "identities": [{"oidcs": [{"issuer": issuer}]}],
            "vpcConfig": {"clusterSecurityGroupId": f"sg-{digest(cluster + '/cluster-sg')}",
                          "vpcId": f"vpc-{digest(cluster)}", "subnetIds": [], "securityGroupIds": [],
                          "endpointPrivateAccess": True, "endpointPublicAccess": True,
                          "publicAccessCidrs": ["0.0.0.0/0"]},
            "accessConfigs": [{"authenticationMode": "API_AND_CONFIG_MAP"}],
            "version": "1.33",
            "id": cluster,
            "tags": {OFFLINE_PLACEHOLDER: "true"},
        }
    if token == "aws:ssm/getParameter:getParameter":
        name = str(args.get("name", ""))
        return {"name": name, "value": _ssm_value(name), "insecureValue": _ssm_value(name), "type": "String",
                "version": 1, "withDecryption": True, "id": name,
                "arn": f"arn:{partition(region)}:ssm:{region}::parameter{name}"}
    if token == "aws:eks/getAddonVersion:getAddonVersion":
        # The pin is both EKS's default and its newest: offline, every add-on pin exists.
        minor, addon = str(args.get("kubernetesVersion")), str(args.get("addonName"))
        version = versions.ADDON_VERSIONS.get(minor, {}).get(addon, "v0.0.0-eksbuild.1")
        return {"addonName": addon, "kubernetesVersion": minor, "mostRecent": bool(args.get("mostRecent")),
                "version": version, "id": addon}
    if token == "aws:eks/getNodeGroup:getNodeGroup":
        # Placeholders: a group named like a spot group is a Cluster Autoscaler spot group (0 to 10, 3 nodes),
        # any other an on-demand group of 2 to 3 nodes. Tests answer it with invoke_results for other shapes.
        cluster, group = args.get("clusterName", "cluster"), args.get("nodeGroupName", "group")
        spot = "spot" in group
        return {
            "clusterName": cluster, "nodeGroupName": group, "id": f"{cluster}:{group}",
            "arn": f"arn:aws:eks:{region}:{ACCOUNT_ID}:nodegroup/{cluster}/{group}/{digest(group, 8)}",
            "capacityType": "SPOT" if spot else "ON_DEMAND", "status": "ACTIVE",
            "nodeRoleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/{cluster}-{group}-node",
            "subnetIds": [f"subnet-{digest(cluster + '/' + z)}" for z in "abc"],
            "scalingConfigs": [{"minSize": 0, "maxSize": 10, "desiredSize": 3} if spot
                               else {"minSize": 2, "maxSize": 3, "desiredSize": 2}],
            "amiType": "AL2_x86_64", "instanceTypes": ["m5.large"], "labels": {}, "taints": [],
            "tags": {OFFLINE_PLACEHOLDER: "true"},
            "diskSize": 20, "releaseVersion": "", "version": "1.33", "launchTemplates": [], "remoteAccesses": [],
            "resources": [],
        }
    if token == "aws:iam/getSessionContext:getSessionContext":
        arn = str(args.get("arn", ""))
        return {"arn": arn, "issuerArn": arn, "issuerId": "PLAN", "issuerName": arn.rsplit("/", 1)[-1],
                "sessionName": "", "id": arn}
    if token in _LIBRARY_LOOKUPS:
        return _LIBRARY_LOOKUPS[token](args)
    if token in _ACCOUNT_TOKENS:
        return _account(token, args, region)
    if token in _NOT_YET:
        return {**_NOT_YET[token], "id": region, **{k: v for k, v in args.items() if v is not None}}
    if token == "aws:iam/getRoles:getRoles":
        # A fresh account: no role matches. Tests answer it with invoke_results for a used account.
        return {"names": [], "arns": [], "id": region, **{k: v for k, v in args.items() if v is not None}}
    if token == "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider":
        url = str(args.get("url", "")).removeprefix("https://")
        return {"arn": f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{url}", "url": url, "id": url}
    return {}


class CapturingMonitor(_mocks.MockMonitor):
    """A MockMonitor that keeps every registration with its parent, dependencies and options."""

    def __init__(self, mocks: PlanMocks) -> None:
        super().__init__(mocks)
        self.planned: list[PlannedResource] = []
        self.stack_outputs: dict[str, Any] = {}
        self.root_urn = ""
        self._chains: dict[str, str] = {}
        self._depends_on: dict[tuple[str, str], list[set[str]]] = {}

    def record_depends_on(self, type_: str, name: str, urns: set[str]) -> None:
        """The URNs a resource's `depends_on` resolved to (the SDK sends them merged into `dependencies`)."""
        self._depends_on.setdefault((type_, name), []).append(urns)

    def _explicit(self, request: Any) -> list[str]:
        recorded = self._depends_on.get((request.type, request.name))
        if recorded is None:
            return []
        if len(recorded) == 1:
            return sorted(recorded[0])
        # Two resources of one type and name (under different parents): tell them apart by what no input
        # accounts for.
        from_inputs = {urn for deps in request.propertyDependencies.values() for urn in deps.urns}
        return sorted(set(request.dependencies) - from_inputs)

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # Like the engine: the root stack is not part of a child's type chain.
        chain = type_
        if parent and parent != self.root_urn:
            chain = f"{self._chains[parent]}${type_}"
        urn = f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{chain}::{name}"
        self._chains[urn] = chain
        return urn

    def RegisterResource(self, request: Any) -> Any:
        if request.type == "pulumi:pulumi:Stack":
            self.root_urn = self.make_urn("", request.type, request.name)
            return resource_pb2.RegisterResourceResponse(urn=self.root_urn)
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        self.planned.append(
            PlannedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent="" if request.parent == self.root_urn else request.parent,
                custom=bool(request.custom),
                inputs=_plain(inputs),
                dependencies=sorted(set(request.dependencies)),
                options=_options(request, self._explicit(request)),
            )
        )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:
        if request.urn == self.root_urn:
            self.stack_outputs = _plain(rpc.deserialize_properties(request.outputs, keep_unknowns=True))
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]


_HOOK_FIELDS = (("beforeCreate", "before_create"), ("afterCreate", "after_create"), ("beforeUpdate", "before_update"),
                ("afterUpdate", "after_update"), ("beforeDelete", "before_delete"), ("afterDelete", "after_delete"))
"""Resource hook bindings (hook names per point), as the plan records them."""


def _options(request: Any, depends_on: list[str]) -> dict[str, Any]:
    """The options of a registration that change what the engine does, as the SDK sent them; unset ones left out."""
    opts: dict[str, Any] = {}
    if request.protect:
        opts["protect"] = True
    if request.ignoreChanges:
        opts["ignoreChanges"] = sorted(request.ignoreChanges)
    if request.replaceOnChanges:
        opts["replaceOnChanges"] = sorted(request.replaceOnChanges)
    if request.deleteBeforeReplace:
        opts["deleteBeforeReplace"] = True
    if request.retainOnDelete:
        opts["retainOnDelete"] = True
    if request.importId:
        opts["import"] = request.importId
    if request.provider:
        opts["provider"] = request.provider.rsplit("::", 1)[0]  # a reference is `<urn>::<id>`
    if request.version:
        opts["version"] = request.version
    timeouts = {k: getattr(request.customTimeouts, k) for k in ("create", "update", "delete")
                if getattr(request.customTimeouts, k)}
    if timeouts:
        opts["customTimeouts"] = timeouts
    if depends_on:
        opts["dependsOn"] = depends_on
    if request.deletedWith:
        opts["deletedWith"] = request.deletedWith
    # Transforms run in the engine (on a remote component's children too): the plan names them.
    transforms = [f"{fn.__module__}.{fn.__qualname__}" for fn in _mocks._resolve_callbacks(request.transforms)]
    if transforms:
        opts["transforms"] = transforms
    if request.HasField("hooks"):
        hooks = {key: list(getattr(request.hooks, field)) for key, field in _HOOK_FIELDS
                 if getattr(request.hooks, field)}
        if hooks:
            opts["hooks"] = hooks
    aliases = sorted({*request.aliasURNs, *(_alias_urn(request, a) for a in request.aliases)})
    if aliases:
        opts["aliases"] = aliases
    return opts


def _alias_urn(request: Any, alias: Any) -> str:
    """The old URN an alias names, resolved like the engine does (unset parts default to the resource's own)."""
    if alias.urn:
        return str(alias.urn)
    spec = alias.spec
    name = spec.name or request.name
    type_ = spec.type or request.type
    stack = spec.stack or pulumi.get_stack()
    project = spec.project or pulumi.get_project()
    parent = "" if spec.noParent else (spec.parentUrn or request.parent)
    chain = type_
    if parent and "::pulumi:pulumi:Stack::" not in parent:
        chain = f"{parent.split('::')[2]}${type_}"
    return f"urn:pulumi:{stack}::{project}::{chain}::{name}"


SECRET_PLACEHOLDER = "[secret]"
UNKNOWN_PLACEHOLDER = "[unknown]"


def _plain(value: Any) -> Any:
    """Turn deserialised property values into JSON data: secrets masked, unknowns named."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return SECRET_PLACEHOLDER
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str) and value == rpc.UNKNOWN:
        return UNKNOWN_PLACEHOLDER
    if isinstance(value, pulumi.Resource):
        return "[resource]"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)


def _number(value: float) -> int | float:
    """The engine's protobuf Struct carries every number as a float: a whole one was written as an integer
    (a port, a size, a weight), so the plan records it as one and `300` stays `300`, not `300.0`."""
    return int(value) if value.is_integer() else value
