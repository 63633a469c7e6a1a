"""The gpu-inference policy pack's policies (constructed here, served by `__main__.py`).

Importing this module builds the policy objects and starts nothing: `pulumi_policy.PolicyPack(...)`
starts a gRPC server and blocks, so only `__main__.py` constructs the pack. Tests call each
policy's `validate(args, report_violation)` directly.

Policies:
- `gpu-placement-errors` (mandatory) / `gpu-placement-warnings` (advisory): stack validation;
  the stack's resources (type, name, props) go through `components.check.check`, each
  error / warning finding is one violation `CODE: resource: message (fix: ...)` tied to the
  resource's URN. Info findings are not violations. A stack policy has one enforcement level, so
  the two severities are two policies, each configurable on its own (`enforcementLevel`, and the
  properties `extendedResourceToleration`, `ignoreCodes` and `notJudged`).
- `gpu-cloud-quota` (mandatory): stack validation of the cloud quotas (GI045, GI046): the pools'
  max nodes against the quotas the policy config declares (`quotas`: the stack config section's
  shape, `[{provider, region, limits}]`) and those the stack registers (our `CloudQuota`
  component); the two placement policies leave these codes to it.
- `gpu-pool-untainted`, `gke-gpu-pool-declares-gpu-taint`, `knative-unknown-feature` (mandatory)
  and `isvc-gpu-without-toleration` (advisory): resource validation of what one resource shows.
  Their logic is in the pure functions `untainted_gpu_pool`, `undeclared_gke_gpu_taint`,
  `isvc_gpus_without_toleration`, `unknown_knative_features`: `(resource_type, props) -> [message]`.
  They read `props` through `Mapping` / `Sequence`, so the engine's unknown-checking proxies work:
  a value unknown during preview raises `UnknownValueError`, which pulumi_policy reports as "can't
  run during preview" instead of a wrong verdict.

How the pack finds the placement check: the pack is run from a clone of this repository
(`pulumi preview --policy-pack ./policy`), and Pulumi installs only `requirements.txt` into the
pack's own virtualenv. Installing the project itself from there (`gpu-inference @ file:..`) is not
reliable (the relative path resolves against pip's working directory, and it would drag in the
cloud SDKs), so this module puts the repository root (the parent of `policy/`) on `sys.path` when
it holds `components/check/`. The modules used (`check`, `catalog`,
`scheduling`, `errors`, `config`) are pure; `config` needs pydantic, which requirements.txt lists.
When the library is installed (the library's own virtualenv), the clone's copy wins; it is the same
code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Optional

_REPO_ROOT = Path(__file__).resolve().parent.parent
if (_REPO_ROOT / "components" / "check" / "rules.py").is_file() and str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from pulumi_policy import (  # noqa: E402
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import (  # noqa: E402
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
)

from components.check import (  # noqa: E402
    CODES,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    GPU_COUNT_KEYS,
    INFERENCE_SERVICE,
    ISVC_COMPONENTS,
    KNATIVE_SERVING,
    NODE_PATCH,
    Finding,
    check,
)
from components.check.registry import QUOTA_POLICY, codes  # noqa: E402
from components.model.errors import InputError  # noqa: E402
from components.model.nodes.catalog import gke_gpus_for_machine, is_gke_gpu_machine, is_gpu_instance  # noqa: E402
from components.model.nodes.quotas import validate_limits, validate_region  # noqa: E402
from components.model.scheduling import CLOUD_EFFECTS, FILTERING_EFFECTS, GPU_RESOURCE  # noqa: E402
from components.model.serving.knative_features import KNATIVE_FEATURES, feature_values  # noqa: E402

PACK_NAME = "gpu-inference"
PACK_DISPLAY_NAME = "gpu-inference placement guarantees"
PACK_DESCRIPTION = (
    "GPU placement guarantees for any Pulumi stack: the gpu-inference placement check over the "
    "whole stack, and per-resource checks of GPU node pools, InferenceServices and Knative features."
)

CONFIG_MAP_PATCH = "kubernetes:core/v1:ConfigMapPatch"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
KNATIVE_FEATURES_CONFIG_MAP = "config-features"
GKE_GPU_TAINT = {"key": GPU_RESOURCE, "value": "present", "effect": "NO_SCHEDULE"}
"""The taint GKE puts on GPU pools, as `nodeConfig.taints` must declare it."""
GPU_NODE_LABELS = (
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
)
"""Node labels that say a NodePatch's node has GPUs (besides a positive `GPU_COUNT_KEYS` count)."""
KARPENTER_GROUP = "kubernetes:karpenter.sh/"
KARPENTER_GPU_NAME_LABELS = (
    "karpenter.k8s.aws/instance-gpu-name",
    "eks.amazonaws.com/instance-gpu-name",
)
"""Where a Karpenter node says its GPU (EKS Auto Mode uses the second)."""

_UNKNOWNS = frozenset(
    {
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_STRING_VALUE,
    }
)
_EFFECT_FROM_CLOUD = {v: k for k, v in CLOUD_EFFECTS.items()}


# ---------------------------------------------------------------------------------------------
# Reading props (plain dicts from tests, or the engine's unknown-checking proxies)
# ---------------------------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _seq(value: Any) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    return []


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():  # numbers reach policies as floats
        return str(int(value))
    return "" if value is None else str(value)


def _positive(quantity: Any) -> bool:
    """A GPU count or quantity above zero (`1`, `1.0`, `"2"`); an unparsable value counts as a
    request (the API server rejects it, the placement check reports that as GI013)."""
    if quantity is None or isinstance(quantity, bool):
        return False
    try:
        return Decimal(str(quantity).strip()) > 0
    except InvalidOperation:
        return bool(str(quantity).strip())


def _effect(value: Any) -> str:
    """Kubernetes casing for a taint effect given in either casing (`NO_SCHEDULE` -> `NoSchedule`)."""
    text = _text(value)
    return _EFFECT_FROM_CLOUD.get(text, text)


def _filtering_taints(taints: Any) -> list[Mapping[str, Any]]:
    return [_map(t) for t in _seq(taints) if _effect(_map(t).get("effect")) in FILTERING_EFFECTS]


def plain(value: Any, path: str = "", unknown: Optional[list[str]] = None) -> Any:
    """`value` as plain dicts / lists (what the placement check reads). Values unknown during
    preview are left out; their paths are appended to `unknown` when given."""
    found = unknown if unknown is not None else []
    if isinstance(value, str):
        if value in _UNKNOWNS:
            found.append(path or ".")
            return None
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in list(value):
            where = f"{path}.{key}" if path else str(key)
            try:
                item = value[key]
            except UnknownValueError:
                found.append(where)
                continue
            converted = plain(item, where, found)
            if converted is not None or item is None:
                out[str(key)] = converted
        return out
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        items = []
        for i in range(len(value)):
            where = f"{path}[{i}]"
            try:
                item = value[i]
            except UnknownValueError:
                found.append(where)
                continue
            converted = plain(item, where, found)
            if converted is not None or item is None:
                items.append(converted)
        return items
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
        # The engine hands every number to a policy as a double (protobuf Struct): `gpus: 1`
        # arrives as 1.0, which the check would refuse as a bare number with a fraction (GI013).
        # The provider sends it to the API server as 1, so it is the integer it was written as.
        return int(value)
    return value


# ---------------------------------------------------------------------------------------------
# Stack policy: the placement check over the whole stack
# ---------------------------------------------------------------------------------------------


_CHECKED_PACKAGES = ("kubernetes:", "gcp:", "aws:")


def _kind(resource_type: str) -> str:
    return resource_type.rsplit(":", 1)[-1]


def stack_graph(
    resources: Sequence[PolicyResource],
) -> tuple[list[dict[str, Any]], dict[str, Optional[str]], dict[str, list[str]]]:
    """The stack as the placement check's graph `[{type, name, inputs}]`, the URN of each finding
    resource id `Kind/name` (None when two resources share it), and the props unknown during
    preview per resource id."""
    graph: list[dict[str, Any]] = []
    by_rid: dict[str, list[PolicyResource]] = {}
    unknown: dict[str, list[str]] = {}
    for r in resources:
        missing: list[str] = []
        inputs = plain(r.props, "", missing)
        entry = {"type": r.resource_type, "name": r.name, "inputs": inputs}
        depends = [f"{d.resource_type}::{d.name}" for d in r.dependencies or ()]
        if depends:  # ties an ASG Tag to its node group (GI016)
            entry["dependsOn"] = depends
        graph.append(entry)
        rid = f"{_kind(r.resource_type)}/{r.name}"
        by_rid.setdefault(rid, []).append(r)
        if missing and r.resource_type.startswith(_CHECKED_PACKAGES):
            unknown.setdefault(rid, []).extend(missing)
    urns: dict[str, Optional[str]] = {}
    for rid, found in by_rid.items():
        # A component (`gpu-inference:index:InferenceService` "llm") shares `Kind/name` with the
        # resource it wraps; the check only reads Kubernetes / GCP / AWS resources.
        read = [r for r in found if r.resource_type.startswith(_CHECKED_PACKAGES)] or found
        urns[rid] = read[0].urn if len({r.urn for r in read}) == 1 else None
    return graph, urns, unknown


def _finding_rid(finding: Finding, urns: Mapping[str, Optional[str]]) -> Optional[str]:
    """The `Kind/name` a finding's resource (`Kind/name[/component...]`: an LLMInferenceService's
    `LLMInferenceService/llm/llm-kserve-mn/worker`) belongs to, if in the stack."""
    head = finding.resource
    while head:
        if head in urns:
            return head
        head = head.rpartition("/")[0]
    return None


def violation_message(finding: Finding, unknown: Sequence[str] = ()) -> str:
    """`CODE: resource: message (fix: ...)`, noting props that were unknown during preview."""
    text = f"{finding.code}: {finding.resource}: {finding.message} (fix: {finding.fix})"
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        text += f" [values unknown until deploy, not checked: {shown}]"
    return text


def _erto(config: Mapping[str, Any]) -> Optional[bool]:
    value = config.get("extendedResourceToleration")
    if value is None or isinstance(value, bool):
        return value
    raise ValueError(
        f"policy config extendedResourceToleration is {value!r}: give true, false, or leave it out "
        "(inferred: on when the stack has a GKE or EKS pool)"
    )


def _not_judged(config: Mapping[str, Any]) -> str:
    value = config.get("notJudged", "info")
    if value in ("info", "error"):
        return str(value)
    raise ValueError(
        f"policy config notJudged is {value!r}: give info, error, or leave it out (info)"
    )


QUOTA_CODES = codes("error", QUOTA_POLICY)
"""What `gpu-cloud-quota` reports (the placement policies leave them to it): the registry's."""


def _quotas(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The policy config's `quotas`, checked as the stack config checks them."""
    out = []
    for i, q in enumerate(_seq(config.get("quotas"))):
        q = _map(q)
        provider, region = _text(q.get("provider")), _text(q.get("region"))
        limits = {str(k): v for k, v in _map(q.get("limits")).items()}
        try:
            if provider not in ("gke", "eks"):
                raise InputError(
                    f"provider {provider!r} has no quotas here", "gke, eks", "provider"
                )
            validate_region(provider, region)
            validate_limits(provider, limits)
        except InputError as e:
            raise ValueError(f"policy config {e.at(f'quotas[{i}]')}") from None
        out.append({"provider": provider, "region": region, "limits": limits})
    return out


def placement_violations(
    resources: Sequence[PolicyResource],
    severity: str,
    config: Mapping[str, Any],
    codes: Optional[Sequence[str]] = None,
) -> list[tuple[str, Optional[str]]]:
    """(message, urn) for each finding of `severity` the placement check reports on the stack
    (only `codes` when given; the quota codes only then)."""
    graph, urns, unknown = stack_graph(resources)
    ignored = {str(c).strip().upper() for c in _seq(config.get("ignoreCodes"))}
    report = check(
        graph,
        extended_resource_toleration=_erto(config),
        quotas=_quotas(config),
        not_judged=_not_judged(config),
    )
    out = []
    for finding in report.findings:
        if finding.severity != severity or finding.code in ignored:
            continue
        wanted = finding.code in codes if codes is not None else finding.code not in QUOTA_CODES
        if not wanted:
            continue
        rid = _finding_rid(finding, urns)
        urn = urns.get(rid) if rid else None
        out.append((violation_message(finding, unknown.get(rid or "", [])), urn))
    return out


def _stack_validator(severity: str) -> Callable[[StackValidationArgs, ReportViolation], None]:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for message, urn in placement_violations(args.resources, severity, args.get_config()):
            report_violation(message, urn)

    return validate


def _placement_span() -> str:
    """`GI001..GI058`: the first and last code the placement policies report."""
    reported = sorted({*codes("error"), *codes("warning")})
    return f"{reported[0]}..{reported[-1]}"


_STACK_CONFIG = PolicyConfigSchema(
    properties={
        "extendedResourceToleration": {
            "type": "boolean",
            "description": "Whether the cluster runs the ExtendedResourceToleration admission "
            "plugin (GPU pods then tolerate nvidia.com/gpu taints by themselves). Unset: on when "
            "the stack has a GKE or EKS pool, off for existing nodes only.",
        },
        "ignoreCodes": {
            "type": "array",
            "items": {"type": "string", "pattern": "^GI[0-9]{3}$"},
            "description": f"Finding codes ({_placement_span()}) not to report.",
        },
        "notJudged": {
            "type": "string",
            "enum": ["info", "error"],
            "description": "How a finding that says a rule could not judge a pod (GI006, GI022, "
            "GI044, GI059) is reported: info (not a violation; the default), or error (a "
            "violation of gpu-placement-errors, for a gate that passes only what was judged).",
        },
    }
)


def _codes(severity: str) -> str:
    """The codes the placement policy of `severity` reports, with their slugs (the registry's)."""
    return ", ".join(f"{c} {CODES[c][1]}" for c in codes(severity))


gpu_placement_errors = StackValidationPolicy(
    name="gpu-placement-errors",
    description="The gpu-inference placement check finds no error: every GPU / wired pod can land "
    f"on its pool and nowhere else, and its GPU nodes work ({_codes('error')}).",
    validate=_stack_validator("error"),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_STACK_CONFIG,
)

gpu_placement_warnings = StackValidationPolicy(
    name="gpu-placement-warnings",
    description="The gpu-inference placement check finds nothing that keeps GPU nodes up or "
    f"leaves models unserved ({_codes('warning')}).",
    validate=_stack_validator("warning"),
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=_STACK_CONFIG,
)


def _validate_quotas(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for message, urn in placement_violations(
        args.resources, "error", args.get_config(), QUOTA_CODES
    ):
        report_violation(message, urn)


gpu_cloud_quota = StackValidationPolicy(
    name="gpu-cloud-quota",
    description="The GPU node pools' max nodes fit the cloud quotas declared (GI045), and the pods "
    "that run all the time fit the nodes the quotas allow (GI046): GCE GPU quotas per family "
    "and region, EC2 vCPU quotas per instance family and region, Spot apart.",
    validate=_validate_quotas,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "quotas": {
                "type": "array",
                "description": "The cloud quotas the pools count against, as the stack config's "
                "`quotas`: [{provider: gke|eks, region, limits: {quota name: limit}}] (GCE GPU "
                "quota metrics in GPUs, EC2 vCPU quota names in vCPUs).",
                "items": {
                    "type": "object",
                    "properties": {
                        "provider": {"type": "string", "enum": ["gke", "eks"]},
                        "region": {"type": "string"},
                        "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
                    },
                    "required": ["provider", "region", "limits"],
                },
            },
            "ignoreCodes": {
                "type": "array",
                "items": {"type": "string", "pattern": "^GI[0-9]{3}$"},
                "description": f"Finding codes ({', '.join(QUOTA_CODES)}) not to report.",
            },
        }
    ),
)


# ---------------------------------------------------------------------------------------------
# Resource policies: pure checks (resource_type, props) -> messages
# ---------------------------------------------------------------------------------------------


def _gke_gpus(props: Mapping[str, Any]) -> Optional[str]:
    """What GPUs a GKE node pool's nodes have (`nvidia-l4 x1`), None for a CPU pool."""
    nc = _map(props.get("nodeConfig"))
    for acc in _seq(nc.get("guestAccelerators")):
        acc = _map(acc)
        if acc.get("count") is None or _positive(acc.get("count")):
            return f"{_text(acc.get('type')) or 'GPU'} x{_text(acc.get('count')) or '?'}"
    machine = nc.get("machineType")
    if isinstance(machine, str) and is_gke_gpu_machine(machine):
        attached = gke_gpus_for_machine(machine)
        return f"{attached[0]} x{attached[1]} ({machine})" if attached else machine
    return None


def _eks_gpus(props: Mapping[str, Any]) -> Optional[str]:
    gpu_types = [str(t) for t in _seq(props.get("instanceTypes")) if is_gpu_instance(str(t))]
    if gpu_types:
        return ", ".join(gpu_types)
    ami = _text(props.get("amiType"))
    return f"GPU AMI {ami}" if "NVIDIA" in ami or "GPU" in ami else None


def _node_gpus(props: Mapping[str, Any]) -> Optional[str]:
    md = _map(props.get("metadata"))
    labels, annotations = _map(md.get("labels")), _map(md.get("annotations"))
    for key in GPU_COUNT_KEYS:
        for source in (annotations, labels):
            if key in source:
                count = source[key]
                return f"{key}={_text(count)}" if _positive(count) else None
    for key in GPU_NODE_LABELS:
        if key in labels and _text(labels[key]) not in ("", "false"):
            return f"{key}={_text(labels[key])}"
    return None


def _pool_name(resource_type: str, props: Mapping[str, Any]) -> str:
    if resource_type == NODE_PATCH or _is_karpenter_node_pool(resource_type):
        return _text(_map(props.get("metadata")).get("name")) or "node"
    if resource_type == EKS_NODE_GROUP:
        return _text(props.get("nodeGroupName") or props.get("nodeGroupNamePrefix")) or "node group"
    return _text(props.get("name") or props.get("namePrefix")) or "node pool"


def _is_karpenter_node_pool(resource_type: str) -> bool:
    return resource_type.startswith(KARPENTER_GROUP) and resource_type.endswith(":NodePool")


def _karpenter_gpus(resource_type: str, props: Mapping[str, Any]) -> Optional[str]:
    """What GPU instance types a Karpenter NodePool's requirements admit (`a10g, l4, up to 8
    GPUs per node`), None when they admit none. Read by the placement check's own NodePool
    reader (catalog instance types matching `spec.template.spec.requirements`, EKS Auto Mode's
    `eks.amazonaws.com/*` keys included). A requirement unknown during preview is no verdict."""
    missing: list[str] = []
    inputs = plain(props, "", missing)
    for path in missing:
        if path.startswith("spec.template.spec.requirements"):
            raise UnknownValueError(UNKNOWN_ARRAY_VALUE, path.split("."))
    (pool,) = check([{"type": resource_type, "name": "nodepool", "inputs": inputs}]).pools
    if pool.gpus_per_node == 0:
        return None
    names = sorted(
        {n.labels[k] for n in pool.nodes for k in KARPENTER_GPU_NAME_LABELS if k in n.labels}
    )
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    shown = shown or "GPU instance types"
    most = f", up to {pool.gpus_per_node} GPUs per node" if pool.gpus_per_node else ""
    mixed = "" if pool.gpu else ", beside instance types without GPUs"
    return f"{shown}{most}{mixed}"


def untainted_gpu_pool(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """`gpu-pool-untainted`: a GPU node pool (GKE NodePool, EKS NodeGroup, NodePatch of a GPU node,
    Karpenter NodePool whose requirements admit GPU instance types) with no NoSchedule /
    NoExecute taint: any pod can land there and keep a GPU node up.

    Not checked, on purpose:
    - GKE ComputeClass (`cloud.google.com/v1`): every node GKE creates for a class carries the
      class's own `cloud.google.com/compute-class=<class>:NoSchedule` taint (pods selecting the
      class get the toleration injected; GKE "About node pool auto-creation": auto-created nodes
      get the taints matching the tolerations of the pods selecting their label), besides GKE's
      GPU taint on GPU nodes; so no ComputeClass has untainted nodes. A class served by node
      pools created by hand (`nodePoolAutoCreation.enabled: false`) gets them from GKE NodePool
      resources, which this policy checks.
    - GKE Autopilot: no node pool resource exists (`GkeAutopilotGpuPool` registers nothing in
      the cloud); Autopilot makes and taints the GPU nodes itself."""
    if resource_type == GKE_NODE_POOL:
        gpus = _gke_gpus(props)
        taints = _map(props.get("nodeConfig")).get("taints")
        example = "nodeConfig.taints: [{key: nvidia.com/gpu, value: present, effect: NO_SCHEDULE}]"
        note = (
            " (GKE adds nvidia.com/gpu=present:NoSchedule by itself only when the cluster also "
            "has a non-GPU node pool)"
        )
    elif resource_type == EKS_NODE_GROUP:
        gpus = _eks_gpus(props)
        taints = props.get("taints")
        example = "taints: [{key: nvidia.com/gpu, value: present, effect: NO_SCHEDULE}]"
        note = " (EKS adds no GPU taint)"
    elif resource_type == NODE_PATCH:
        gpus = _node_gpus(props)
        taints = _map(props.get("spec")).get("taints")
        example = "spec.taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]"
        note = ""
    elif _is_karpenter_node_pool(resource_type):
        taints = _map(_map(_map(props.get("spec")).get("template")).get("spec")).get("taints")
        if _filtering_taints(taints):
            return []
        gpus = _karpenter_gpus(resource_type, props)
        example = (
            "spec.template.spec.taints: [{key: nvidia.com/gpu, value: present, effect: "
            "NoSchedule}] (a NodePool of its own for the GPU instance types, when it admits "
            "others too)"
        )
        # startupTaints are removed once the node is up (karpenter.sh_nodepools.yaml v1.14.1).
        note = " (Karpenter puts spec.template.spec.taints on its nodes and adds no GPU taint)"
    else:
        return []
    if gpus is None or _filtering_taints(taints):
        return []
    return [
        f"GPU node pool {_pool_name(resource_type, props)} ({gpus}) has no NoSchedule or "
        f"NoExecute taint{note}: pods that need no GPU can land on its nodes and keep them up. "
        f"Fix: taint it, e.g. {example}, and give the inference pods the matching toleration."
    ]


def undeclared_gke_gpu_taint(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """`gke-gpu-pool-declares-gpu-taint`: a GKE GPU NodePool whose `nodeConfig.taints` lacks the
    taint GKE adds itself, so every update shows a diff that recreates the pool
    (hashicorp/terraform-provider-google #7928)."""
    if resource_type != GKE_NODE_POOL:
        return []
    gpus = _gke_gpus(props)
    if gpus is None:
        return []
    for t in _seq(_map(props.get("nodeConfig")).get("taints")):
        t = _map(t)
        if (
            _text(t.get("key")) == GPU_RESOURCE
            and _text(t.get("value")) == "present"
            and _effect(t.get("effect")) == "NoSchedule"
        ):
            return []
    return [
        f"GKE GPU node pool {_pool_name(resource_type, props)} ({gpus}) does not declare the taint "
        "GKE puts on GPU nodes, nvidia.com/gpu=present:NoSchedule: the provider then sees a diff "
        "on every update and recreates the pool (terraform-provider-google #7928). Fix: add "
        "{key: nvidia.com/gpu, value: present, effect: NO_SCHEDULE} to nodeConfig.taints, next to "
        "any taint of your own."
    ]


def _container_gpus(container: Mapping[str, Any]) -> bool:
    resources = _map(container.get("resources"))
    return any(
        _positive(_map(resources.get(part)).get(GPU_RESOURCE)) for part in ("requests", "limits")
    )


def _component_requests_gpus(component: Mapping[str, Any]) -> bool:
    """A KServe component requests GPUs: `model`, a framework key (`sklearn`, `triton`, ...) or
    any `containers[*]` / `initContainers[*]` with an nvidia.com/gpu request or limit."""
    for key in list(component):
        try:
            value = component[key]
        except UnknownValueError:  # e.g. a computed serviceAccountName: not a container
            continue
        if key in ("containers", "initContainers"):
            if any(_container_gpus(_map(c)) for c in _seq(value)):
                return True
        elif isinstance(value, Mapping) and "resources" in value and _container_gpus(value):
            return True
    return False


def _tolerates_gpu_taint(toleration: Mapping[str, Any]) -> bool:
    key = _text(toleration.get("key"))
    effect = _text(toleration.get("effect"))
    if not key:
        return _text(toleration.get("operator")) == "Exists" and effect in ("", "NoSchedule")
    return key == GPU_RESOURCE and effect in ("", "NoSchedule")


def isvc_gpus_without_toleration(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """`isvc-gpu-without-toleration`: an InferenceService component that requests nvidia.com/gpu
    but has no toleration for the `nvidia.com/gpu` taint GPU pools carry. Only clusters running
    the ExtendedResourceToleration admission plugin (GKE, EKS) add it by themselves."""
    if resource_type != INFERENCE_SERVICE:
        return []
    name = _text(_map(props.get("metadata")).get("name")) or "InferenceService"
    spec = _map(props.get("spec"))
    out = []
    for part in ISVC_COMPONENTS:
        component = _map(spec.get(part))
        if not component or not _component_requests_gpus(component):
            continue
        if any(_tolerates_gpu_taint(_map(t)) for t in _seq(component.get("tolerations"))):
            continue
        out.append(
            f"InferenceService {name}: {part} requests {GPU_RESOURCE} but has no toleration for "
            f"the {GPU_RESOURCE} taint of GPU pools; it stays Pending unless the cluster runs the "
            "ExtendedResourceToleration admission plugin (GKE and EKS do, most others do not). "
            f"Fix: add to spec.{part}.tolerations "
            "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}."
        )
    return out


def _allowed_values(feature: str) -> tuple[str, ...]:
    return feature_values(feature)


def _feature_problems(features: Mapping[str, Any], where: str) -> list[str]:
    out = []
    for key in list(features):
        name = str(key)
        if name.startswith("_"):  # `_example`: Knative's documentation block
            continue
        if name not in KNATIVE_FEATURES:
            out.append(
                f"{where}: {name!r} is not a Knative Serving feature; Knative ignores it, so the "
                "feature it was meant to turn on stays off. Fix: use one of "
                f"{', '.join(KNATIVE_FEATURES)}."
            )
            continue
        value = features[key]
        allowed = _allowed_values(name)
        if not isinstance(value, str) or value.strip().lower() not in {a.lower() for a in allowed}:
            out.append(
                f"{where}: feature {name!r} is {value!r}, not one of {', '.join(allowed)}. "
                f"Fix: set it to one of {', '.join(repr(a) for a in allowed)}."
            )
    return out


def unknown_knative_features(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """`knative-unknown-feature`: a KnativeServing CR (`spec.config.features`) or a
    `config-features` ConfigMap / ConfigMapPatch (`data`) naming a feature Knative does not have,
    or giving a value other than enabled / disabled / allowed."""
    if resource_type == KNATIVE_SERVING:
        config = _map(_map(props.get("spec")).get("config"))
        name = _text(_map(props.get("metadata")).get("name")) or "KnativeServing"
        out = []
        for key in ("features", "config-features"):
            if key in config:
                out += _feature_problems(
                    _map(config[key]), f"KnativeServing {name} spec.config.{key}"
                )
        return out
    if resource_type in (CONFIG_MAP_PATCH, CONFIG_MAP):
        md = _map(props.get("metadata"))
        if _text(md.get("name")) != KNATIVE_FEATURES_CONFIG_MAP:
            return []
        ns = _text(md.get("namespace")) or "default"
        return _feature_problems(
            _map(props.get("data")), f"ConfigMap {ns}/{KNATIVE_FEATURES_CONFIG_MAP} data"
        )
    return []


def _resource_validator(
    check_one: Callable[[str, Mapping[str, Any]], list[str]],
) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in check_one(args.resource_type, args.props):
            report_violation(message, None)

    return validate


gpu_pool_untainted = ResourceValidationPolicy(
    name="gpu-pool-untainted",
    description="GPU node pools carry a NoSchedule or NoExecute taint, so only pods that "
    "tolerate it (inference pods) use their nodes.",
    validate=_resource_validator(untainted_gpu_pool),
    enforcement_level=EnforcementLevel.MANDATORY,
)

gke_gpu_pool_declares_gpu_taint = ResourceValidationPolicy(
    name="gke-gpu-pool-declares-gpu-taint",
    description="GKE GPU node pools declare GKE's own nvidia.com/gpu=present:NO_SCHEDULE taint "
    "(without it every update recreates the pool).",
    validate=_resource_validator(undeclared_gke_gpu_taint),
    enforcement_level=EnforcementLevel.MANDATORY,
)

isvc_gpu_without_toleration = ResourceValidationPolicy(
    name="isvc-gpu-without-toleration",
    description="InferenceService components that request nvidia.com/gpu tolerate the "
    "nvidia.com/gpu taint (needed where ExtendedResourceToleration is off).",
    validate=_resource_validator(isvc_gpus_without_toleration),
    enforcement_level=EnforcementLevel.ADVISORY,
)

knative_unknown_feature = ResourceValidationPolicy(
    name="knative-unknown-feature",
    description="Knative Serving feature flags (KnativeServing spec.config.features, "
    "config-features ConfigMap) are known feature names with enabled / disabled / allowed.",
    validate=_resource_validator(unknown_knative_features),
    enforcement_level=EnforcementLevel.MANDATORY,
)

POLICIES: list[Policy] = [
    gpu_placement_errors,
    gpu_placement_warnings,
    gpu_pool_untainted,
    gke_gpu_pool_declares_gpu_taint,
    isvc_gpu_without_toleration,
    knative_unknown_feature,
    gpu_cloud_quota,
]
"""Every policy of the pack, in the order `__main__.py` serves them."""
