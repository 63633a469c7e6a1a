"""KarpenterGpuNodePool under Pulumi mocks: the exact NodePool and EC2NodeClass it emits (valid
against Karpenter v1.14.1's CRDs), the placement it hands out (lands on it and nowhere else in the
placement check), the catalog refusing requirements no GPU instance meets, and the check reading
NodePools that did not come from the component."""

import copy

import pytest

from components.check import check
from components.model.autoscalers.karpenter import admitted, requirement_from_karpenter
from components.model.errors import InputError
from components.pools.karpenter import (
    KarpenterGpuNodePool,
    KarpenterGpuNodePoolArgs,
    validate_karpenter_pool_args,
)
from components.preview.mockrun import run_program
from tests.conftest import CRDS, owned

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
GPU_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}


def args(**kw) -> KarpenterGpuNodePoolArgs:
    base: dict = dict(cluster_name="inference", node_role="KarpenterNodeRole-inference")
    base.update(kw)
    return KarpenterGpuNodePoolArgs(**base)


@pytest.fixture(scope="module")
def world():
    pools: dict[str, KarpenterGpuNodePool] = {}

    def program():
        pools["l4"] = KarpenterGpuNodePool(
            "l4",
            args(gpu_names=["l4"], max_gpus=1, capacity_types=["spot", "on-demand"], max_nodes=4),
        )
        pools["big"] = KarpenterGpuNodePool(
            "big",
            args(
                instance_families=["p5", "p4d"],
                min_gpus=8,
                max_total_gpus=16,
                ami_alias="bottlerocket@1.30.0",
                labels={"team": "llm"},
                weight=10,
            ),
        )

    return pools, run_program(program)


def test_node_pool_inputs_exact(world):
    _, g = world
    cr = g.one(NODEPOOL, "l4")
    assert cr.inputs["apiVersion"] == "karpenter.sh/v1"
    assert cr.inputs["metadata"] == owned({"name": "l4"})
    assert cr.inputs["spec"] == {
        "template": {
            "metadata": {"labels": {"gpu-inference.dev/pool": "l4"}},
            "spec": {
                "expireAfter": "Never",
                "nodeClassRef": {
                    "group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass",
                    "name": "l4",
                },
                "requirements": [
                    {
                        "key": "karpenter.k8s.aws/instance-gpu-manufacturer",
                        "operator": "In",
                        "values": ["nvidia"],
                    },
                    {
                        "key": "karpenter.k8s.aws/instance-gpu-count",
                        "operator": "Gt",
                        "values": ["0"],
                    },
                    {
                        "key": "karpenter.k8s.aws/instance-gpu-count",
                        "operator": "Lt",
                        "values": ["2"],
                    },
                    {
                        "key": "karpenter.k8s.aws/instance-gpu-name",
                        "operator": "In",
                        "values": ["l4"],
                    },
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {
                        "key": "karpenter.sh/capacity-type",
                        "operator": "In",
                        "values": ["spot", "on-demand"],
                    },
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            },
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
        "limits": {"nodes": "4"},
    }


def test_node_class_inputs_exact(world):
    _, g = world
    cr = g.one(NODECLASS, "l4-nodeclass")
    assert cr.inputs["metadata"] == owned({"name": "l4"})
    assert cr.inputs["spec"] == {
        "role": "KarpenterNodeRole-inference",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "inference"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "inference"}}],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,
        },
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": "100Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
    }
    big = g.one(NODECLASS, "big-nodeclass").inputs["spec"]
    assert big["amiSelectorTerms"] == [{"alias": "bottlerocket@1.30.0"}]
    assert big["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"


def test_big_pool_limits_weight_labels(world):
    pools, g = world
    spec = g.one(NODEPOOL, "big").inputs["spec"]
    assert spec["limits"] == {"nodes": "1", "nvidia.com/gpu": "16"}
    assert spec["weight"] == 10
    assert spec["template"]["metadata"]["labels"] == {
        "gpu-inference.dev/pool": "big",
        "team": "llm",
    }
    assert {
        "key": "karpenter.k8s.aws/instance-family",
        "operator": "In",
        "values": ["p5", "p4d"],
    } in (spec["template"]["spec"]["requirements"])
    assert pools["big"].instance_types == ["p4d.24xlarge", "p5.48xlarge"]
    assert pools["big"].gpus_per_node == 8
    assert pools["l4"].instance_types == [
        "g6.xlarge",
        "g6.2xlarge",
        "g6.4xlarge",
        "g6.8xlarge",
        "g6.16xlarge",
    ]
    assert pools["l4"].facts.gpu_model == "L4"


def test_node_class_is_created_before_the_node_pool(world):
    _, g = world
    pool = g.one(NODEPOOL, "l4")
    assert g.depends_on(pool, g.one(NODECLASS, "l4-nodeclass"))


@pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")
def test_emitted_crs_validate_against_karpenter_crds(world):
    from tests.crdschema import validate_cr

    _, g = world
    for typ in (NODEPOOL, NODECLASS):
        for cr in g.of_type(typ):
            validate_cr(cr.inputs)


@pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")
def test_crd_validation_catches_a_bad_node_pool(world):
    from tests.crdschema import validate_cr

    _, g = world
    bad = copy.deepcopy(g.one(NODEPOOL, "l4").inputs)
    bad["spec"]["disruption"]["consolidationPolicy"] = "WhenIdle"
    with pytest.raises(AssertionError, match="consolidationPolicy"):
        validate_cr(bad)


def test_placement_selects_the_pool_and_tolerates_its_taint(world):
    pools, _ = world
    assert pools["l4"].placement.to_pod_spec() == {
        "nodeSelector": {"gpu-inference.dev/pool": "l4"},
        "tolerations": [GPU_TOLERATION],
    }
    assert pools["l4"].labels["karpenter.sh/nodepool"] == "l4"
    assert pools["l4"].labels["karpenter.k8s.aws/instance-gpu-name"] == "l4"
    assert "karpenter.sh/capacity-type" not in pools["l4"].labels  # spot or on-demand


def _deployment(name, fragment, gpus, wired):
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "annotations": {"gpu-inference.dev/pool": wired}},
            "spec": {
                "replicas": 0,
                "template": {
                    "spec": {
                        **fragment,
                        "containers": [
                            {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
                            if gpus
                            else {"name": "c"}
                        ],
                    }
                },
            },
        },
    }


def test_placement_lands_on_the_pool_and_nowhere_else(world):
    pools, g = world
    graph = g.as_graph()
    fragment = pools["l4"].placement.to_pod_spec()
    report = check([*graph, _deployment("llm", fragment, 1, "l4")])
    llm = next(w for w in report.workloads if w.name == "llm")
    assert llm.pools == ("l4",)
    assert report.errors == []
    # no toleration: the GPU taint keeps it off every pool (ExtendedResourceToleration adds one
    # only for GPU pods, and this one asks for none)
    cpu = {"nodeSelector": {"gpu-inference.dev/pool": "l4"}}
    report = check([*graph, _deployment("cpu", cpu, 0, "l4")])
    assert next(w for w in report.workloads if w.name == "cpu").pools == ()


def test_selecting_a_gpu_the_pool_cannot_provide_is_a_finding(world):
    pools, g = world
    fragment = copy.deepcopy(pools["l4"].placement.to_pod_spec())
    fragment["nodeSelector"]["karpenter.k8s.aws/instance-gpu-name"] = "h100"
    report = check([*g.as_graph(), _deployment("llm", fragment, 1, "l4")])
    assert [(f.code, f.resource) for f in report.errors] == [("GI001", "Deployment/llm")]
    assert "instance-gpu-name=h100" in report.errors[0].message


def test_more_gpus_than_any_admitted_instance_is_a_finding(world):
    pools, g = world
    report = check(
        [*g.as_graph(), _deployment("llm", pools["l4"].placement.to_pod_spec(), 2, "l4")]
    )
    assert [f.code for f in report.errors] == ["GI004"]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            dict(gpu_names=["l4"], min_gpus=2, max_gpus=3),
            "args: the requirements (karpenter.k8s.aws/instance-gpu-count Gt 1; "
            "karpenter.k8s.aws/instance-gpu-count Lt 4; karpenter.k8s.aws/instance-gpu-name In "
            "l4) admit no GPU instance type in the catalog (allowed: requirements some catalog "
            "instance type meets: l4: 1, 4, 8 GPUs (g6))",
        ),
        (
            dict(gpu_names=["a10"]),
            "args.gpu_names[0]: GPU name 'a10' is not one an EC2 instance type in the catalog has "
            "(allowed: a100, a10g, h100, h200, l4, l40s, t4, t4g, v100)",
        ),
        (
            dict(instance_families=["m5"]),
            "args.instance_families[0]: instance family 'm5' is not a GPU family in the catalog "
            "(allowed: g4dn, g5, g5g, g6, g6e, p3, p3dn, p4d, p4de, p5, p5e, p5en)",
        ),
        (
            dict(capacity_types=["on-demand", "spot"]),
            "args.capacity_types: capacity types ['on-demand', 'spot'] are not in the order "
            "Karpenter prefers them: within one NodePool it always tries reserved, then spot, "
            "then on-demand (allowed: ['spot', 'on-demand'], or two pools (each with one "
            "capacity type, wired in your order))",
        ),
        (
            dict(capacity_types=["preemptible"]),
            "args.capacity_types[0]: 'preemptible' is not a valid value "
            "(allowed: reserved, spot, on-demand)",
        ),
        (
            dict(labels={"karpenter.sh/team": "a"}),
            "args.labels.karpenter.sh/team: label 'karpenter.sh/team' is under a domain Karpenter "
            "reserves (the NodePool CRD refuses it) (allowed: labels outside karpenter.sh and "
            "karpenter.k8s.aws)",
        ),
        (
            dict(ami_alias="al2@latest"),
            "args.ami_alias: AMI alias 'al2@latest' is not family@version with a GPU-capable "
            "family (allowed: al2023@latest, al2023@v20250101, bottlerocket@latest, ...)",
        ),
        (
            dict(node_role=None),
            "args.node_role: node_role None is not an IAM role name (allowed: the IAM role name "
            "of the nodes (Karpenter's node role), or node_class: an existing EC2NodeClass)",
        ),
        (
            dict(consolidate_after="5 minutes"),
            "args.consolidate_after: consolidate_after '5 minutes' is not a Karpenter duration "
            "(allowed: a duration such as 30s, 5m, 1h30m, or Never)",
        ),
        (
            dict(expire_after="30 days"),
            "args.expire_after: expire_after '30 days' is not a Karpenter duration "
            "(allowed: a duration such as 720h, 2160h, or Never)",
        ),
        (
            dict(taints=[]),
            "args.taints: a GPU pool without a NoSchedule or NoExecute taint lets any pod land on "
            "its GPU nodes and keeps them from scaling down (allowed: leave taints unset "
            "(default nvidia.com/gpu=present:NoSchedule) or give a NoSchedule / NoExecute taint)",
        ),
    ],
    ids=[
        "no-instance",
        "unknown-gpu",
        "cpu-family",
        "order",
        "capacity",
        "karpenter-label",
        "ami",
        "role",
        "duration",
        "expire-after",
        "untainted",
    ],
)
def test_bad_arguments(kw, message):
    with pytest.raises(InputError) as e:
        validate_karpenter_pool_args("pool", args(**kw))
    assert str(e.value) == message


def test_error_names_the_component():
    with pytest.raises(InputError, match=r"^KarpenterGpuNodePool\('p'\)\.args\.gpu_names\[0\]"):
        run_program(lambda: KarpenterGpuNodePool("p", args(gpu_names=["x"])))


def test_existing_node_class_emits_none():
    plan = validate_karpenter_pool_args("p", args(node_role=None, node_class="shared-gpu"))
    assert plan.node_class is None
    assert plan.node_pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "shared-gpu"


# -- the check on NodePools written by hand ---------------------------------------------------


def _node_pool(name, requirements, taints=(), labels=None, node_class="default"):
    return {
        "type": NODEPOOL,
        "name": name,
        "inputs": {
            "metadata": {"name": name},
            "spec": {
                "template": {
                    "metadata": {"labels": labels or {}},
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": node_class,
                        },
                        "requirements": requirements,
                        "taints": list(taints),
                    },
                },
                "limits": {"nodes": 3},
            },
        },
    }


def test_check_reads_a_hand_written_gpu_node_pool():
    pool = _node_pool(
        "gpu",
        [
            {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gte", "values": ["4"]},
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
        taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
    )
    report = check([pool])
    (facts,) = report.pools
    assert (facts.name, facts.gpu, facts.gpus_per_node, facts.min_nodes, facts.max_nodes) == (
        "gpu",
        True,
        8,
        0,
        3,
    )
    # g6e.12xlarge, g6e.24xlarge (4 GPUs), g6e.48xlarge (8), on-demand only
    assert [n.labels["node.kubernetes.io/instance-type"] for n in facts.nodes] == [
        "g6e.12xlarge",
        "g6e.24xlarge",
        "g6e.48xlarge",
    ]
    assert facts.labels["karpenter.sh/capacity-type"] == "on-demand"
    assert facts.labels["karpenter.sh/nodepool"] == "gpu"
    # no device plugin in the graph, and the chart's defaults do not tolerate gpu=true
    assert [f.code for f in report.findings] == ["GI012"]


def test_check_bottlerocket_node_class_runs_its_own_device_plugin():
    pool = _node_pool(
        "gpu",
        [{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a10g"]}],
        taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
        node_class="br",
    )
    node_class = {
        "type": NODECLASS,
        "name": "br",
        "inputs": {
            "metadata": {"name": "br"},
            "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]},
        },
    }
    report = check([pool, node_class])
    assert report.pools[0].builtin_device_plugin is True
    assert report.findings == []


def test_check_a_node_pool_that_also_admits_cpu_instances_is_not_a_gpu_pool():
    pool = _node_pool(
        "default", [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
    )
    (facts,) = check([pool]).pools
    assert facts.gpu is False
    assert facts.gpus_per_node == 8  # a GPU pod still gets an 8-GPU instance from it
    assert facts.nodes[0].labels == {
        "kubernetes.io/os": "linux",
        "karpenter.sh/nodepool": "default",
        "kubernetes.io/arch": "amd64",
    }


@pytest.mark.parametrize(
    ("key", "value", "auto"),
    [
        ("karpenter.k8s.aws/instance-family", "g6", False),
        ("karpenter.k8s.aws/instance-gpu-name", "a10g", False),
        ("eks.amazonaws.com/instance-gpu-name", "l4", True),
    ],
)
def test_check_a_single_valued_gpu_requirement_admits_no_cpu_instance(key, value, auto):
    # The requirement also becomes a node label; a node without GPUs does not carry it.
    pool = _node_pool("gpu", [{"key": key, "operator": "In", "values": [value]}])
    if auto:
        pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"] = {
            "group": "eks.amazonaws.com",
            "kind": "NodeClass",
            "name": "default",
        }
    (facts,) = check([pool]).pools
    assert facts.gpu is True
    assert all(n.labels.get(key) == value for n in facts.nodes)
    assert all(any(k.endswith("instance-gpu-count") for k in n.labels) for n in facts.nodes)


def test_check_an_invalid_requirement_is_gi013():
    pool = _node_pool(
        "gpu", [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gte", "values": ["x"]}]
    )
    assert [f.code for f in check([pool]).findings] == ["GI013"]


@pytest.mark.parametrize(
    ("reqs", "types"),
    [
        ([("karpenter.k8s.aws/instance-gpu-name", "In", ["t4g"])], 6),
        ([("karpenter.k8s.aws/instance-gpu-count", "Gte", ["8"])], 11),
        (
            [
                ("karpenter.k8s.aws/instance-gpu-count", "Lte", ["1"]),
                ("kubernetes.io/arch", "In", ["arm64"]),
            ],
            4,
        ),
        (
            [
                ("karpenter.k8s.aws/instance-category", "In", ["p"]),
                ("karpenter.k8s.aws/instance-generation", "Gt", ["4"]),
            ],
            4,
        ),
        (
            [
                ("node.kubernetes.io/instance-type", "NotIn", ["g5.xlarge"]),
                ("karpenter.k8s.aws/instance-family", "In", ["g5"]),
            ],
            7,
        ),
    ],
)
def test_admitted_counts(reqs, types):
    found = admitted(
        requirement_from_karpenter({"key": k, "operator": o, "values": v}) for k, o, v in reqs
    )
    assert len(found.instances) == types


# -- EKS Auto Mode ----------------------------------------------------------------------------


def test_auto_mode_node_pool_exact():
    plan = validate_karpenter_pool_args(
        "gpu",
        KarpenterGpuNodePoolArgs(
            auto_mode=True,
            instance_families=["g6e", "g6"],
            capacity_types=["on-demand"],
            max_nodes=3,
        ),
    )
    assert plan.node_class is None
    spec = plan.node_pool["spec"]["template"]["spec"]
    assert spec["nodeClassRef"] == {
        "group": "eks.amazonaws.com",
        "kind": "NodeClass",
        "name": "default",
    }
    assert spec["requirements"] == [
        {
            "key": "eks.amazonaws.com/instance-gpu-manufacturer",
            "operator": "In",
            "values": ["nvidia"],
        },
        {"key": "eks.amazonaws.com/instance-gpu-count", "operator": "Gt", "values": ["0"]},
        {"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["g6e", "g6"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    assert plan.facts.labels["eks.amazonaws.com/compute-type"] == "auto"
    assert plan.facts.gpus_per_node == 8


@pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")
def test_auto_mode_node_pool_validates_against_the_crd():
    from tests.crdschema import validate_cr

    g = run_program(
        lambda: KarpenterGpuNodePool(
            "gpu", KarpenterGpuNodePoolArgs(auto_mode=True, gpu_names=["l40s"])
        )
    )
    assert g.of_type(NODECLASS) == []
    validate_cr(g.one(NODEPOOL).inputs)


def test_check_reads_an_auto_mode_node_pool_from_awss_tutorial():
    """The GPU NodePool of AWS's "Deploy an accelerated workload" (Auto Mode) and its pod that
    selects `eks.amazonaws.com/instance-gpu-name: l40s`: it lands there, on g6e nodes only."""
    pool = _node_pool(
        "gpu",
        [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            {"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["g6e", "g6"]},
        ],
        node_class="default",
    )
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"]["group"] = "eks.amazonaws.com"
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"]["kind"] = "NodeClass"
    pod = {
        "nodeSelector": {
            "eks.amazonaws.com/instance-gpu-name": "l40s",
            "eks.amazonaws.com/compute-type": "auto",
        }
    }
    report = check([pool, _deployment("nvidia-smi", pod, 1, "gpu")])
    (facts,) = report.pools
    assert facts.builtin_device_plugin is True and facts.gpus_per_node == 8
    assert next(w for w in report.workloads if w.name == "nvidia-smi").pools == ("gpu",)
    assert report.errors == []


def test_auto_mode_refuses_reserved():
    with pytest.raises(
        InputError, match=r"^args.capacity_types: capacity type reserved on EKS Auto Mode"
    ):
        validate_karpenter_pool_args(
            "p", KarpenterGpuNodePoolArgs(auto_mode=True, capacity_types=["reserved"])
        )


@pytest.mark.parametrize(
    ("given", "emitted"), [(None, None), ("Never", "Never"), ("2160h", "2160h")]
)
def test_expire_after_is_the_node_pools_template_expire_after(given, emitted):
    plan = validate_karpenter_pool_args("l4", args(gpu_names=["l4"], expire_after=given))
    assert plan.node_pool["spec"]["template"]["spec"].get("expireAfter") == emitted


def test_expire_after_is_never_by_default():
    """Karpenter's own default (720h) would replace a busy GPU node every 30 days."""
    plan = validate_karpenter_pool_args("l4", args(gpu_names=["l4"]))
    assert plan.node_pool["spec"]["template"]["spec"]["expireAfter"] == "Never"


def _stack(karpenter: dict) -> dict:
    return {
        "gpu-inference:cluster": {"provider": "eks", "name": "inference"},
        "gpu-inference:pools": [
            {"name": "l4", "maxNodes": 2, "karpenter": {"gpuNames": ["l4"], **karpenter}}
        ],
        "gpu-inference:addons": {"kserve": {"enabled": False}},
    }


def test_expire_after_from_the_stack_config_reaches_the_node_pool():
    from components.platform.load import load_spec
    from components.platform.pool_kinds import pool_args

    spec = load_spec(_stack({"nodeRole": "r", "expireAfter": "Never"}))
    pool = spec.pools[0]
    assert pool_args(pool, {"cluster.name": "inference"}).expire_after == "Never"
    assert "| `karpenter.expireAfter` | string | `Never` |" in _reference()


def test_a_bad_expire_after_in_the_stack_names_its_key():
    from components.model.errors import InputError
    from components.platform.load import load_spec

    with pytest.raises(InputError) as e:
        load_spec(_stack({"nodeRole": "r", "expireAfter": "30 days"}))
    assert str(e.value) == (
        "gpu-inference:pools[0].karpenter.expireAfter: expireAfter '30 days' is not a Karpenter "
        "duration (allowed: a duration such as 720h, 2160h, or Never)"
    )


def _reference() -> str:
    from components.platform import reference

    return reference.OUTPUT.read_text()


@pytest.mark.parametrize(
    ("kw", "path", "piece"),
    [
        (dict(capacity_types=["reserved"]), "args.capacity_types", "launches no reserved node"),
        (
            dict(capacity_types=["reserved", "on-demand"]),
            "args.capacity_types",
            "it falls back to the next capacity type",
        ),
        (
            dict(capacity_reservations=["cr-0abc"]),
            "args.capacity_reservations",
            "no capacity type is reserved",
        ),
        (
            dict(capacity_types=["reserved"], capacity_reservations=["r-1"]),
            "args.capacity_reservations[0]",
            "is not a capacity reservation id",
        ),
    ],
)
def test_reserved_capacity_needs_selected_reservations(kw, path, piece):
    with pytest.raises(InputError) as e:
        validate_karpenter_pool_args("p5", args(instance_families=["p5"], **kw))
    assert e.value.path == path and piece in str(e.value)


def test_reservations_are_the_node_class_selector_terms():
    plan = validate_karpenter_pool_args(
        "p5",
        args(
            instance_families=["p5"],
            capacity_types=["reserved", "on-demand"],
            capacity_reservations=["cr-0123456789abcdef0"],
            capacity_reservation_tags={"team": "llm"},
        ),
    )
    assert plan.node_class["spec"]["capacityReservationSelectorTerms"] == [
        {"id": "cr-0123456789abcdef0"},
        {"tags": {"team": "llm"}},
    ]


@pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")
def test_reservation_terms_validate_against_the_node_class_crd():
    from tests.crdschema import validate_cr

    plan = validate_karpenter_pool_args(
        "p5",
        args(
            instance_families=["p5"],
            capacity_types=["reserved"],
            capacity_reservations=["cr-0123456789abcdef0"],
            expire_after="Never",
        ),
    )
    validate_cr({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", **plan.node_class})
    validate_cr({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", **plan.node_pool})


def test_max_total_gpus_counts_physical_gpus_when_time_sliced():
    plain = validate_karpenter_pool_args("l4", args(gpu_names=["l4"], max_total_gpus=4))
    shared = validate_karpenter_pool_args(
        "l4", args(gpu_names=["l4"], max_total_gpus=4, time_slicing_replicas=3)
    )
    assert plain.node_pool["spec"]["limits"]["nvidia.com/gpu"] == "4"
    assert shared.node_pool["spec"]["limits"]["nvidia.com/gpu"] == "12"
