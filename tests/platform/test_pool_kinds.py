"""The newer pool kinds from the stack config: `pools[i].karpenter` (EKS) builds a Karpenter NodePool
and EC2NodeClass; the example stack previews clean and CRD-valid; a broken copy (a workload asking
for a GPU its pool cannot provide) exits 1 with the finding; config refusals name the key."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from components.preview.cli import main
from tests.conftest import CRDS

ROOT = Path(__file__).resolve().parents[2]
NS = "gpu-inference"


def _project(tmp_path: Path, stack: str, text: str) -> Path:
    """A copy of this project whose stack `stack` has the config `text`."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)
    return tmp_path


def _preview(capsys, project: Path, stack: str) -> tuple[int, str]:
    code = main(["preview", stack, "--project-dir", str(project), "--out", str(project / "out")])
    out, err = capsys.readouterr()
    return code, out + err


def _karpenter_text() -> str:
    return (ROOT / "stacks" / "Pulumi.eks-karpenter.yaml").read_text()


def test_eks_karpenter_previews_clean_and_crd_valid(tmp_path, capsys):
    project = _project(tmp_path, "eks-karpenter", _karpenter_text())
    code, out = _preview(capsys, project, "eks-karpenter")
    assert code == 0, out
    assert "placement: 0 errors" in out
    graph = json.loads((project / "out" / "resources.json").read_text())
    pools = {
        e["name"]: e["inputs"] for e in graph if e["type"].endswith("karpenter.sh/v1:NodePool")
    }
    assert sorted(pools) == ["h100", "l4-a10g"]
    reqs = pools["h100"]["spec"]["template"]["spec"]["requirements"]
    assert {
        "key": "karpenter.k8s.aws/instance-family",
        "operator": "In",
        "values": ["p5", "p5e", "p5en"],
    } in reqs
    assert pools["h100"]["spec"]["limits"] == {"nodes": "2", "nvidia.com/gpu": "16"}
    placement = json.loads((project / "out" / "placement.json").read_text())
    lands = {w["resource"]: w["pools"] for w in placement["workloads"]}
    assert lands == {
        "InferenceService/gpu-inference-isvc-models-llama-70b/predictor": ["h100"],
        "InferenceService/gpu-inference-isvc-models-llama-8b/predictor": ["l4-a10g"],
        "InferenceService/gpu-inference-isvc-models-llama-8b/transformer": ["cpu"],
    }
    if CRDS.exists():
        from tests.crdschema import validate_cr

        for e in graph:
            if e["type"].startswith("kubernetes:karpenter."):
                validate_cr(e["inputs"])


def test_broken_copy_asking_for_a_gpu_the_pool_cannot_provide_exits_1(tmp_path, capsys):
    text = _karpenter_text().replace(
        "        pool: l4-a10g\n        gpus: 1\n",
        "        pool: l4-a10g\n        gpus: 1\n        extraExpressions:\n"
        "          - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [h100]}\n",
    )
    assert "extraExpressions" in text
    project = _project(tmp_path, "broken", text)
    code, out = _preview(capsys, project, "broken")
    assert code == 1, out
    assert "GI001" in out and "llama-8b/predictor" in out


def test_more_gpus_than_the_requirements_admit_is_refused(tmp_path, capsys):
    text = _karpenter_text().replace(
        "        pool: l4-a10g\n        gpus: 1\n", "        pool: l4-a10g\n        gpus: 2\n"
    )
    project = _project(tmp_path, "broken", text)
    code, out = _preview(capsys, project, "broken")
    assert code == 2, out
    assert (
        f"{NS}:inferenceServices[0].predictor.gpus: 2 GPU(s) asked for but a node of pool 'l4-a10g' has 1"
        in out
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "        gpuNames: [l4, a10g]\n",
            "        gpuNames: [l4, a10]\n",
            f"{NS}:pools[0].karpenter.gpuNames[1]: GPU name 'a10' is not one an EC2 instance type "
            "in the catalog has (allowed: a100, a10g, h100, h200, l4, l40s, t4, t4g, v100)",
        ),
        (
            "        maxGpus: 1\n",
            "        minGpus: 2\n        maxGpus: 3\n",
            f"{NS}:pools[0].karpenter: the requirements (karpenter.k8s.aws/instance-gpu-count Gt "
            "1; karpenter.k8s.aws/instance-gpu-count Lt 4; karpenter.k8s.aws/instance-gpu-name In "
            "l4,a10g) admit no GPU instance type in the catalog (allowed: requirements some "
            "catalog instance type meets: a10g: 1, 4, 8 GPUs (g5); l4: 1, 4, 8 GPUs (g6))",
        ),
        (
            "        capacityTypes: [spot, on-demand]\n",
            "        capacityTypes: [on-demand, spot]\n",
            f"{NS}:pools[0].karpenter.capacityTypes: capacity types ['on-demand', 'spot'] are not "
            "in the order Karpenter prefers them",
        ),
        (
            "      maxNodes: 6\n",
            "      maxNodes: 6\n      instanceTypes: [g6.xlarge]\n",
            f"{NS}:pools[0].instanceTypes: key 'instanceTypes' is for another kind of pool (EKS managed "
            "node group); this pool is a Karpenter NodePool",
        ),
        (
            "      maxNodes: 6\n",
            "      maxNodes: 6\n      minNodes: 1\n",
            f"{NS}:pools[0].minNodes: key 'minNodes' is for another kind of pool (GKE node pool, EKS "
            "managed node group, AKS agent pool); this pool is a Karpenter NodePool (cluster "
            "provider 'eks'): "
            "Karpenter launches nodes for pending pods and removes empty ones (no minimum)",
        ),
        (
            "        nodeRole: KarpenterNodeRole-inference\n      maxNodes: 6\n",
            "      maxNodes: 6\n",
            f"{NS}:pools[0].karpenter.nodeRole: nodeRole None is not an IAM role name",
        ),
    ],
    ids=["gpu-name", "no-instance", "order", "node-group-key", "min-nodes", "role"],
)
def test_config_refusals_name_the_key(tmp_path, capsys, old, new, message):
    text = _karpenter_text()
    assert old in text
    project = _project(tmp_path, "bad", text.replace(old, new, 1))
    code, out = _preview(capsys, project, "bad")
    assert code == 2, out
    assert message in out


# -- GKE ComputeClass -------------------------------------------------------------------------


def _cc_text() -> str:
    return (ROOT / "stacks" / "Pulumi.gke-computeclass.yaml").read_text()


def test_gke_computeclass_previews_clean(tmp_path, capsys):
    from tests.computeclass_schema import validate_compute_class

    project = _project(tmp_path, "gke-computeclass", _cc_text())
    code, out = _preview(capsys, project, "gke-computeclass")
    assert code == 0, out
    assert "placement: 0 errors" in out
    graph = json.loads((project / "out" / "resources.json").read_text())
    classes = {e["name"]: e["inputs"] for e in graph if e["type"].endswith(":ComputeClass")}
    assert sorted(classes) == ["h100", "l4"]
    for cr in classes.values():
        validate_compute_class(cr)
    assert [
        sorted(set(p) - {"gpu", "machineType"}) for p in classes["l4"]["spec"]["priorities"]
    ] == [
        ["reservations", "spot"],
        ["spot"],
        ["flexStart"],
        ["spot"],
    ]
    assert not any(
        e["type"] == "gcp:container/nodePool:NodePool" and e["name"] in classes for e in graph
    )
    placement = json.loads((project / "out" / "placement.json").read_text())
    lands = {w["resource"]: w["pools"] for w in placement["workloads"]}
    assert lands == {
        "InferenceService/gpu-inference-isvc-models-gemma-9b/predictor": ["l4"],
        "InferenceService/gpu-inference-isvc-models-gemma-9b/transformer": ["cpu"],
        "InferenceService/gpu-inference-isvc-models-llama-70b/predictor": ["h100"],
    }


def test_gke_computeclass_broken_copy_exits_1(tmp_path, capsys):
    text = _cc_text().replace(
        "        pool: l4\n        gpus: 1\n",
        "        pool: l4\n        gpus: 1\n        extraExpressions:\n"
        "          - {key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-h100-80gb]}\n",
    )
    assert "extraExpressions" in text
    project = _project(tmp_path, "broken", text)
    code, out = _preview(capsys, project, "broken")
    assert code == 1, out
    assert "GI001" in out and "gemma-9b/predictor" in out


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "        priorities: [reservation, on-demand, flex-start, spot]\n",
            "        priorities: [reservation, on-demand, flex-start, spot]\n"
            "        reservations: [Bad_Name]\n",
            f"{NS}:pools[0].computeClass.reservations[0]: reservation name 'Bad_Name' is not a "
            "Compute Engine resource name",
        ),
        (
            "        priorities: [reservation, on-demand]\n",
            "        priorities: [on-demand]\n",
            f"{NS}:pools[1].computeClass.reservations: reservations are named but no priority is "
            "`reservation`",
        ),
        (
            "      machineType: g2-standard-12\n",
            "      machineType: g2-standard-12\n      maxNodes: 4\n",
            f"{NS}:pools[0].maxNodes: key 'maxNodes' is for another kind of pool (GKE node pool, EKS "
            "managed node group, Karpenter NodePool, AKS agent pool, AKS node auto-provisioning "
            "NodePool); this pool is a GKE ComputeClass (cluster provider 'gke'): GKE creates its "
            "node pools itself",
        ),
        (
            "      machineType: g2-standard-12\n",
            "      machineType: a2-highgpu-1g\n",
            f"{NS}:pools[0].machineType: a2-highgpu-1g comes with nvidia-tesla-a100 GPUs, not nvidia-l4",
        ),
    ],
    ids=["reservation-name", "no-reservation-priority", "max-nodes", "machine"],
)
def test_computeclass_config_refusals_name_the_key(tmp_path, capsys, old, new, message):
    text = _cc_text()
    assert old in text
    project = _project(tmp_path, "bad", text.replace(old, new, 1))
    code, out = _preview(capsys, project, "bad")
    assert code == 2, out
    assert message in out


# -- GKE Autopilot ----------------------------------------------------------------------------

AUTOPILOT = """\
config:
  gpu-inference:cluster:
    provider: gke
    name: autopilot-1
    location: us-central1
    project: my-gcp-project
    autopilot: true
  gpu-inference:pools:
    - name: l4-spot
      accelerator: nvidia-l4
      gpusPerNode: 1
      spot: true
    - name: l4
      accelerator: nvidia-l4
      gpusPerNode: 1
  gpu-inference:knative:
    mode: operator
  gpu-inference:addons:
    kserve: {enabled: true}
    certManager: {enabled: true}
  gpu-inference:inferenceServices:
    - name: gemma
      namespace: models
      predictor:
        pool: [l4-spot, l4]
        gpus: 1
        minReplicas: 0
        model: {format: huggingface, storageUri: gs://my-models/gemma}
"""


def test_autopilot_stack_creates_no_node_pool_and_places_on_the_accelerator(tmp_path, capsys):
    project = _project(tmp_path, "ap", AUTOPILOT)
    code, out = _preview(capsys, project, "ap")
    assert code == 0, out
    graph = json.loads((project / "out" / "resources.json").read_text())
    assert not [e for e in graph if e["type"] == "gcp:container/nodePool:NodePool"]
    pools = [e["name"] for e in graph if e["type"] == "gpu-inference:index:GkeAutopilotGpuPool"]
    assert sorted(pools) == ["l4", "l4-spot"]
    placement = json.loads((project / "out" / "placement.json").read_text())
    (w,) = placement["workloads"]
    assert w["pools"] == ["l4", "l4-spot"]
    isvc = next(
        e for e in graph if e["type"] == "kubernetes:serving.kserve.io/v1beta1:InferenceService"
    )
    terms = isvc["inputs"]["spec"]["predictor"]["affinity"]["nodeAffinity"]
    assert "cloud.google.com/gke-accelerator" in json.dumps(terms)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "      gpusPerNode: 1\n      spot: true\n",
            "      gpusPerNode: 3\n      spot: true\n",
            f"{NS}:pools[0].gpusPerNode: 3 nvidia-l4 GPUs per node is not a quantity Autopilot "
            "accepts",
        ),
        (
            "        gpus: 1\n        minReplicas: 0\n",
            "        gpus: 3\n        minReplicas: 0\n",
            f"{NS}:inferenceServices[0].predictor.gpus: on Autopilot pool 'l4-spot': it requests 3 "
            "nvidia-l4 GPUs, a quantity Autopilot does not support for that type (Autopilot "
            "rejects the Pod) (allowed: nvidia-l4: 1, 2, 4, 8 GPUs)",
        ),
        (
            "      gpusPerNode: 1\n      spot: true\n",
            "      spot: true\n",
            f"{NS}:pools[0].gpusPerNode: required key is missing (allowed: GPUs per node to select",
        ),
        (
            "    - name: l4\n      accelerator: nvidia-l4\n",
            "    - name: l4\n      machineType: g2-standard-8\n      accelerator: nvidia-l4\n",
            f"{NS}:pools[1].machineType: key 'machineType' is for another kind of pool (GKE node pool, "
            "GKE ComputeClass); this pool is a GKE Autopilot GPU pool (cluster provider 'gke'): "
            "Autopilot has no node pools to shape, label or taint",
        ),
        (
            "    autopilot: true\n",
            "    autopilot: true\n    create: true\n",
            f"{NS}:cluster.create: cluster.autopilot with create: true",
        ),
    ],
    ids=["count", "workload-count", "no-count", "machine-type", "create"],
)
def test_autopilot_refusals(tmp_path, capsys, old, new, message):
    assert old in AUTOPILOT
    project = _project(tmp_path, "bad", AUTOPILOT.replace(old, new, 1))
    code, out = _preview(capsys, project, "bad")
    assert code == 2, out
    assert message in out


# -- shared GPUs on GKE node pools ------------------------------------------------------------

SHARED = """\
config:
  gpu-inference:cluster:
    provider: gke
    name: inference
    location: us-central1
    project: my-gcp-project
  gpu-inference:pools:
    - name: l4-ts
      machineType: g2-standard-8
      accelerator: nvidia-l4
      gpuSharing: {strategy: TIME_SHARING, maxClientsPerGpu: 4}
      maxNodes: 2
    - name: a100-mig
      machineType: a2-highgpu-1g
      accelerator: nvidia-tesla-a100
      gpuPartitionSize: 3g.20gb
      maxNodes: 1
  gpu-inference:knative:
    mode: operator
  gpu-inference:addons:
    kserve: {enabled: true}
    certManager: {enabled: true}
  gpu-inference:inferenceServices:
    - name: small
      namespace: models
      predictor:
        pool: l4-ts
        gpus: 1
        minReplicas: 0
        model: {format: huggingface, storageUri: gs://my-models/small}
    - name: mid
      namespace: models
      predictor:
        pool: a100-mig
        gpus: 2
        minReplicas: 0
        model: {format: huggingface, storageUri: gs://my-models/mid}
"""


def test_shared_gpu_pools_preview_clean(tmp_path, capsys):
    project = _project(tmp_path, "shared", SHARED)
    code, out = _preview(capsys, project, "shared")
    assert code == 0, out
    graph = json.loads((project / "out" / "resources.json").read_text())
    accs = {
        e["name"]: e["inputs"]["nodeConfig"]["guestAccelerators"][0]
        for e in graph
        if e["type"] == "gcp:container/nodePool:NodePool"
    }
    assert accs["l4-ts"]["gpuSharingConfig"] == {
        "gpuSharingStrategy": "TIME_SHARING",
        "maxSharedClientsPerGpu": 4,
    }
    assert accs["a100-mig"]["gpuPartitionSize"] == "3g.20gb"
    pools = {
        p["name"]: p for p in json.loads((project / "out" / "placement.json").read_text())["pools"]
    }
    assert (pools["l4-ts"]["gpusPerNode"], pools["a100-mig"]["gpusPerNode"]) == (4, 2)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "        pool: l4-ts\n        gpus: 1\n",
            "        pool: l4-ts\n        gpus: 5\n",
            f"{NS}:inferenceServices[0].predictor.gpus: 5 GPU(s) asked for but a node of pool "
            "'l4-ts' has 4",
        ),
        (
            "      gpuPartitionSize: 3g.20gb\n",
            "      gpuPartitionSize: 3g.40gb\n",
            f"{NS}:pools[1].gpuPartitionSize: MIG profile '3g.40gb' is not one nvidia-tesla-a100 "
            "offers (allowed: 1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)",
        ),
        (
            "maxClientsPerGpu: 4}",
            "maxClientsPerGpu: 64}",
            f"{NS}:pools[0].gpuSharing.maxClientsPerGpu",
        ),
    ],
    ids=["above-shared", "mig-profile", "clients"],
)
def test_shared_gpu_refusals(tmp_path, capsys, old, new, message):
    assert old in SHARED
    project = _project(tmp_path, "bad", SHARED.replace(old, new, 1))
    code, out = _preview(capsys, project, "bad")
    assert code == 2, out
    assert message in out


# -- EKS Auto Mode ----------------------------------------------------------------------------


def test_auto_mode_pool_uses_auto_modes_node_class_and_plugin(tmp_path, capsys):
    text = (
        _karpenter_text()
        .replace(
            "        gpuNames: [l4, a10g]\n",
            "        autoMode: true\n        gpuNames: [l4, a10g]\n",
        )
        .replace(
            "        nodeRole: KarpenterNodeRole-inference\n      maxNodes: 6\n",
            "      maxNodes: 6\n",
        )
        # Auto Mode runs its own Karpenter: the controller add-on is refused beside it.
        .replace("    karpenter:\n      enabled: true\n", "    karpenter:\n      enabled: false\n")
        .replace("      roleArn: arn:aws:iam::123456789012:role/inference-karpenter\n", "")
        .replace("      interruptionQueue: inference\n", "")
        .replace("      nodeGroups: [system]\n", "")
    )
    assert "autoMode: true" in text
    project = _project(tmp_path, "auto", text)
    code, out = _preview(capsys, project, "auto")
    assert code == 0, out
    graph = json.loads((project / "out" / "resources.json").read_text())
    pool = next(
        e
        for e in graph
        if e["type"].endswith("karpenter.sh/v1:NodePool") and e["name"] == "l4-a10g"
    )
    spec = pool["inputs"]["spec"]["template"]["spec"]
    assert spec["nodeClassRef"] == {
        "group": "eks.amazonaws.com",
        "kind": "NodeClass",
        "name": "default",
    }
    assert {
        "key": "eks.amazonaws.com/instance-gpu-name",
        "operator": "In",
        "values": ["l4", "a10g"],
    } in spec["requirements"]
    assert sorted(e["name"] for e in graph if e["type"].endswith(":EC2NodeClass")) == [
        "h100-nodeclass"
    ]
    plugin = next(e for e in graph if e["name"].endswith("nvidia-device-plugin-release"))
    affinity = json.dumps(plugin["inputs"]["values"]["affinity"])
    assert '"h100"' in affinity and "l4-a10g" not in affinity  # Auto Mode runs its own plugin


def test_the_device_plugin_stays_off_auto_mode_nodes_when_every_gpu_pool_is_auto_mode(
    tmp_path, capsys
):
    """Auto Mode runs its own NVIDIA device plugin (awsdocs/amazon-eks-user-guide
    latest/ug/automode/auto-accelerated.adoc); ours, with no other GPU pool to pin it to, keeps
    off nodes labeled eks.amazonaws.com/compute-type=auto."""
    text = _karpenter_text()
    for name in ("gpuNames: [l4, a10g]", "instanceFamilies: [p5, p5e, p5en]"):
        text = text.replace(f"        {name}\n", f"        autoMode: true\n        {name}\n")
    text = re.sub(r"^\s+nodeRole: .*\n", "", text, flags=re.M)
    text = text.replace(
        "    karpenter:\n      enabled: true\n", "    karpenter:\n      enabled: false\n"
    )
    text = re.sub(r"^      (roleArn|interruptionQueue|nodeGroups): .*\n", "", text, flags=re.M)
    assert text.count("autoMode: true") == 2
    project = _project(tmp_path, "auto", text)
    code, out = _preview(capsys, project, "auto")
    assert code == 0, out
    graph = json.loads((project / "out" / "resources.json").read_text())
    plugin = next(e for e in graph if e["name"].endswith("nvidia-device-plugin-release"))
    assert plugin["inputs"]["values"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "eks.amazonaws.com/compute-type",
                                "operator": "NotIn",
                                "values": ["auto"],
                            }
                        ]
                    }
                ]
            }
        }
    }


# -- time-sliced GPUs on EKS (NVIDIA device plugin) -------------------------------------------


def _time_sliced_text() -> str:
    text = _karpenter_text().replace(
        "        nodeRole: KarpenterNodeRole-inference\n      maxNodes: 6\n",
        "        nodeRole: KarpenterNodeRole-inference\n      maxNodes: 6\n"
        "      gpuSharing: {strategy: TIME_SHARING, maxClientsPerGpu: 4}\n",
    )
    text = text.replace(
        "    - name: cpu\n",
        "    - name: t4-shared\n      instanceTypes: [g4dn.xlarge]\n      maxNodes: 2\n"
        "      gpuSharing: {strategy: TIME_SHARING, maxClientsPerGpu: 2}\n    - name: cpu\n",
    )
    assert text.count("gpuSharing") == 2
    return text


def test_time_sliced_eks_pools(tmp_path, capsys):
    from components.model.nodes.sharing import config_file

    project = _project(tmp_path, "ts", _time_sliced_text())
    code, out = _preview(capsys, project, "ts")
    assert code == 0, out
    graph = json.loads((project / "out" / "resources.json").read_text())
    plugin = next(e for e in graph if e["name"].endswith("nvidia-device-plugin-release"))
    assert plugin["inputs"]["values"]["config"] == {
        "map": {
            "default": "version: v1\n",
            "time-sliced-2": config_file(2),
            "time-sliced-4": config_file(4),
        },
        "default": "default",
    }
    pool = next(
        e
        for e in graph
        if e["type"] == "kubernetes:karpenter.sh/v1:NodePool" and e["name"] == "l4-a10g"
    )
    assert pool["inputs"]["spec"]["template"]["metadata"]["labels"][
        "nvidia.com/device-plugin.config"
    ] == ("time-sliced-4")
    overlays = [
        e["inputs"] for e in graph if e["type"] == "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
    ]
    assert [o["spec"]["capacity"] for o in overlays] == [{"nvidia.com/gpu": "4"}]
    group = next(
        e for e in graph if e["type"] == "aws:eks/nodeGroup:NodeGroup" and e["name"] == "t4-shared"
    )
    assert group["inputs"]["labels"]["nvidia.com/device-plugin.config"] == "time-sliced-2"
    tags = {
        e["inputs"]["tag"]["key"]: e["inputs"]["tag"]["value"]
        for e in graph
        if e["type"] == "aws:autoscaling/tag:Tag" and e["name"].startswith("t4-shared")
    }
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "2"
    pools = {
        p["name"]: p for p in json.loads((project / "out" / "placement.json").read_text())["pools"]
    }
    assert (pools["l4-a10g"]["gpusPerNode"], pools["t4-shared"]["gpusPerNode"]) == (4, 2)
    if CRDS.exists():
        from tests.crdschema import validate_cr

        for o in overlays:
            validate_cr(o)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "        pool: l4-a10g\n        gpus: 1\n",
            "        pool: l4-a10g\n        gpus: 5\n",
            f"{NS}:inferenceServices[0].predictor.gpus: 5 GPU(s) asked for but a node of pool "
            "'l4-a10g' has 4",
        ),
        (
            "{strategy: TIME_SHARING, maxClientsPerGpu: 2}",
            "{strategy: MPS, maxClientsPerGpu: 2}",
            f"{NS}:pools[2].gpuSharing.strategy: strategy MPS on EKS",
        ),
    ],
    ids=["above-shared", "mps"],
)
def test_time_sliced_refusals(tmp_path, capsys, old, new, message):
    text = _time_sliced_text()
    assert old in text
    project = _project(tmp_path, "bad", text.replace(old, new, 1))
    code, out = _preview(capsys, project, "bad")
    assert code == 2, out
    assert message in out
