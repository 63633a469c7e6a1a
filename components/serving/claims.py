"""GPUs by claim (DRA, `resource.k8s.io/v1`): the ResourceClaimTemplate a workload part asks its
GPUs through, and the pod fields that wire it (`resourceClaims` on the pod, `resources.claims` on
the container that uses the GPUs). Shared by `InferenceService` and `LLMInferenceService`.

- The template: one request `gpu`, `exactly` {deviceClassName, count, selectors[].cel}, the
  shape kube-scheduler's allocator reads (k8s.io/api v0.36 resource/v1 `ExactDeviceRequest`);
  device classes `gpu.nvidia.com` (a whole GPU) and `mig.nvidia.com` (a MIG instance), the two
  NVIDIA's DRA driver chart makes (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
  `templates/deviceclass-{gpu,mig}.yaml`, `model.nodes.dra_devices`).
- The pod: `resourceClaims: [{name: gpu, resourceClaimTemplateName: <template>}]` and, on the
  container, `resources.claims: [{name: gpu}]` (a container sees only the claims it lists:
  Kubernetes' pod validation, `core/v1` `ResourceRequirements.Claims`). The resourceclaim
  controller of kube-controller-manager makes one claim per pod from the template.
- Knative refuses both fields: Serverless parts cannot claim (`KNATIVE_REFUSES_CLAIMS`).

Pure but for `claim_template`, which registers the template (pulumi-kubernetes
`resource.v1.ResourceClaimTemplate`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.provider import create_opts, owned
from ..model.errors import InputError, show
from ..model.inputs import stack

API_VERSION = "resource.k8s.io/v1"
KIND = "ResourceClaimTemplate"
CLAIM_NAME = "gpu"
"""The claim's name in the pod (`resourceClaims[].name`, `resources.claims[].name`) and the
request's name in the template."""
DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com")
SELECTORS_MAX = 32
"""k8s.io/api resource/v1 `DeviceSelectorsMaxSize`: at most 32 selectors per request."""
SELECTOR_MAX_LENGTH = 10 * 1024
"""k8s.io/api resource/v1 `CELSelectorExpressionMaxLength`: 10 KiB per expression."""
KNATIVE_REFUSES_CLAIMS = (
    "Knative's webhook refuses claims (\"must not set the field(s): "
    'spec.template.spec.containers[0].resources.claims", knative/serving#15332: knative-v1.23.0 '
    "pkg/apis/serving/fieldmask.go ResourceRequirementsMask and PodSpecMask copy neither "
    "`resources.claims` nor `resourceClaims`)"
)


@dataclass
class GpuClaimArgs:
    """GPUs by claim (DRA) instead of `nvidia.com/gpu`: a ResourceClaimTemplate per workload
    part and the pod's claim on it (`components.serving.claims`)."""

    count: Optional[int] = field(default=1, metadata=stack(ge=1))
    """Devices of `device_class` each pod claims, all from one node."""
    device_class: Optional[str] = field(
        default="gpu.nvidia.com", metadata=stack(choices=DEVICE_CLASSES)
    )
    """`gpu.nvidia.com` (whole GPUs) or `mig.nvidia.com` (MIG instances), the DeviceClasses NVIDIA's
    DRA driver makes."""
    selectors: Optional[Sequence[str]] = None
    """CEL expressions every claimed device must satisfy (at most 32), e.g.
    `device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'` or
    `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0`; the attributes the
    driver publishes are listed in docs/dra.md."""


def validate_claim(claim: GpuClaimArgs) -> GpuClaimArgs:
    """The claim checked (InputError at `count`, `deviceClass`, `selectors[i]`)."""
    if not isinstance(claim, GpuClaimArgs):
        raise InputError(f"gpu_claim {show(claim)} is not a GpuClaimArgs", "GpuClaimArgs(...)")
    count = 1 if claim.count is None else claim.count
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InputError(
            f"count {show(count)} is not a number of devices", "a whole number 1 or more", "count"
        )
    device_class = claim.device_class or DEVICE_CLASSES[0]
    if device_class not in DEVICE_CLASSES:
        raise InputError(
            f"device class {show(device_class)} is not one NVIDIA's DRA driver makes",
            " or ".join(DEVICE_CLASSES),
            "deviceClass",
        )
    selectors = claim.selectors or ()
    if isinstance(selectors, str) or not isinstance(selectors, Sequence):
        raise InputError(
            f"selectors {show(selectors)} is not a list of CEL expressions",
            "a list of strings",
            "selectors",
        )
    if len(selectors) > SELECTORS_MAX:
        raise InputError(
            f"{len(selectors)} selectors are given; the API server takes at most "
            f"{SELECTORS_MAX} per request",
            f"at most {SELECTORS_MAX} (join them with &&)",
            "selectors",
        )
    for i, s in enumerate(selectors):
        if not isinstance(s, str) or not s.strip():
            raise InputError(
                f"selector {show(s)} is not a CEL expression",
                "a non-empty string, e.g. \"device.attributes['gpu.nvidia.com'].productName == "
                "'NVIDIA L4'\"",
                f"selectors[{i}]",
            )
        if len(s) > SELECTOR_MAX_LENGTH:
            raise InputError(
                f"selector of {len(s)} characters is longer than the API server takes",
                f"at most {SELECTOR_MAX_LENGTH} characters",
                f"selectors[{i}]",
            )
    return GpuClaimArgs(count, device_class, [str(s) for s in selectors] or None)


def check_claim(section: Any, path: str) -> None:
    """A parsed `gpuClaim` stack section checked as the component checks it (InputError at
    `path`.<key>), before anything is registered."""
    claim = GpuClaimArgs(section.count, section.device_class, section.selectors)
    try:
        validate_claim(claim)
    except InputError as e:
        raise e.at(path) from None


def template_name(owner: str, part: str) -> str:
    """The ResourceClaimTemplate of one part of a workload: `<owner>-<part>-gpu`."""
    return f"{owner}-{part}-{CLAIM_NAME}"


def claim_template_body(name: str, namespace: str, claim: GpuClaimArgs) -> dict[str, Any]:
    """The ResourceClaimTemplate (a plain dict) for a validated claim."""
    exactly: dict[str, Any] = {"deviceClassName": claim.device_class, "count": claim.count}
    if claim.selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in claim.selectors]
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": CLAIM_NAME, "exactly": exactly}]}}},
    }


def pod_claims(template: str) -> list[dict[str, str]]:
    """The pod's `resourceClaims`."""
    return [{"name": CLAIM_NAME, "resourceClaimTemplateName": template}]


def with_container_claim(container: Mapping[str, Any]) -> dict[str, Any]:
    """`container` with `resources.claims: [{name: gpu}]` added."""
    out = dict(container)
    resources = dict(out.get("resources") or {})
    resources["claims"] = [{"name": CLAIM_NAME}]
    out["resources"] = resources
    return out


def claimed_gpus(claim: Optional[GpuClaimArgs]) -> int:
    """The devices a claim asks for (0 without one)."""
    return 0 if claim is None else claim.count or 1


def refuse_both(gpus: Optional[int], claim: Optional[GpuClaimArgs], path: str = "gpuClaim") -> None:
    """`gpus` and a claim on one part: refused (the GPUs are counted as `nvidia.com/gpu` or taken
    by claim, and a DRA pool advertises no `nvidia.com/gpu`)."""
    if claim is not None and gpus:
        raise InputError(
            "gpuClaim and gpus are both given: a part takes its GPUs by claim (DRA) or as "
            "nvidia.com/gpu, not both",
            "gpuClaim on a DRA pool, or gpus on a device-plugin pool",
            path,
        )


def refuse_serverless_claim(part: str, claim: Optional[GpuClaimArgs]) -> None:
    """A Serverless (Knative) part with a claim: refused, with Knative's reason."""
    if claim is not None:
        raise InputError(
            f"the {part} claims its GPUs (gpuClaim) but runs Serverless: {KNATIVE_REFUSES_CLAIMS}",
            "deploymentMode RawDeployment (Standard) for a part that claims GPUs, or gpus on a "
            "device-plugin pool",
            f"{part}.gpuClaim",
        )


def part_claim(
    body: dict[str, Any],
    container_key: str,
    claim: Optional[GpuClaimArgs],
    owner: str,
    part: str,
    namespace: str,
    requests_gpus: bool,
) -> Optional[dict[str, Any]]:
    """Wire a part's claim into `body` (a pod spec, or a KServe component, whose
    `body[container_key]` is the container that uses the GPUs, or a list whose first one does)
    and return its ResourceClaimTemplate; None without a claim. `requests_gpus`: the part asks
    `nvidia.com/gpu` too (refused). Errors at `gpuClaim...`."""
    if claim is None:
        return None
    try:
        claim = validate_claim(claim)
    except InputError as e:
        raise e.at("gpuClaim") from None
    if requests_gpus:
        refuse_both(1, claim)
    name = template_name(owner, part)
    body["resourceClaims"] = pod_claims(name)
    found = body.get(container_key)
    if isinstance(found, list):
        body[container_key] = [with_container_claim(found[0]), *found[1:]]
    else:
        body[container_key] = with_container_claim(found or {})
    return claim_template_body(name, namespace, claim)


def claim_template(
    name: str, body: Mapping[str, Any], parent: pulumi.Resource
) -> pulumi.CustomResource:
    """Register the template `body` (`claim_template_body`) under `parent`."""
    import pulumi_kubernetes as k8s

    return k8s.resource.v1.ResourceClaimTemplate(
        name,
        metadata=owned(body["metadata"]),
        spec=body["spec"],
        opts=create_opts(parent),
    )
