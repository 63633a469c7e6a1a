"""Every example stack, previewed offline by the real stack program: what it creates, in which
order, where every pod lands, and that the output is byte-identical from run to run."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from components.preview import cli
from components.preview.preview import preview
from tests.conftest import CRDS, EXAMPLE_STACKS, ROOT, values_of

STACKS = EXAMPLE_STACKS
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
LLMISVC = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
SERVER = "kubernetes:mlops.seldon.io/v1alpha1:Server"
SERVER_CONFIG = "kubernetes:mlops.seldon.io/v1alpha1:ServerConfig"
MODEL = "kubernetes:mlops.seldon.io/v1alpha1:Model"
KNATIVE_CR = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
PATCH = "kubernetes:core/v1:ConfigMapPatch"
RELEASE = "kubernetes:helm.sh/v3:Release"


def test_every_stack_file_is_an_example_stack_the_tests_preview():
    files = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("*.yaml"))
    assert files == sorted(EXAMPLE_STACKS)


@pytest.fixture(scope="module")
def previews(example_previews):
    return example_previews


def entries(result, typ):
    return [e for e in result.entries if e["type"] == typ]


def ref(e):
    return f"{e['type']}::{e['name']}"


def waits_for(result, entry, target_ref):
    """`entry` (or an ancestor component) depends on `target_ref` or on a component containing it."""
    by_ref = {ref(e): e for e in result.entries}
    containing = {target_ref}
    node = by_ref[target_ref]
    while node.get("parent") and node["parent"] in by_ref:
        containing.add(node["parent"])
        node = by_ref[node["parent"]]
    node = entry
    while node is not None:
        if containing & set(node.get("dependsOn") or ()):
            return True
        node = by_ref.get(node.get("parent") or "")
    return False


@pytest.mark.parametrize("stack", STACKS)
def test_stack_previews_clean(previews, stack):
    result = previews[stack]
    assert result.placement.errors == 0, [f.line() for f in result.placement.findings]
    for name in ("manifests.yaml", "resources.json", "placement.json", "placement.md"):
        assert (result.out_dir / name).is_file()


@pytest.mark.parametrize("stack", STACKS)
def test_every_declared_workload_is_a_cr(previews, stack):
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    result = previews[stack]
    isvcs = {
        (e["inputs"]["metadata"]["namespace"], e["inputs"]["metadata"]["name"])
        for e in entries(result, ISVC)
    }
    declared = {
        (i.get("namespace", "models"), i["name"])
        for i in config.get("gpu-inference:inferenceServices", [])
    }
    assert isvcs == declared
    llms = {
        (e["inputs"]["metadata"]["namespace"], e["inputs"]["metadata"]["name"])
        for e in entries(result, LLMISVC)
    }
    assert llms == {
        (i.get("namespace", "models"), i["name"])
        for i in config.get("gpu-inference:llmInferenceServices", [])
    }
    seldon = config.get("gpu-inference:seldon", {})
    names = {e["inputs"]["metadata"]["name"] for e in entries(result, SERVER)}
    assert names == {s["name"] for s in seldon.get("servers", [])}
    names = {e["inputs"]["metadata"]["name"] for e in entries(result, MODEL)}
    assert names == {m["name"] for m in seldon.get("models", [])}
    names = {e["inputs"]["metadata"]["name"] for e in entries(result, SERVER_CONFIG)}
    assert names == {c["name"] for c in seldon.get("serverConfigs", [])}


@pytest.mark.parametrize("stack", STACKS)
def test_manifests_hold_every_cr_valid_against_upstream_crds(previews, stack):
    docs = [
        d for d in yaml.safe_load_all((previews[stack].out_dir / "manifests.yaml").read_text()) if d
    ]
    kinds = {(d["apiVersion"], d["kind"]) for d in docs}
    result = previews[stack]
    for typ in (ISVC, LLMISVC, SERVER, MODEL, SERVER_CONFIG, KNATIVE_CR):
        for e in entries(result, typ):
            assert (e["inputs"]["apiVersion"], e["inputs"]["kind"]) in kinds
    if not CRDS.exists():
        pytest.skip("../shared/crds is absent")
    crdschema = pytest.importorskip("tests.crdschema")
    for d in docs:
        if d["apiVersion"].split("/")[0] in (
            "serving.kserve.io",
            "mlops.seldon.io",
            "operator.knative.dev",
        ):
            crdschema.validate_cr(d)
    # Karpenter's NodePools and node classes (EC2NodeClass, AKSNodeClass) go through the cloud's
    # provider, not manifests.yaml: validate them as registered.
    for e in result.entries:
        if e["type"].startswith("kubernetes:karpenter."):
            crdschema.validate_cr(e["inputs"])


@pytest.mark.parametrize("stack", STACKS)
def test_crs_wait_for_their_crds_and_knative_flags(previews, stack):
    result = previews[stack]
    releases = {e["inputs"]["name"]: ref(e) for e in entries(result, RELEASE)}
    knative = entries(result, KNATIVE_CR) + [
        e for e in entries(result, PATCH) if e["inputs"]["metadata"]["name"] == "config-features"
    ]
    for e in entries(result, ISVC):
        if "kserve" in releases:
            # The last KServe release (the runtimes, which wait for the controller).
            last = releases.get("kserve-runtime-configs", releases["kserve"])
            assert waits_for(result, e, last), e["name"]
        mode = (
            e["inputs"]["metadata"]
            .get("annotations", {})
            .get("serving.kserve.io/deploymentMode", "Knative")
        )
        if mode in ("Knative", "Serverless"):
            # No Serverless InferenceService without the Knative flags before it.
            assert knative, f"{stack}: a Serverless InferenceService but no Knative flags"
            assert waits_for(result, e, ref(knative[0])), e["name"]
    for e in entries(result, LLMISVC):
        # The LLM presets (the last LLM release) and KServe's default Gateway come first.
        assert waits_for(result, e, releases["kserve-llmisvc-configs"]), e["name"]
        (gateway,) = entries(result, GATEWAY)
        assert waits_for(result, e, ref(gateway)), e["name"]
    for typ in (SERVER, SERVER_CONFIG, MODEL):
        for e in entries(result, typ):
            if "seldon-core-v2-runtime" in releases:
                assert waits_for(result, e, releases["seldon-core-v2-runtime"]), e["name"]


@pytest.mark.parametrize("stack", STACKS)
def test_kserve_waits_for_knative_ready_and_services_for_runtimes(previews, stack):
    """KServe decides at start whether Knative is there: the KnativeServing CR is awaited
    (`pulumi.com/waitFor`) and every KServe release waits for it; every InferenceService waits
    for the ClusterServingRuntimes chart (KServe >= v0.17)."""
    result = previews[stack]
    releases = {e["inputs"]["name"]: e for e in entries(result, RELEASE)}
    if "kserve" not in releases:
        pytest.skip(f"{stack} installs no KServe")
    runtimes = releases["kserve-runtime-configs"]
    assert values_of(runtimes, stack) == {"kserve": {"servingruntime": {"enabled": True}}}
    assert waits_for(result, runtimes, ref(releases["kserve"]))
    for e in entries(result, ISVC):
        assert waits_for(result, e, ref(runtimes)), e["name"]
    for cr in entries(result, KNATIVE_CR):
        assert cr["inputs"]["metadata"]["annotations"] == {
            "pulumi.com/waitFor": "condition=Ready",
            "pulumi.com/patchFieldManager": f"gpu-inference/gpu-inference/{stack}",
        }
        for name in ("kserve-crd", "kserve", "kserve-runtime-configs"):
            assert waits_for(result, releases[name], ref(cr)), name


@pytest.mark.parametrize("stack", STACKS)
def test_every_workload_lands_exactly_on_the_pools_it_names(previews, stack):
    report = json.loads((previews[stack].out_dir / "placement.json").read_text())
    if stack == "gke-llm" and not report["workloads"]:
        # Until the placement check reads LLMInferenceServices (issue #24, item 3).
        pytest.skip("the placement check reads no LLMInferenceService yet")
    assert report["workloads"]
    for w in report["workloads"]:
        assert sorted(w["pools"]) == sorted(w["wired"]), w


def test_gke_dev_predictor_prefers_spot_and_falls_back_to_on_demand(previews):
    result = previews["gke-dev"]
    (isvc,) = entries(result, ISVC)
    affinity = isvc["inputs"]["spec"]["predictor"]["affinity"]["nodeAffinity"]

    def term(pool):
        return {
            "matchExpressions": [
                {"key": "gpu-inference.dev/pool", "operator": "In", "values": [pool]}
            ]
        }

    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [term("l4-spot"), term("l4-ondemand")]
    }
    assert affinity["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 100, "preference": term("l4-spot")},
        {"weight": 90, "preference": term("l4-ondemand")},
    ]
    report = json.loads((result.out_dir / "placement.json").read_text())
    predictor = next(w for w in report["workloads"] if w["component"] == "predictor")
    assert predictor["pools"] == ["l4-ondemand", "l4-spot"]
    assert predictor["wired"] == ["l4-spot", "l4-ondemand"]


def test_gke_dev_seed_004_server_lands_on_infer_srv(previews):
    (server,) = entries(previews["gke-dev"], SERVER)
    pod = server["inputs"]["spec"]["podSpec"]
    assert pod["nodeSelector"] == {
        "pool": "infer-srv",
        "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
    }
    assert {
        "key": "seldon-gpu-srv",
        "operator": "Equal",
        "value": "true",
        "effect": "NoSchedule",
    } in pod["tolerations"]


def test_eks_prod_seed_001_selector_and_scale_from_zero_tags(previews):
    result = previews["eks-prod"]
    isvc = next(
        e for e in entries(result, ISVC) if e["inputs"]["metadata"]["name"] == "torchscript-cifar"
    )
    predictor = isvc["inputs"]["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"}
    assert predictor["triton"]["resources"] == {
        "limits": {"nvidia.com/gpu": 1},
        # its model's 0.1 GB, downloaded by KServe's storage-initializer: 1Gi, rounded up
        "requests": {"nvidia.com/gpu": 1, "ephemeral-storage": "1Gi"},
    }
    assert (
        isvc["inputs"]["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "Standard"
    )
    tags = {
        e["inputs"]["tag"]["key"]: e["inputs"]["tag"]["value"]
        for e in entries(result, "aws:autoscaling/tag:Tag")
    }
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "1"
    assert (
        tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"] == "present:NoSchedule"
    )


def test_onprem_patches_knative_and_labels_existing_nodes(previews):
    result = previews["onprem"]
    (patch,) = [
        e for e in entries(result, PATCH) if e["inputs"]["metadata"]["name"] == "config-features"
    ]
    for flag in ("affinity", "nodeselector", "tolerations"):
        assert patch["inputs"]["data"][f"kubernetes.podspec-{flag}"] == "enabled"
    assert not entries(result, KNATIVE_CR)
    nodes = {
        e["inputs"]["metadata"]["name"] for e in entries(result, "kubernetes:core/v1:NodePatch")
    }
    assert nodes == {"gpu-node-01", "gpu-node-02", "cpu-node-01"}


@pytest.mark.parametrize("stack", STACKS)
def test_two_previews_are_byte_identical(previews, stack, tmp_path):
    again = preview(stack, out_dir=tmp_path, project_dir=ROOT)
    for name in ("manifests.yaml", "resources.json", "placement.json", "placement.md"):
        assert (again.out_dir / name).read_bytes() == (previews[stack].out_dir / name).read_bytes()


def test_a_broken_toleration_is_caught(previews, tmp_path, capsys):
    """Edit the previewed graph by hand as a plain program could: the transformer loses the
    toleration of its pool's taint; `gpu-inference check` exits 1 naming it."""
    graph = json.loads((previews["gke-dev"].out_dir / "resources.json").read_text())
    for e in graph:
        if e["type"] == ISVC:
            e["inputs"]["spec"]["transformer"].pop("tolerations")
    broken = tmp_path / "resources.json"
    broken.write_text(json.dumps(graph))
    assert cli.main(["check", str(broken)]) == 1
    out = capsys.readouterr().out
    assert "GI001" in out and "transformer" in out and "myTaint1" in out


def test_a_copy_of_a_stack_with_a_bad_value_exits_2(tmp_path, capsys):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "stacks", project / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", project)
    shutil.copy(ROOT / "__main__.py", project)
    stack = project / "stacks" / "Pulumi.gke-dev.yaml"
    stack.write_text(
        stack.read_text().replace("pool: [l4-spot, l4-ondemand]", "pool: [l4-spot, l4-gone]")
    )
    assert cli.main(["preview", "gke-dev", "--project-dir", str(project)]) == 2
    err = capsys.readouterr().err
    assert "gpu-inference:inferenceServices[0].predictor.pool[1]" in err
    assert "Traceback" not in err
    assert not (project / "build").exists()


# -- gke-dra: GPUs by claim (issue #32) --------------------------------------------------------

RCT = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"


@pytest.mark.parametrize("stack", STACKS)
def test_dra_objects_are_valid_against_resource_k8s_io_v1(previews, stack):
    """Every resource.k8s.io object a stack emits (ResourceClaimTemplates; DeviceClasses come from
    the driver's chart) is strictly valid against Kubernetes 1.34's own schema (the first release
    with resource.k8s.io/v1), as kubernetes-validate ships it."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    docs = [
        d
        for d in yaml.safe_load_all((previews[stack].out_dir / "manifests.yaml").read_text())
        if d and d["apiVersion"].startswith("resource.k8s.io/")
    ]
    assert bool(docs) == (stack == "gke-dra")
    for d in docs:
        assert d["apiVersion"] == "resource.k8s.io/v1"
        kubernetes_validate.validate(d, "1.34.0", strict=True)


def test_gke_dra_services_claim_their_gpus_on_the_dra_pool(previews):
    result = previews["gke-dra"]
    templates = {e["inputs"]["metadata"]["name"]: e["inputs"]["spec"] for e in entries(result, RCT)}
    assert templates == {
        "qwen-7b-predictor-gpu": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "count": 1,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": "device.capacity['gpu.nvidia.com']"
                                            ".memory.compareTo(quantity('20Gi')) >= 0"
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            }
        },
        "llama-8b-predictor-gpu": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "count": 2,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": "device.attributes['gpu.nvidia.com']"
                                            ".cudaComputeCapability.compareTo(semver('8.9.0')) >= 0"
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            }
        },
    }
    for isvc in entries(result, ISVC):
        predictor = isvc["inputs"]["spec"]["predictor"]
        name = isvc["inputs"]["metadata"]["name"]
        assert isvc["inputs"]["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == (
            "Standard"
        )
        assert predictor["resourceClaims"] == [
            {"name": "gpu", "resourceClaimTemplateName": f"{name}-predictor-gpu"}
        ]
        assert predictor["model"]["resources"]["claims"] == [{"name": "gpu"}]
        assert "nvidia.com/gpu" not in predictor["model"]["resources"].get("limits", {})
    releases = {e["inputs"]["name"]: e for e in entries(result, RELEASE)}
    assert "nvidia-device-plugin" not in releases
    driver = values_of(releases["dra-driver-nvidia-gpu"], "gke-dra")
    assert driver["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    assert driver["kubeletPlugin"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["l4-dra"]}
            ]
        }
    ]
    report = json.loads((result.out_dir / "placement.json").read_text())
    claimed = {
        w["resource"].split("/")[1]: w.get("claimedGpus")
        for w in report["workloads"]
        if w["kind"] != "DaemonSet"
    }
    assert claimed == {
        "gpu-inference-isvc-models-llama-8b": 2,
        "gpu-inference-isvc-models-qwen-7b": 1,
    }


def test_gke_dra_installs_gke_gpu_driver_before_the_dra_driver(previews):
    """GKE's driver install is off on the DRA pool (GKE's DRA setup page): the stack makes GKE's
    driver installer DaemonSet (the pinned manifest's, on the DRA pool only) and the DRA driver
    after it; the check counts its pod on the pool's nodes."""
    result = previews["gke-dra"]
    (ds,) = entries(result, "kubernetes:apps/v1:DaemonSet")
    assert ds["parent"] == (
        "gpu-inference:index:GkeGpuDriverInstaller::gpu-inference-gpu-driver-installer"
    )
    assert ds["inputs"]["metadata"]["name"] == "nvidia-driver-installer"
    assert ds["inputs"]["metadata"]["namespace"] == "kube-system"
    pod = ds["inputs"]["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"][-1] == {
        "key": "gpu-inference.dev/pool",
        "operator": "In",
        "values": ["l4-dra"],
    }
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["initContainers"][0]["image"] == "cos-nvidia-installer:fixed"
    releases = {e["inputs"]["name"]: e for e in entries(result, RELEASE)}
    assert waits_for(result, releases["dra-driver-nvidia-gpu"], ref(ds))
    report = json.loads((result.out_dir / "placement.json").read_text())
    assert report["findings"] == []
    (installer,) = [w for w in report["workloads"] if w["kind"] == "DaemonSet"]
    assert (installer["pools"], installer["wired"], installer["requests"]["cpu"]) == (
        ["l4-dra"],
        ["l4-dra"],
        "150m",
    )


def test_gke_dra_without_the_installer_warns_that_the_cluster_must_have_one(tmp_path, capsys):
    """`addons.gpuDriverInstaller.enabled: false` (the cluster's own installer): GI058, a warning
    (exit 0)."""
    old = "draDriver: {enabled: true}"
    project = _dra_copy(tmp_path, old, old + "\n    gpuDriverInstaller: {enabled: false}")
    code = cli.main(["preview", "gke-dra", "--project-dir", str(project), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "warning GI058 NodePool/l4-dra: pool l4-dra is set up for DRA with GKE's GPU driver "
        "installation off, but the graph installs no NVIDIA GPU driver"
    ) in out
    graph = json.loads((tmp_path / "resources.json").read_text())
    assert not [e for e in graph if e["type"] == "kubernetes:apps/v1:DaemonSet"]


def _dra_copy(tmp_path, old: str, new: str):
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", project)
    shutil.copy(ROOT / "__main__.py", project)
    text = (ROOT / "stacks" / "Pulumi.gke-dra.yaml").read_text()
    assert old in text
    (project / "stacks" / "Pulumi.gke-dra.yaml").write_text(text.replace(old, new))
    return project


def test_gke_dra_a_claim_no_device_matches_exits_1_its_twin_0(previews, tmp_path, capsys):
    """Issue #32's "done when", through the stack config: a selector no device of the pool
    matches (an L4 has 23 GB, not 40Gi) is an error (exit 1, GI051); the stack as shipped (its
    twin, 20Gi) previews clean."""
    assert (
        json.loads((previews["gke-dra"].out_dir / "placement.json").read_text())["findings"] == []
    )
    project = _dra_copy(tmp_path, "quantity('20Gi')", "quantity('40Gi')")
    code = cli.main(["preview", "gke-dra", "--project-dir", str(project), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "error GI051 InferenceService/gpu-inference-isvc-models-qwen-7b/predictor: claims 1 x "
        "gpu.nvidia.com where device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi'))"
        " >= 0 (qwen-7b-predictor-gpu) but no node of pool l4-dra can allocate it: no device "
        "matches request(s) gpu; the nodes publish 2 x NVIDIA L4: it stays Pending"
    ) in out


def test_gke_dra_a_claim_for_more_gpus_than_a_node_has_is_refused(tmp_path, capsys):
    """Two L4s per node: a claim for 3 is refused when the config is read (exit 2), naming the
    key and the stack file's line."""
    project = _dra_copy(tmp_path, "count: 2", "count: 3")
    code = cli.main(["preview", "gke-dra", "--project-dir", str(project), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        "gpu-inference:inferenceServices[1].predictor.gpuClaim.count: 3 device(s) claimed but a "
        "node of pool 'l4-dra' publishes 2 (gpu.nvidia.com); a pod's claims are allocated from "
        "one node (allowed: count at most 2)"
    ) in err
    assert "Pulumi.gke-dra.yaml:" in err


@pytest.mark.parametrize("count, code", [(2, 0), (3, 1)])
def test_gke_dra_graph_with_a_claim_above_the_node_is_gi050(
    previews, tmp_path, capsys, count, code
):
    """The same claim in the graph itself (a program that emits its own templates): 3 GPUs on
    2-GPU nodes is GI050 from `gpu-inference check` (exit 1); 2, its twin, is clean."""
    graph = json.loads((previews["gke-dra"].out_dir / "resources.json").read_text())
    for e in graph:
        if e["type"] == RCT and e["inputs"]["metadata"]["name"] == "llama-8b-predictor-gpu":
            e["inputs"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = count
    path = tmp_path / "resources.json"
    path.write_text(json.dumps(graph))
    assert cli.main(["check", str(path)]) == code
    out = capsys.readouterr().out
    assert ("GI050" in out) == (count == 3)
