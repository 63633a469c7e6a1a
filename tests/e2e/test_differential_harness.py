"""The scheduler differential's own bookkeeping, without a rig (runs in the unit tier): the slot
trick is only sound if these hold."""

from __future__ import annotations

import json

from differential import (
    PAIR_LABEL,
    SLOT_LABEL,
    Pair,
    RigNode,
    _asks_gpus,
    _node_body,
    _pod_body,
    assign_slots,
    pairs_from_graph,
    pod_spec,
)
from generated_cases import draw_cases

from components.model.nodes.shapes import Resources


def _pairs(count: int = 30, seed: int = 11) -> list[Pair]:
    out = []
    for i, case in enumerate(draw_cases(count, seed)):
        pairs, _ = pairs_from_graph(f"case {i}", case["graph"], extended_resource_toleration=True)
        out += pairs
    return out


def test_slots_share_nodes_only_within_a_pool_and_hold_one_gpu_pod_at_most() -> None:
    pairs = _pairs()
    slots = assign_slots(pairs)
    assert sorted(id(p) for s in slots for p in s) == sorted(id(p) for p in pairs)
    for members in slots:
        assert len({(p.source, p.pool) for p in members}) == 1
        assert len({repr(p.nodes) for p in members}) == 1
        assert sum(_asks_gpus(p.pod_spec) for p in members) <= 1
        # What the slot's pods ask together fits each of its nodes beside their DaemonSets: no
        # pod takes another's room (a DaemonSet's pair makes no pod of its own).
        total = sum(
            (p.asks for p in members if p.asks is not None and p.daemon is None), Resources()
        )
        assert len(members) == 1 or all(n.holds(total) for n in members[0].nodes)
    assert len(slots) < len(pairs)  # the sharing happens


def test_generated_keys_stay_off_the_slot_label_and_kubernetes_own() -> None:
    text = json.dumps(draw_cases(30, 5))
    for reserved in (SLOT_LABEL, "e2e.gpu-inference.dev", "kubernetes.io/", "node.kubernetes.io"):
        assert reserved not in text


def test_the_pod_is_the_template_plus_the_slot_selector() -> None:
    fragment = {
        "nodeSelector": {"pool": "a"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                            ]
                        },
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["x"]}
                            ]
                        },
                    ]
                }
            }
        },
        "tolerations": [
            {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300.0}
        ],
        "minReplicas": 0,
    }
    containers = [{"name": "kserve", "resources": {"limits": {"nvidia.com/gpu": 1}}, "env": [1]}]
    spec = pod_spec(fragment, containers, [])
    assert spec == {
        "nodeSelector": {"pool": "a"},
        "affinity": fragment["affinity"],
        "tolerations": [
            {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ],
        "containers": [
            {
                "name": "c0",
                "image": "example.invalid/diff:1",
                "resources": {"limits": {"nvidia.com/gpu": "1"}},
            }
        ],
    }
    nodes = (RigNode({"pool": "a"}, (), 1, "n0"), RigNode({"pool": "a"}, (), 1, "n1"))
    pair = Pair("g", "Deployment/w", "a", True, spec, nodes)
    body = _pod_body("run1", 7, 3, 0, pair)
    assert body["metadata"]["labels"][PAIR_LABEL] == "3"
    assert body["spec"]["nodeSelector"] == {"pool": "a", SLOT_LABEL: "7"}
    terms = body["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert [t["matchFields"][0]["values"] for t in terms["nodeSelectorTerms"]] == [
        ["drun1-7-1"],
        ["x"],
    ]
    assert pair.pod_spec == spec  # the pair's own spec is left as it was
    node = _node_body("run1", 7, 1, nodes[1])
    assert node["metadata"]["name"] == "drun1-7-1"
    assert node["metadata"]["labels"][SLOT_LABEL] == "7"
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "1"


def test_llm_service_pods_become_judge_pods() -> None:
    """Each pod an LLMInferenceService makes is a pair against every pool, submitted as the
    controller would make it: its placement, its GPUs, the containers the presets add (the
    routing sidecar stays a restartable init container)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "check"))
    from llm_graphs import POOLS, multi_node, prefill_decode

    pairs = []
    for i, service in enumerate((prefill_decode(), multi_node())):
        found, ert = pairs_from_graph(f"llm {i}", [*POOLS, service])
        assert ert is True
        pairs += found
    landing = {(p.workload, p.pool) for p in pairs if p.predicted}
    rid = "LLMInferenceService/llama/llama-kserve"
    assert landing == {
        (rid, "h100"),
        (f"{rid}-prefill", "h100"),
        (f"{rid}-router-scheduler", "cpu"),
        (f"{rid}-mn/leader", "h100"),
        (f"{rid}-mn/worker", "h100"),
    }
    assert len(pairs) == 6 * 3
    spec = {p.workload: p.pod_spec for p in pairs}
    assert [c.get("restartPolicy") for c in spec[rid]["initContainers"]] == ["Always", None]
    assert spec[rid]["containers"][0]["resources"] == {
        "requests": {"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": "4"},
        "limits": {"nvidia.com/gpu": "4"},
    }
    assert spec[f"{rid}-router-scheduler"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1", "memory": "2Gi"},
        "limits": {"cpu": "6", "memory": "16Gi"},
    }
    for index, pair in enumerate(pairs):
        body = _pod_body("run1", 1, index, 0, pair)
        assert body["spec"]["nodeSelector"][SLOT_LABEL] == "1"
        assert _asks_gpus(body["spec"]) == ("router-scheduler" not in pair.workload)


def test_a_daemonset_pod_is_pinned_to_its_node_and_keeps_its_own_affinity() -> None:
    """As the DaemonSet controller makes it (NewPod): its template, the controller's tolerations,
    and the node pinned by a matchFields term ANDed into each required term, so the scheduler
    still checks the labels the controller checks."""
    from differential import _daemon_body

    spec = {
        "tolerations": [{"operator": "Exists"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]},
                        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b"]}]},
                    ]
                }
            }
        },
        "containers": [{"name": "d", "resources": {"requests": {"cpu": "100m"}}}],
    }
    body = _daemon_body("r1", "ds0-1-0", 0, "dr1-0-1", 0, spec)
    pod = body["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    pin = {"key": "metadata.name", "operator": "In", "values": ["dr1-0-1"]}
    assert [t["matchFields"] for t in terms] == [[pin], [pin]]
    assert [t["matchExpressions"][0]["values"] for t in terms] == [["a"], ["b"]]
    keys = {t.get("key") for t in pod["tolerations"]}
    assert {"node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready"} <= keys
    assert pod["nodeSelector"] == {"e2e.gpu-inference.dev/slot": "0"}
    # A DaemonSet without affinity gets a term of its own: the pin alone.
    bare = _daemon_body("r1", "k", 0, "n", 3, {"containers": [{"name": "d"}]})["spec"]
    assert bare["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [pin | {"values": ["n"]}]}]
    }
