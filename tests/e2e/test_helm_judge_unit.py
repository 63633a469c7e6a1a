"""The Helm judge's Python side without Go (unit tier): the placement verdict on a rendered
controller pod, the Go configuration types a chart hands its values to, the charts' preparation
as their release tooling does it, and the releases read from a preview."""

from __future__ import annotations

from pathlib import Path

import chart_keys as ck
import helm_judge as hj
import pytest

GPU_POOL = {
    "name": "l4",
    "gpu": True,
    "labels": {"gpu-inference.dev/pool": "l4"},
    "taints": ["nvidia.com/gpu=present:NoSchedule"],
}
UNTAINTED_GPU_POOL = {"name": "rtx", "gpu": True, "labels": {"pool": "rtx"}, "taints": []}
SYSTEM = {"name": "system", "gpu": False, "labels": {}, "taints": []}
TAINTED_CPU = {"name": "cpu", "gpu": False, "labels": {"p": "cpu"}, "taints": ["t=1:NoSchedule"]}


def test_a_controller_without_gpu_tolerations_on_an_untainted_cpu_pool_passes() -> None:
    pod = {"nodeSelector": {"kubernetes.io/os": "linux"}}  # the kubelet's label: every node
    assert hj.placement_faults(pod, [GPU_POOL, SYSTEM], {}) == []


def test_a_gpu_toleration_or_an_untainted_gpu_pool_is_a_fault() -> None:
    wildcard = {"tolerations": [{"operator": "Exists"}]}
    faults = hj.placement_faults(wildcard, [GPU_POOL, SYSTEM], {})
    assert faults[0].startswith("tolerates nvidia.com/gpu=present:NoSchedule")
    assert faults[1] == "can land on GPU pool(s) l4"
    assert hj.placement_faults({}, [UNTAINTED_GPU_POOL], {}) == ["can land on GPU pool(s) rtx"]


def test_a_stack_with_cpu_pools_none_of_which_admits_the_controller_is_a_fault() -> None:
    (fault,) = hj.placement_faults({}, [GPU_POOL, TAINTED_CPU], {})
    assert fault.startswith("no CPU pool of the stack admits it (cpu)")
    # Only GPU pools declared (an existing cluster's own nodes unknown): nothing to land on is
    # not judged, only that the GPU pools keep it off.
    assert hj.placement_faults({}, [GPU_POOL], {}) == []


def test_the_placement_we_pass_must_reach_the_pod() -> None:
    ours = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "g", "operator": "In", "values": ["system"]}]}
                ]
            }
        }
    }
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}
    kept = {"affinity": {**ours, **anti}}
    # `g In [system]` matches no CPU pool of the stack: a fault, unless it names the cluster's
    # own node groups.
    (fault,) = hj.placement_faults(kept, [GPU_POOL, SYSTEM], {"affinity": ours})
    assert fault.startswith("no CPU pool of the stack admits it (system)")
    system = {**SYSTEM, "labels": {"g": "system"}}
    assert hj.placement_faults(kept, [GPU_POOL, system], {"affinity": ours}) == []
    (fault,) = hj.placement_faults({"affinity": anti}, [GPU_POOL], {"affinity": ours})
    assert fault.startswith("affinity we pass is not the pod's")
    terms = ours["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    terms["nodeSelectorTerms"][0]["matchExpressions"][0]["key"] = "eks.amazonaws.com/nodegroup"
    assert hj.elsewhere({"affinity": ours})
    assert hj.placement_faults(kept, [GPU_POOL, SYSTEM], {"affinity": ours}) == []


GO = """
type Config struct {
	metav1.TypeMeta `json:",inline"`
	Spec `json:",inline"`
}

type Spec struct {
	// Gateway is documented.
	Gateway *Gateway `json:"gateway,omitempty"`
	Hooks []Hook `json:"hooks,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Ignored string `json:"-"`
}

type Gateway struct {
	ControllerName string `json:"controllerName,omitempty"`
}
"""


def test_go_configuration_types_by_json_name() -> None:
    types = ck.go_struct_fields([GO])
    assert ck.go_accepts(types, "Config", ("gateway", "controllerName"))
    assert ck.go_accepts(types, "Config", ("hooks",))  # a list: a leaf
    assert ck.go_accepts(types, "Config", ("labels", "team"))  # a map: any key
    assert not ck.go_accepts(types, "Config", ("gateway", "controllername"))
    assert not ck.go_accepts(types, "Config", ("Ignored",))
    assert not ck.go_accepts(types, "Config", ("ignored",))


def _module(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / "module" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "module" / rel).write_text(text)
    return tmp_path / "module"


def test_the_knative_operator_chart_is_stamped_as_its_release_script_does(tmp_path: Path) -> None:
    source = hj.sources()["knative-operator"]
    chart = "config/charts/knative-operator/"
    module = _module(
        tmp_path,
        {
            "hack/generate-helm.sh": f"VERSION={source.version}\n",
            chart
            + "Chart.yaml": "apiVersion: v1\nname: knative-operator\nversion: {{ version }}\n",
            chart + "values.yaml": "knative_operator:\n  image:\n    tag: {{ tag }}\n",
        },
    )
    out = hj.prepare(source, module, tmp_path / "out")
    assert f"version: {source.version[1:]}" in (out / "Chart.yaml").read_text()
    assert f"tag: {source.version}" in (out / "values.yaml").read_text()
    (module / "hack/generate-helm.sh").write_text("VERSION=v9.9.9\n")
    with pytest.raises(hj.BuildError, match=r"packages its chart as v9\.9\.9"):
        hj.prepare(source, module, tmp_path / "out")


def test_gateway_helm_values_are_generated_and_a_new_placeholder_refused(tmp_path: Path) -> None:
    source = hj.sources()["gateway-helm"]
    files = {
        "charts/gateway-helm/Chart.yaml": "apiVersion: v2\nname: gateway-helm\nversion: v0.0.0-latest\n",
        "charts/gateway-helm/values.tmpl.yaml": "image: ${GatewayImage}\npull: ${GatewayImagePullPolicy}\n",
    }
    out = hj.prepare(source, _module(tmp_path, files), tmp_path / "out")
    assert (out / "values.yaml").read_text() == (
        f"image: docker.io/envoyproxy/gateway:{source.version}\npull: IfNotPresent\n"
    )
    files["charts/gateway-helm/values.tmpl.yaml"] += "new: ${Other}\n"
    with pytest.raises(hj.BuildError, match="Other"):
        hj.prepare(source, _module(tmp_path, files), tmp_path / "out")


def test_releases_of_a_preview() -> None:
    resources = [
        {"type": "kubernetes:core/v1:Namespace", "name": "ns", "inputs": {}},
        {
            "type": "kubernetes:helm.sh/v3:Release",
            "name": "gpu-inference-kserve-controller",
            "inputs": {
                "chart": "oci://ghcr.io/kserve/charts/kserve-resources",
                "version": "v0.20.0",
                "namespace": "kserve",
                "name": "kserve",
                "values": {"kserve": {"controller": {"deploymentMode": "Standard"}}},
            },
        },
    ]
    (r,) = hj.releases("eks-prod", resources)
    assert (r.chart, r.version, r.namespace, r.name, r.kind) == (
        "kserve-resources",
        "v0.20.0",
        "kserve",
        "kserve",
        "Release",
    )


def test_every_served_chart_is_pinned_where_the_project_pins_it() -> None:
    from components.model.deploy import versions as v

    s = hj.sources()
    assert s["kserve-resources"].module_version == v.KSERVE_VERSION
    assert s["karpenter"].module_version == f"v{v.KARPENTER_VERSION}"
    assert s["knative-operator"].version == v.KNATIVE_OPERATOR.version
    assert not set(s) & set(hj.not_served())


def test_the_helm_judge_downloads_a_newer_module_with_the_karpenter_judges_toolchain():
    """aws/karpenter-provider-aws v1.15.0 says go 1.26.9: the judge retries with the toolchain
    the Karpenter judge's AWS build runs (warm CI failed on it with GOTOOLCHAIN=local)."""
    import helm_judge
    import karpenter_judge

    assert karpenter_judge.TOOLCHAINS["aws"] == helm_judge.KARPENTER_AWS_TOOLCHAIN
    assert helm_judge._NEWER_GO.search("requires go >= 1.26.9 (running go 1.26.8)")
