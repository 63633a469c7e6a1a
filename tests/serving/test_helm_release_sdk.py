"""Our Helm releases, registered without `pulumi_kubernetes.helm.v3`, reach the engine exactly
as the SDK's `k8s.helm.v3.Release` sends them: the same code decides the inputs and options and
only the last step differs (the SDK class given the inputs with snake_case keys), for every kind
of chart we install (index repository, OCI, local, CRDs skipped, adopted, the Knative operator)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.kube.objects import plugin_version
from components.model.deploy import versions
from components.model.deploy.ownership import Ownership
from components.serving import helm, knative
from components.serving.knative import KnativeServing, KnativeServingArgs
from tests.sdk_requests import sent, snake

RELEASE = "kubernetes:helm.sh/v3:Release"


def sdk_release(name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions) -> Any:
    # `values` is the chart's: its keys are not property names.
    return k8s.helm.v3.Release(name, **snake(dict(inputs), ("values",)), opts=opts)


def _parent() -> pulumi.Resource:
    return pulumi.ComponentResource("test:index:Install", "install", None)


CASES: dict[str, Callable[[], Any]] = {
    "index repository": lambda: helm.chart_release(
        "cm",
        versions.CERT_MANAGER,
        release="cert-manager",
        namespace="cert-manager",
        parent=_parent(),
        values={"crds": {"enabled": True}, "replicaCount": 2},
    ),
    "oci, crds skipped, namespace made by helm": lambda: helm.chart_release(
        "kserve",
        versions.KSERVE_CONTROLLER,
        release="kserve",
        namespace="kserve",
        parent=_parent(),
        skip_crds=True,
        create_namespace=True,
        version="v0.16.0",
    ),
    "local chart": lambda: helm.chart_release(
        "local",
        versions.KSERVE_CRD,
        release="kserve-crd",
        namespace="kserve",
        parent=_parent(),
        local_chart="/charts/kserve-crd-0.16.0.tgz",
    ),
    "adopted": lambda: helm.chart_release(
        "seldon",
        versions.SELDON_SETUP,
        release="seldon-setup",
        namespace="seldon-mesh",
        parent=_parent(),
        ownership=Ownership("adopt: true", adopt=True),
    ),
    "knative operator": lambda: KnativeServing("knative", KnativeServingArgs(mode="operator")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_request_is_the_sdk_classes(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = [r for r in sent(CASES[case], monkeypatch) if r.get("type") == RELEASE]
    monkeypatch.setattr(helm, "Release", sdk_release)
    monkeypatch.setattr(knative, "Release", sdk_release)
    theirs = [r for r in sent(CASES[case], monkeypatch) if r.get("type") == RELEASE]
    assert len(mine) == 1
    assert mine == theirs
    assert mine[0]["version"] == plugin_version("pulumi_kubernetes")
