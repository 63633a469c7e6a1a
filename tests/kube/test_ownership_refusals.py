"""What `up` refuses, as a user reads it: each example stack's objects and Helm releases, met by a
cluster that already has one of that name another made, are refused naming the object, the
owner found and the two ways out in the stack's own keys; adopted on purpose, they are taken over
and `destroy` leaves them."""

from __future__ import annotations

from typing import Any

import pytest

from components.kube.hooks import AdoptionRefused, guard_release, refuse_foreign
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform
from components.preview import preview as pv
from components.preview.mockrun import run_program
from tests.conftest import ROOT, helm_secret

WAYS = (
    "Use the cluster's own: set `gpu-inference:{section}.{switch}: false`; or adopt it on "
    "purpose: set `gpu-inference:{section}.adopt: true` (this stack then keeps it up to date, "
    "and destroy leaves it in place)"
)


class Cluster:
    """A cluster that has `objects` ((kind, namespace, name) -> live object) and Helm records."""

    def __init__(self, objects: dict | None = None, secrets: list | None = None) -> None:
        self.objects, self.secret_list = objects or {}, secrets or []

    def get(self, api_version: str, kind: str, name: str, namespace: Any) -> Any:
        return self.objects.get((kind, namespace, name))

    def secrets(self, namespace: str, selector: str) -> list:
        return [
            s for s in self.secret_list if f"name={s['metadata']['labels']['name']}" in selector
        ]


def platform_of(stack: str, changes: dict | None = None) -> tuple[Any, Any]:
    """The stack's graph under mocks and its InferencePlatform (for the provider's hooks)."""
    config = pv.load_stack_config(pv.load_project(ROOT), stack)
    spec = load_spec({**config.values, **(changes or {})}, frozenset(config.secret_keys))
    made: list[InferencePlatform] = []
    graph = run_program(lambda: made.append(InferencePlatform("gpu-inference", spec)), stack=stack)
    return graph, made[0]


def refusal(platform: Any, resource: Any, cluster: Cluster) -> str:
    hooks = platform.access.provider.cluster_hooks
    (hook,) = resource.hooks["before_create"]
    ownership = hooks.ownership(hook)
    with pytest.raises(AdoptionRefused) as e:
        if resource.type == "kubernetes:helm.sh/v3:Release":
            guard_release(cluster, resource.inputs, resource.urn, ownership)
        else:
            refuse_foreign(cluster, resource.inputs, ownership)
    return str(e.value)


def test_a_plain_helm_karpenter_in_kube_system_is_refused_naming_the_two_ways_out():
    graph, platform = platform_of("eks-karpenter")
    records = [
        helm_secret(r, 1, "deployed", r, None, "1.5.0") for r in ("karpenter", "karpenter-crd")
    ]
    cluster = Cluster(secrets=records)
    for name, chart in (
        ("gpu-inference-karpenter-crd", "karpenter-crd"),
        ("gpu-inference-karpenter-controller", "karpenter"),
    ):
        release = graph.one("kubernetes:helm.sh/v3:Release", name)
        assert refusal(platform, release, cluster) == (
            f"Helm release kube-system/{chart} already exists and was installed by Helm or "
            f"another tool (chart {chart} 1.5.0, revision 1 deployed; no gpu-inference marker): "
            "this stack will not take it over. "
            + WAYS.format(section="addons.karpenter", switch="enabled")
        )


def test_a_namespace_someone_made_is_refused_with_the_ways_out_of_the_part_that_wants_it():
    graph, platform = platform_of("gke-llm")
    kubectl = {"managedFields": [{"manager": "kubectl-create"}]}
    for ns, section, switch in (
        ("kserve", "addons.kserve", "enabled"),
        ("envoy-gateway-system", "addons.kserve.llm", "envoyGateway"),
    ):
        (resource,) = [
            r
            for r in graph.of_type("kubernetes:core/v1:Namespace")
            if r.inputs["metadata"]["name"] == ns
        ]
        cluster = Cluster(
            {("Namespace", None, ns): {"kind": "Namespace", "metadata": {"name": ns, **kubectl}}}
        )
        assert refusal(platform, resource, cluster) == (
            f"Namespace {ns} already exists and was made by 'kubectl-create' (not "
            "gpu-inference): this stack will not take it over. "
            + WAYS.format(section=section, switch=switch)
        )
    models = [
        r
        for r in graph.of_type("kubernetes:core/v1:Namespace")
        if r.inputs["metadata"]["name"] == "models"
    ]
    cluster = Cluster(
        {("Namespace", None, "models"): {"kind": "Namespace", "metadata": {"name": "models"}}}
    )
    assert refusal(platform, models[0], cluster) == (
        "Namespace models already exists and was not made by gpu-inference: this stack will not "
        "take it over. Use another name; or adopt it on purpose: set "
        "`gpu-inference:namespaces.adopt: true` (this stack then keeps it up to date, and "
        "destroy leaves it in place)"
    )


def test_someone_elses_gateway_class_is_refused_naming_its_helm_release():
    graph, platform = platform_of("gke-llm")
    resource = graph.one("kubernetes:gateway.networking.k8s.io/v1:GatewayClass")
    theirs = {
        "kind": "GatewayClass",
        "metadata": {
            "name": "envoy",
            "annotations": {
                "meta.helm.sh/release-name": "eg",
                "meta.helm.sh/release-namespace": "envoy-gateway-system",
            },
        },
    }
    assert refusal(platform, resource, Cluster({("GatewayClass", None, "envoy"): theirs})) == (
        "GatewayClass envoy already exists and belongs to Helm release envoy-gateway-system/eg: "
        "this stack will not take it over. "
        + WAYS.format(section="addons.kserve.llm", switch="envoyGateway")
    )


def test_the_clusters_own_gke_driver_installer_is_refused_never_narrowed_to_our_pools():
    graph, platform = platform_of("gke-dra")
    resource = graph.one("kubernetes:apps/v1:DaemonSet")
    theirs = {
        "kind": "DaemonSet",
        "metadata": {
            "name": "nvidia-driver-installer",
            "namespace": "kube-system",
            "managedFields": [{"manager": "kubectl-client-side-apply"}],
        },
    }
    cluster = Cluster({("DaemonSet", "kube-system", "nvidia-driver-installer"): theirs})
    assert refusal(platform, resource, cluster) == (
        "DaemonSet kube-system/nvidia-driver-installer already exists and was made by "
        "'kubectl-client-side-apply' (not gpu-inference): this stack will not take it over. "
        + WAYS.format(section="addons.gpuDriverInstaller", switch="enabled")
    )


def test_adopted_on_purpose_nothing_is_refused_nothing_rolled_back_and_destroy_leaves_it():
    addons = {
        "kserve": {"enabled": True},
        "certManager": {"enabled": True, "adopt": True},
        "nvidiaDevicePlugin": {"enabled": True},
        "karpenter": {
            "enabled": True,
            "adopt": True,
            "roleArn": "arn:aws:iam::123456789012:role/inference-karpenter",
            "nodeGroups": ["system"],
        },
    }
    graph, _ = platform_of("eks-karpenter", {"gpu-inference:addons": addons})
    adopted = [r for r in graph.of_type("kubernetes:helm.sh/v3:Release") if r.retain_on_delete]
    assert sorted(r.name for r in adopted) == [
        "gpu-inference-cert-manager-release",
        "gpu-inference-karpenter-controller",
        "gpu-inference-karpenter-crd",
    ]
    for r in adopted:
        # Helm's atomic install would uninstall what it took over on a failure.
        assert r.inputs["atomic"] is False
        (hook,) = r.hooks["before_create"]
        assert hook.startswith("gpu-inference-cluster-k8s-adopt-release-addons-")
    cm_ns = [
        r
        for r in graph.of_type("kubernetes:core/v1:Namespace")
        if r.inputs["metadata"]["name"] == "cert-manager"
    ]
    assert cm_ns[0].retain_on_delete and cm_ns[0].hooks == {}
    kept = {r.name for r in graph.resources if r.retain_on_delete}
    assert "gpu-inference-kserve-controller" not in kept
