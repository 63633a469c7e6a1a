"""Devices by claim: each DRA finding (GI050-GI057) triggered by a hand-written graph and
silenced by its fixed twin; the CEL selectors against Kubernetes' own library behaviour; the
allocator's decisions that the rig's kube-scheduler made (kept as tests here)."""

from __future__ import annotations

from typing import Any

import pytest
from dra_graphs import (
    GPU_TAINT,
    TOL_GPU,
    claimed_pod,
    deployment,
    device_class,
    dra_node,
    driver,
    eks_dra_group,
    gke_dra_pool,
    installer,
    installer_daemonset,
    template,
)

from components.check import CODES, check
from components.check.dra import allocate
from components.check.dra.cel import CelError, compile_error, evaluate
from components.check.readers.dra import Claim, DeviceRequest
from components.model.nodes.dra_devices import BUILTIN_DEVICE_CLASSES, node_devices

A = "device.attributes['gpu.nvidia.com']"
C = "device.capacity['gpu.nvidia.com']"
H100 = f"{A}.productName == 'NVIDIA H100 80GB HBM3'"
L4 = f"{A}.productName == 'NVIDIA L4'"


def l4_pool(count: int = 1, **kw: Any) -> list[dict[str, Any]]:
    return [driver(**kw), dra_node("n1", "l4", "L4", count)]


def claims(pool: str = "l4", *templates: str) -> dict[str, Any]:
    return deployment("a", claimed_pod(pool, *(templates or ("gpus",))), pool)


def isvc(mode: str) -> dict[str, Any]:
    return {
        "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
        "name": "llm",
        "inputs": {
            "metadata": {
                "name": "llm",
                "namespace": "apps",
                "annotations": {
                    "serving.kserve.io/deploymentMode": mode,
                    "gpu-inference.dev/pool": "l4",
                },
            },
            "spec": {
                "predictor": {
                    "minReplicas": 1,
                    "nodeSelector": {"gpu-inference.dev/pool": "l4"},
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                    ],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}],
                    "model": {
                        "modelFormat": {"name": "huggingface"},
                        "storageUri": "hf://org/model",
                        "resources": {
                            "requests": {"cpu": "1", "memory": "4Gi"},
                            "limits": {"cpu": "1", "memory": "4Gi"},
                            "claims": [{"name": "gpu"}],
                        },
                    },
                }
            },
        },
    }


def autoprovisioned_class() -> dict[str, Any]:
    return {
        "type": "kubernetes:cloud.google.com/v1:ComputeClass",
        "name": "l4-class",
        "inputs": {
            "metadata": {"name": "l4-class"},
            "spec": {
                "priorities": [{"gpu": {"type": "nvidia-l4", "count": 1}}],
                "nodePoolAutoCreation": {"enabled": True},
                "nodePoolConfig": {"nodeLabels": {"gpu-inference.dev/pool": "l4-class"}},
            },
        },
    }


def by_class() -> dict[str, Any]:
    spec = claimed_pod(None, "gpus")
    spec["nodeSelector"] = {"cloud.google.com/compute-class": "l4-class"}
    return deployment("a", spec)


DRA_PAIRS = [
    pytest.param(
        "GI050",
        [*l4_pool(), template(count=2), claims()],
        [*l4_pool(2), template(count=2), claims()],
        id="GI050-two-gpus-on-one-gpu-nodes",
    ),
    pytest.param(
        "GI051",
        [*l4_pool(), template(selectors=(H100,)), claims()],
        [*l4_pool(), template(selectors=(L4,)), claims()],
        id="GI051-h100-selector-on-l4-pool",
    ),
    pytest.param(
        "GI052",
        [*l4_pool(), template(selectors=(f"{A}.profile == '1g.10gb'",)), claims()],
        [*l4_pool(), template(selectors=(f"'profile' in {A} || {L4}",)), claims()],
        id="GI052-selector-reads-an-attribute-full-gpus-lack",
    ),
    pytest.param(
        "GI053",
        [*l4_pool(), template(), isvc("Serverless")],
        [*l4_pool(), template(), isvc("RawDeployment")],
        id="GI053-dra-on-serverless",
    ),
    pytest.param(
        "GI054",
        [*l4_pool(tolerations=[]), template(), claims()],
        [*l4_pool(), template(), claims()],
        id="GI054-driver-does-not-tolerate-the-pool-taint",
    ),
    pytest.param(
        "GI055",
        [*l4_pool(), autoprovisioned_class(), template(), by_class()],
        [*l4_pool(), autoprovisioned_class(), template(), claims("l4")],
        id="GI055-dra-pod-on-node-auto-provisioning",
    ),
    pytest.param(
        "GI057",
        [driver(), eks_dra_group(min_nodes=0), template(), claims("g6")],
        [driver(), eks_dra_group(min_nodes=1), template(), claims("g6")],
        id="GI057-dra-pod-on-an-eks-group-at-zero",
    ),
    pytest.param(
        "GI056",
        [*l4_pool(), template(device_class="gpu.example.com"), claims()],
        [*l4_pool(), template(), claims()],
        id="GI056-unknown-device-class",
    ),
    pytest.param(
        "GI058",
        [gke_dra_pool(), driver(), installer("ubuntu"), template(), claims()],
        [gke_dra_pool(), driver(), installer("cos"), template(), claims()],
        id="GI058-ubuntu-driver-installer-for-cos-nodes",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good"), DRA_PAIRS)
def test_dra_finding_and_its_fix(code: str, bad: list, good: list) -> None:
    bad_report, good_report = check(bad), check(good)
    found = [f for f in bad_report.findings if f.code == code]
    assert found, bad_report.findings
    assert code not in {f.code for f in good_report.findings}, good_report.findings
    assert good_report.errors == [], good_report.errors
    assert found[0].severity == CODES[code][0] and found[0].message and found[0].fix


def test_two_gpus_on_one_gpu_nodes_names_the_count_and_the_devices() -> None:
    report = check([*l4_pool(), template(count=2), claims()])
    (w,) = report.workloads
    assert w.pools == ()
    (f,) = [f for f in report.findings if f.code == "GI050"]
    assert f.message == (
        "claims 2 x gpu.nvidia.com (gpus) but no node of pool l4 can allocate it: 2 device(s) "
        "asked, fewer match on one node; the nodes publish 1 x NVIDIA L4: it stays Pending"
    )


def test_a_selector_no_device_matches_is_an_error_and_its_twin_lands() -> None:
    bad = check([*l4_pool(), template(selectors=(H100,)), claims()])
    assert [f.code for f in bad.errors] == ["GI051"]
    good = check([*l4_pool(), template(selectors=(L4,)), claims()])
    assert good.workloads[0].pools == ("l4",)


def test_no_driver_in_the_graph_is_a_warning_naming_the_chart() -> None:
    report = check([dra_node("n1", "l4"), template(), claims()])
    (f,) = [f for f in report.findings if f.code == "GI054"]
    assert f.severity == "warning" and "dra-driver-nvidia-gpu" in f.message


def test_a_claim_the_graph_lacks_is_not_judged() -> None:
    report = check([*l4_pool(), claims("l4", "elsewhere")])
    assert report.workloads[0].pools == ("l4",)
    assert [(f.code, f.severity) for f in report.findings if f.code.startswith("GI05")] == [
        ("GI056", "warning")
    ]


def test_mig_devices_satisfy_mig_claims_and_not_gpu_claims() -> None:
    pool = [driver(), dra_node("n1", "a100", "A100 80GB", 1, mig="1g.10gb", mig_instances=7)]
    seven = check([*pool, template(count=7, device_class="mig.nvidia.com"), claims("a100")])
    assert seven.workloads[0].pools == ("a100",)
    eight = check([*pool, template(count=8, device_class="mig.nvidia.com"), claims("a100")])
    assert [f.code for f in eight.errors] == ["GI050"]
    whole = check([*pool, template(), claims("a100")])
    assert [f.code for f in whole.errors] == ["GI051"]


def test_two_claims_of_one_pod_take_distinct_devices() -> None:
    one = [*l4_pool(), template("a"), template("b"), claims("l4", "a", "b")]
    assert [f.code for f in check(one).errors] == ["GI050"]
    two = [*l4_pool(2), template("a"), template("b"), claims("l4", "a", "b")]
    assert check(two).workloads[0].pools == ("l4",)


def test_a_device_class_of_the_graph_is_applied_before_the_request() -> None:
    hopper = device_class(
        "hopper", "device.driver == 'gpu.nvidia.com' && " + f"{A}.architecture == 'Hopper'"
    )
    report = check([*l4_pool(), hopper, template(device_class="hopper"), claims()])
    assert [f.code for f in report.errors] == ["GI051"]


def test_an_untolerated_pool_taint_keeps_the_pod_off_before_devices_are_read() -> None:
    tainted = dra_node(
        "n1", "l4", taints=[GPU_TAINT, {"key": "team", "value": "a", "effect": "NoSchedule"}]
    )
    report = check([driver(tolerations=[{"operator": "Exists"}]), tainted, template(), claims()])
    assert report.workloads[0].pools == ()
    assert not [f for f in report.findings if f.code in ("GI050", "GI051")]


# ---------------------------------------------------------------------------------------------
# The allocator
# ---------------------------------------------------------------------------------------------


def _claim(*requests: DeviceRequest) -> Claim:
    return Claim("ResourceClaimTemplate", "t", requests)


@pytest.mark.parametrize(
    ("devices", "request_", "cause"),
    [
        (node_devices("L4", 2), DeviceRequest("r", "gpu.nvidia.com", 2), ""),
        (node_devices("L4", 2), DeviceRequest("r", "gpu.nvidia.com", 3), "count"),
        (node_devices("L4", 2), DeviceRequest("r", "gpu.nvidia.com", all_devices=True), ""),
        ((), DeviceRequest("r", "gpu.nvidia.com", all_devices=True), "selector"),
        (node_devices("L4", 1), DeviceRequest("r", "mig.nvidia.com"), "selector"),
        (node_devices("L4", 1), DeviceRequest("r", "nope"), "class"),
        (
            node_devices("L4", 1),
            DeviceRequest(
                "r",
                "",
                alternatives=(
                    DeviceRequest("h100", "gpu.nvidia.com", 1, selectors=(H100,)),
                    DeviceRequest("l4", "gpu.nvidia.com", 1, selectors=(L4,)),
                ),
            ),
            "",
        ),
    ],
)
def test_allocation_on_one_node(devices: tuple, request_: DeviceRequest, cause: str) -> None:
    result = allocate([_claim(request_)], devices, dict(BUILTIN_DEVICE_CLASSES))
    assert (result.ok, result.cause) == (cause == "", cause)


def test_an_error_on_a_device_read_after_the_claim_is_met_is_never_seen() -> None:
    """The allocator stops reading devices once the count is met (kube-scheduler agrees: the
    rig's DRA differential binds such pods)."""
    devices = (*node_devices("L4", 1), *node_devices("A100 80GB", 1, "1g.10gb", 1))
    first = f"{A}.type == 'gpu' || {A}.profile == 'x'"
    ok = allocate(
        [_claim(DeviceRequest("r", "gpu.nvidia.com", 1))], devices, {"gpu.nvidia.com": (first,)}
    )
    assert ok.ok


# ---------------------------------------------------------------------------------------------
# CEL: Kubernetes' DRA environment (k8s.io/dynamic-resource-allocation v0.36.3 cel/compile.go,
# k8s.io/apiserver v0.36.3 pkg/cel/library quantity.go and semverlib.go)
# ---------------------------------------------------------------------------------------------

L4_DEVICE = node_devices("L4", 1)[0]


@pytest.mark.parametrize(
    ("expression", "matches", "error"),
    [
        ("device.driver == 'gpu.nvidia.com'", True, None),
        (f"{A}.type == 'gpu' && {A}.architecture == 'Ada Lovelace'", True, None),
        # an id without a domain is in the driver's domain (parseQualifiedName)
        (f"{C}.memory == quantity('23034Mi')", True, None),
        # Quantity.Equal compares values, not spellings
        ("quantity('1') == quantity('1000m')", True, None),
        ("quantity('1Gi').compareTo(quantity('1G')) == 1", True, None),
        ("quantity('500m').isInteger()", False, None),
        ("quantity('2k').asInteger() == 2000", True, None),
        ("quantity('1Gi').add(1).sub(quantity('1')).asInteger() == 1073741824", True, None),
        ("quantity('-1').sign() == -1", True, None),
        ("isQuantity('1.5Gi') && !isQuantity('1.5GB')", True, None),
        (f"{C}.memory.isGreaterThan(quantity('24Gi'))", False, None),
        # semver: blang/semver precedence; build metadata ignored in equality
        (f"{A}.cudaComputeCapability.isGreaterThan(semver('8.0.0'))", True, None),
        ("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", True, None),
        ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True, None),
        ("semver('1.2.3+build') == semver('1.2.3')", True, None),
        ("semver('v01.2', true).minor() == 2 && isSemver('1.2', true)", True, None),
        ("isSemver('01.2.3')", False, None),
        # a missing id, and a domain the device lacks (an empty map), are errors
        (f"{A}.profile == '1g.10gb'", False, "not found"),
        ("device.attributes['example.com'].foo == 'bar'", False, "not found"),
        # errors are absorbed by && / || as in cel-go
        (f"{A}.type == 'mig' && {A}.profile == '1g.10gb'", False, None),
        (f"{A}.profile == '1g.10gb' || {A}.type == 'gpu'", True, None),
        (f"'profile' in {A}", False, None),
        (f"{A}.productName.lowerAscii().contains('l4')", True, None),
        (f"{A}.productName.matches('^NVIDIA L')", True, None),
        (f"cel.bind(g, {A}, g.productName.startsWith('NVIDIA'))", True, None),
        ("quantity('x') == quantity('1')", False, "quantities must match"),
    ],
)
def test_selectors_evaluate_as_kubernetes_does(
    expression: str, matches: bool, error: str | None
) -> None:
    outcome = evaluate(expression, "gpu.nvidia.com", L4_DEVICE)
    assert outcome.matches is matches
    if error is None:
        assert outcome.error is None
    else:
        assert outcome.error is not None and error in outcome.error


def test_a_selector_that_does_not_compile_says_where() -> None:
    assert "Syntax error" in (compile_error("device.attributes[") or "")
    with pytest.raises(CelError):
        evaluate("device.attributes[", "gpu.nvidia.com", L4_DEVICE)


def test_a_graph_without_dra_never_loads_the_cel_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from components.check import check; check([]); "
        "print('cel_expr_python' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# GI057 rests on cluster-autoscaler-1.36.1 source no judge here runs: the AWS provider's
# TemplateNodeInfo builds `framework.NewNodeInfo(node, nil, ...)` (no ResourceSlices:
# cloudprovider/aws/aws_cloud_provider.go:423), while a template copied from a running node keeps
# its `LocalResourceSlices` (simulator/node_info_utils.go SanitizedTemplateNodeInfoFromNodeInfo).
@pytest.mark.parametrize(
    ("pool", "found"),
    [
        (eks_dra_group(min_nodes=0), True),  # no node: the template has no devices
        (eks_dra_group(min_nodes=1), False),  # a running node's slices are copied
        (dra_node("n1", "g6", "L4", 1), False),  # existing nodes: no autoscaler
    ],
    ids=["eks-group-at-zero", "eks-group-keeps-a-node", "existing-nodes"],
)
def test_gi057_only_a_cluster_autoscaler_group_that_can_be_empty(pool: dict, found: bool) -> None:
    report = check([driver(), pool, template(), claims("g6")])
    assert report.workloads[0].pools == ("g6",)
    assert ("GI057" in {f.code for f in report.findings}) is found
    if found:
        (f,) = report.errors
        assert f.message.startswith(
            "takes its devices through DRA ResourceClaim(s) (gpus) and can only land on g6, "
            "cluster-autoscaler group(s) that can be at 0 nodes"
        )
        assert f.fix.startswith("minNodes 1 on g6")


def test_nvidia_gpu_on_a_dra_pool_stays_pending() -> None:
    """A DRA pool advertises no nvidia.com/gpu (its device plugin is off; its GPUs are the DRA
    driver's): a pod counting GPUs there is GI004, told why; by claim it lands."""
    pod = {
        "containers": [
            {"name": "m", "resources": {"limits": {"nvidia.com/gpu": 1}}},
        ],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"gpu-inference.dev/pool": "l4"},
    }
    report = check([*l4_pool(), deployment("a", pod, "l4")])
    (f,) = report.errors
    assert f.code == "GI004"
    assert f.message == (
        "requests 1 GPU(s) per pod but the nodes it can land on have fewer (l4: 0; l4: DRA, "
        "whose GPUs are taken by claim (no nvidia.com/gpu)): it stays Pending"
    )
    assert check([*l4_pool(), template(), claims()]).errors == []


# GI058: the NVIDIA GPU driver on GKE DRA nodes, whose GKE driver install is off.
TEAM = {"key": "team", "value": "ml", "effect": "NoSchedule"}
TOL_TEAM = {"key": "team", "operator": "Exists", "effect": "NoSchedule"}
INSTALLER = (
    "GoogleCloudPlatform/container-engine-accelerators "
    "nvidia-driver-installer/{}/daemonset-preloaded.yaml"
)


def test_a_gke_dra_pool_with_no_driver_installer_is_a_warning_naming_the_manifest() -> None:
    report = check([gke_dra_pool(), driver(), template(), claims()])
    (f,) = [f for f in report.findings if f.code == "GI058"]
    assert (f.severity, f.resource) == ("warning", "NodePool/l4")
    assert f.message == (
        "pool l4 is set up for DRA with GKE's GPU driver installation off, but the graph installs "
        "no NVIDIA GPU driver (GKE's nvidia-driver-installer DaemonSet): the cluster's must run "
        "there, or its nodes have no GPU driver and their GPUs are never published"
    )
    assert f.fix == (
        "install GKE's driver installer DaemonSet (addons.gpuDriverInstaller) or apply "
        f"{INSTALLER.format('cos')} in the cluster"
    )


def test_an_installer_for_another_node_image_is_an_error_and_its_twin_is_clean() -> None:
    bad = check([gke_dra_pool(), driver(), installer("ubuntu"), template(), claims()])
    assert [(f.code, f.resource) for f in bad.errors] == [("GI058", "NodePool/l4")]
    assert bad.errors[0].message == (
        "pool l4 is set up for DRA with GKE's GPU driver installation off, but no NVIDIA GPU "
        "driver installer of the graph runs on its cos nodes (taints "
        "nvidia.com/gpu=present:NoSchedule; ConfigFile/gpu-driver installs for ubuntu nodes): "
        "they have no GPU driver and their GPUs are never published"
    )
    assert bad.errors[0].fix == (
        f"install {INSTALLER.format('cos')}, tolerating the pool's taints and selecting its nodes"
    )
    good = check([gke_dra_pool(), driver(), installer("cos"), template(), claims()])
    assert [f for f in good.findings if f.code == "GI058"] == [] and good.errors == []
    assert good.workloads[0].pools == ("l4",)
    # Ubuntu nodes (imageType) take the Ubuntu manifest, and refuse the COS one.
    ubuntu = gke_dra_pool(image="UBUNTU_CONTAINERD")
    assert [
        f.code for f in check([ubuntu, driver(), installer("cos"), template(), claims()]).errors
    ] == ["GI058"]
    assert check([ubuntu, driver(), installer("ubuntu"), template(), claims()]).errors == []


def test_the_pinned_installer_runs_on_a_dra_pool_whatever_its_taints() -> None:
    """Our DRA pools carry the user's taints: the manifest tolerates every taint (`operator:
    Exists`); an installer of one's own that tolerates only GKE's GPU taint does not run there."""
    pool, dra = gke_dra_pool(taints=[TEAM]), driver(tolerations=[TOL_GPU, TOL_TEAM])
    pod = deployment("a", {**claimed_pod("l4", "gpus"), "tolerations": [TOL_GPU, TOL_TEAM]}, "l4")
    assert check([pool, dra, installer("cos"), template(), pod]).errors == []
    narrow = check([pool, dra, installer_daemonset([TOL_GPU]), template(), pod])
    (f,) = narrow.errors
    assert (
        f.code == "GI058"
        and (
            "(taints nvidia.com/gpu=present:NoSchedule, team=ml:NoSchedule; "
            "DaemonSet/nvidia-driver-installer: its tolerations / affinity do not let it in)"
        )
        in f.message
    )
    wide = installer_daemonset([{"operator": "Exists"}])
    assert check([pool, dra, wide, template(), pod]).errors == []


def test_a_pool_whose_driver_gke_installs_needs_no_installer_and_runs_none() -> None:
    """`DEFAULT` / `LATEST`: GKE installs the driver and labels the nodes
    cloud.google.com/gke-gpu-driver-version, which the installer's affinity avoids."""
    gke = check([gke_dra_pool(driver_version="DEFAULT"), driver(), template(), claims()])
    assert [f for f in gke.findings if f.code == "GI058"] == []
    graph = [gke_dra_pool(), gke_dra_pool("t4", driver_version="LATEST"), installer("cos")]
    nodes = {p.name: p.nodes[0] for p in check(graph).pools}
    assert (
        nodes["l4"].daemons.describe()
        == "kube-proxy 100m cpu, nvidia-driver-installer (cos) 150m cpu"
    )
    assert nodes["t4"].daemons.describe() == "kube-proxy 100m cpu"


def test_the_stacks_installer_daemonset_serves_its_pools_and_is_counted_on_their_nodes() -> None:
    """The stack's DaemonSet (upstream's, narrowed to the DRA pools by pool label): without it a
    GKE DRA pool is GI058; with it the twin is clean and its pod is a DaemonSet pod of the pool's
    nodes (150m: the larger init container); a DRA pool it does not name is GI058, an error."""
    bare = check([gke_dra_pool(), driver(), template(), claims()])
    assert [(f.code, f.severity) for f in bare.findings if f.code == "GI058"] == [
        ("GI058", "warning")
    ]
    good = check(
        [gke_dra_pool(), driver(), installer_daemonset(pools=("l4",)), template(), claims()]
    )
    assert good.errors == [] and [f for f in good.findings if f.code == "GI058"] == []
    (pool,) = good.pools
    assert pool.nodes[0].daemons.describe() == (
        "kube-proxy 100m cpu, DaemonSet/nvidia-driver-installer 150m cpu"
    )
    other = check(
        [
            gke_dra_pool(),
            gke_dra_pool("t4"),
            driver(),
            installer_daemonset(pools=("l4",)),
            template(),
            claims(),
        ]
    )
    (f,) = [f for f in other.findings if f.code == "GI058"]
    assert (f.severity, f.resource) == ("error", "NodePool/t4")
    assert "DaemonSet/nvidia-driver-installer: its tolerations / affinity do not let it in" in (
        f.message
    )
    nodes = {p.name: p.nodes[0].daemons.describe() for p in other.pools}
    assert nodes == {
        "l4": "kube-proxy 100m cpu, DaemonSet/nvidia-driver-installer 150m cpu",
        "t4": "kube-proxy 100m cpu",
    }


def test_who_installs_a_gke_gpu_nodes_driver() -> None:
    """GKE itself with `DEFAULT` / `LATEST` (GKE API v1 `GPUDriverInstallationConfig`); else a
    DaemonSet for the node's image must."""
    driver = {
        (v, image): check([gke_dra_pool(driver_version=v, image=image)]).pools[0].nodes[0]
        for v, image in (
            ("DEFAULT", None),
            ("LATEST", None),
            ("INSTALLATION_DISABLED", None),
            (None, None),
            ("INSTALLATION_DISABLED", "UBUNTU_CONTAINERD"),
        )
    }
    assert [n.gpu_driver for n in driver.values()] == ["gke", "gke", "cos", "cos", "ubuntu"]
