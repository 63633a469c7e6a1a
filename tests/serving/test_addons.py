"""The pinned upstream installs: KServe, Seldon Core 2, the NVIDIA device plugin, cert-manager."""

import pytest

from components.model.deploy import versions
from components.model.errors import InputError
from components.model.scheduling import Taint, tolerating
from components.serving.cert_manager import CertManager, CertManagerArgs
from components.serving.kserve_install import KServeInstall, KServeInstallArgs
from components.serving.nvidia_device_plugin import (
    CHART_DEFAULT_TOLERATIONS,
    NvidiaDevicePlugin,
    NvidiaDevicePluginArgs,
)
from components.serving.seldon_install import SeldonCoreInstall, SeldonCoreInstallArgs
from tests.conftest import values_of

RELEASE = "kubernetes:helm.sh/v3:Release"


def releases(g):
    return {r.inputs["name"]: r for r in g.of_type(RELEASE)}


def test_kserve_crds_before_controller_with_the_default_mode(run):
    g = run(
        lambda: KServeInstall("kserve", KServeInstallArgs(default_deployment_mode="RawDeployment"))
    )
    rel = releases(g)
    assert rel["kserve-crd"].inputs["chart"] == "oci://ghcr.io/kserve/charts/kserve-crd"
    assert rel["kserve"].inputs["chart"] == "oci://ghcr.io/kserve/charts/kserve-resources"
    assert {r.inputs["version"] for r in rel.values()} == {versions.KSERVE_VERSION}
    assert "repositoryOpts" not in rel["kserve"].inputs  # OCI charts carry their registry
    assert g.depends_on(rel["kserve"], rel["kserve-crd"])
    # v0.20 spells RawDeployment "Standard".
    assert values_of(rel["kserve"]) == {
        "kserve": {
            "controller": {
                "deploymentMode": "Standard",
                # Kourier by default: no Istio VirtualServices (else status.url does not route).
                "gateway": {"disableIstioVirtualHost": True},
            }
        }
    }


def test_kserve_runtimes_chart_last_and_enabled(run):
    """From v0.17 the ClusterServingRuntimes are a chart of their own, rendering nothing unless
    `kserve.servingruntime.enabled`; without them a modelFormat predictor finds no runtime."""
    holder = {}

    def program():
        holder["k"] = KServeInstall("kserve", KServeInstallArgs())

    g = run(program)
    rel = releases(g)
    assert set(rel) == {"kserve-crd", "kserve", "kserve-runtime-configs"}
    runtimes = rel["kserve-runtime-configs"]
    assert runtimes.inputs["chart"] == "oci://ghcr.io/kserve/charts/kserve-runtime-configs"
    assert runtimes.inputs["version"] == versions.KSERVE_VERSION
    assert runtimes.inputs["namespace"] == "kserve"
    assert values_of(runtimes) == {"kserve": {"servingruntime": {"enabled": True}}}
    assert g.depends_on(runtimes, rel["kserve"])
    assert holder["k"].ready._name == "kserve-runtimes"  # what InferenceServices wait for


@pytest.mark.parametrize(
    ("version", "controller", "runtimes"),
    [
        ("v0.15.2", "kserve", None),
        ("v0.16.0", "kserve", None),
        ("v0.17.0", "kserve-resources", "kserve-runtime-configs"),
        ("v0.20.0", "kserve-resources", "kserve-runtime-configs"),
    ],
)
def test_kserve_chart_names_follow_the_version(run, version, controller, runtimes):
    """Chart.yaml `name:` is `kserve` up to v0.16.0 and `kserve-resources` from v0.17.0; the
    runtimes chart exists from v0.17.0 (before, the controller chart carries the runtimes)."""
    g = run(lambda: KServeInstall("kserve", KServeInstallArgs(version=version)))
    rel = releases(g)
    assert rel["kserve"].inputs["chart"] == f"oci://ghcr.io/kserve/charts/{controller}"
    assert rel["kserve"].inputs["version"] == version
    if runtimes is None:
        assert set(rel) == {"kserve-crd", "kserve"}
    else:
        assert rel["kserve-runtime-configs"].inputs["chart"].endswith("/" + runtimes)
        assert rel["kserve-runtime-configs"].inputs["version"] == version


def test_kserve_with_istio_keeps_virtual_hosts(run):
    g = run(lambda: KServeInstall("kserve", KServeInstallArgs(ingress="istio")))
    assert values_of(releases(g)["kserve"]) == {
        "kserve": {"controller": {"deploymentMode": "Knative"}}
    }


@pytest.mark.parametrize(
    ("mode", "version", "spelled"),
    [
        ("Serverless", "v0.20.0", "Knative"),
        ("Knative", "v0.20.0", "Knative"),
        ("RawDeployment", "v0.16.0", "Standard"),
        ("Serverless", "v0.15.2", "Serverless"),
        ("Standard", "v0.15.2", "RawDeployment"),
    ],
)
def test_deployment_mode_spelling_follows_the_version(mode, version, spelled):
    assert versions.kserve_deployment_mode(mode, version) == spelled


def test_seldon_crds_then_controller_then_runtime(run):
    g = run(lambda: SeldonCoreInstall("seldon", SeldonCoreInstallArgs()))
    rel = releases(g)
    assert set(rel) == {"seldon-core-v2-crds", "seldon-core-v2-setup", "seldon-core-v2-runtime"}
    for r in rel.values():
        assert r.inputs["version"] == "2.6.0"  # the last Apache-2.0 release
        assert r.inputs["repositoryOpts"] == {"repo": "https://seldonio.github.io/helm-charts"}
    assert g.depends_on(rel["seldon-core-v2-setup"], rel["seldon-core-v2-crds"])
    assert g.depends_on(rel["seldon-core-v2-runtime"], rel["seldon-core-v2-setup"])
    assert rel["seldon-core-v2-runtime"].inputs["namespace"] == "seldon-mesh"
    # The controller reads ServerConfigs only from its own namespace (serverconfig_types.go,
    # constants.SeldonNamespace): controller, runtime and ServerConfigs in one namespace.
    assert rel["seldon-core-v2-setup"].inputs["namespace"] == "seldon-mesh"
    assert values_of(rel["seldon-core-v2-setup"]) == {}  # clusterwide: false (default)
    assert rel["seldon-core-v2-setup"].inputs["createNamespace"] is False
    ns = g.one("kubernetes:core/v1:Namespace")
    assert ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert g.depends_on(rel["seldon-core-v2-runtime"], ns)
    assert g.depends_on(rel["seldon-core-v2-setup"], ns)


def test_seldon_refuses_a_controller_in_another_namespace(run):
    with pytest.raises(InputError) as e:
        run(
            lambda: SeldonCoreInstall(
                "seldon", SeldonCoreInstallArgs(namespace="ml", system_namespace="seldon-system")
            )
        )
    assert str(e.value) == (
        "SeldonCoreInstall('seldon').args.system_namespace: system_namespace 'seldon-system' "
        "differs from namespace 'ml': Seldon's controller reads ServerConfigs only from its own "
        "namespace, so Servers there would never reconcile (allowed: leave system_namespace "
        "unset, or set it to 'ml')"
    )
    g = run(
        lambda: SeldonCoreInstall("s", SeldonCoreInstallArgs(namespace="ml", system_namespace="ml"))
    )
    assert {r.inputs["namespace"] for r in g.of_type(RELEASE)} == {"default", "ml"}


def test_device_plugin_tolerates_every_pool_taint_key(run):
    taints = [
        Taint("seldon-gpu-srv", "true", "NoSchedule"),
        Taint("myTaint2", "true", "NoSchedule"),
        Taint("nvidia.com/gpu", "present", "NoSchedule"),
    ]
    args = NvidiaDevicePluginArgs(
        pool_taints=taints, pool_label="gpu-inference.dev/pool", pool_label_values=["rtx", "a100"]
    )
    values = run(lambda: NvidiaDevicePlugin("dp", args)).one(RELEASE).inputs["values"]
    expected = [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "myTaint2", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "seldon-gpu-srv", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert values["tolerations"] == expected
    # Upstream the NFD worker tolerates only nvidia.com/gpu=present (NVIDIA/k8s-device-plugin #1934).
    assert values["nfd"]["worker"]["tolerations"] == expected
    assert values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["a100", "rtx"]}
                ]
            }
        ]
    }


def test_device_plugin_defaults_are_the_charts():
    assert tolerating(CHART_DEFAULT_TOLERATIONS, []) == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]


def test_cert_manager_installs_its_crds(run):
    rel = run(lambda: CertManager("cm", CertManagerArgs())).one(RELEASE)
    assert rel.inputs["chart"] == "cert-manager"
    assert rel.inputs["version"] == versions.CERT_MANAGER.version
    assert values_of(rel) == {"crds": {"enabled": True, "keep": True}}
    assert rel.inputs["namespace"] == "cert-manager"
