"""KServe InferenceService: the CR body, deployment-mode spelling, placements, the Knative flag
check, and every kind of bad input with its message."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.model.scheduling import (
    NodeSelectorRequirement,
    Placement,
    Taint,
)
from components.preview.mockrun import FakeCloud, run_program
from components.serving.inference_service import (
    ExplainerArgs,
    InferenceService,
    InferenceServiceArgs,
    PredictorArgs,
    TransformerArgs,
    deployment_mode_spelling,
    inference_service_body,
    inference_service_placements,
)
from components.serving.workload import ContainerArgs
from tests.conftest import owned

ISVC_TYPE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
ALL_FLAGS_ON = {
    "kubernetes.podspec-affinity": "enabled",
    "kubernetes.podspec-nodeselector": "enabled",
    "kubernetes.podspec-tolerations": "enabled",
}

# Two pools as their components expose them: a GKE L4 GPU pool (custom label + taint, and the
# nvidia.com/gpu taint GKE adds) and a CPU pool for pre/post-processing.
GPU_LABELS = {"gpu-inference/pool": "l4", "cloud.google.com/gke-accelerator": "nvidia-l4"}
GPU_TAINTS = [Taint("gpu-inference/pool", "l4"), Taint("nvidia.com/gpu", "present")]
CPU_LABELS = {"gpu-inference/pool": "cpu"}
CPU_TAINTS = [Taint("gpu-inference/pool", "cpu")]


def gpu_pool(style: str = "nodeAffinity") -> Placement:
    return Placement.for_pool(GPU_LABELS, GPU_TAINTS, style)


def cpu_pool(style: str = "nodeSelector") -> Placement:
    return Placement.for_pool(CPU_LABELS, CPU_TAINTS, style)


def sklearn(**kw) -> PredictorArgs:
    base = dict(model_format="sklearn", storage_uri="gs://models/iris")
    base.update(kw)
    return PredictorArgs(**base)


def transformer(**kw) -> TransformerArgs:
    return TransformerArgs(containers=[ContainerArgs("t", image="example/t:1")], **kw)


# ---------------------------------------------------------------------------------------------
# Body
# ---------------------------------------------------------------------------------------------


def test_model_format_predictor_body() -> None:
    args = InferenceServiceArgs(
        namespace="models",
        predictor=sklearn(
            runtime="kserve-sklearnserver",
            runtime_version="v0.13",
            protocol_version="v2",
            model_format_version="1",
            gpus=0,
            cpu="500m",
            memory="2Gi",
            min_replicas=0,
            max_replicas=3,
            scale_metric="concurrency",
            scale_target=10,
            service_account_name="model-reader",
            args=["--workers", "2"],
        ),
        labels={"team": "ml"},
    )
    assert inference_service_body("iris", args) == {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "iris",
            "namespace": "models",
            "labels": {"team": "ml"},
            "annotations": {"serving.kserve.io/deploymentMode": "Knative"},
        },
        "spec": {
            "predictor": {
                "minReplicas": 0,
                "maxReplicas": 3,
                "scaleMetric": "concurrency",
                "scaleTarget": 10,
                "serviceAccountName": "model-reader",
                "model": {
                    "modelFormat": {"name": "sklearn", "version": "1"},
                    "runtime": "kserve-sklearnserver",
                    "storageUri": "gs://models/iris",
                    "runtimeVersion": "v0.13",
                    "protocolVersion": "v2",
                    "args": ["--workers", "2"],
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "2Gi"},
                        "limits": {"cpu": "500m", "memory": "2Gi"},
                    },
                },
            }
        },
    }


def test_custom_container_predictor_and_explainer() -> None:
    args = InferenceServiceArgs(
        predictor=PredictorArgs(
            containers=[ContainerArgs("kserve-container", image="example/llm:1", gpus=2)],
            placement=gpu_pool(),
        ),
        explainer=ExplainerArgs(containers=[ContainerArgs("explainer", image="example/e:1")]),
    )
    spec = inference_service_body("llm", args)["spec"]
    assert spec["predictor"]["containers"] == [
        {
            "name": "kserve-container",
            "image": "example/llm:1",
            "resources": {
                "requests": {"nvidia.com/gpu": 2},
                "limits": {"nvidia.com/gpu": 2},
            },
        }
    ]
    assert spec["explainer"] == {"containers": [{"name": "explainer", "image": "example/e:1"}]}


@pytest.mark.parametrize(
    "mode, version, annotation",
    [
        # Always written: a cluster whose default (KServe's deploymentMode value) is raw would
        # otherwise run a Serverless service raw, silently.
        ("Serverless", "v0.15.2", "Serverless"),
        ("Knative", "v0.15.2", "Serverless"),
        ("Serverless", None, "Knative"),
        ("Knative", "v0.16.0", "Knative"),
        ("RawDeployment", "v0.15.2", "RawDeployment"),
        ("Standard", "v0.15.2", "RawDeployment"),
        ("RawDeployment", "v0.16.0", "Standard"),
        ("RawDeployment", "0.20.0", "Standard"),
        ("Standard", None, "Standard"),  # the pinned KServe is v0.16 or newer
    ],
)
def test_deployment_mode_annotation(mode, version, annotation) -> None:
    args = InferenceServiceArgs(predictor=sklearn(), deployment_mode=mode, kserve_version=version)
    meta = inference_service_body("iris", args)["metadata"]
    assert meta.get("annotations", {}).get("serving.kserve.io/deploymentMode") == annotation


def test_deployment_mode_spelling_table() -> None:
    assert deployment_mode_spelling("Serverless", "v0.15.0") == "Serverless"
    assert deployment_mode_spelling("Serverless", "v0.16.0") == "Knative"
    assert deployment_mode_spelling("Knative", "v0.14.1") == "Serverless"


def test_extra_expressions_are_anded_into_the_pool_affinity() -> None:
    args = InferenceServiceArgs(
        predictor=sklearn(
            gpus=1,
            placement=gpu_pool("nodeAffinity"),
            extra_expressions=[
                NodeSelectorRequirement("cloud.google.com/gke-accelerator-count", "Gt", ["1"])
            ],
        )
    )
    pred = inference_service_body("iris", args)["spec"]["predictor"]
    (term,) = pred["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"][-1] == {
        "key": "cloud.google.com/gke-accelerator-count",
        "operator": "Gt",
        "values": ["1"],
    }
    assert "nodeSelector" not in pred
    # Explicit tolerations by default, the nvidia.com/gpu one included.
    assert {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "present",
        "effect": "NoSchedule",
    } in pred["tolerations"]


def test_predictor_and_transformer_land_on_two_pools() -> None:
    args = InferenceServiceArgs(
        predictor=sklearn(gpus=1, placement=gpu_pool("nodeAffinity")),
        transformer=transformer(placement=cpu_pool("nodeSelector")),
        knative_features=ALL_FLAGS_ON,
    )
    placements = inference_service_placements("iris", args)
    assert placements["predictor"].admits(GPU_LABELS, GPU_TAINTS)
    assert not placements["predictor"].admits(CPU_LABELS, CPU_TAINTS)
    assert placements["transformer"].admits(CPU_LABELS, CPU_TAINTS)
    assert not placements["transformer"].admits(GPU_LABELS, GPU_TAINTS)
    # ...and what is emitted reads back as the same placements.
    spec = inference_service_body("iris", args)["spec"]
    assert Placement.from_pod_spec(spec["predictor"]) == placements["predictor"]
    assert Placement.from_pod_spec(spec["transformer"]) == placements["transformer"]
    assert "affinity" in spec["predictor"] and "nodeSelector" in spec["transformer"]


def test_omit_gpu_toleration_keeps_other_tolerations() -> None:
    args = InferenceServiceArgs(
        predictor=sklearn(gpus=1, placement=gpu_pool("nodeSelector"), omit_gpu_toleration=True)
    )
    pred = inference_service_body("iris", args)["spec"]["predictor"]
    assert pred["tolerations"] == [
        {"key": "gpu-inference/pool", "operator": "Equal", "value": "l4", "effect": "NoSchedule"}
    ]


# ---------------------------------------------------------------------------------------------
# Knative feature flags (Serverless)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "features, ok",
    [
        (None, True),  # not managed by us: not checked
        (ALL_FLAGS_ON, True),
        ({**ALL_FLAGS_ON, "kubernetes.podspec-tolerations": "allowed"}, True),
        ({**ALL_FLAGS_ON, "kubernetes.podspec-tolerations": "disabled"}, False),
        ({"kubernetes.podspec-nodeselector": "enabled"}, False),  # unset = disabled
    ],
)
def test_knative_flags_table(features, ok) -> None:
    args = InferenceServiceArgs(
        predictor=sklearn(),
        transformer=transformer(placement=cpu_pool("nodeSelector")),
        knative_features=features,
    )
    if ok:
        inference_service_body("iris", args)
    else:
        with pytest.raises(InputError, match=r"kubernetes\.podspec-tolerations"):
            inference_service_body("iris", args)


def test_knative_flag_off_names_component_field_and_flag_and_registers_nothing() -> None:
    features = {**ALL_FLAGS_ON, "kubernetes.podspec-tolerations": "disabled"}
    seen: list[str] = []

    class Recording(FakeCloud):
        def new_resource(self, args):
            seen.append(args.typ)
            return super().new_resource(args)

    def program() -> None:
        InferenceService(
            "iris",
            InferenceServiceArgs(
                predictor=sklearn(gpus=1, placement=gpu_pool()),
                knative_features=features,
            ),
        )

    with pytest.raises(InputError) as err:
        run_program(program, mocks=Recording())
    msg = str(err.value)
    assert msg.startswith("InferenceService('iris').predictor.placement:")
    assert "sets tolerations" in msg
    assert "kubernetes.podspec-tolerations is 'disabled'" in msg
    assert "enable kubernetes.podspec-tolerations" in msg
    assert seen == []


def test_raw_deployment_ignores_knative_flags() -> None:
    args = InferenceServiceArgs(
        predictor=sklearn(placement=cpu_pool()),
        deployment_mode="RawDeployment",
        knative_features={},
    )
    assert inference_service_body("iris", args)["spec"]["predictor"]["tolerations"]


def test_affinity_flag_is_checked_for_node_affinity_style() -> None:
    features = {**ALL_FLAGS_ON, "kubernetes.podspec-affinity": "disabled"}
    args = InferenceServiceArgs(
        predictor=sklearn(placement=gpu_pool("nodeAffinity")), knative_features=features
    )
    with pytest.raises(InputError, match=r"sets affinity.*kubernetes.podspec-affinity"):
        inference_service_body("iris", args)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

LONG = "a" * 40


@pytest.mark.parametrize(
    "name, args, pieces",
    [
        ("Iris", InferenceServiceArgs(predictor=sklearn()), ["name:", "'Iris'", "DNS-1035"]),
        ("1iris", InferenceServiceArgs(predictor=sklearn()), ["name:", "KServe requires"]),
        (
            LONG,
            InferenceServiceArgs(predictor=sklearn(), namespace="n" * 14),
            [
                "name:",
                "predictor",
                "must be no more than 63 characters",
                "len(name) + len(namespace) <= 52",
            ],
        ),
        (
            "a" * 30,
            InferenceServiceArgs(
                predictor=sklearn(), transformer=transformer(), namespace="n" * 21
            ),
            ["-transformer-", "with a transformer"],
        ),
        ("iris", InferenceServiceArgs(predictor=sklearn(), namespace="Models"), ["namespace:"]),
        (
            "iris",
            InferenceServiceArgs(predictor=PredictorArgs(storage_uri="gs://x")),
            ["predictor:", "0 model sources", "exactly one of"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(framework="triton")),
            ["2 model sources (modelFormat, framework)"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=PredictorArgs(framework="torch", storage_uri="gs://x")),
            ["predictor.framework:", "'torch'", "pytorch"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=PredictorArgs(model_format="sklearn")),
            ["predictor.storageUri:", "no storageUri"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(storage_uri="models/iris")),
            ["predictor.storageUri:", "no scheme"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(min_replicas=3, max_replicas=2)),
            ["predictor.minReplicas:", "minReplicas 3 is above maxReplicas 2"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(min_replicas=-1)),
            ["predictor.minReplicas:", "-1"],
        ),
        ("iris", InferenceServiceArgs(predictor=sklearn(cpu=0.5)), ["predictor.cpu:", "'500m'"]),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(memory="4GB")),
            ["predictor.memory:", "'4GB'"],
        ),
        ("iris", InferenceServiceArgs(predictor=sklearn(gpus=-1)), ["predictor.gpus:", "-1"]),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(scale_metric="cpu")),
            ["predictor.scaleMetric:", "Serverless", "concurrency, rps"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(scale_metric="gpu")),
            ["predictor.scaleMetric:", "'gpu'", "cpu, memory, concurrency, rps"],
        ),
        (
            "iris",
            InferenceServiceArgs(
                predictor=sklearn(scale_metric="cpu", scale_target=150),
                deployment_mode="RawDeployment",
            ),
            ["predictor.scaleTarget:", "1..100"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(placement=gpu_pool(), omit_gpu_toleration=True)),
            ["predictor.omitGpuToleration:", "requests no GPU"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(), deployment_mode="ModelMesh"),
            ["deploymentMode:", "'ModelMesh'", "Serverless, Knative, RawDeployment, Standard"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(), kserve_version="latest"),
            ["kserveVersion:", "'latest'"],
        ),
        (
            "iris",
            InferenceServiceArgs(
                predictor=sklearn(), annotations={"serving.kserve.io/deploymentMode": "Standard"}
            ),
            ["annotations:", "deploymentMode"],
        ),
        (
            "iris",
            InferenceServiceArgs(
                predictor=PredictorArgs(containers=[ContainerArgs("c", image="x:1")], gpus=1)
            ),
            ["predictor.gpus:", "custom containers"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=PredictorArgs(containers=[ContainerArgs("c")])),
            ["predictor.containers[0].image:", "no image"],
        ),
        (
            "iris",
            InferenceServiceArgs(
                predictor=PredictorArgs(
                    containers=[ContainerArgs("c", image="x:1"), ContainerArgs("c", image="y:1")]
                )
            ),
            ["predictor.containers[1].name:", "used twice"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(), transformer=TransformerArgs(containers=[])),
            ["transformer.containers:", "the list is empty"],
        ),
        (
            "iris",
            InferenceServiceArgs(
                predictor=sklearn(env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])
            ),
            ["predictor.env[1]:", "set twice"],
        ),
        (
            "iris",
            InferenceServiceArgs(predictor=sklearn(protocol_version="v3")),
            ["predictor.protocolVersion:", "v1, v2, grpc-v1, grpc-v2"],
        ),
        (
            "iris",
            InferenceServiceArgs(
                predictor=PredictorArgs(framework="triton", storage_uri="gs://x", runtime="r")
            ),
            ["predictor.runtime:", "only with modelFormat"],
        ),
    ],
)
def test_bad_input(name, args, pieces) -> None:
    with pytest.raises(InputError) as err:
        inference_service_body(name, args)
    for piece in pieces:
        assert piece in str(err.value)


def test_host_label_limit_is_exact() -> None:
    # "<name>-predictor-<namespace>" of exactly 63 characters is accepted, 64 is not.
    ns = "models"
    fits = "a" * (63 - len("-predictor-") - len(ns))
    inference_service_body(fits, InferenceServiceArgs(predictor=sklearn(), namespace=ns))
    with pytest.raises(InputError):
        inference_service_body(fits + "a", InferenceServiceArgs(predictor=sklearn(), namespace=ns))


def test_component_error_names_the_component() -> None:
    with pytest.raises(InputError, match=r"^InferenceService\('bad'\)\.predictor\.memory:"):
        InferenceService("bad", InferenceServiceArgs(predictor=sklearn(memory="4GB")))


# ---------------------------------------------------------------------------------------------
# The component under mocks
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph():
    import pulumi
    import pulumi_kubernetes as k8s

    def program() -> None:
        # Stands in for `KnativeServing.ready`: the resource that carries the flags.
        dep = k8s.core.v1.ConfigMapPatch(
            "config-features",
            metadata={"name": "config-features", "namespace": "knative-serving"},
            data=ALL_FLAGS_ON,
        )
        isvc = InferenceService(
            "iris",
            InferenceServiceArgs(
                name="iris-v1",
                namespace="models",
                predictor=sklearn(gpus=1, placement=gpu_pool()),
                transformer=transformer(placement=cpu_pool()),
                knative_features=ALL_FLAGS_ON,
            ),
            opts=pulumi.ResourceOptions(depends_on=[dep]),
        )
        assert isvc.manifest["metadata"] == {
            "name": "iris-v1",
            "namespace": "models",
            "annotations": {"serving.kserve.io/deploymentMode": "Knative"},
        }
        assert set(isvc.component_placements) == {"predictor", "transformer"}
        pulumi.export("url", isvc.url)
        pulumi.export("name", isvc.name)

    return run_program(program)


def test_component_registers_one_cr(graph) -> None:
    comp = graph.one("gpu-inference:index:InferenceService", "iris")
    (cr,) = graph.children(comp)
    assert cr.type == ISVC_TYPE and cr.name == "iris"
    assert cr.inputs["metadata"] == owned(
        {
            "name": "iris-v1",
            "namespace": "models",
            "annotations": {"serving.kserve.io/deploymentMode": "Knative"},
        }
    )
    assert set(cr.inputs["spec"]) == {"predictor", "transformer"}
    assert cr.inputs["spec"]["predictor"]["model"]["resources"]["limits"] == {"nvidia.com/gpu": 1}


def test_component_waits_for_knative(graph) -> None:
    cr = graph.one(ISVC_TYPE, "iris")
    assert graph.depends_on(cr, graph.one("kubernetes:core/v1:ConfigMapPatch", "config-features"))


def test_component_outputs(graph) -> None:
    # Kourier (no Istio VirtualServices): KServe addresses the entry component's service.
    assert graph.outputs == {
        "url": "http://iris-v1-transformer.models.svc.cluster.local",
        "name": "iris-v1",
    }


@pytest.mark.parametrize(
    "mode, transformer_too, ingress, host",
    [
        ("RawDeployment", False, "kourier", "iris-predictor"),
        ("RawDeployment", True, "kourier", "iris-transformer"),
        ("Standard", False, "istio", "iris-predictor"),
        ("Standard", True, "istio", "iris-transformer"),
        ("Serverless", False, "kourier", "iris-predictor"),
        ("Serverless", True, "kourier", "iris-transformer"),
        ("Serverless", False, "istio", "iris"),
        ("Knative", True, "istio", "iris"),
    ],
)
def test_url_is_what_kserve_serves_per_mode(mode, transformer_too, ingress, host) -> None:
    """KServe v0.20 `status.address.url`: raw mode and Serverless without Istio address the
    entry component's service (createAddress / getHostPrefix), Serverless with Istio the
    InferenceService's own name."""
    import pulumi

    def program():
        isvc = InferenceService(
            "iris",
            InferenceServiceArgs(
                name="iris",
                namespace="ml",
                predictor=sklearn(),
                transformer=transformer() if transformer_too else None,
                deployment_mode=mode,
                ingress=ingress,
                knative_features=ALL_FLAGS_ON,
            ),
        )
        pulumi.export("url", isvc.url)

    assert run_program(program).outputs["url"] == f"http://{host}.ml.svc.cluster.local"


def test_varied_bodies_validate_against_crd() -> None:
    """Model format, custom containers, explainer, affinity, scaling and Raw mode all pass the
    upstream schema (unknown fields are errors)."""
    from tests.conftest import CRDS

    if not CRDS.exists():
        pytest.skip("../shared/crds is absent")
    try:
        from tests.crdschema import validate_cr
    except ImportError:
        pytest.skip("tests/crdschema.py (validate_cr) has not landed yet")
    validate_cr(
        inference_service_body(
            "iris",
            InferenceServiceArgs(
                predictor=sklearn(
                    runtime="kserve-sklearnserver",
                    protocol_version="v2",
                    gpus=1,
                    cpu="2",
                    memory="4Gi",
                    min_replicas=0,
                    max_replicas=2,
                    scale_metric="rps",
                    scale_target=5,
                    service_account_name="model-reader",
                    env={"A": "1"},
                    placement=gpu_pool("nodeAffinity"),
                    extra_expressions=[
                        NodeSelectorRequirement(
                            "cloud.google.com/gke-accelerator-count", "Gt", ["1"]
                        )
                    ],
                ),
                transformer=transformer(placement=cpu_pool(), min_replicas=1),
                explainer=ExplainerArgs(containers=[ContainerArgs("e", image="e:1", cpu="1")]),
                labels={"team": "ml"},
            ),
        )
    )
    validate_cr(
        inference_service_body(
            "llm",
            InferenceServiceArgs(
                deployment_mode="RawDeployment",
                predictor=PredictorArgs(
                    containers=[
                        ContainerArgs("kserve-container", image="x:1", gpus=1, args=["--a"])
                    ],
                    scale_metric="cpu",
                    scale_target=80,
                    placement=gpu_pool(),
                ),
            ),
        )
    )
