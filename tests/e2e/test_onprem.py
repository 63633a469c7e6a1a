"""The on-prem stack through the real Pulumi engine onto the rig's control plane.

The stack is `stacks/Pulumi.onprem.yaml` pointed at the rig: its nodes are kwok nodes that already
carry labels and a taint set by another field manager (the site's), Knative is "already installed"
(a `knative-serving/config-features` ConfigMap made here), the device plugin and Seldon Core 2
come from our test charts (`addons.<name>.chart`), and the upstream CRDs from ../shared/crds are
installed first so the API server validates every custom resource for real. One ServerConfig is
added so that every kind the stack can emit is deployed.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import rig
import yaml
from stack import (
    CHARTS,
    PLURALS,
    REPO,
    api_path,
    crd_files,
    node_state,
    not_in,
    of_kind,
    offline_preview,
    policy_pack,
    require_shared,
    taint_set,
    write_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.tier("Pulumi half")]

STACK = "e2e"
PODSPEC_FLAGS = {
    "kubernetes.podspec-affinity": "enabled",
    "kubernetes.podspec-nodeselector": "enabled",
    "kubernetes.podspec-tolerations": "enabled",
}
# What the site set on its nodes before gpu-inference came: the labels node-feature-discovery
# would set (the stack's presentLabels) plus a rack label, and a maintenance taint of its own.
SITE_TAINT = {"key": "site.example/maintenance", "value": "planned", "effect": "PreferNoSchedule"}
GPU_NODE_LABELS = {
    "gpu.gpu-vendor.example/installed-memory": "98304",
    "feature.node.kubernetes.io/pci-10.present": "true",
    "cloud.google.com/gke-accelerator-count": "4",
    "site.example/rack": "r1",
}
NODES = {
    "gpu-node-01": (GPU_NODE_LABELS, 4),
    "gpu-node-02": (GPU_NODE_LABELS, 4),
    "cpu-node-01": ({"site.example/rack": "r2"}, 0),
}
# Knative as a site installs it: config-features with an entry of its own, no podspec flags yet.
CONFIG_FEATURES = {"kubernetes.podspec-fieldref": "disabled", "_example": "site defaults"}


def onprem_config(kubeconfig: Path) -> dict[str, Any]:
    """stacks/Pulumi.onprem.yaml, pointed at the rig, with add-ons from our test charts."""
    doc = yaml.safe_load((REPO / "stacks" / "Pulumi.onprem.yaml").read_text())["config"]
    config = {k.split(":", 1)[1]: v for k, v in doc.items()}
    config["cluster"] = {
        **config["cluster"],
        "kubeconfig": str(kubeconfig),
        "context": "rig",
    }
    config["addons"] = {
        **config["addons"],
        "nvidiaDevicePlugin": {"enabled": True, "chart": str(CHARTS / "nvidia-device-plugin")},
        "seldon": {
            "enabled": True,
            "chart": {k: str(CHARTS / "marker") for k in ("crds", "setup", "runtime")},
        },
    }
    seldon = copy.deepcopy(config["seldon"])
    seldon["serverConfigs"] = [
        {
            "name": "mlserver-edge",
            "pool": "cpu-edge",
            "containers": [
                {"name": "agent", "image": "docker.io/seldonio/seldon-agent:2.6.0"},
                {"name": "rclone", "image": "docker.io/seldonio/seldon-rclone:2.6.0"},
                {"name": "mlserver", "image": "docker.io/seldonio/mlserver:1.6.1"},
            ],
        }
    ]
    config["seldon"] = seldon
    return config


@contextlib.contextmanager
def onprem_control_plane() -> Iterator[rig.ControlPlane]:
    """A control plane with the upstream CRDs, the site's nodes and Knative's config-features."""
    require_shared()
    # On-prem clusters run upstream's admission plugins: ExtendedResourceToleration off.
    with rig.ControlPlane(extended_resource_toleration=False) as cp:
        cp.apply_crd_files(crd_files())
        for name, (labels, gpus) in NODES.items():
            cp.create_node(name, labels=labels, taints=[SITE_TAINT], gpus=gpus)
        cp.create_namespace("knative-serving")
        cp.request(
            "POST",
            "/api/v1/namespaces/knative-serving/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "config-features", "namespace": "knative-serving"},
                "data": CONFIG_FEATURES,
            },
        )
        yield cp


@pytest.fixture(scope="module")
def cluster(pulumi_install):
    with onprem_control_plane() as cp:
        yield cp


def nodes_now(cp: rig.ControlPlane) -> dict[str, Any]:
    return {n: node_state(cp.get(f"/api/v1/nodes/{n}")) for n in NODES}


def node_whole(node: Mapping[str, Any]) -> dict[str, Any]:
    """What a node is to its owner: labels, annotations, taints (in order)."""
    meta = node["metadata"]
    return {
        "labels": dict(meta.get("labels") or {}),
        "annotations": dict(meta.get("annotations") or {}),
        "taints": list(node["spec"].get("taints") or []),
    }


def namespaces(cp: rig.ControlPlane) -> set[str]:
    """The namespaces that exist (those terminating count as gone)."""
    items = cp.get("/api/v1/namespaces")["items"]
    return {
        n["metadata"]["name"] for n in items if n.get("status", {}).get("phase") != "Terminating"
    }


def config_features(cp: rig.ControlPlane) -> dict[str, str]:
    return cp.get("/api/v1/namespaces/knative-serving/configmaps/config-features")["data"]


def pod_templates(doc: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]]:
    """(label, pod-spec fragment, wired pool) for each pod template of a workload CR."""
    meta = doc["metadata"]
    annotations = meta.get("annotations") or {}
    spec = doc["spec"]
    out = []
    if doc["kind"] == "InferenceService":
        for comp in ("predictor", "transformer", "explainer"):
            if comp in spec:
                out.append(
                    (
                        f"{meta['name']}-{comp}",
                        spec[comp],
                        annotations.get(f"gpu-inference.dev/pool.{comp}", ""),
                    )
                )
    elif "podSpec" in spec:
        out.append((meta["name"], spec["podSpec"], annotations.get("gpu-inference.dev/pool", "")))
    return out


def gpus_requested(fragment: Any) -> int:
    """The nvidia.com/gpu request found anywhere in a pod template (model or container)."""
    if isinstance(fragment, Mapping):
        found = fragment.get("requests", {})
        if isinstance(found, Mapping) and "nvidia.com/gpu" in found:
            return int(found["nvidia.com/gpu"])
        return max((gpus_requested(v) for v in fragment.values()), default=0)
    if isinstance(fragment, list):
        return max((gpus_requested(v) for v in fragment), default=0)
    return 0


def test_onprem_up_matches_the_preview_and_destroy_leaves_the_nodes_as_found(cluster, tmp_path):
    cp = cluster
    config = onprem_config(cp.kubeconfig)
    project = write_project(tmp_path / "project", STACK, config)
    docs = offline_preview(project, STACK, tmp_path / "preview")
    patches = {d["metadata"]["name"]: d for d in of_kind(docs, "Node")}
    assert set(patches) == set(NODES), "the preview patches exactly the stack's nodes"
    before = nodes_now(cp)
    whole_before = {n: node_whole(cp.get(f"/api/v1/nodes/{n}")) for n in NODES}
    namespaces_before = namespaces(cp)
    features_before = config_features(cp)

    pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig)
    pulumi.run("stack", "init", STACK, cwd=project)
    pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=1200)

    # Nodes: the site's labels and taint, plus exactly what the preview's patches said.
    after = nodes_now(cp)
    for name, patch in patches.items():
        labels, taints = after[name]
        want_labels = {**before[name][0], **patch["metadata"]["labels"]}
        want_taints = before[name][1] | taint_set(patch["spec"].get("taints"))
        assert labels == want_labels, f"node {name} labels"
        assert taints == want_taints, f"node {name} taints (the site's must stay)"
        live = cp.get(f"/api/v1/nodes/{name}")
        # pulumi.com/* annotations instruct the provider (patchForce): not asserted on the node.
        ours = {
            k: v
            for k, v in patch["metadata"]["annotations"].items()
            if not k.startswith("pulumi.com/")
        }
        assert not_in(ours, live["metadata"]["annotations"]) == [], f"node {name} annotations"

    # ...and the preview said what the stack asks: every pool taint is on each of its nodes.
    for pool in config["pools"]:
        for node in pool["nodes"]:
            lacking = taint_set(pool.get("taints")) - after[node][1]
            assert not lacking, f"node {node} lacks pool {pool['name']}'s taints {sorted(lacking)}"

    # Knative: the three podspec flags on, the site's own entries kept.
    assert config_features(cp) == {**CONFIG_FEATURES, **PODSPEC_FLAGS}

    # Every workload CR as the preview wrote it, admitted by the API server's CRD validation
    # (a field the CRD does not know would have been pruned: `not_in` reports it missing).
    workloads = of_kind(docs, "InferenceService", "Server", "ServerConfig", "Model")
    assert sorted({d["kind"] for d in workloads}) == [
        "InferenceService",
        "Model",
        "Server",
        "ServerConfig",
    ]
    for doc in workloads:
        live = cp.get(api_path(doc, PLURALS[doc["kind"]]))
        assert live is not None, f"{doc['kind']} {doc['metadata']['name']} was not created"
        expected = {"metadata": {k: v for k, v in doc["metadata"].items()}, "spec": doc["spec"]}
        assert not_in(expected, live) == [], f"{doc['kind']} {doc['metadata']['name']}"

    # The real scheduler: a pod with each workload's scheduling lands on its wired pool only.
    pool_nodes: dict[str, set[str]] = {}
    for name, patch in patches.items():
        pool_nodes.setdefault(patch["metadata"]["labels"]["gpu-inference.dev/pool"], set()).add(
            name
        )
    for doc in workloads:
        for label, fragment, wired in pod_templates(doc):
            pod = f"probe-{label}"[:63]
            cp.create_pod(
                pod,
                namespace="default",
                gpus=gpus_requested(fragment),
                node_selector=fragment.get("nodeSelector"),
                affinity=fragment.get("affinity"),
                tolerations=fragment.get("tolerations") or (),
            )
            state, where = cp.wait_pod_scheduled(pod, "default")
            allowed = set().union(*(pool_nodes[p] for p in wired.split(",") if p))
            assert state == "bound" and where in allowed, (
                f"{doc['kind']} {label} (wired to {wired}): {state} {where}"
            )

    # The device plugin (our test chart) runs on every GPU node and nowhere else.
    gpu_nodes = {n for n, (_, gpus) in NODES.items() if gpus}
    deadline = time.monotonic() + 60
    while True:
        pods = cp.get("/api/v1/namespaces/nvidia-device-plugin/pods")["items"]
        placed = {p["spec"].get("nodeName") for p in pods}
        if placed == gpu_nodes or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert placed == gpu_nodes, "device plugin pods must run on every GPU node"

    # Seldon Core 2's three releases came from the local marker chart, where the preview said.
    graph = json.loads((tmp_path / "preview" / "resources.json").read_text())
    marked = [
        (r["inputs"]["namespace"], r["inputs"]["name"])
        for r in graph
        if r["type"] == "kubernetes:helm.sh/v3:Release"
        and r["inputs"]["chart"] == str(CHARTS / "marker")
    ]
    assert sorted(n for _, n in marked) == [
        "seldon-core-v2-crds",
        "seldon-core-v2-runtime",
        "seldon-core-v2-setup",
    ]
    for ns, release in marked:
        installed = cp.get(f"/api/v1/namespaces/{ns}/configmaps/{release}-installed")
        assert installed is not None and installed["data"]["chart"] == "marker", release

    for pod in cp.get("/api/v1/namespaces/default/pods")["items"]:
        cp.delete_pod(pod["metadata"]["name"], "default")

    # No perma-diff: a second preview finds nothing to change.
    pulumi.run("preview", "--expect-no-changes", cwd=project, timeout=600)

    # Plain `destroy` does not run the program, so the hook that gives the nodes their own
    # taints back could not run: the engine refuses (pulumi v3.259.0 pkg/engine/destroy.go).
    plain = pulumi.run("destroy", "--yes", "--skip-preview", cwd=project, check=False)
    assert plain.returncode != 0
    assert "--run-program" in plain.stdout + plain.stderr
    pulumi.run("destroy", "--yes", "--skip-preview", "--run-program", cwd=project, timeout=1200)
    # Destroy leaves each node as it found it: its labels, annotations and taints exactly (ours
    # released, the taint list set back to the node's own before our patch let go of it), and
    # the namespaces the stack made are gone, those it found stay.
    assert {n: node_whole(cp.get(f"/api/v1/nodes/{n}")) for n in NODES} == whole_before
    assert namespaces(cp) == namespaces_before
    assert config_features(cp) == features_before


def break_one_toleration_program(main: str) -> str:
    """The stack program, with one toleration of the InferenceService's predictor broken on its
    way to the engine (a resource transform): the value no longer matches the pool's taint. The
    transform comes first: a stack transform applies only to resources registered after it."""
    return (
        """import pulumi


def _break_one_toleration(args):
    if args.type_ != "kubernetes:serving.kserve.io/v1beta1:InferenceService":
        return None
    props = dict(args.props)
    spec = dict(props["spec"])
    predictor = dict(spec["predictor"])
    first = dict(predictor["tolerations"][0])
    first["value"] = "broken"
    predictor["tolerations"] = [first, *predictor["tolerations"][1:]]
    spec["predictor"] = predictor
    props["spec"] = spec
    return pulumi.ResourceTransformResult(props, args.opts)


pulumi.runtime.register_resource_transform(_break_one_toleration)

"""
        + main
    )


def test_policy_pack_through_the_real_engine(cluster, tmp_path):
    # Without pulumi-policy (policy/requirements.txt) the pack cannot start: skip, saying so.
    pytest.importorskip(
        "pulumi_policy",
        reason="pulumi-policy is not installed: pip install -r policy/requirements.txt (see README)",
    )
    cp = cluster
    pack = policy_pack(tmp_path / "policy")
    config = onprem_config(cp.kubeconfig)
    pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig)

    clean = write_project(tmp_path / "clean", STACK, config)
    pulumi.run("stack", "init", STACK, cwd=clean)
    ok = pulumi.run("preview", "--policy-pack", str(pack), cwd=clean, check=False, timeout=600)
    assert ok.returncode == 0, f"clean stack refused by the policy pack:\n{ok.stdout}\n{ok.stderr}"

    broken = write_project(tmp_path / "broken", f"{STACK}-broken", config)
    main = broken / "__main__.py"
    main.write_text(break_one_toleration_program(main.read_text()))
    pulumi.run("stack", "init", f"{STACK}-broken", cwd=broken)
    bad = pulumi.run("preview", "--policy-pack", str(pack), cwd=broken, check=False, timeout=600)
    out = bad.stdout + bad.stderr
    assert bad.returncode != 0, f"the broken toleration passed the policy pack:\n{out}"
    assert "gpu-placement-errors" in out, out
    assert "torchscript-cifar" in out and "GI0" in out, out
    print(out[-3000:])
