"""The pins agree (issue #46): docs/versions.md's table of what the stacks install, the Kubernetes
range each one's source states and where, held to the pins in the code and to the Kubernetes
releases the rig runs (unit tier), and each bound to the served Go module at the pinned version
(e2e, packaging tier: `go mod download`; a row whose module the proxy does not serve skips,
saying so)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import karpenter_judge
import pytest
import rig

from components.model.deploy import versions
from components.serving.llm_install import LWS_VERSION
from tests.conftest import ROOT

DOC = ROOT / "docs" / "versions.md"

PINS: dict[str, str] = {
    "Karpenter (EKS)": versions.KARPENTER_VERSION,
    "NVIDIA device plugin": versions.NVIDIA_DEVICE_PLUGIN.version,
    "NVIDIA DRA driver": versions.NVIDIA_DRA_DRIVER.version,
    "Knative Serving (operator)": versions.KNATIVE_OPERATOR.version,
    "KServe": versions.KSERVE_VERSION,
    "LeaderWorkerSet": LWS_VERSION,
    "cert-manager": versions.CERT_MANAGER.version,
}
"""Each row of the table and the code's pin it states: every versioned thing the stacks install
on a cluster."""


@dataclass(frozen=True)
class Row:
    component: str
    pinned: str
    minimum: Optional[str]
    maximum: Optional[str]
    source: str


def minor(version: str) -> tuple[int, int]:
    major, minor_, *_ = version.lstrip("v").split(".")
    return int(major), int(minor_)


def table(text: str | None = None) -> list[Row]:
    """The rows between `<!-- pins -->` and `<!-- /pins -->` ("—": no bound stated)."""
    text = DOC.read_text() if text is None else text
    body = text.split("<!-- pins -->", 1)[1].split("<!-- /pins -->", 1)[0]
    rows = []
    for line in body.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        component, pinned, low, high, source = cells
        rows.append(
            Row(
                component,
                pinned,
                None if low == "—" else low,
                None if high == "—" else high,
                source,
            )
        )
    return rows


def outside(row: Row, kubernetes: str) -> bool:
    v = minor(kubernetes)
    return bool(
        (row.minimum and v < minor(row.minimum)) or (row.maximum and v > minor(row.maximum))
    )


def test_the_table_states_every_pin_as_the_code_pins_it() -> None:
    assert {r.component: r.pinned for r in table()} == PINS


def test_every_kubernetes_the_rig_runs_is_inside_every_pins_range() -> None:
    assert rig.KUBERNETES_VERSIONS  # 1.37.2 and 1.36.3
    assert [
        (r.component, k) for r in table() for k in rig.KUBERNETES_VERSIONS if outside(r, k)
    ] == []


def test_a_pin_that_stops_short_of_a_cluster_version_is_caught() -> None:
    """The check can fail: Karpenter 1.14.1's range (`MaxK8sVersion = "1.36"`) leaves 1.37 out,
    and Knative's minimum leaves an older cluster out."""
    old = Row("Karpenter (EKS)", "1.14.1", "1.26", "1.36", "v1.14.1 version.go")
    assert [k for k in rig.KUBERNETES_VERSIONS if outside(old, k)] == ["1.37.2"]
    knative = next(r for r in table() if r.component.startswith("Knative"))
    assert outside(knative, "1.33.0") and not outside(knative, "1.34.0")


def test_every_row_cites_its_pinned_version() -> None:
    """Each source is read at the pin (the device plugin's row says why it is read at another)."""
    for r in table():
        assert r.pinned.lstrip("v") in r.source, r.component


# ---------------------------------------------------------------------------------------------
# Each bound read from the served module (e2e, packaging tier)
# ---------------------------------------------------------------------------------------------


def download(module: str, version: str, tmp: Path) -> Path:
    env = {
        **os.environ,
        "GOFLAGS": "-mod=mod",
        "GOWORK": "off",
        # Karpenter's modules say `go 1.26.9`: the toolchain the judge's AWS build runs.
        "GOTOOLCHAIN": karpenter_judge.TOOLCHAINS["aws"],
    }
    try:
        out = subprocess.run(
            ["go", "mod", "download", "-json", f"{module}@{version}"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except FileNotFoundError:
        pytest.skip("no `go` on PATH to read the pins' sources from their Go modules")
    found = json.loads(out.stdout or "{}")
    if found.get("Error") or not found.get("Dir"):
        pytest.skip(
            f"the Go module {module}@{version} is not served here "
            f"({found.get('Error') or out.stderr.strip()})"
        )
    return Path(found["Dir"])


def _kube_version(path: str) -> Callable[[Path], tuple[Optional[str], Optional[str]]]:
    """The lower bound of a chart's `kubeVersion: ">= 1.N.0-0"` (none: the chart states none)."""

    def read(root: Path) -> tuple[Optional[str], Optional[str]]:
        m = re.search(r'^kubeVersion:\s*"?>=\s*(\d+\.\d+)', (root / path).read_text(), re.M)
        return (m.group(1) if m else None), None

    return read


def _karpenter(root: Path) -> tuple[Optional[str], Optional[str]]:
    text = (root / "pkg/providers/version/version.go").read_text()
    low = re.search(r'MinK8sVersion\s*=\s*"([\d.]+)"', text)
    high = re.search(r'MaxK8sVersion\s*=\s*"([\d.]+)"', text)
    assert low and high
    return low.group(1), high.group(1)


def _knative(root: Path) -> tuple[Optional[str], Optional[str]]:
    """knative.dev/serving's go.mod names the knative.dev/pkg whose `version` package Serving's
    start-up checks against (`sharedmain` -> `CheckMinimumVersion`)."""
    pkg = re.search(r"^\s*knative\.dev/pkg\s+(\S+)", (root / "go.mod").read_text(), re.M)
    assert pkg
    pkg_dir = download("knative.dev/pkg", pkg.group(1), Path.cwd())
    text = (pkg_dir / "version/version.go").read_text()
    assert "version.CheckMinimumVersion(" in (pkg_dir / "injection/sharedmain/main.go").read_text()
    m = re.search(r'DefaultKubernetesMinVersion\s*=\s*"v(\d+\.\d+)', text)
    assert m
    return m.group(1), None


def knative_serving_module(operator_version: str) -> str:
    """Knative release 1.N is Go module version v0.(N+27) (Serving 1.0 was v0.27.0)."""
    major, n = minor(operator_version)
    patch = operator_version.lstrip("v").split(".")[2]
    assert major == 1
    return f"v0.{n + 27}.{patch}"


SOURCES: dict[str, tuple[str, Callable[[str], str], Callable[[Path], tuple]]] = {
    "Karpenter (EKS)": ("github.com/aws/karpenter-provider-aws", lambda v: f"v{v}", _karpenter),
    "NVIDIA device plugin": (
        "github.com/NVIDIA/k8s-device-plugin",
        lambda v: f"v{v}",
        _kube_version("deployments/helm/nvidia-device-plugin/Chart.yaml"),
    ),
    "NVIDIA DRA driver": (
        "sigs.k8s.io/dra-driver-nvidia-gpu",
        lambda v: f"v{v}",
        _kube_version("deployments/helm/dra-driver-nvidia-gpu/Chart.yaml"),
    ),
    "Knative Serving (operator)": ("knative.dev/serving", knative_serving_module, _knative),
    "KServe": (
        "github.com/kserve/kserve",
        lambda v: v,
        _kube_version("charts/kserve-resources/Chart.yaml"),
    ),
    "LeaderWorkerSet": ("sigs.k8s.io/lws", lambda v: v, _kube_version("charts/lws/Chart.yaml")),
    "cert-manager": (
        "github.com/cert-manager/cert-manager",
        lambda v: v,
        _kube_version("deploy/charts/cert-manager/Chart.template.yaml"),
    ),
}
"""Where each row's bounds are read: the module, its version for the pin, and the reader."""


def test_every_row_has_a_source_to_read() -> None:
    assert set(SOURCES) == set(PINS)
    assert knative_serving_module("v1.23.0") == "v0.50.0"


@pytest.mark.e2e
@pytest.mark.tier("packaging")
@pytest.mark.parametrize("component", list(PINS))
def test_the_bounds_are_what_the_pinned_source_states(
    component: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (row,) = [r for r in table() if r.component == component]
    module, version_of, read = SOURCES[component]
    root = download(module, version_of(row.pinned), tmp_path)
    assert read(root) == (row.minimum, row.maximum)
