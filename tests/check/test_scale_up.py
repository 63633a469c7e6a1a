"""The scale-up proof: for a pool at zero, will its autoscaler make a node for the pod?
Each finding (GI026-GI029, and GI016 on self-managed groups) triggered by a hand-written graph and
silenced by its fixed twin, with the reason named; then the cases each rule leaves alone."""

from __future__ import annotations

from typing import Any

import pytest
from scale_graphs import (
    ASG_TAGS,
    DRA_CLAIM,
    NODEADM_USER_DATA,
    asg,
    autopilot_cluster,
    claim_template,
    deployment,
    gke_dra_pool,
    launch_template,
    nodeclass,
    nodepool,
    pod,
    req,
)

from components.check import CODES, check

ONLY_P5 = [req("node.kubernetes.io/instance-type", "In", "p5.48xlarge")]
G6 = [req("karpenter.k8s.aws/instance-family", "In", "g6")]
RESERVED_G6 = [*G6, req("karpenter.sh/capacity-type", "In", "reserved")]
GKE_DRA_LABELS = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
}
ON_L4 = {"cloud.google.com/gke-accelerator": "nvidia-l4"}


def ap_pod(gpus: int, selector: dict[str, str] | None = None) -> dict[str, Any]:
    return pod(selector=ON_L4 if selector is None else selector, gpus=gpus, tolerations=[])


EPHEMERAL_TAG = "k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage"


def _with_storage(spec: dict[str, Any], amount: str) -> dict[str, Any]:
    spec["containers"][0]["resources"]["requests"]["ephemeral-storage"] = amount
    return spec


STORAGE_POD = deployment("a", _with_storage(pod("g5-asg"), "20Gi"))

SCALE_PAIRS = [
    pytest.param(
        "GI026",
        [
            nodeclass(),
            nodepool("p5", ONLY_P5, limits={"nvidia.com/gpu": "4"}),
            deployment("a", pod("p5")),
        ],
        [
            nodeclass(),
            nodepool("p5", ONLY_P5, limits={"nvidia.com/gpu": "8"}),
            deployment("a", pod("p5")),
        ],
        id="GI026-gpu-limit-below-p5",
    ),
    pytest.param(
        "GI026",
        [nodeclass(), nodepool("g6", RESERVED_G6), deployment("a", pod("g6"))],
        [nodeclass(reservations=True), nodepool("g6", RESERVED_G6), deployment("a", pod("g6"))],
        id="GI026-reserved-without-reservations",
    ),
    pytest.param(
        # On a Karpenter pool a pod no instance type holds is GI021 (the fit judgement, on the
        # same allocatable), not GI026 too.
        "GI021",
        [nodeclass(), nodepool("g6", G6), deployment("a", pod("g6", memory="720Gi"))],
        [nodeclass(), nodepool("g6", G6), deployment("a", pod("g6", memory="700Gi"))],
        id="GI021-memory-above-allocatable-on-karpenter",
    ),
    pytest.param(
        "GI027",
        [
            nodeclass(),
            nodepool("g6", G6),
            claim_template(),
            deployment("a", pod("g6", gpus=0, claims=DRA_CLAIM)),
        ],
        [nodeclass(), nodepool("g6", G6), deployment("a", pod("g6", gpus=1))],
        id="GI027-dra-only-pod-on-karpenter",
    ),
    pytest.param(
        "GI028",
        [
            gke_dra_pool(),
            claim_template(),
            deployment("a", pod("l4-dra", gpus=0, claims=DRA_CLAIM)),
        ],
        [
            gke_dra_pool(labels=GKE_DRA_LABELS),
            claim_template(),
            deployment("a", pod("l4-dra", gpus=0, claims=DRA_CLAIM)),
        ],
        id="GI028-gke-pool-without-dra-labels",
    ),
    pytest.param(
        "GI029",
        [autopilot_cluster(), deployment("a", ap_pod(3))],
        [autopilot_cluster(), deployment("a", ap_pod(4))],
        id="GI029-three-l4s-on-autopilot",
    ),
    pytest.param(
        "GI033",
        [launch_template(user_data=NODEADM_USER_DATA), asg(tags=ASG_TAGS), STORAGE_POD],
        [
            launch_template(user_data=NODEADM_USER_DATA),
            asg(tags={**ASG_TAGS, EPHEMERAL_TAG: "50Gi"}),
            STORAGE_POD,
        ],
        id="GI033-ephemeral-storage-without-the-template-tag",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good"), SCALE_PAIRS)
def test_finding_triggered_and_silenced_by_its_fix(code: str, bad: list, good: list):
    bad_report, good_report = check(bad), check(good)
    found = [f for f in bad_report.findings if f.code == code]
    assert found, bad_report.findings
    assert code not in {f.code for f in good_report.findings}, good_report.findings
    assert good_report.errors == [], good_report.errors
    assert found[0].severity == CODES[code][0] and found[0].message and found[0].fix


# ---------------------------------------------------------------------------------------------
# GI026: what Karpenter would launch, the reason named
# ---------------------------------------------------------------------------------------------


def gi026(graph: list[dict]) -> list[tuple[str, str]]:
    return [(f.message, f.fix) for f in check(graph).findings if f.code == "GI026"]


def test_gi026_limit_below_the_only_instance_types_gpus():
    ((message, fix),) = gi026(
        [
            nodeclass(),
            nodepool("p5", ONLY_P5, limits={"nvidia.com/gpu": "4"}),
            deployment("a", pod("p5")),
        ]
    )
    assert message == (
        "lands on pool p5 but Karpenter would launch no node for it from NodePool p5 (limits): "
        "every instance type NodePool p5 admits exceeds its limits: nvidia.com/gpu limit 4, "
        "capacity p5.48xlarge: 8 (Karpenter counts capacity, not allocatable)"
    )
    assert fix.startswith("raise NodePool p5's limits (karpenter.maxTotalGpus / maxNodes)")


def test_gi026_reserved_without_reservation_terms_names_the_node_class():
    ((message, fix),) = gi026(
        [nodeclass(), nodepool("g6", RESERVED_G6), deployment("a", pod("g6"))]
    )
    assert message == (
        "lands on pool g6 but Karpenter would launch no node for it from NodePool g6 "
        "(capacity-type): NodePool g6 allows only capacity type(s) reserved but the instance "
        "types it admits are offered as on-demand, spot; reserved capacity needs "
        "capacityReservationSelectorTerms on its node class gpu, which selects no capacity "
        "reservation"
    )
    assert "capacityReservationSelectorTerms" in fix


def test_gi026_reserved_or_on_demand_without_reservations_launches_on_demand():
    """Karpenter falls back to the next capacity type: nothing to report (our config refuses it)."""
    pool = nodepool("g6", [*G6, req("karpenter.sh/capacity-type", "In", "reserved", "on-demand")])
    assert gi026([nodeclass(), pool, deployment("a", pod("g6"))]) == []


def test_requests_no_instance_type_holds_are_gi021_once_not_gi026_too():
    """Karpenter launches nothing for a pod no instance type holds (its `requests` cause); the
    fit judgement says the same on the same allocatable (GI021, the resource named), so GI026
    leaves it to GI021. g6.48xlarge: 702.14Gi allocatable (Karpenter's estimate)."""
    report = check([nodeclass(), nodepool("g6", G6), deployment("a", pod("g6", memory="720Gi"))])
    assert [f.code for f in report.errors] == ["GI021"]
    assert "720Gi memory" in report.errors[0].message
    assert "702.14Gi (g6.48xlarge" in report.errors[0].message
    # Ephemeral storage comes from the EC2NodeClass's root volume: 50Gi leaves about 44Gi.
    spec = pod("g6")
    spec["containers"][0]["resources"]["requests"]["ephemeral-storage"] = "60Gi"
    small = check([nodeclass(volume="50Gi"), nodepool("g6", G6), deployment("a", spec)])
    assert [f.code for f in small.errors] == ["GI021"]
    assert check([nodeclass(volume="100Gi"), nodepool("g6", G6), deployment("a", spec)]).ok


def test_gi026_a_family_pool_offers_the_multi_gpu_sizes_to_a_one_gpu_pod():
    """No GPU-count requirement: the 1-GPU pod may get any g6 size (Karpenter keeps every type
    that fits), so a 4-GPU pod lands too and nothing is reported."""
    report = check([nodeclass(), nodepool("g6", G6), deployment("a", pod("g6", gpus=4))])
    assert [f.code for f in report.errors] == []


def test_gi026_node_limit_zero_and_an_invalid_nodepool():
    assert (
        "limits.nodes 0"
        in gi026(
            [nodeclass(), nodepool("g6", G6, limits={"nodes": "0"}), deployment("a", pod("g6"))]
        )[0][0]
    )
    bad = nodepool("g6", [*G6, req("karpenter.sh/nodepool", "In", "x")])
    ((message, _),) = gi026([nodeclass(), bad, deployment("a", pod("g6"))])
    assert "(nodepool): NodePool g6 is never Ready: invalid key 'karpenter.sh/nodepool'" in message


def test_gi026_not_for_a_cpu_pod_on_a_pool_that_admits_cpu_types():
    """Our catalog lists GPU instance types only: a CPU pod on a pool that also admits CPU types
    may get one the catalog does not hold."""
    pool = nodepool("any", [req("kubernetes.io/arch", "In", "amd64")], taints=[])
    spec = pod("any", gpus=0, memory="2000Gi", tolerations=[])
    assert gi026([nodeclass(), pool, deployment("a", spec)]) == []


def test_gi026_an_existing_node_class_outside_the_graph_is_given_the_benefit():
    """Reservations and the volume are unknown: nothing refused on their account."""
    graph = [nodepool("g6", RESERVED_G6, node_class="elsewhere"), deployment("a", pod("g6"))]
    assert gi026(graph) == []


# ---------------------------------------------------------------------------------------------
# DRA
# ---------------------------------------------------------------------------------------------


def test_gi027_message_and_no_cpu_on_gpu_pool_for_a_dra_gpu_pod():
    graph = [
        nodeclass(),
        nodepool("g6", G6),
        claim_template(),
        deployment("a", pod("g6", gpus=0, claims=DRA_CLAIM)),
    ]
    report = check(graph)
    assert [f.code for f in report.errors] == ["GI027"]  # no GI003, no GI004
    assert report.errors[0].message == (
        "takes its devices through DRA ResourceClaim(s) (one-gpu) and lands on pool g6, which "
        "Karpenter provisions (NodePool g6); Karpenter ignores pods with DRA requests "
        "(IGNORE_DRA_REQUESTS, default true in v1.14.1): no node is ever launched for it"
    )


def test_gi027_on_eks_auto_mode_too():
    auto = nodepool("g6", [req("eks.amazonaws.com/instance-family", "In", "g6")], auto_mode=True)
    report = check([auto, claim_template(), deployment("a", pod("g6", gpus=0, claims=DRA_CLAIM))])
    assert [f.code for f in report.errors] == ["GI027"]


def test_gi028_only_for_gpu_claims_and_says_what_is_missing():
    cpu_claim = claim_template(device_class="cpu.example.com")
    graph = [gke_dra_pool(), cpu_claim, deployment("a", pod("l4-dra", gpus=0, claims=DRA_CLAIM))]
    assert "GI028" not in {f.code for f in check(graph).findings}
    half = gke_dra_pool(labels={"nvidia.com/gpu.present": "true"})
    graph = [half, claim_template(), deployment("a", pod("l4-dra", gpus=0, claims=DRA_CLAIM))]
    (finding,) = [f for f in check(graph).findings if f.code == "GI028"]
    assert "lack gke-no-default-nvidia-gpu-device-plugin=true:" in finding.message


# ---------------------------------------------------------------------------------------------
# GKE: ComputeClass tolerations, Autopilot from a plain cluster
# ---------------------------------------------------------------------------------------------


def compute_class(name: str = "l4-class") -> dict[str, Any]:
    return {
        "type": "kubernetes:cloud.google.com/v1:ComputeClass",
        "name": name,
        "inputs": {
            "metadata": {"name": name},
            "spec": {"priorities": [{"gpu": {"type": "nvidia-l4", "count": 1}}]},
        },
    }


def test_a_pod_selecting_a_compute_class_gets_its_toleration():
    """GKE's admission adds the class toleration: a nodeSelector alone lands."""
    spec = pod(selector={"cloud.google.com/compute-class": "l4-class"}, tolerations=[])
    report = check([compute_class(), deployment("a", spec)])
    assert report.workloads[0].pools == ("l4-class",)
    assert report.errors == []
    # The placement written out stays what the pod says (no added toleration).
    assert "tolerations" not in report.workloads[0].placement


def test_an_autopilot_cluster_is_gpu_capacity():
    report = check([autopilot_cluster(), deployment("a", ap_pod(1))])
    assert report.workloads[0].pools == ("autopilot-1",)
    assert report.errors == []
    # Spot Pods too, and the count selector.
    spot = ap_pod(
        2,
        ON_L4
        | {"cloud.google.com/gke-spot": "true", "cloud.google.com/gke-accelerator-count": "2"},
    )
    assert check([autopilot_cluster(), deployment("a", spot)]).errors == []


@pytest.mark.parametrize(
    ("selector", "gpus", "problem"),
    [
        ({}, 1, "selects no cloud.google.com/gke-accelerator"),
        (
            {"cloud.google.com/gke-accelerator": "nvidia-tesla-v100"},
            1,
            "not a GPU type Autopilot offers",
        ),
        (ON_L4, 0, "requests no nvidia.com/gpu"),
        ({"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}, 4, "does not support"),
        (ON_L4 | {"cloud.google.com/gke-accelerator-count": "2"}, 4, "at least the quantity"),
    ],
)
def test_gi029_what_autopilot_rejects(selector: dict, gpus: int, problem: str):
    spec = pod(selector=selector, gpus=gpus, tolerations=[])
    (finding,) = [
        f for f in check([autopilot_cluster(), deployment("a", spec)]).findings if f.code == "GI029"
    ]
    assert problem in finding.message


def test_gi029_not_on_a_standard_cluster():
    assert "GI029" not in {
        f.code for f in check([gke_dra_pool(), deployment("a", pod("l4-dra", gpus=3))]).findings
    }


# ---------------------------------------------------------------------------------------------
# GI016: self-managed groups error, EKS managed node groups warn
# ---------------------------------------------------------------------------------------------


def managed_group(name: str = "g5") -> dict[str, Any]:
    return {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": name,
        "inputs": {
            "nodeGroupName": name,
            "instanceTypes": ["g5.xlarge"],
            "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
            "labels": {"gpu-inference.dev/pool": name},
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            "scalingConfig": {"minSize": 0, "maxSize": 2, "desiredSize": 0},
        },
    }


def test_gi016_a_managed_node_group_without_tags_is_a_warning_naming_describe_nodegroup():
    report = check([managed_group(), deployment("a", pod("g5"))])
    assert report.errors == []
    (finding,) = [f for f in report.findings if f.code == "GI016"]
    assert finding.severity == "warning"
    assert "EKS DescribeNodegroup" in finding.message and "eks:DescribeNodegroup" in finding.fix


def test_gi016_a_self_managed_group_without_tags_is_an_error():
    graph = [launch_template(user_data=NODEADM_USER_DATA), asg(), deployment("a", pod("g5-asg"))]
    report = check(graph)
    assert [(f.code, f.resource) for f in report.errors] == [("GI016", "Group/gpu-asg")]
    assert report.errors[0].message.startswith(
        "Auto Scaling group gpu-asg can be at 0 nodes but lacks the cluster-autoscaler "
        "node-template tag(s) k8s.io/cluster-autoscaler/node-template/label/gpu-inference.dev/"
        "pool=g5-asg, k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu=present:"
        "NoSchedule"
    )
    tagged = [
        launch_template(user_data=NODEADM_USER_DATA),
        asg(tags=ASG_TAGS),
        deployment("a", pod("g5-asg")),
    ]
    assert check(tagged).errors == []
    assert (
        check(
            [
                launch_template(user_data=NODEADM_USER_DATA),
                asg(min_size=1),
                deployment("a", pod("g5-asg")),
            ]
        ).errors
        == []
    )


def test_the_node_labels_and_taints_come_from_the_user_data_as_bootstrap_sh_passes_them():
    user_data = (
        "#!/bin/bash\n/etc/eks/bootstrap.sh inference --kubelet-extra-args "
        "'--node-labels=gpu-inference.dev/pool=g5-asg,team=ml "
        "--register-with-taints=nvidia.com/gpu=present:NoSchedule'\n"
    )
    report = check(
        [launch_template(user_data=user_data), asg(tags=ASG_TAGS), deployment("a", pod("g5-asg"))]
    )
    (pool,) = report.pools
    assert pool.labels == {"gpu-inference.dev/pool": "g5-asg", "team": "ml"}
    assert [str(t) for t in pool.taints] == ["nvidia.com/gpu=present:NoSchedule"]
    assert pool.gpus_per_node == 1  # g5.xlarge, from the launch template


def test_an_eks_managed_groups_own_asg_is_not_a_second_pool():
    own = asg("eks-g5-1234", tags={"eks:nodegroup-name": "g5", "eks:cluster-name": "c"})
    report = check([managed_group(), own, deployment("a", pod("g5"))])
    assert [p.name for p in report.pools] == ["g5"]


def test_scale_pairs_cover_the_codes():
    # ...and GI021 where the autoscaler's verdict and the fit judgement meet (requests).
    assert {p.values[0] for p in SCALE_PAIRS} == {
        "GI021",
        "GI026",
        "GI027",
        "GI028",
        "GI029",
        "GI033",
    }


def test_a_pod_lands_where_karpenter_would_launch_for_it_beyond_the_node_templates():
    """Found by the Karpenter differential: the node Karpenter makes takes the value the pod
    selects for a NodePool key with several values (or Exists), and a zone; the node templates
    carry only labels known before launch."""
    team = nodepool("g6", [*G6, req("example.com/team", "In", "a", "b")])
    for selector in ({"example.com/team": "a"}, {"topology.kubernetes.io/zone": "us-west-2a"}):
        report = check([nodeclass(), team, deployment("a", pod("g6", selector=selector))])
        assert report.workloads[0].pools == ("g6",), selector
        assert report.errors == []
    report = check(
        [nodeclass(), team, deployment("a", pod("g6", selector={"example.com/team": "c"}))]
    )
    assert [f.code for f in report.errors] == ["GI001"]


# ---------------------------------------------------------------------------------------------
# GI033: cluster-autoscaler's template node has the ephemeral storage its tag gives it, or none
# (cluster-autoscaler-1.36.1 cloudprovider/aws/aws_manager.go buildNodeFromTemplate)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "asked", "found"),
    [
        (None, "1Mi", True),  # no tag: the template node has none at all
        ("50Gi", "20Gi", False),
        ("20Gi", "20Gi", False),
        ("20Gi", "20481Mi", True),  # above what the tag gives
    ],
)
def test_gi033_the_template_node_holds_what_the_tag_says(tag: Any, asked: str, found: bool):
    tags = {**ASG_TAGS, **({EPHEMERAL_TAG: tag} if tag else {})}
    graph = [
        launch_template(user_data=NODEADM_USER_DATA),
        asg(tags=tags),
        deployment("a", _with_storage(pod("g5-asg"), asked)),
    ]
    codes = [f.code for f in check(graph).findings]
    assert ("GI033" in codes) is found


def test_gi033_not_for_a_group_that_keeps_a_node():
    graph = [launch_template(user_data=NODEADM_USER_DATA), asg(tags=ASG_TAGS, min_size=1)]
    graph.append(deployment("a", _with_storage(pod("g5-asg"), "20Gi")))
    assert "GI033" not in {f.code for f in check(graph).findings}


def test_gi033_reads_a_managed_node_groups_asg_tag_and_its_own_tags():
    group = managed_group()
    spec = _with_storage(pod("g5"), "20Gi")
    assert "GI033" in {f.code for f in check([group, deployment("a", spec)]).findings}
    asg_tag = {
        "type": "aws:autoscaling/tag:Tag",
        "name": "g5-asg-eph",
        "inputs": {
            "autoscalingGroupName": "eks-g5-1234",
            "tag": {"key": EPHEMERAL_TAG, "value": "80Gi", "propagateAtLaunch": False},
        },
    }
    assert "GI033" not in {f.code for f in check([group, asg_tag, deployment("a", spec)]).findings}
    own = managed_group()
    own["inputs"]["tags"] = {EPHEMERAL_TAG: "80Gi"}  # read through DescribeNodegroup
    assert "GI033" not in {f.code for f in check([own, deployment("a", spec)]).findings}


def test_gi016_asks_for_the_gpu_tag_only_where_the_device_plugin_time_slices():
    """cluster-autoscaler takes a group's GPUs from its instance type (template.InstanceType.GPU);
    only nodes advertising GPUs x replicas need the resources tag."""
    tags = {
        "k8s.io/cluster-autoscaler/node-template/label/gpu-inference.dev/pool": "g5-asg",
        "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": "present:NoSchedule",
    }
    plain = [
        launch_template(user_data=NODEADM_USER_DATA),
        asg(tags=tags),
        deployment("a", pod("g5-asg")),
    ]
    assert "GI016" not in {f.code for f in check(plain).findings}
    sliced = [
        *plain,
        {
            "type": "kubernetes:helm.sh/v3:Release",
            "name": "nvidia-device-plugin",
            "inputs": {
                "chart": "nvidia-device-plugin",
                "values": {
                    "config": {
                        "default": "sliced",
                        "map": {
                            "sliced": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                            "    - name: nvidia.com/gpu\n      replicas: 4\n"
                        },
                    }
                },
            },
        },
    ]
    (found,) = [f for f in check(sliced).findings if f.code == "GI016"]
    assert "resources/nvidia.com/gpu=4" in found.message


def test_a_pod_fits_the_node_karpenter_launches_for_it_not_only_the_templates():
    """Found by the Karpenter differential (seed 976696108, case 308): the pod's first required
    term (`example.com/team Exists`) only a launched node meets (Karpenter gives it the label),
    its second picks g5.4xlarge templates (too small for 180Gi). Karpenter launches g5.16xlarge
    for the first term, and the pod runs there: no GI021."""
    pool = nodepool(
        "np0",
        [
            req("karpenter.k8s.aws/instance-gpu-name", "In", "a10g"),
            req("example.com/team", "NotIn", "c"),
        ],
        taints=[],
    )
    spec = pod("np0", memory="180Gi", tolerations=[])
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [req("example.com/team", "Exists")]},
                    {"matchExpressions": [req("karpenter.k8s.aws/instance-size", "In", "4xlarge")]},
                ]
            }
        }
    }
    report = check([nodeclass(), pool, deployment("a", spec)])
    assert report.errors == [], report.errors
    (w,) = report.workloads
    assert w.pools == ("np0",) and w.unfit == ()
