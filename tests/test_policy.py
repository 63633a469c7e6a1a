"""The policy pack (policy/): each policy's `validate` called directly, as the engine would call it
(props wrapped in pulumi_policy's unknown-checking proxies), on hand-written graphs and on inputs
recorded from our components under mocks. The PolicyPack itself is never constructed: that starts
a gRPC server and blocks."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pulumi_policy",
    reason="pulumi-policy is not installed: pip install -r policy/requirements.txt (see README)",
)

from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import (
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_STRING_VALUE,
    unknown_checking_proxy,
)

from components.check import CODES, POOL_LABEL, WIRED_POOL_ANNOTATION

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "policy") not in sys.path:
    sys.path.insert(0, str(ROOT / "policy"))

import gpu_inference_policies as gp  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "check"))
from llm_graphs import POOLS as LLM_POOLS  # noqa: E402
from llm_graphs import llmisvc, multi_node, vllm  # noqa: E402
from scale_graphs import (  # noqa: E402
    ASG_TAGS,
    DRA_CLAIM,
    NODEADM_USER_DATA,
    asg,
    autopilot_cluster,
    claim_template,
    gke_dra_pool,
    launch_template,
    nodeclass,
    nodepool,
    req,
)
from scale_graphs import deployment as sdeployment  # noqa: E402
from scale_graphs import pod as spod  # noqa: E402
from test_capacity import cloud_quota, llm_like, max_scale  # noqa: E402
from test_capacity import deployment as cdeployment  # noqa: E402
from test_capacity import nodepool as cnodepool  # noqa: E402

GKE = "gcp:container/nodePool:NodePool"
EKS = "aws:eks/nodeGroup:NodeGroup"
NODE = "kubernetes:core/v1:NodePatch"
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
KSVC = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
CM_PATCH = "kubernetes:core/v1:ConfigMapPatch"

DEDICATED = {"key": "dedicated", "value": "inference", "effect": "NO_SCHEDULE"}
GKE_GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
TOL_DEDICATED = {
    "key": "dedicated",
    "operator": "Equal",
    "value": "inference",
    "effect": "NoSchedule",
}
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
FLAGS_ON = {
    "kubernetes.podspec-nodeselector": "enabled",
    "kubernetes.podspec-affinity": "enabled",
    "kubernetes.podspec-tolerations": "enabled",
}
OPTS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)

# ---------------------------------------------------------------------------------------------
# Calling the policies the way the engine does
# ---------------------------------------------------------------------------------------------


def urn_of(typ: str, name: str) -> str:
    return f"urn:pulumi:test::gpu-inference::{typ}::{name}"


def validate_resource(policy: Any, typ: str, props: dict, name: str = "r") -> list[str]:
    args = ResourceValidationArgs(
        typ, unknown_checking_proxy(props), urn_of(typ, name), name, OPTS, None
    )
    seen: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        assert urn is None  # a resource policy's violation belongs to the resource itself
        seen.append(message)

    assert policy.validate(args, report) is None
    return seen


def stack_args(graph: list[dict], config: dict | None = None) -> StackValidationArgs:
    resources = [
        PolicyResource(
            e["type"],
            unknown_checking_proxy(e["inputs"]),
            urn_of(e["type"], e["name"]),
            e["name"],
            OPTS,
            None,
            None,
            [],
            {},
        )
        for e in graph
    ]
    by_key = {f"{r.resource_type}::{r.name}": r for r in resources}
    for r, e in zip(resources, graph, strict=True):  # dependsOn, as the engine hands them over
        keys = [
            d.rsplit("::", 2)[-2].rsplit("$", 1)[-1] + "::" + d.rsplit("::", 1)[-1]
            for d in e.get("dependsOn", ())
        ]
        r.dependencies.extend(by_key[k] for k in keys if k in by_key)
    return StackValidationArgs(resources, config)


def validate_stack(policy: Any, graph: list[dict], config: dict | None = None) -> list[tuple]:
    seen: list[tuple] = []
    assert policy.validate(stack_args(graph, config), lambda m, u=None: seen.append((m, u))) is None
    return seen


def violations(graph: list[dict], config: dict | None = None) -> dict[str, list[tuple]]:
    return {
        "error": validate_stack(gp.gpu_placement_errors, graph, config),
        "warning": validate_stack(gp.gpu_placement_warnings, graph, config),
    }


# ---------------------------------------------------------------------------------------------
# Hand-written graphs (the shapes of tests/test_placement_check.py)
# ---------------------------------------------------------------------------------------------


def gke_pool(
    name: str = "l4",
    *,
    taints: list[dict] | None = None,
    accelerator: str | None = "nvidia-l4",
    machine: str = "g2-standard-8",
    spot: bool = False,
) -> dict:
    nc: dict[str, Any] = {
        "machineType": machine,
        "labels": {POOL_LABEL: name},
        "taints": [DEDICATED, GKE_GPU_TAINT] if taints is None else taints,
    }
    if accelerator:
        nc["guestAccelerators"] = [{"type": accelerator, "count": 1}]
    if spot:
        nc["spot"] = True
    return {
        "type": GKE,
        "name": name,
        "inputs": {
            "name": name,
            "nodeConfig": nc,
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 3},
        },
    }


def eks_group(name: str = "g5", *, taints: list[dict] | None = None, **extra: Any) -> dict:
    inputs = {
        "nodeGroupName": name,
        "instanceTypes": ["g5.xlarge"],
        "amiType": "AL2023_x86_64_NVIDIA",
        "labels": {POOL_LABEL: name},
        "taints": [DEDICATED] if taints is None else taints,
        "scalingConfig": {"minSize": 0, "maxSize": 2, "desiredSize": 0},
    } | extra
    return {"type": EKS, "name": name, "inputs": inputs}


def node(name: str = "gpu-1", *, labels: dict, taints: list[dict], annotations: dict | None = None):
    md: dict[str, Any] = {"name": name, "labels": labels}
    if annotations is not None:
        md["annotations"] = annotations
    return {
        "type": NODE,
        "name": name,
        "inputs": {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": {"taints": taints}},
    }


def component(gpus: int = 1, *, selector: dict | None = None, tolerations: list | None = None):
    model: dict[str, Any] = {"modelFormat": {"name": "huggingface"}, "storageUri": "hf://x"}
    if gpus:
        model["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    comp: dict[str, Any] = {"model": model, "minReplicas": 0}
    if selector is not None:
        comp["nodeSelector"] = selector
    if tolerations is not None:
        comp["tolerations"] = tolerations
    return comp


def on_pool(pool: str = "l4", gpus: int = 1) -> dict:
    return component(gpus, selector={POOL_LABEL: pool}, tolerations=[TOL_DEDICATED, TOL_GPU])


def isvc(
    name: str = "llm",
    *,
    predictor: dict | None = None,
    wired: str | None = "l4",
    mode: str | None = None,
    **parts: dict,
) -> dict:
    ann = {"serving.knative.dev/progress-deadline": "900s"}  # covers a GPU node's start-up
    if wired is not None:
        ann[WIRED_POOL_ANNOTATION] = wired
    if mode:
        ann["serving.kserve.io/deploymentMode"] = mode
    md = {"name": name, "namespace": "models", "annotations": ann}
    spec = {"predictor": on_pool() if predictor is None else predictor} | parts
    inputs = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService"}
    return {"type": ISVC, "name": name, "inputs": inputs | {"metadata": md, "spec": spec}}


def knative(**features: Any) -> dict:
    return {
        "type": KSVC,
        "name": "knative-serving",
        "inputs": {
            "apiVersion": "operator.knative.dev/v1beta1",
            "kind": "KnativeServing",
            "metadata": {"name": "knative-serving", "namespace": "knative-serving"},
            "spec": {"config": {"features": FLAGS_ON | features}},
        },
    }


def config_map(name: str = "config-features", **data: Any) -> dict:
    return {
        "type": CM_PATCH,
        "name": name,
        "inputs": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "knative-serving"},
            "data": data,
        },
    }


def device_plugin(values: dict | None = None) -> dict:
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "nvidia-device-plugin",
        "inputs": {
            "chart": "nvidia-device-plugin",
            "namespace": "kube-system",
            "values": values or {},
        },
    }


def deployment(name: str, pod: dict, replicas: int = 1) -> dict:
    spec = {"replicas": replicas, "template": {"spec": pod}}
    md = {"name": name, "namespace": "apps"}
    inputs = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md, "spec": spec}
    return {"type": "kubernetes:apps/v1:Deployment", "name": name, "inputs": inputs}


def seldon(kind: str, name: str, spec: dict) -> dict:
    md = {"name": name, "namespace": "seldon-mesh"}
    inputs = {"apiVersion": "mlops.seldon.io/v1alpha1", "kind": kind, "metadata": md, "spec": spec}
    return {"type": f"kubernetes:mlops.seldon.io/v1alpha1:{kind}", "name": name, "inputs": inputs}


def gpu_server(caps: list[str]) -> dict:
    pod = {
        "nodeSelector": {POOL_LABEL: "l4"},
        "tolerations": [TOL_DEDICATED, TOL_GPU],
        "containers": [{"name": "mlserver", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    spec = {"serverConfig": "mlserver", "extraCapabilities": caps, "podSpec": pod, "replicas": 0}
    return seldon("Server", "gpu-server", spec)


def asg_tags(group: dict, **tags: str) -> list[dict]:
    """cluster-autoscaler node-template tags on the group's Auto Scaling group (GI016)."""
    return [
        {
            "type": "aws:autoscaling/tag:Tag",
            "name": f"{group['name']}-{key}",
            "dependsOn": [f"{EKS}::{group['name']}"],
            "inputs": {
                "autoscalingGroupName": "eks-asg",
                "tag": {"key": f"k8s.io/cluster-autoscaler/node-template/{key}", "value": value},
            },
        }
        for key, value in tags.items()
    ]


def g5_tags(taint: str = "dedicated", value: str = "inference") -> list[dict]:
    return asg_tags(
        eks_group(),
        **{
            f"label/{POOL_LABEL}": "g5",
            f"taint/{taint}": f"{value}:NoSchedule",
            "resources/nvidia.com/gpu": "1",
        },
    )


def sized(entry: dict, **annotations: str) -> dict:
    entry["inputs"]["metadata"].setdefault("annotations", {}).update(annotations)
    return entry


BASE = [gke_pool(), knative()]
GPU_TAINT_TRUE = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
GPU_TAINT_PRESENT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}

# (code, violating graph, its fixed twin, Kind/name the violation is tied to)
PAIRS = [
    pytest.param(
        "GI001",
        [*BASE, isvc(predictor=component(selector={POOL_LABEL: "l40"}), wired=None)],
        [*BASE, isvc(wired=None)],
        "InferenceService/llm",
        id="GI001",
    ),
    pytest.param(
        "GI002",
        [
            *BASE,
            gke_pool("l4-spot", spot=True),
            isvc(
                predictor=component(
                    selector={"cloud.google.com/gke-accelerator": "nvidia-l4"},
                    tolerations=[TOL_DEDICATED],
                )
            ),
        ],
        [*BASE, gke_pool("l4-spot", spot=True), isvc()],
        "InferenceService/llm",
        id="GI002",
    ),
    pytest.param(
        "GI003",
        [*BASE, deployment("pre", {"tolerations": [TOL_DEDICATED, TOL_GPU]}, replicas=0)],
        [*BASE, deployment("pre", {}, replicas=0)],
        "Deployment/pre",
        id="GI003",
    ),
    pytest.param(
        "GI004",
        [*BASE, isvc(predictor=on_pool(gpus=2))],
        [*BASE, isvc(predictor=on_pool(gpus=1))],
        "InferenceService/llm",
        id="GI004",
    ),
    pytest.param(
        "GI005",
        [gke_pool(), knative(**{"kubernetes.podspec-tolerations": "disabled"}), isvc()],
        [gke_pool(), knative(), isvc()],
        "InferenceService/llm",
        id="GI005",
    ),
    pytest.param(
        "GI007",
        [*BASE, eks_group(), device_plugin(), isvc(predictor=on_pool("g5"), wired="g5")],
        [
            *BASE,
            eks_group(),
            *g5_tags(),
            device_plugin({"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
            isvc(predictor=on_pool("g5"), wired="g5"),
        ],
        "NodeGroup/g5",
        id="GI007",
    ),
    pytest.param(
        "GI008",
        [*BASE, isvc(mode="RawDeployment")],
        [*BASE, isvc()],
        "NodePool/l4",
        id="GI008",
    ),
    pytest.param(
        "GI009",
        [
            *BASE,
            isvc(
                predictor=component(
                    selector={POOL_LABEL: "l4"}, tolerations=[{"operator": "Exists"}]
                )
            ),
        ],
        [*BASE, isvc()],
        "InferenceService/llm",
        id="GI009",
    ),
    pytest.param(
        "GI010",
        [*BASE, gpu_server([]), seldon("Model", "llama3", {"requirements": ["model-on-gpu"]})],
        [
            *BASE,
            gpu_server(["model-on-gpu"]),
            seldon("Model", "llama3", {"requirements": ["model-on-gpu"]}),
        ],
        "Model/llama3",
        id="GI010",
    ),
    pytest.param(
        "GI011",
        [*BASE, gke_pool("l4-spot", spot=True), isvc(wired="l4-spot")],
        [
            *BASE,
            gke_pool("l4-spot", spot=True),
            isvc(predictor=on_pool("l4-spot"), wired="l4-spot"),
        ],
        "InferenceService/llm",
        id="GI011",
    ),
    pytest.param(
        "GI012",
        [*BASE, eks_group(), isvc(predictor=on_pool("g5"), wired="g5")],
        [
            *BASE,
            eks_group(taints=[GPU_TAINT_PRESENT]),
            *g5_tags("nvidia.com/gpu", "present"),
            isvc(predictor=on_pool("g5"), wired="g5"),
        ],
        "NodeGroup/g5",
        id="GI012",
    ),
    pytest.param(
        "GI013",
        [
            *BASE,
            isvc(
                predictor=on_pool() | {"tolerations": [TOL_DEDICATED | {"effect": "NoScheduled"}]}
            ),
        ],
        [*BASE, isvc()],
        "InferenceService/llm",
        id="GI013",
    ),
]


SERVER_CONFIG_32G = seldon(
    "ServerConfig",
    "llm",
    {
        "podSpec": {
            "containers": [{"name": "mlserver", "resources": {"requests": {"memory": "32Gi"}}}]
        }
    },
)
LLM_SERVER = seldon("Server", "llm-server", {"serverConfig": "llm", "replicas": 1})
GFD_POD = {
    "nodeSelector": {POOL_LABEL: "l4", "nvidia.com/gpu.product": "NVIDIA-L4"},
    "tolerations": [TOL_DEDICATED, TOL_GPU],
    "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
}
PAIRS += [
    pytest.param(
        "GI014",
        [*BASE, deployment("srv", GFD_POD, replicas=0)],
        [*BASE, deployment("srv", GFD_POD | {"nodeSelector": {POOL_LABEL: "l4"}}, replicas=0)],
        "Deployment/srv",
        id="GI014",
    ),
    pytest.param("GI015", max_scale(3), max_scale(2), "NodePool/l4", id="GI015"),
    pytest.param("GI040", llm_like(2, 2), llm_like(3, 4), "NodePool/h100", id="GI040"),
    pytest.param(
        "GI042",
        [cnodepool("h100", 1, 3), cdeployment("a", "h100", 8, replicas=2)],
        [cnodepool("h100", 2, 3), cdeployment("a", "h100", 8, replicas=2)],
        "NodePool/h100",
        id="GI042",
    ),
    pytest.param("GI043", llm_like(3, 3), llm_like(4, 4), "NodePool/h100", id="GI043"),
    pytest.param(
        "GI016",
        [launch_template(user_data=NODEADM_USER_DATA), asg(), sdeployment("a", spod("g5-asg"))],
        [
            launch_template(user_data=NODEADM_USER_DATA),
            asg(tags=ASG_TAGS),
            sdeployment("a", spod("g5-asg")),
        ],
        "Group/gpu-asg",
        id="GI016",
    ),
    pytest.param(
        "GI017",
        [*BASE, config_map(**FLAGS_ON)],
        BASE,
        "ConfigMapPatch/config-features",
        id="GI017",
    ),
    pytest.param(
        "GI018",
        [SERVER_CONFIG_32G, LLM_SERVER, seldon("Model", "llama3", {"memory": "40Gi"})],
        [SERVER_CONFIG_32G, LLM_SERVER, seldon("Model", "llama3", {"memory": "20Gi"})],
        "Model/llama3",
        id="GI018",
    ),
    pytest.param(
        "GI019",
        [*BASE, sized(isvc(), **{"gpu-inference.dev/model-size-gb": "40"})],
        [*BASE, sized(isvc(), **{"gpu-inference.dev/model-size-gb": "16"})],
        "InferenceService/llm",
        id="GI019",
    ),
    pytest.param(
        "GI020",
        [*BASE, sized(isvc(), **{"serving.knative.dev/progress-deadline": "300s"})],
        [*BASE, isvc()],
        "InferenceService/llm",
        id="GI020",
    ),
]


def gpu_pod(gpus: int = 1, host_ipc: bool = False, **requests: str) -> dict:
    amounts = {"nvidia.com/gpu": gpus, **requests}
    pod: dict[str, Any] = {
        "nodeSelector": {POOL_LABEL: "l4"},
        "tolerations": [TOL_DEDICATED, TOL_GPU],
        "containers": [{"name": "c", "resources": {"requests": amounts, "limits": amounts}}],
    }
    if host_ipc:
        pod["hostIPC"] = True
    return pod


def shared_pool(strategy: str) -> dict:
    pool = gke_pool()
    sharing = {"gpuSharingStrategy": strategy, "maxSharedClientsPerGpu": 2}
    pool["inputs"]["nodeConfig"]["guestAccelerators"] = [
        {"type": "nvidia-l4", "count": 2, "gpuSharingConfig": sharing}
    ]
    pool["inputs"]["nodeConfig"]["machineType"] = "g2-standard-24"
    return pool


def model_on_l4(disk: int | None) -> list[dict]:
    pool = gke_pool()
    if disk is not None:
        pool["inputs"]["nodeConfig"]["diskSizeGb"] = disk
    return [pool, knative(), sized(isvc(), **{"gpu-inference.dev/model-size-gb": "16"})]


PAIRS += [
    pytest.param(
        "GI021",
        [*BASE, deployment("srv", gpu_pod(cpu="16"), replicas=0)],
        [*BASE, deployment("srv", gpu_pod(cpu="7"), replicas=0)],
        "Deployment/srv",
        id="GI021",
    ),
    pytest.param(
        "GI023",
        [shared_pool("TIME_SHARING"), deployment("srv", gpu_pod(2), replicas=0)],
        [shared_pool("TIME_SHARING"), deployment("srv", gpu_pod(1), replicas=0)],
        "Deployment/srv",
        id="GI023",
    ),
    pytest.param("GI024", model_on_l4(20), model_on_l4(None), "InferenceService/llm", id="GI024"),
    pytest.param(
        "GI025",
        [shared_pool("MPS"), deployment("srv", gpu_pod(1), replicas=0)],
        [shared_pool("MPS"), deployment("srv", gpu_pod(1, host_ipc=True), replicas=0)],
        "Deployment/srv",
        id="GI025",
    ),
]


# The scale-up findings, on the graphs of tests/check/scale_graphs.py.
_P5 = [req("node.kubernetes.io/instance-type", "In", "p5.48xlarge")]
_G6 = [req("karpenter.k8s.aws/instance-family", "In", "g6")]
_DRA_POD = spod("g6", gpus=0, claims=DRA_CLAIM)
_L4 = {"cloud.google.com/gke-accelerator": "nvidia-l4"}
PAIRS += [
    pytest.param(
        "GI026",
        [
            nodeclass(),
            nodepool("p5", _P5, limits={"nvidia.com/gpu": "4"}),
            sdeployment("a", spod("p5")),
        ],
        [
            nodeclass(),
            nodepool("p5", _P5, limits={"nvidia.com/gpu": "8"}),
            sdeployment("a", spod("p5")),
        ],
        "Deployment/a",
        id="GI026",
    ),
    pytest.param(
        "GI027",
        [nodeclass(), nodepool("g6", _G6), claim_template(), sdeployment("a", _DRA_POD)],
        [nodeclass(), nodepool("g6", _G6), sdeployment("a", spod("g6"))],
        "Deployment/a",
        id="GI027",
    ),
    pytest.param(
        "GI028",
        [
            gke_dra_pool(),
            claim_template(),
            sdeployment("a", spod("l4-dra", gpus=0, claims=DRA_CLAIM)),
        ],
        [
            gke_dra_pool(
                labels={
                    "gke-no-default-nvidia-gpu-device-plugin": "true",
                    "nvidia.com/gpu.present": "true",
                }
            ),
            claim_template(),
            sdeployment("a", spod("l4-dra", gpus=0, claims=DRA_CLAIM)),
        ],
        "Deployment/a",
        id="GI028",
    ),
    pytest.param(
        "GI029",
        [autopilot_cluster(), sdeployment("a", spod(selector=_L4, gpus=3, tolerations=[]))],
        [autopilot_cluster(), sdeployment("a", spod(selector=_L4, gpus=4, tolerations=[]))],
        "Deployment/a",
        id="GI029",
    ),
]


# The LLM findings: an LLMInferenceService's pods, named Kind/name/<workload>[/role],
# are tied to the LLMInferenceService's URN.
_8B = {"model": "llama-3.1-8b"}
PAIRS += [
    pytest.param(
        "GI030",
        [*LLM_POOLS, llmisvc(**_8B, parallelism={"tensor": 3}, template=vllm("h100", 3))],
        [*LLM_POOLS, llmisvc(**_8B, parallelism={"tensor": 4}, template=vllm("h100", 4))],
        "LLMInferenceService/llama",
        id="GI030",
    ),
    pytest.param(
        "GI031",
        [*LLM_POOLS, llmisvc(template=vllm("h100", 2))],
        [*LLM_POOLS, llmisvc(template=vllm("h100", 4))],
        "LLMInferenceService/llama",
        id="GI031",
    ),
    pytest.param(
        "GI032",
        [*LLM_POOLS, multi_node(gpus=4)],
        [*LLM_POOLS, multi_node()],
        "LLMInferenceService/llama",
        id="GI032",
    ),
]


# The DRA findings: the bad / good graphs of tests/check/test_dra.py.
from test_dra import DRA_PAIRS  # noqa: E402

_DRA_RESOURCE = {
    "GI053": "InferenceService/llm",
    "GI054": "NodePatch/n1",
    "GI058": "NodePool/l4",
}
# GI057 names the Deployment too (the default).
PAIRS += [
    pytest.param(*p.values, _DRA_RESOURCE.get(p.values[0], "Deployment/a"), id=p.values[0])
    for p in DRA_PAIRS
]


# Every other code the placement policies report: the first pair of tests/check that has it, on
# the resource its finding names (so a new rule needs no pair here).
from pairs import check_pairs  # noqa: E402


def _kind_name(code: str, bad: list[dict]) -> str:
    found = next(f for f in gp.check(bad).findings if f.code == code)
    return "/".join(found.resource.split("/")[:2])


_HAND = {p.values[0] for p in PAIRS}
_OWN = {c for c, (severity, _) in CODES.items() if severity != "info"} - set(gp.QUOTA_CODES)
for _code, _bad, _good, _kwargs in check_pairs():
    if _code in _OWN - _HAND and not _kwargs:
        PAIRS.append(pytest.param(_code, _bad, _good, _kind_name(_code, _bad), id=_code))
        _HAND.add(_code)


def test_each_placement_policy_names_the_registrys_codes_of_its_severity():
    """The policies' code lists are the registry's (they had drifted when kept by hand)."""
    from components.check.registry import BY_CODE

    for policy, severity in (
        (gp.gpu_placement_errors, "error"),
        (gp.gpu_placement_warnings, "warning"),
    ):
        named = set(re.findall(r"GI\d{3}", policy.description))
        assert named == {
            c for c, r in BY_CODE.items() if severity in r.severities and c not in gp.QUOTA_CODES
        }
    assert gp.QUOTA_CODES == ("GI045", "GI046")


def test_every_reportable_code_has_a_pair():
    reportable = {c for c, (severity, _) in CODES.items() if severity != "info"}
    assert {p.values[0] for p in [*PAIRS, *QUOTA_PAIRS]} == reportable


# The cloud quota codes are gpu-cloud-quota's: (code, violating graph, fixed twin, Kind/name).
QUOTA_PAIRS = [
    pytest.param(
        "GI045",
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=24)],
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=32)],
        "NodePool/h100",
        id="GI045",
    ),
    pytest.param(
        "GI046",
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=16)],
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=32)],
        "NodePool/h100",
        id="GI046",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good", "rid"), QUOTA_PAIRS)
def test_cloud_quota_policy_reports_the_quota_codes_and_the_placement_policies_do_not(
    code, bad, good, rid
):
    found = validate_stack(gp.gpu_cloud_quota, bad)
    assert [m.split(":")[0] for m, _ in found] == [code]
    assert found[0][0].startswith(f"{code}: {rid}: ") and "(fix: raise the quota to" in found[0][0]
    assert found[0][1] == urn_of(GKE, rid.split("/")[1])
    assert not any(m.startswith(code) for m, _ in violations(bad)["error"])
    assert validate_stack(gp.gpu_cloud_quota, good) == []


def test_cloud_quota_policy_takes_the_quotas_of_its_config():
    """A stack of any program (no CloudQuota in it): the quota comes from the policy config."""
    config = {
        "quotas": [{"provider": "gke", "region": "us-central1", "limits": {"NVIDIA_H100_GPUS": 24}}]
    }
    assert validate_stack(gp.gpu_cloud_quota, llm_like(3, 4)) == []
    found = validate_stack(gp.gpu_cloud_quota, llm_like(3, 4), config)
    assert [m.split(":")[0] for m, _ in found] == ["GI045"]
    config["quotas"][0]["limits"] = {"NVIDIA_H100_GPUS": 32}
    assert validate_stack(gp.gpu_cloud_quota, llm_like(3, 4), config) == []


def test_cloud_quota_policy_refuses_a_quota_name_it_does_not_know():
    config = {"quotas": [{"provider": "gke", "region": "us-central1", "limits": {"H100": 8}}]}
    with pytest.raises(
        ValueError, match=r"policy config quotas\[0\]\.limits\.H100: 'H100' is not a quota"
    ):
        validate_stack(gp.gpu_cloud_quota, llm_like(3, 4), config)


@pytest.mark.parametrize(("code", "bad", "good", "rid"), PAIRS)
def test_placement_finding_reported_and_silenced_by_its_fix(code, bad, good, rid):
    severity = CODES[code][0]
    other = "warning" if severity == "error" else "error"
    kind, name = rid.split("/")
    type_of = {e["name"]: e["type"] for e in bad if e["type"].endswith(":" + kind)}

    found = violations(bad)
    mine = [(m, u) for m, u in found[severity] if m.startswith(f"{code}: ")]
    assert mine, found
    message, urn = mine[0]
    assert urn == urn_of(type_of[name], name)
    assert f"{code}: {rid}" in message and "(fix: " in message
    assert not any(m.startswith(f"{code}: ") for m, _ in found[other])

    fixed = violations(good)
    assert not any(m.startswith(f"{code}: ") for m, _ in fixed[severity]), fixed
    assert fixed["error"] == []


def test_info_findings_are_not_violations():
    found = violations([gke_pool(), isvc()])  # GI006: no Knative config in the graph
    assert found == {"error": [], "warning": []}
    assert "GI006" in {f.code for f in gp.check([gke_pool(), isvc()]).findings}


def test_enforcement_levels_and_config_schema():
    assert gp.gpu_placement_errors.enforcement_level is EnforcementLevel.MANDATORY
    assert gp.gpu_placement_warnings.enforcement_level is EnforcementLevel.ADVISORY
    assert gp.isvc_gpu_without_toleration.enforcement_level is EnforcementLevel.ADVISORY
    for policy in (
        gp.gpu_pool_untainted,
        gp.gke_gpu_pool_declares_gpu_taint,
        gp.knative_unknown_feature,
    ):
        assert policy.enforcement_level is EnforcementLevel.MANDATORY
    schema = gp.gpu_placement_errors.config_schema
    assert schema is not None
    props = schema.properties
    assert set(props) == {"extendedResourceToleration", "ignoreCodes", "notJudged"}
    assert [p.name for p in gp.POLICIES] == [
        "gpu-placement-errors",
        "gpu-placement-warnings",
        "gpu-pool-untainted",
        "gke-gpu-pool-declares-gpu-taint",
        "isvc-gpu-without-toleration",
        "knative-unknown-feature",
        "gpu-cloud-quota",
    ]


# Existing nodes only: ExtendedResourceToleration is inferred off, so a GPU predictor without a
# toleration for the nodes' nvidia.com/gpu taint lands nowhere (GI001) unless the config says on.
ONPREM = [
    node(
        labels={POOL_LABEL: "onprem", "nvidia.com/gpu.present": "true"},
        taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        annotations={"gpu-inference.dev/gpus-per-node": "1"},
    ),
    knative(),
    isvc(predictor=component(selector={POOL_LABEL: "onprem"}), wired="onprem"),
]


@pytest.mark.parametrize(
    ("config", "codes"),
    [
        (None, {"GI001"}),
        ({"extendedResourceToleration": False}, {"GI001"}),
        ({"extendedResourceToleration": True}, set()),
        ({"ignoreCodes": ["gi001"]}, set()),
        # What no rule could judge, as errors for a gate: the nodes declare no allocatable
        # (GI022), the model no size (GI059).
        ({"extendedResourceToleration": True, "notJudged": "error"}, {"GI022", "GI059"}),
        ({"extendedResourceToleration": True, "notJudged": "info"}, set()),
    ],
)
def test_config_extended_resource_toleration_and_ignore_codes(config, codes):
    found = validate_stack(gp.gpu_placement_errors, ONPREM, config)
    assert {m.split(":")[0] for m, _ in found} == codes


def test_bad_config_value_names_the_setting():
    with pytest.raises(ValueError, match="extendedResourceToleration is 'yes'"):
        validate_stack(gp.gpu_placement_errors, ONPREM, {"extendedResourceToleration": "yes"})
    with pytest.raises(ValueError, match="notJudged is 'warn': give info, error"):
        validate_stack(gp.gpu_placement_errors, ONPREM, {"notJudged": "warn"})


def test_unknown_values_during_preview_are_left_out_and_named():
    pool = gke_pool()
    pool["inputs"]["name"] = UNKNOWN_STRING_VALUE
    bad = isvc(predictor=on_pool(gpus=2))
    bad["inputs"]["spec"]["predictor"]["model"]["storageUri"] = UNKNOWN_STRING_VALUE
    found = validate_stack(gp.gpu_placement_errors, [pool, knative(), bad])
    (message, urn), *_ = [v for v in found if v[0].startswith("GI004")]
    assert urn == urn_of(ISVC, "llm")
    assert "not checked: spec.predictor.model.storageUri" in message


def test_finding_urn_is_the_custom_resource_not_the_component_of_the_same_name():
    wrapper = {"type": "gpu-inference:index:InferenceService", "name": "llm", "inputs": {}}
    (found,) = validate_stack(
        gp.gpu_placement_errors, [wrapper, *BASE, isvc(predictor=on_pool(gpus=2))]
    )
    assert found[0].startswith("GI004: InferenceService/llm/predictor")
    assert found[1] == urn_of(ISVC, "llm")
    # Two checked resources with one Kind/name: the violation is the stack's, not a guess.
    twin = isvc() | {"type": "kubernetes:serving.kserve.io/v1alpha1:InferenceService"}
    _, urns, _ = gp.stack_graph(stack_args([*BASE, isvc(), twin]).resources)
    assert urns["InferenceService/llm"] is None
    assert urns["NodePool/l4"] == urn_of(GKE, "l4")


def test_plain_unwraps_proxies_and_drops_unknowns():
    missing: list[str] = []
    value = gp.plain(
        unknown_checking_proxy({"a": [1, {"b": UNKNOWN_STRING_VALUE}], "c": UNKNOWN_ARRAY_VALUE}),
        "",
        missing,
    )
    assert value == {"a": [1, {}]}
    assert type(value["a"]) is list
    assert missing == ["a[1].b", "c"]


# ---------------------------------------------------------------------------------------------
# Resource policies: violating resource reported, fixed twin silent
# ---------------------------------------------------------------------------------------------


def props(entry: dict) -> tuple[str, dict]:
    return entry["type"], entry["inputs"]


GPU_NODE_LABELS = {"nvidia.com/gpu.present": "true"}
NODE_TAINT = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]

RESOURCE_PAIRS = [
    pytest.param(
        gp.gpu_pool_untainted, gke_pool(taints=[]), gke_pool(), "nvidia-l4 x1", id="untainted-gke"
    ),
    pytest.param(
        gp.gpu_pool_untainted,
        gke_pool(
            taints=[{**DEDICATED, "effect": "PREFER_NO_SCHEDULE"}],
            accelerator=None,
            machine="a2-ultragpu-1g",
        ),
        gke_pool(accelerator=None, machine="a2-ultragpu-1g"),
        "a2-ultragpu-1g",
        id="untainted-gke-gpu-machine",
    ),
    pytest.param(
        gp.gpu_pool_untainted, eks_group(taints=[]), eks_group(), "g5.xlarge", id="untainted-eks"
    ),
    pytest.param(
        gp.gpu_pool_untainted,
        eks_group(taints=[], instanceTypes=["x9.unknown"], amiType="AL2_x86_64_GPU"),
        eks_group(taints=[GPU_TAINT_TRUE], instanceTypes=["x9.unknown"], amiType="AL2_x86_64_GPU"),
        "GPU AMI AL2_x86_64_GPU",
        id="untainted-eks-gpu-ami",
    ),
    pytest.param(
        gp.gpu_pool_untainted,
        node(labels=GPU_NODE_LABELS, taints=[]),
        node(labels=GPU_NODE_LABELS, taints=NODE_TAINT),
        "nvidia.com/gpu.present=true",
        id="untainted-node",
    ),
    pytest.param(
        gp.gpu_pool_untainted,
        node(labels={}, taints=[], annotations={"gpu-inference.dev/gpus-per-node": "4"}),
        node(
            labels={},
            taints=[{"key": "dedicated", "value": "x", "effect": "NoExecute"}],
            annotations={"gpu-inference.dev/gpus-per-node": "4"},
        ),
        "gpu-inference.dev/gpus-per-node=4",
        id="untainted-node-count",
    ),
    pytest.param(
        gp.gke_gpu_pool_declares_gpu_taint,
        gke_pool(taints=[DEDICATED]),
        gke_pool(taints=[DEDICATED, GKE_GPU_TAINT]),
        "nvidia.com/gpu=present:NoSchedule",
        id="gke-gpu-taint",
    ),
    pytest.param(
        gp.gke_gpu_pool_declares_gpu_taint,
        gke_pool(taints=[GPU_TAINT_TRUE], accelerator=None, machine="a3-highgpu-8g"),
        gke_pool(taints=[GKE_GPU_TAINT], accelerator=None, machine="a3-highgpu-8g"),
        "terraform-provider-google #7928",
        id="gke-gpu-taint-gpu-machine",
    ),
    pytest.param(
        gp.isvc_gpu_without_toleration,
        isvc(predictor=component(selector={POOL_LABEL: "l4"})),
        isvc(predictor=component(selector={POOL_LABEL: "l4"}, tolerations=[TOL_GPU])),
        "llm: predictor requests nvidia.com/gpu",
        id="isvc-predictor",
    ),
    pytest.param(
        gp.isvc_gpu_without_toleration,
        isvc(
            transformer={
                "containers": [{"name": "t", "resources": {"requests": {"nvidia.com/gpu": "1"}}}],
                "tolerations": [TOL_DEDICATED],
            }
        ),
        isvc(
            transformer={
                "containers": [{"name": "t", "resources": {"requests": {"nvidia.com/gpu": "1"}}}],
                "tolerations": [{"operator": "Exists"}],
            }
        ),
        "spec.transformer.tolerations",
        id="isvc-transformer-containers",
    ),
    pytest.param(
        gp.knative_unknown_feature,
        knative(**{"kubernetes.podspec-toleration": "enabled"}),
        knative(**{"kubernetes.podspec-tolerations": "enabled"}),
        "'kubernetes.podspec-toleration' is not a Knative Serving feature",
        id="knative-cr-name",
    ),
    pytest.param(
        gp.knative_unknown_feature,
        knative(**{"kubernetes.podspec-affinity": "on"}),
        knative(**{"secure-pod-defaults": "AllowRootBounded", "multi-container": "Enabled"}),
        "feature 'kubernetes.podspec-affinity' is 'on', not one of enabled, disabled, allowed",
        id="knative-cr-value",
    ),
    pytest.param(
        gp.knative_unknown_feature,
        config_map(**{"kubernetes.podspec-nodeselectors": "enabled"}),
        config_map(**{"kubernetes.podspec-nodeselector": "enabled", "_example": "docs"}),
        "ConfigMap knative-serving/config-features data",
        id="knative-configmap",
    ),
]


@pytest.mark.parametrize(("policy", "bad", "good", "piece"), RESOURCE_PAIRS)
def test_resource_policy_reported_and_silenced_by_its_fix(policy, bad, good, piece):
    found = validate_resource(policy, *props(bad))
    assert len(found) == 1 and piece in found[0], found
    assert "Fix: " in found[0]
    assert validate_resource(policy, *props(good)) == []


def test_every_resource_policy_has_a_pair():
    names = {policy.name for policy, *_ in (p.values for p in RESOURCE_PAIRS)}  # type: ignore[union-attr]
    assert names == {
        p.name for p in gp.POLICIES if p.name.startswith(("gpu-pool", "gke-", "isvc-", "knative-"))
    }
    assert len(names) == 4


@pytest.mark.parametrize(
    ("typ", "inputs"),
    [
        props(gke_pool(taints=[], accelerator=None, machine="e2-standard-8")),  # CPU pool
        props(eks_group(taints=[], instanceTypes=["m6i.xlarge"], amiType="AL2023_x86_64_STANDARD")),
        props(node(labels={}, taints=[], annotations={"gpu-inference.dev/gpus-per-node": "0"})),
        props(isvc(predictor=component(gpus=0))),  # no GPU request
        props(config_map("config-network", **{"ingress-class": "kourier"})),
        ("kubernetes:core/v1:Namespace", {"metadata": {"name": "models"}}),
    ],
)
def test_resource_policies_ignore_what_they_are_not_about(typ, inputs):
    for policy in gp.POLICIES[2:-1]:
        assert validate_resource(policy, typ, inputs) == [], policy.name


def test_untainted_gke_message_explains_when_gke_taints_itself():
    (message,) = gp.untainted_gpu_pool(*props(gke_pool(taints=[])))
    assert "only when the cluster also has a non-GPU node pool" in message


def test_unknown_prop_during_preview_is_not_a_verdict():
    """An unknown taint list raises pulumi_policy's UnknownValueError: the engine then reports
    "can't run policy during preview" rather than a violation."""
    from pulumi_policy.proxy import UnknownValueError

    pool = gke_pool()
    pool["inputs"]["nodeConfig"]["taints"] = UNKNOWN_ARRAY_VALUE
    with pytest.raises(UnknownValueError):
        validate_resource(gp.gpu_pool_untainted, *props(pool))
    bad = isvc(predictor=component(selector={POOL_LABEL: "l4"}))
    bad["inputs"]["spec"]["predictor"]["serviceAccountName"] = UNKNOWN_STRING_VALUE
    assert len(validate_resource(gp.isvc_gpu_without_toleration, *props(bad))) == 1


# ---------------------------------------------------------------------------------------------
# Inputs recorded from our components under mocks
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded():
    import pulumi
    import pulumi_kubernetes as k8s

    from components.model.scheduling import Taint
    from components.pools.eks import EksGpuNodeGroup, EksGpuNodeGroupArgs
    from components.pools.existing import ExistingGpuNodes, ExistingGpuNodesArgs
    from components.pools.gke import GkeGpuNodePool, GkeGpuNodePoolArgs
    from components.preview.mockrun import run_program
    from components.serving.inference_service import (
        InferenceService,
        InferenceServiceArgs,
        PredictorArgs,
    )

    def program() -> None:
        l4 = GkeGpuNodePool(
            "l4",
            GkeGpuNodePoolArgs(
                cluster="inference",
                machine_type="g2-standard-8",
                accelerator="nvidia-l4",
                taints=[Taint("dedicated", "inference", "NoSchedule")],
                max_nodes=2,
            ),
        )
        GkeGpuNodePool(
            "a100",
            GkeGpuNodePoolArgs(
                cluster="inference",
                machine_type="a2-ultragpu-1g",
                accelerator="nvidia-a100-80gb",
                max_nodes=1,
            ),
        )
        GkeGpuNodePool(
            "pre",
            GkeGpuNodePoolArgs(cluster="inference", machine_type="e2-standard-8", max_nodes=2),
        )
        EksGpuNodeGroup(
            "t4",
            EksGpuNodeGroupArgs(
                cluster_name="c", subnet_ids=["s-1"], instance_types=["g4dn.xlarge"]
            ),
        )
        ExistingGpuNodes("onprem", ExistingGpuNodesArgs(nodes=["gpu-1", "gpu-2"], gpus_per_node=2))
        flags = k8s.core.v1.ConfigMapPatch(
            "config-features",
            metadata={"name": "config-features", "namespace": "knative-serving"},
            data=FLAGS_ON,
        )
        InferenceService(
            "llm",
            InferenceServiceArgs(
                namespace="models",
                predictor=PredictorArgs(
                    model_format="huggingface",
                    storage_uri="hf://meta-llama/Llama-3.1-8B",
                    gpus=1,
                    min_replicas=0,
                    placement=l4.placement,
                ),
                knative_features=FLAGS_ON,
            ),
            opts=pulumi.ResourceOptions(depends_on=[flags]),
        )

    return run_program(program)


def test_recorded_components_pass_every_resource_policy(recorded):
    checked = {GKE: 0, EKS: 0, NODE: 0, ISVC: 0, CM_PATCH: 0}
    for r in recorded.resources:
        for policy in gp.POLICIES[2:-1]:
            assert validate_resource(policy, r.type, r.inputs, r.name) == [], (policy.name, r.name)
        if r.type in checked:
            checked[r.type] += 1
    assert checked == {GKE: 3, EKS: 1, NODE: 2, ISVC: 1, CM_PATCH: 1}


def test_recorded_stack_passes_the_error_policy(recorded):
    assert validate_stack(gp.gpu_placement_errors, recorded.as_graph()) == []


def test_recorded_gke_pool_without_taints_violates_both_pool_policies(recorded):
    pool = recorded.one(GKE, "l4")
    stripped = {**pool.inputs, "nodeConfig": {**pool.inputs["nodeConfig"], "taints": []}}
    assert len(validate_resource(gp.gpu_pool_untainted, GKE, stripped)) == 1
    assert len(validate_resource(gp.gke_gpu_pool_declares_gpu_taint, GKE, stripped)) == 1


def test_recorded_predictor_without_tolerations_violates_isvc_policy(recorded):
    cr = recorded.one(ISVC, "llm")
    predictor = {k: v for k, v in cr.inputs["spec"]["predictor"].items() if k != "tolerations"}
    stripped = {**cr.inputs, "spec": {**cr.inputs["spec"], "predictor": predictor}}
    (message,) = validate_resource(gp.isvc_gpu_without_toleration, ISVC, stripped)
    assert "predictor requests nvidia.com/gpu" in message


def test_plain_gives_integral_numbers_back_as_integers():
    """Found by the e2e test through the real engine: numbers reach policies as doubles, so the
    clean on-prem stack's `nvidia.com/gpu: 1` arrived as 1.0 and was refused as GI013."""
    assert gp.plain({"limits": {"nvidia.com/gpu": 1.0, "cpu": 0.5}, "n": [2.0, True]}) == {
        "limits": {"nvidia.com/gpu": 1, "cpu": 0.5},
        "n": [2, True],
    }
    assert type(gp.plain(1.0)) is int


def test_a_huge_count_in_a_programs_resources_is_a_violation_not_a_hang():
    """The policy pack runs the same bounded check inside `pulumi preview`: a Deployment at
    2**31 replicas (past the int32 the API server takes) is reported at once, not laid out."""
    import time

    graph = [cnodepool("h100", 1, 2), cdeployment("a", "h100", 8, replicas=2**31)]
    start = time.process_time()
    found = violations(graph)
    assert time.process_time() - start < 5
    assert sorted(m.split()[0] for m, _ in found["error"]) == ["GI040:", "GI065:"]
    assert (
        "GI065: Deployment/a: spec.replicas is 2147483648, outside what its API takes "
        "(0..2147483647): the API server refuses the object, or its controller cannot read it, so "
        "none of its pods run (fix: set spec.replicas to at most 2147483647)",
        urn_of("kubernetes:apps/v1:Deployment", "a"),
    ) in found["error"]
