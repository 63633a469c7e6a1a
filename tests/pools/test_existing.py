"""ExistingGpuNodes under Pulumi mocks: one NodePatch per node with the pool's labels and taints
(Kubernetes casing), the placement it hands out (seed 004's node), and the errors."""

import json

import pytest

from components.model.errors import InputError
from components.model.scheduling import Taint
from components.model.scheduling.taints import OWN_TAINTS_ANNOTATION
from components.pools.existing import (
    ExistingGpuNodes,
    ExistingGpuNodesArgs,
    merged_taints,
    recorded_taints,
    taint_patch,
    validate_existing_nodes_args,
)
from components.pools.pool import GPU_TAINT, POOL_LABEL
from components.preview.mockrun import FakeCloud, run_program
from tests.conftest import MANAGER

PATCH = "kubernetes:core/v1:NodePatch"
GPU_TAINT_JSON = '[{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}]'


@pytest.fixture(scope="module")
def world():
    pools: dict[str, ExistingGpuNodes] = {}

    def program():
        # Seed 004's node: label pool=infer-srv, taint seldon-gpu-srv=true:NoSchedule, found by
        # GPU discovery labels it already carries.
        pools["srv"] = ExistingGpuNodes(
            "infer-srv",
            ExistingGpuNodesArgs(
                nodes=["gpu-node-1", "gpu-node-2"],
                gpus_per_node=2,
                gpu_model="A100",
                labels={"pool": "infer-srv"},
                taints=[Taint("seldon-gpu-srv", "true", "NoSchedule")],
                present_labels={"nvidia.com/gpu.product": "A100-SXM4-80GB"},
                select_labels=["pool"],
                patch_force=True,
            ),
        )
        pools["plain"] = ExistingGpuNodes(
            "rack-a", ExistingGpuNodesArgs(nodes=["node-a.example.lan"], gpus_per_node=8)
        )
        pools["cpu"] = ExistingGpuNodes(
            "cpu-nodes", ExistingGpuNodesArgs(nodes=["cpu-1"], gpus_per_node=0)
        )

    return run_program(program), pools


def test_node_patches(world):
    g, _ = world
    p1 = g.one(PATCH, "node-gpu-node-1")
    assert p1.inputs == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "gpu-node-1",
            "labels": {POOL_LABEL: "infer-srv", "pool": "infer-srv"},
            "annotations": {
                "gpu-inference.dev/gpus-per-node": "2",
                "pulumi.com/patchForce": "true",
                # Known to the placement check, never patched onto the node.
                "gpu-inference.dev/present-labels": '{"nvidia.com/gpu.product": "A100-SXM4-80GB"}',
                # What the hook before the patch is deleted takes off the node again.
                "gpu-inference.dev/taints": '[{"effect": "NoSchedule", "key": "seldon-gpu-srv", '
                '"value": "true"}]',
                # The stack's field manager: the same after a crash, released on destroy.
                "pulumi.com/patchFieldManager": MANAGER,
            },
        },
        "spec": {"taints": [{"key": "seldon-gpu-srv", "value": "true", "effect": "NoSchedule"}]},
    }
    assert g.one(PATCH, "node-gpu-node-2").inputs["metadata"]["name"] == "gpu-node-2"
    plain = g.one(PATCH, "node-node-a.example.lan")
    assert plain.inputs["metadata"] == {
        "name": "node-a.example.lan",
        "labels": {POOL_LABEL: "rack-a"},
        # spec.taints is atomic under server-side apply and the kubelet owns it: adding taints
        # always takes it over.
        "annotations": {
            "gpu-inference.dev/gpus-per-node": "8",
            "pulumi.com/patchForce": "true",
            "gpu-inference.dev/taints": GPU_TAINT_JSON,
            "pulumi.com/patchFieldManager": MANAGER,
        },
    }
    assert plain.inputs["spec"] == {
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    }
    cpu = g.one(PATCH, "node-cpu-1")
    # No taint added: no spec at all (`taints: []` would wipe the node's taints, or conflict).
    assert "spec" not in cpu.inputs
    assert cpu.inputs["metadata"]["annotations"] == {
        "gpu-inference.dev/gpus-per-node": "0",
        "pulumi.com/patchFieldManager": MANAGER,
    }
    comp = g.one("gpu-inference:index:ExistingGpuNodes", "infer-srv")
    assert p1.parent == comp.urn


def test_seed004_node_placement(world):
    _, pools = world
    srv = pools["srv"]
    assert srv.placement.to_pod_spec() == {
        "nodeSelector": {"pool": "infer-srv"},
        "tolerations": [
            {"effect": "NoSchedule", "key": "seldon-gpu-srv", "operator": "Equal", "value": "true"}
        ],
    }
    assert srv.labels == {
        POOL_LABEL: "infer-srv",
        "pool": "infer-srv",
        "nvidia.com/gpu.product": "A100-SXM4-80GB",
    }
    f = srv.facts
    assert (f.min_nodes, f.max_nodes, f.spot) == (2, 2, False)
    assert f.gpus_per_node == 2 and f.gpu_model == "A100"
    assert f.custom_gpu_taint is True
    assert f.extended_resource_toleration is False
    assert f.cloud == "existing"


def test_default_gpu_placement(world):
    _, pools = world
    plain = pools["plain"]
    assert plain.taints == [GPU_TAINT]
    assert plain.placement.to_pod_spec() == {
        "nodeSelector": {POOL_LABEL: "rack-a"},
        "tolerations": [
            {
                "key": "nvidia.com/gpu",
                "operator": "Equal",
                "value": "present",
                "effect": "NoSchedule",
            }
        ],
    }
    assert pools["cpu"].placement.to_pod_spec() == {"nodeSelector": {POOL_LABEL: "cpu-nodes"}}


def test_extended_resource_toleration_is_recorded():
    plan = validate_existing_nodes_args(
        "p", ExistingGpuNodesArgs(nodes=["n"], gpus_per_node=1, extended_resource_toleration=True)
    )
    assert plan.facts.extended_resource_toleration is True
    # Written on the nodes, so the placement check of any graph knows the cluster runs the plugin.
    assert plan.patches["n"]["metadata"]["annotations"] == {
        "gpu-inference.dev/gpus-per-node": "1",
        "gpu-inference.dev/extended-resource-toleration": "true",
        "pulumi.com/patchForce": "true",
        "gpu-inference.dev/taints": GPU_TAINT_JSON,
    }


def test_the_check_reads_extended_resource_toleration_from_the_nodes():
    """A GPU pod without the GPU toleration lands on existing nodes only where the cluster runs
    ExtendedResourceToleration, and the graph says so through the NodePatch annotation."""
    from components.check import check

    def graph(ert: bool) -> list[dict]:
        annotations = {"gpu-inference.dev/gpus-per-node": "1"}
        if ert:
            annotations["gpu-inference.dev/extended-resource-toleration"] = "true"
        node = {
            "type": "kubernetes:core/v1:NodePatch",
            "name": "n1",
            "inputs": {
                "metadata": {"name": "n1", "labels": {"pool": "gpu"}, "annotations": annotations},
                "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            },
        }
        pod = {
            "type": "kubernetes:apps/v1:Deployment",
            "name": "d",
            "inputs": {
                "spec": {
                    "template": {
                        "spec": {
                            "nodeSelector": {"pool": "gpu"},
                            "containers": [
                                {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}
                            ],
                        }
                    }
                }
            },
        }
        return [node, pod]

    on, off = check(graph(True)), check(graph(False))
    assert on.extended_resource_toleration and not off.extended_resource_toleration
    assert [w.pools for w in on.workloads] == [("n1",)] and not on.errors
    assert [w.pools for w in off.workloads] == [()] and [f.code for f in off.errors] == ["GI001"]


BAD = [
    ({"nodes": []}, "args.nodes", ["the list is empty"]),
    ({"nodes": "gpu-node-1"}, "args.nodes", ["expected a list, got 'gpu-node-1'"]),
    ({"nodes": ["Node_1"]}, "args.nodes[0]", ["'Node_1'", "DNS"]),
    ({"nodes": ["a", "a"]}, "args.nodes[1]", ["listed twice"]),
    ({"gpus_per_node": -1}, "args.gpus_per_node", ["-1 is out of range", "a number >= 0"]),
    (
        {"gpus_per_node": 0, "gpu_model": "A100"},
        "args.gpus_per_node",
        ["must say how many GPUs each node has"],
    ),
    ({"taints": []}, "args.taints", ["GPU pool without a NoSchedule or NoExecute taint"]),
    ({"labels": {POOL_LABEL: "x"}}, f"args.labels.{POOL_LABEL}", ["reserved"]),
    (
        {"present_labels": {POOL_LABEL: "x"}},
        f"args.present_labels.{POOL_LABEL}",
        ["the pool label"],
    ),
    (
        {"labels": {"gpu": "a"}, "present_labels": {"gpu": "b"}},
        "args.labels.gpu",
        ["contradicts the present label gpu='b'"],
    ),
    ({"select_labels": ["nvidia.com/gpu.product"]}, "args.select_labels[0]", ["do not carry"]),
    ({"pool_name": "Rack"}, "args.pool_name", ["'Rack'"]),
]


@pytest.mark.parametrize("overrides, path, pieces", BAD, ids=[b[1] + ":" + b[2][0] for b in BAD])
def test_bad_existing_nodes_args(overrides, path, pieces):
    base = dict(nodes=["gpu-node-1"], gpus_per_node=1)
    base.update(overrides)
    with pytest.raises(InputError) as info:
        validate_existing_nodes_args("p", ExistingGpuNodesArgs(**base))
    assert info.value.path == path
    for piece in pieces:
        assert piece in str(info.value), str(info.value)


def test_error_names_the_component():
    with pytest.raises(InputError) as info:
        ExistingGpuNodes("p", ExistingGpuNodesArgs(nodes=[], gpus_per_node=1))
    assert info.value.path == "ExistingGpuNodes('p').args.nodes"


# -- taints merged with the node's own at deploy time (issue 12.5) -------------------------------


class NodesWithTaints(FakeCloud):
    """A cluster whose nodes already carry taints of other managers."""

    LIVE = {
        "gpu-node-1": [
            {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
            {"key": "nvidia.com/gpu", "value": "old", "effect": "NoSchedule"},
        ],
        "gpu-node-2": [],
    }

    def new_resource(self, args):
        node_id, state = super().new_resource(args)
        if args.typ == "kubernetes:core/v1:Node" and args.resource_id:
            state["spec"] = {"taints": self.LIVE[args.resource_id]}
        return node_id, state


def test_added_taints_merge_with_the_nodes_own():
    """The patch applies the node's taints (not its condition taints, not an older value of our
    key+effect) followed by the pool's, so a forced apply of the atomic list removes nothing."""
    g = run_program(
        lambda: ExistingGpuNodes(
            "gpu",
            ExistingGpuNodesArgs(nodes=["gpu-node-1", "gpu-node-2"], gpus_per_node=1),
        ),
        mocks=NodesWithTaints(),
    )
    assert g.one(PATCH, "node-gpu-node-1").inputs["spec"] == {
        "taints": [
            {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        ]
    }
    assert g.one(PATCH, "node-gpu-node-2").inputs["spec"] == {
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    }


def test_merged_taints_keeps_order_and_reads_sdk_objects():
    class T:  # the SDK's outputs.Taint shape
        def __init__(self, key, value, effect):
            self.key, self.value, self.effect = key, value, effect

    ours = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    current = [
        T("a", None, "NoSchedule"),
        T("gpu", "old", "NoExecute"),
        T("gpu", "x", "NoSchedule"),
    ]
    assert merged_taints(current, ours) == [
        {"key": "a", "effect": "NoSchedule"},
        {"key": "gpu", "value": "old", "effect": "NoExecute"},  # another effect: not ours
        {"key": "gpu", "value": "true", "effect": "NoSchedule"},
    ]
    assert merged_taints(None, ours) == ours


def test_a_taint_taken_out_of_the_config_leaves_the_node_and_others_taints_stay():
    site = {"key": "site.example/maintenance", "value": "planned", "effect": "PreferNoSchedule"}
    gpu = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    team = {"key": "team", "value": "ml", "effect": "NoSchedule"}
    # The pool set gpu and team; the config now has gpu only.
    node = {
        "metadata": {"annotations": {OWN_TAINTS_ANNOTATION: json.dumps([gpu, team])}},
        "spec": {"taints": [site, gpu, team]},
    }
    assert recorded_taints(node["metadata"]) == [gpu, team]
    assert taint_patch(node["spec"], [gpu], recorded_taints(node["metadata"])) == {
        "taints": [site, gpu]
    }
    # Without the annotation (a node this stack never tainted) every taint but ours stays.
    assert (
        recorded_taints({}) == []
        and recorded_taints({"annotations": {OWN_TAINTS_ANNOTATION: "x"}}) == []
    )
    assert taint_patch(node["spec"], [gpu]) == {"taints": [site, team, gpu]}


def test_declared_allocatable_rides_on_every_node_patch():
    from components.pools.existing import ALLOCATABLE_ANNOTATION

    plan = validate_existing_nodes_args(
        "a100",
        ExistingGpuNodesArgs(
            nodes=["gpu-1", "gpu-2"],
            gpus_per_node=4,
            node_allocatable={"cpu": 63, "memory": "480Gi", "ephemeral-storage": "1600Gi"},
        ),
    )
    for node in ("gpu-1", "gpu-2"):
        annotations = plan.patches[node]["metadata"]["annotations"]
        assert json.loads(annotations[ALLOCATABLE_ANNOTATION]) == {
            "cpu": "63",
            "ephemeral-storage": "1600Gi",
            "memory": "480Gi",
        }


@pytest.mark.parametrize(
    ("given", "path", "piece"),
    [
        ({"cpu": "8"}, "args.node_allocatable", "must give memory, ephemeral-storage"),
        (
            {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "disk": "1Ti"},
            "args.node_allocatable.disk",
            "'disk' is not a resource the fit check knows",
        ),
        (
            {"cpu": "8", "memory": "32GB", "ephemeral-storage": "100Gi"},
            "args.node_allocatable.memory",
            "not a valid quantity",
        ),
    ],
)
def test_declared_allocatable_is_checked(given, path, piece):
    with pytest.raises(InputError) as e:
        validate_existing_nodes_args(
            "a100", ExistingGpuNodesArgs(nodes=["gpu-1"], gpus_per_node=4, node_allocatable=given)
        )
    assert e.value.path == path and piece in str(e.value)


def test_node_allocatable_in_the_stack_names_its_key():
    from components.platform.load import load_spec

    config = {
        "gpu-inference:cluster": {"provider": "existing"},
        "gpu-inference:pools": [
            {"name": "a100", "nodes": ["gpu-1"], "gpusPerNode": 4, "nodeAllocatable": {"cpu": "8"}}
        ],
        "gpu-inference:addons": {"kserve": {"enabled": False}},
    }
    with pytest.raises(InputError) as e:
        load_spec(config)
    assert e.value.path == "gpu-inference:pools[0].nodeAllocatable"
