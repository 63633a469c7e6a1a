"""The failures users hit most (GI014-GI020): each triggered by a graph written by hand
with no gpu-inference labels or wiring, and silenced by its fixed twin; then on our own stacks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from scale_graphs import ASG_TAGS, NODEADM_USER_DATA, asg, launch_template
from scale_graphs import deployment as scale_deployment
from scale_graphs import pod as scale_pod
from test_placement_check import gpu_container, only, seldon, workload

from components.check import CODES, check, render_markdown
from components.check.failures import parse_duration
from components.model.nodes.catalog import node_startup_seconds
from tests.check.headroom import without_headroom

NEW_CODES = {"GI014", "GI015", "GI016", "GI017", "GI018", "GI019", "GI020", "GI034"}
A100_TAINT = {"key": "seldon-gpu-srv", "value": "true", "effect": "NO_SCHEDULE"}
TOL_A100 = {"key": "seldon-gpu-srv", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def gke(name: str, machine: str, *, lo: int = 0, hi: int = 3, labels=None, taints=None) -> dict:
    """A GKE node pool as a plain Pulumi program registers it: no gpu-inference labels."""
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "name": name,
            "autoscaling": {"minNodeCount": lo, "maxNodeCount": hi},
            "nodeConfig": {
                "machineType": machine,
                "labels": labels or {},
                "taints": taints or [],
            },
        },
    }


def pod(selector: dict | None = None, *, gpus: int = 1, tolerations=None, affinity=None) -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c"} | (gpu_container(gpus) if gpus else {})]}
    if selector:
        spec["nodeSelector"] = selector
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = affinity
    return spec


def isvc(name: str, predictor: dict, annotations: dict | None = None) -> dict:
    return {
        "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "models", "annotations": annotations or {}},
            "spec": {"predictor": predictor},
        },
    }


def knative_serving(**config: dict) -> dict:
    features = {
        "kubernetes.podspec-nodeselector": "enabled",
        "kubernetes.podspec-tolerations": "enabled",
        "kubernetes.podspec-affinity": "enabled",
    }
    return {
        "type": "kubernetes:operator.knative.dev/v1beta1:KnativeServing",
        "name": "knative-serving",
        "inputs": {
            "metadata": {"name": "knative-serving", "namespace": "knative-serving"},
            "spec": {"config": {"features": features, **config}},
        },
    }


def config_map_patch(name: str, data: dict) -> dict:
    return {
        "type": "kubernetes:core/v1:ConfigMapPatch",
        "name": name,
        "inputs": {"metadata": {"name": name, "namespace": "knative-serving"}, "data": data},
    }


def eks(name: str, *, labels=None, taints=None, lo: int = 0) -> dict:
    return {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": name,
        "inputs": {
            "nodeGroupName": name,
            "instanceTypes": ["g5.xlarge"],
            "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
            "labels": labels or {},
            "taints": taints or [],
            "scalingConfig": {"minSize": lo, "maxSize": 2, "desiredSize": lo},
        },
    }


def tag(group: str, key: str, value: str) -> dict:
    return {
        "type": "aws:autoscaling/tag:Tag",
        "name": f"{group}-{key}",
        "inputs": {
            "autoscalingGroupName": f"eks-{group}-8ec5d0a4-1c2b-4f3e-9a6d-2b1f0c7e5d11",
            "tag": {
                "key": f"k8s.io/cluster-autoscaler/node-template/{key}",
                "value": value,
                "propagateAtLaunch": False,
            },
        },
    }


L4 = gke("l4", "g2-standard-8", lo=1)  # 1 x L4 24 GB; a node is always up
ON_L4 = {"cloud.google.com/gke-nodepool": "l4"}
A100_POOL = gke(
    "infer-srv", "a2-ultragpu-2g", labels={"pool": "infer-srv"}, taints=[A100_TAINT]
)  # seed 004's node: 2 x A100 80 GB, can be at zero
SEED_004_GFD = {"pool": "infer-srv", "nvidia.com/gpu.product": "A100-SXM4-80GB"}
SEED_004_CREATION = {"pool": "infer-srv", "cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}
NFD_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {
                            "key": "cloud.google.com/gke-accelerator-count",
                            "operator": "Gt",
                            "values": ["1"],
                        },
                        {
                            "key": "feature.node.kubernetes.io/pci-10.present",
                            "operator": "In",
                            "values": ["true"],
                        },
                    ]
                }
            ]
        }
    }
}
G5_GROUP = eks("g5", labels={"team": "ml"}, taints=[A100_TAINT])
G5_TAGS = [
    tag("g5", "label/team", "ml"),
    tag("g5", "taint/seldon-gpu-srv", "true:NoSchedule"),
    tag("g5", "resources/nvidia.com/gpu", "1"),
]
ML_ON_G5 = workload("ml", pod({"team": "ml"}, tolerations=[TOL_A100]), replicas=0)


def server_config(memory: str) -> dict:
    return seldon(
        "ServerConfig",
        "mlserver-llm",
        {
            "podSpec": {
                "containers": [
                    {
                        "name": "agent",
                        "env": [{"name": "SELDON_SERVER_CAPABILITIES", "value": "x"}],
                    },
                    {"name": "mlserver", "resources": {"requests": {"memory": memory}}},
                ]
            }
        },
    )


def server(replicas: int = 1) -> dict:
    return seldon(
        "Server",
        "llm-server",
        {"serverConfig": "mlserver-llm", "replicas": replicas, "extraCapabilities": ["llm"]},
    )


def model(**spec: Any) -> dict:
    return seldon(
        "Model", "llama3", {"storageUri": "gs://m/llama3", "requirements": ["llm"]} | spec
    )


def serverless(annotations: dict | None = None, *, gpus: int = 1) -> dict:
    return isvc(
        "llm",
        {"minReplicas": 0, "nodeSelector": ON_L4}
        | {"model": {"modelFormat": {"name": "vllm"}} | (gpu_container(gpus) if gpus else {})},
        annotations,
    )


COLD_L4 = gke("l4", "g2-standard-8", lo=0)


def sized(entry: dict, annotations: dict) -> dict:
    entry = copy.deepcopy(entry)
    entry["inputs"]["metadata"]["annotations"] = annotations
    return entry


def fixed_gke(name: str, nodes: int) -> dict:
    """A GKE node pool without autoscaling: `nodeCount` nodes, always."""
    pool = gke(name, "g2-standard-8", labels={"pool": name})
    del pool["inputs"]["autoscaling"]
    pool["inputs"]["nodeCount"] = nodes
    return pool


L4_POD = pod({"pool": "l4"}, tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])

PAIRS = [
    pytest.param(
        "GI014",
        [A100_POOL, workload("srv", pod(SEED_004_GFD, tolerations=[TOL_A100]), replicas=0)],
        [A100_POOL, workload("srv", pod(SEED_004_CREATION, tolerations=[TOL_A100]), replicas=0)],
        id="GI014-gfd-label-on-cold-pool",
    ),
    pytest.param(
        "GI014",
        [
            A100_POOL,
            workload("srv", pod(affinity=NFD_AFFINITY, tolerations=[TOL_A100]), replicas=0),
        ],
        [
            gke(
                "infer-srv",
                "a2-ultragpu-2g",
                labels={"pool": "infer-srv", "feature.node.kubernetes.io/pci-10.present": "true"},
                taints=[A100_TAINT],
            ),
            workload("srv", pod(affinity=NFD_AFFINITY, tolerations=[TOL_A100]), replicas=0),
        ],
        id="GI014-nfd-label-declared-at-creation",
    ),
    pytest.param(
        "GI015",
        [
            L4,
            knative_serving(),
            isvc("a", {"maxReplicas": 3, "nodeSelector": ON_L4, "model": gpu_container(1)}),
            workload("b", pod(ON_L4), replicas=1),
        ],
        [
            L4,
            knative_serving(),
            isvc("a", {"maxReplicas": 2, "nodeSelector": ON_L4, "model": gpu_container(1)}),
            workload("b", pod(ON_L4), replicas=1),
        ],
        id="GI015-max-scale-capacity",
    ),
    pytest.param(
        "GI016",
        [
            launch_template(user_data=NODEADM_USER_DATA),
            asg(),
            scale_deployment("srv", scale_pod("g5-asg")),
        ],
        [
            launch_template(user_data=NODEADM_USER_DATA),
            asg(tags=ASG_TAGS),
            scale_deployment("srv", scale_pod("g5-asg")),
        ],
        id="GI016-self-managed-asg-tags",
    ),
    pytest.param(
        "GI017",
        [knative_serving(), config_map_patch("config-features", {"multi-container": "enabled"})],
        [knative_serving(features={"multi-container": "enabled"})],
        id="GI017-config-features-patch-under-operator",
    ),
    pytest.param(
        "GI018",
        [server_config("32Gi"), server(), model(memory="40Gi")],
        [server_config("48Gi"), server(), model(memory="40Gi")],
        id="GI018-model-memory",
    ),
    pytest.param(
        "GI018",
        [server_config("48Gi"), server(1), model(memory="40Gi", replicas=2)],
        [server_config("48Gi"), server(2), model(memory="40Gi", replicas=2)],
        id="GI018-model-replicas",
    ),
    pytest.param(
        "GI019",
        [L4, sized(workload("llm", pod(ON_L4)), {"gpu-inference.dev/model-size-gb": "40"})],
        [
            L4,
            sized(
                workload("llm", pod(ON_L4)),
                {
                    "gpu-inference.dev/model-parameters": "8B",
                    "gpu-inference.dev/model-dtype": "bf16",
                },
            ),
        ],
        id="GI019-model-too-large",
    ),
    pytest.param(
        "GI020",
        [COLD_L4, knative_serving(), serverless()],
        [COLD_L4, knative_serving(), serverless({"serving.knative.dev/progress-deadline": "15m"})],
        id="GI020-no-progress-deadline",
    ),
    pytest.param(
        "GI034",
        [fixed_gke("l4", 0), workload("w", L4_POD)],
        [fixed_gke("l4", 1), workload("w", L4_POD)],
        id="GI034-gke-pool-fixed-at-zero-nodes",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good"), PAIRS)
def test_finding_triggered_and_silenced_by_its_fix(code: str, bad: list, good: list):
    bad_report, good_report = check(bad), check(good)
    found = [f for f in without_headroom(bad_report.findings) if f.code == code]
    assert found, without_headroom(bad_report.findings)
    assert code not in {f.code for f in without_headroom(good_report.findings)}, without_headroom(
        good_report.findings
    )
    assert good_report.errors == [], good_report.errors
    assert found[0].severity == CODES[code][0] and found[0].message and found[0].fix


def test_this_modules_pairs_are_the_field_failures():
    assert {p.values[0] for p in PAIRS} == NEW_CODES


# ---------------------------------------------------------------------------------------------
# Details: messages with their numbers, and the cases each rule leaves alone
# ---------------------------------------------------------------------------------------------


def test_gi014_replaces_no_pool_and_names_the_creation_label():
    report = check([A100_POOL, workload("srv", pod(SEED_004_GFD, tolerations=[TOL_A100]))])
    assert [f.code for f in without_headroom(report.findings)] == ["GI014"]
    assert without_headroom(report.findings)[0].fix == (
        "select cloud.google.com/gke-accelerator=nvidia-a100-80gb instead (on pool infer-srv's "
        "nodes from creation)"
    )
    assert only(report, "Deployment/srv").pools == ()


def test_gi014_not_when_a_node_is_always_up():
    """min 1: a node exists, discovery labels it, the pod lands; no GI014 and no GI001."""
    up = gke("infer-srv", "a2-ultragpu-2g", lo=1, labels={"pool": "infer-srv"}, taints=[A100_TAINT])
    report = check([up, workload("srv", pod(SEED_004_GFD, tolerations=[TOL_A100]))])
    assert without_headroom(report.findings) == []


def test_gi014_not_when_the_pod_could_not_land_even_with_the_labels():
    """Untolerated taint: GI001 says so (the boot-time label is not what keeps it out)."""
    report = check([A100_POOL, workload("srv", pod(SEED_004_GFD))])
    assert [f.code for f in without_headroom(report.findings)] == ["GI001"]


def test_gi015_counts_every_workload_confined_to_the_pools_with_numbers():
    """At max scale (the predictor at 3, the Deployment at its 1) four 1-GPU pods on three
    1-GPU nodes: one stays Pending. Their fixed and min replicas (2) fit: a warning."""
    report = check(
        [
            L4,
            isvc("a", {"maxReplicas": 3, "nodeSelector": ON_L4} | {"model": gpu_container(1)}),
            workload("b", pod(ON_L4), replicas=1),
            knative_serving(),
        ]
    )
    (finding,) = [f for f in without_headroom(report.findings) if f.code == "GI015"]
    assert finding.resource == "NodePool/l4"
    assert finding.message == (
        "at max scale (InferenceService/a/predictor: 3 pods) the workloads on pool(s) l4 do not "
        "fit their max (l4: 3 x g2-standard-8, 1 GPU(s) each): they ask 4 nvidia.com/gpu, the "
        "nodes hold 3; at most 3 of 4 pods together, leaving Pending: Deployment/b x1, 1 GPU(s)"
    )
    assert finding.fix == "raise maxNodes of l4 to 4 or lower maxReplicas"
    assert "GI040" not in {f.code for f in without_headroom(report.findings)}


def test_fixed_replicas_that_never_fit_are_an_error_not_gi015():
    """Replicas a workload always keeps (two Deployments of 2) on three 1-GPU nodes: GI040."""
    report = check(
        [L4, workload("a", pod(ON_L4), replicas=2), workload("b", pod(ON_L4), replicas=2)]
    )
    assert [f.code for f in without_headroom(report.findings) if f.severity != "info"] == ["GI040"]


def test_gi015_spot_and_on_demand_pools_share_the_budget():
    spot = gke("spot", "g2-standard-8", lo=1, hi=1, labels={"tier": "gpu"})
    ondemand = gke("ondemand", "g2-standard-8", lo=1, hi=1, labels={"tier": "gpu"})

    def llm(most: int) -> dict:
        return isvc(
            "llm",
            {"maxReplicas": most, "nodeSelector": {"tier": "gpu"}} | {"model": gpu_container(1)},
        )

    assert "GI015" not in {
        f.code
        for f in without_headroom(check([spot, ondemand, knative_serving(), llm(2)]).findings)
    }
    report = check([spot, ondemand, knative_serving(), llm(3)])
    (finding,) = [f for f in without_headroom(report.findings) if f.code == "GI015"]
    assert finding.fix == "raise maxNodes of ondemand to 2 or lower maxReplicas"


def test_gi015_leaves_serverless_without_max_replicas_alone():
    """Knative without maxReplicas has no bound to compare."""
    report = check(
        [L4, knative_serving(), isvc("a", {"nodeSelector": ON_L4, "model": gpu_container(1)})]
    )
    assert "GI015" not in {f.code for f in without_headroom(report.findings)}


def test_gi016_names_every_missing_or_wrong_tag():
    """On an EKS managed node group a warning: cluster-autoscaler reads its labels and taints
    from EKS DescribeNodegroup when it may."""
    wrong = [tag("g5", "label/team", "ai"), G5_TAGS[2]]
    report = check([G5_GROUP, ML_ON_G5, *wrong])
    assert report.errors == []
    (finding,) = report.warnings
    assert finding.code == "GI016"
    assert finding.message == (
        "node group g5 can be at 0 nodes and its Auto Scaling group lacks the cluster-autoscaler "
        "node-template tag(s) k8s.io/cluster-autoscaler/node-template/label/team=ml, "
        "k8s.io/cluster-autoscaler/node-template/taint/seldon-gpu-srv=true:NoSchedule: "
        "cluster-autoscaler (1.24 or later) reads an EKS managed node group's labels and taints "
        "from EKS DescribeNodegroup and its GPUs from the instance type, but only with the IAM "
        "permission eks:DescribeNodegroup; without it, pods needing them never trigger a scale-up"
    )


def test_gi016_not_for_a_group_that_never_reaches_zero():
    report = check([eks("g5", labels={"team": "ml"}, taints=[A100_TAINT], lo=1), ML_ON_G5])
    assert "GI016" not in {f.code for f in without_headroom(report.findings)}


def test_gi016_tags_of_another_group_do_not_count():
    other = eks("g6", labels={"team": "ml"}, taints=[A100_TAINT])
    report = check([G5_GROUP, other, ML_ON_G5, *G5_TAGS])
    assert [(f.code, f.resource) for f in report.warnings if f.code == "GI016"] == [
        ("GI016", "NodeGroup/g6")
    ]


def test_gi017_points_at_the_section_of_the_cr():
    report = check([knative_serving(), config_map_patch("config-autoscaler", {"a": "b"})])
    assert [(f.code, f.fix) for f in without_headroom(report.findings)] == [
        (
            "GI017",
            "set these keys in spec.config.autoscaler of KnativeServing knative-serving and drop "
            "the ConfigMapPatch",
        )
    ]
    assert without_headroom(check([config_map_patch("config-features", {"a": "b"})]).findings) == []


def test_gi018_pinned_server_must_have_room_itself():
    big = seldon(
        "Server",
        "big",
        {
            "serverConfig": "mlserver-llm",
            "extraCapabilities": ["llm"],
            "podSpec": {
                "containers": [{"name": "mlserver", "resources": {"requests": {"memory": "64Gi"}}}]
            },
        },
    )
    graph = [server_config("16Gi"), server(), big]
    assert (
        without_headroom(check([*graph, model(memory="20Gi")]).findings) == []
    )  # Seldon picks big
    pinned = check([*graph, model(memory="20Gi", server="llm-server")])
    assert [(f.code, f.message) for f in pinned.findings] == [
        (
            "GI018",
            "needs 1 replica(s) of 20Gi but no capable Server has room (llm-server: 1 replica(s), "
            "17.6 GiB per replica): it ends ScheduleFailed",
        )
    ]


def test_gi018_overcommit_counts():
    """Seldon's agent registers memory request x (1 + overcommit%): 10% by default."""
    assert (
        without_headroom(check([server_config("40Gi"), server(), model(memory="43Gi")]).findings)
        == []
    )
    assert [
        f.code
        for f in without_headroom(
            check([server_config("40Gi"), server(), model(memory="45Gi")]).findings
        )
    ] == ["GI018"]


@pytest.mark.parametrize(
    ("annotations", "gpus", "fits"),
    [
        ({"gpu-inference.dev/model-size-gb": "20"}, 1, True),  # 24 GB >= 20 x 1.2
        ({"gpu-inference.dev/model-size-gb": "20.5"}, 1, False),  # 24.6 GB
        ({"gpu-inference.dev/model-parameters": "8B"}, 1, True),  # fp16 by default: 16 GB
        (
            {"gpu-inference.dev/model-parameters": "70B", "gpu-inference.dev/model-dtype": "int4"},
            1,
            False,
        ),
        (
            {"gpu-inference.dev/model-parameters": "7e9", "gpu-inference.dev/model-dtype": "fp8"},
            1,
            True,
        ),
    ],
)
def test_gi019_weights_plus_overhead_against_gpu_memory(annotations, gpus, fits):
    report = check([L4, sized(workload("llm", pod(ON_L4, gpus=gpus)), annotations)])
    assert ("GI019" not in {f.code for f in without_headroom(report.findings)}) is fits, (
        without_headroom(report.findings)
    )


def test_gi019_counts_the_gpus_requested():
    a100x2 = gke("a100", "a2-ultragpu-2g", lo=1)
    on = {"cloud.google.com/gke-nodepool": "a100"}
    seventy = {"gpu-inference.dev/model-parameters": "70B", "gpu-inference.dev/model-dtype": "bf16"}
    one = check([a100x2, sized(workload("llm", pod(on, gpus=1)), seventy)])
    assert [f.fix for f in one.findings if f.code == "GI019"] == [
        "request 3 GPU(s) on a pool with 3+ GPUs per node, use a pool with larger GPUs, or a "
        "smaller dtype (fp8 / int4)"
    ]
    fp8 = seventy | {"gpu-inference.dev/model-dtype": "fp8"}
    assert "GI019" not in {
        f.code for f in check([a100x2, sized(workload("llm", pod(on, gpus=2)), fp8)]).findings
    }


def test_gi019_unreadable_size_is_invalid_spec():
    report = check(
        [
            L4,
            sized(
                workload("llm", pod(ON_L4)),
                {
                    "gpu-inference.dev/model-dtype": "fp7",
                    "gpu-inference.dev/model-parameters": "7B",
                },
            ),
        ]
    )
    assert [f.code for f in without_headroom(report.findings)] == ["GI013"]


def test_gi020_names_a_user_value_that_is_too_short():
    report = check(
        [COLD_L4, knative_serving(), serverless({"serving.knative.dev/progress-deadline": "300s"})]
    )
    (finding,) = [f for f in without_headroom(report.findings) if f.code == "GI020"]
    assert finding.message == (
        "scales to zero on pool(s) l4 that can be at 0 nodes; a GPU node there takes up to 900s "
        "to start but its progress deadline is serving.knative.dev/progress-deadline 300s: "
        "Knative fails the revision first"
    )


def test_gi020_cluster_default_and_stated_start_up_count():
    raised = knative_serving(deployment={"progress-deadline": "20m"})
    assert "GI020" not in {
        f.code for f in without_headroom(check([COLD_L4, raised, serverless()]).findings)
    }
    stated = serverless({"gpu-inference.dev/node-startup-seconds": "300"})
    assert "GI020" not in {
        f.code for f in without_headroom(check([COLD_L4, knative_serving(), stated]).findings)
    }
    warm = gke("l4", "g2-standard-8", lo=1)
    assert "GI020" not in {
        f.code for f in without_headroom(check([warm, knative_serving(), serverless()]).findings)
    }


@pytest.mark.parametrize(
    ("text", "seconds"), [("600s", 600), ("15m", 900), ("1h30m", 5400), ("10", None), ("x", None)]
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


def test_start_up_defaults():
    assert node_startup_seconds("gke", "nvidia-l4") == 900
    assert node_startup_seconds("eks") == 900
    assert node_startup_seconds("existing") == 0


def test_markdown_report_shows_the_new_findings_with_their_numbers():
    text = render_markdown(check(PAIRS[2].values[1]))
    assert (
        "| warning | GI015 | NodePool/l4 | at max scale (InferenceService/a/predictor: 3 pods)"
        in text
    )


def test_gi034_replaces_gi008_and_spares_a_pod_with_another_pool():
    """A pool fixed at 0 nodes gets GI034 on the pods that can land only there, not GI008 (its
    minimum is not what keeps them off); a pod that can also land on a pool with nodes runs."""
    report = check([fixed_gke("l4", 0), workload("w", L4_POD)])
    assert [(f.code, f.resource) for f in report.findings if f.code in ("GI008", "GI034")] == [
        ("GI034", "Deployment/w")
    ]
    both = pod(
        None,
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "pool", "operator": "In", "values": ["l4", "l4b"]}
                            ]
                        }
                    ]
                }
            }
        },
    )
    report = check([fixed_gke("l4", 0), fixed_gke("l4b", 2), workload("w", both)])
    assert "GI034" not in {f.code for f in report.findings}
