"""The provider that knows its cluster, under mocks: every object every example stack makes
carries the stack's field manager, every create the refuse-foreign hook, every Helm release the
recovery hook, every tainting node patch the restore hook; and under a plain provider, the
fallbacks the README describes."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.model.deploy.ownership import FIELD_MANAGER_ANNOTATION
from components.platform.cluster_access import ClusterAccess, ClusterAccessArgs
from components.pools.existing import ExistingGpuNodes, ExistingGpuNodesArgs
from components.preview.mockrun import run_program
from components.preview.preview import load_project, load_stack_config, run_stack
from components.serving.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from tests.conftest import ROOT

STACKS = sorted(p.name.split(".")[1] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
PATCH = "kubernetes:core/v1:NodePatch"
RELEASE = "kubernetes:helm.sh/v3:Release"
PROVIDER = "pulumi:providers:kubernetes"


def is_patch(typ: str) -> bool:
    return typ.endswith("Patch")


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_of_a_stack_is_this_stacks_and_hooked(stack: str) -> None:
    project = load_project(ROOT)
    graph = run_stack(project, load_stack_config(project, stack))
    (provider,) = [r for r in graph.resources if r.type == PROVIDER]
    hook = f"{provider.name}-refuse-foreign"
    objects = [
        r
        for r in graph.resources
        if r.custom and r.type.startswith("kubernetes:") and r.type not in (RELEASE,)
    ]
    assert objects
    for r in objects:
        if r.type.startswith("kubernetes:yaml/"):
            continue  # upstream manifests, applied whole (the LLM install's CRDs)
        annotations = r.inputs["metadata"].get("annotations", {})
        assert (
            annotations.get(FIELD_MANAGER_ANNOTATION) == f"gpu-inference/gpu-inference/{stack}"
        ), (
            r.type,
            r.name,
        )
        if not is_patch(r.type):
            # The refusal of the install it belongs to (named after its section), or the plain one.
            (found,) = r.hooks.get("before_create", [None])
            assert found == hook or found.startswith(f"{hook}-"), (r.type, r.name)
        if r.type == "kubernetes:core/v1:Namespace":
            # Never deleted by the engine: the hook deletes it once it holds nothing of others.
            assert r.retain_on_delete, r.name
            assert r.hooks["after_delete"] == [f"{provider.name}-drop-namespace"], r.name
        else:
            assert not r.retain_on_delete, (r.type, r.name)
    for r in graph.resources:
        if r.type == RELEASE:
            (guard,) = r.hooks["before_create"]
            assert guard.startswith(f"{provider.name}-guard-release-"), r.name
            assert r.hooks["on_error"] == [f"{provider.name}-recover-release"], r.name
            assert r.hooks["before_delete"] == [f"{provider.name}-keep-release-crds"], r.name
            assert not r.retain_on_delete and r.inputs.get("atomic") in (True, None), r.name
            marker = r.inputs["values"]["global"]["gpuInferenceResource"]
            assert marker == f"gpu-inference/gpu-inference/{stack}/{r.name}"
            # The stack makes the namespace (destroy deletes it), never Helm.
            assert r.inputs.get("createNamespace") in (False, None), r.name


def existing(provider: pulumi.ProviderResource) -> None:
    opts = pulumi.ResourceOptions(provider=provider)
    ExistingGpuNodes(
        "gpu", ExistingGpuNodesArgs(nodes=["g1"], gpus_per_node=1, gpu_model="A100"), opts
    )
    ExistingGpuNodes("cpu", ExistingGpuNodesArgs(nodes=["c1"]), opts)


def test_under_the_kube_provider_a_tainting_patch_gives_the_taints_back_on_delete() -> None:
    def program() -> None:
        access = ClusterAccess("c", ClusterAccessArgs("existing", "lab", context="lab"))
        existing(access.provider)

    g = run_program(program)
    gpu, cpu = g.one(PATCH, "node-g1"), g.one(PATCH, "node-c1")
    hand_back = {
        "before_delete": ["c-k8s-restore-taints"],
        "before_update": ["c-k8s-hand-back-taints"],
    }
    assert gpu.hooks == hand_back and not gpu.retain_on_delete
    # No taint added now: the hooks give back nothing, unless the pool tainted before (its
    # taints were taken out of the config), when the update hands the node's own back first.
    assert cpu.hooks == hand_back and not cpu.retain_on_delete


def test_under_a_plain_provider_there_are_no_hooks_and_a_tainting_patch_is_kept() -> None:
    def program() -> None:
        provider = k8s.Provider("plain", context="lab")
        existing(provider)
        NvidiaDevicePlugin(
            "dp", NvidiaDevicePluginArgs(), pulumi.ResourceOptions(provider=provider)
        )

    g = run_program(program)
    gpu = g.one(PATCH, "node-g1")
    assert gpu.retain_on_delete and gpu.hooks == {}
    assert g.one(RELEASE).hooks == {}
    assert g.one("kubernetes:core/v1:Namespace").hooks == {}


def test_the_objects_of_a_namespace_are_listed_per_kind_never_through_a_list_kind():
    # The discovery the dynamic client caches has, beside each kind, its `<Kind>List`
    # (kubernetes.dynamic.resource.ResourceList), whose get() wants a body: listing it failed
    # `pulumi destroy` in the drop-namespace hook (e2e, against kube-apiserver 1.36).
    from types import SimpleNamespace

    from kubernetes.dynamic.resource import Resource, ResourceList

    from components.kube.cluster import LiveCluster

    cm = Resource(
        prefix="api", group="", api_version="v1", kind="ConfigMap", namespaced=True,
        verbs=["list", "get"], name="configmaps", preferred=True,
    )  # fmt: skip
    listed: list[tuple[str, str, str]] = []

    class Resources:
        def invalidate_cache(self):
            pass

        def search(self):
            # A real ResourceList answers the attributes of its base kind (namespaced, verbs...).
            client = SimpleNamespace(resources=self)
            return [cm, ResourceList(client, group="", api_version="v1", base_kind="ConfigMap")]

        def get(self, api_version, kind, group=None):
            if group is not None:  # the ResourceList looking up its base kind
                return cm
            assert kind == "ConfigMap"
            return SimpleNamespace(
                get=lambda namespace, _request_timeout: (
                    listed.append((api_version, kind, namespace))
                    or SimpleNamespace(to_dict=lambda: {"items": [{"metadata": {"name": "x"}}]})
                )
            )

    cluster = LiveCluster.__new__(LiveCluster)
    cluster._dynamic = SimpleNamespace(resources=Resources())
    assert cluster.namespaced("models") == [
        {"metadata": {"name": "x"}, "apiVersion": "v1", "kind": "ConfigMap"}
    ]
    assert listed == [("v1", "ConfigMap", "models")]


def test_hooks_in_threads_never_read_discovery_while_another_refreshes_it():
    # The dynamic client's discoverer is not thread-safe: a refresh starts from a cache without
    # `resources`, and a search meanwhile raised KeyError('resources'); the LLM add-on's destroy
    # (e2e) then kept namespaces kserve and envoy-gateway-system as unreadable. A fake discoverer
    # as racy as the real one, hit by hooks in eight threads at once, must never be caught mid-way.
    import threading
    import time
    from types import SimpleNamespace
    from typing import Any

    from kubernetes.dynamic.resource import Resource

    from components.kube.cluster import LiveCluster

    cm = Resource(
        prefix="api", group="", api_version="v1", kind="ConfigMap", namespaced=True,
        verbs=["list", "get"], name="configmaps", preferred=True,
    )  # fmt: skip

    class RacyResources:
        def __init__(self) -> None:
            self.cache: dict[str, Any] = {"resources": {"ConfigMap": cm}}

        def invalidate_cache(self) -> None:
            self.cache = {}  # as Discoverer.__init_cache(refresh=True) starts
            time.sleep(0.002)
            self.cache = {"resources": {"ConfigMap": cm}}

        def search(self) -> list[Any]:
            found = self.cache["resources"]["ConfigMap"]
            time.sleep(0.001)
            return [found]

        def get(self, api_version: str, kind: str) -> Any:
            self.cache["resources"][kind]
            time.sleep(0.001)
            return SimpleNamespace(
                get=lambda namespace, _request_timeout: SimpleNamespace(
                    to_dict=lambda: {"items": [{"metadata": {"name": namespace}}]}
                )
            )

    cluster = LiveCluster.__new__(LiveCluster)
    cluster._dynamic = SimpleNamespace(resources=RacyResources())
    errors: list[BaseException] = []

    def hook(ns: str) -> None:
        try:
            for _ in range(20):
                assert cluster.namespaced(ns) == [
                    {"metadata": {"name": ns}, "apiVersion": "v1", "kind": "ConfigMap"}
                ]
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=hook, args=(f"ns{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
