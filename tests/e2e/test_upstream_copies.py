"""Vendored manifests held to a copy served here. GKE's COS NVIDIA driver installer
(`model.deploy.gke_driver_installer`, transcribed from container-engine-accelerators' pinned
`daemonset-preloaded.yaml`) against the copy of that file Kubernetes' own GCE GPU e2e reads
(`test/e2e/testing-manifests/gpu/gce/nvidia-driver-installer.yaml`, k8s.io/kubernetes at the
rig's releases, from the Go module proxy): every field the two share is equal, and each way they
differ is named below. And docs/dra.md's table of feature gates against each release's
`pkg/features/kube_features.go`."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import rig
import yaml

from components.model.deploy import gke_driver_installer

pytestmark = pytest.mark.e2e

KUBERNETES_COPY = "test/e2e/testing-manifests/gpu/gce/nvidia-driver-installer.yaml"


def kubernetes_module(version: str) -> Path:
    """k8s.io/kubernetes at `version` (one of the rig's), as the Go module cache holds it (the
    rig's build of that control plane downloaded it)."""
    found = subprocess.run(
        ["go", "mod", "download", "-json", f"k8s.io/kubernetes@v{version}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    info = json.loads(found.stdout or "{}")
    if found.returncode != 0 or not info.get("Dir"):
        raise AssertionError(f"k8s.io/kubernetes not in the module cache: {found.stderr}")
    return Path(info["Dir"])


def _containers(pod: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in pod[key]}


@pytest.mark.tier("control plane")
@pytest.mark.parametrize("version", rig.KUBERNETES_VERSIONS)
def test_the_cos_driver_installer_is_the_one_kubernetes_own_gpu_e2e_applies(
    control_plane_bins: Path, version: str
) -> None:
    theirs = yaml.safe_load((kubernetes_module(version) / KUBERNETES_COPY).read_text())
    ours = gke_driver_installer.installer_daemonset("cos")
    assert (theirs["apiVersion"], theirs["kind"]) == ("apps/v1", "DaemonSet")
    assert ours["metadata"] == theirs["metadata"]
    theirs_pod = copy.deepcopy(theirs["spec"]["template"]["spec"])
    ours_pod = copy.deepcopy(ours["spec"]["template"]["spec"])
    assert {k: v for k, v in ours["spec"].items() if k != "template"} == {
        k: v for k, v in theirs["spec"].items() if k != "template"
    }
    assert ours["spec"]["template"]["metadata"] == theirs["spec"]["template"]["metadata"]

    # 1. Ours runs at system-node-critical, as GKE's current manifest does.
    assert ours_pod.pop("priorityClassName") == "system-node-critical"
    # 2. Ours keeps off nodes whose driver GKE installs and off Confidential GKE Nodes (GKE's
    #    manifest); Kubernetes' copy asks only for a GKE accelerator.
    ours_terms = ours_pod.pop("affinity")["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    theirs_terms = theirs_pod.pop("affinity")["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert ours_terms["nodeSelectorTerms"][0]["matchExpressions"][1:] == [
        {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
        {
            "key": "cloud.google.com/gke-confidential-nodes-instance-type",
            "operator": "DoesNotExist",
        },
    ]
    del ours_terms["nodeSelectorTerms"][0]["matchExpressions"][1:]
    assert ours_terms == theirs_terms
    # 3. Images: ours the installer GKE preloads on COS nodes (never pulled), GKE's partition-gpus
    #    and pause by digest; Kubernetes' copy pulls cos-gpu-installer at a tag for one COS milestone.
    ours_init, theirs_init = (_containers(p, "initContainers") for p in (ours_pod, theirs_pod))
    installer = ours_init["nvidia-driver-installer"]
    assert (installer.pop("image"), installer.pop("imagePullPolicy")) == (
        "cos-nvidia-installer:fixed",
        "Never",
    )
    assert (
        theirs_init["nvidia-driver-installer"]
        .pop("image")
        .startswith("gcr.io/cos-cloud/cos-gpu-installer:")
    )
    assert (
        ours_init["partition-gpus"]
        .pop("image")
        .startswith("gcr.io/gke-release/nvidia-partition-gpu@sha256:")
    )
    assert (
        theirs_init["partition-gpus"]
        .pop("image")
        .startswith("gcr.io/gke-release/nvidia-partition-gpu:")
    )
    assert [c.pop("image") for c in ours_pod["containers"]] == [
        "gke.gcr.io/pause:3.8@sha256:"
        "880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
    ]
    assert [c.pop("image") for c in theirs_pod["containers"]] == ["registry.k8s.io/pause:3.10.1"]
    # 4. Ours fails the pod when the install fails (GKE's script); Kubernetes' copy does not.
    ours_script = installer.pop("command")
    theirs_script = theirs_init["nvidia-driver-installer"].pop("command")
    assert ours_script[:2] == theirs_script[:2] == ["bash", "-c"]
    assert ours_script[2].replace(" || exit 1\n", "\n") == theirs_script[2]
    # 5. Kubernetes' copy bind-mounts /var/lib/nvidia first (for its own e2e nodes); ours does not.
    assert theirs_init.pop("bind-mount-install-dir")["command"][:4] == ["nsenter", "-at", "1", "--"]
    # Everything else is the same: volumes, mounts, env, requests, privilege, tolerations, hosts.
    assert ours_init == theirs_init
    ours_pod.pop("initContainers")
    theirs_pod.pop("initContainers")
    assert ours_pod == theirs_pod


DRA_DOC = Path(__file__).resolve().parents[2] / "docs" / "dra.md"
_GATE = re.compile(r"^\t(\w+): \{\n(.*?)^\t\},", re.M | re.S)
_SPEC = re.compile(
    r'Version: version\.MustParse\("1\.(\d+)"\), Default: (true|false),'
    r"(?: LockToDefault: (?:true|false),)? PreRelease: featuregate\.(\w+)"
)


def gate_defaults(version: str) -> dict[str, str]:
    """Each gate of `defaultVersionedKubernetesFeatureGates` at `version`'s minor: `on (beta)`,
    `off (alpha)`, ... as docs/dra.md writes it (the last spec at or below that minor)."""
    text = (kubernetes_module(version) / "pkg" / "features" / "kube_features.go").read_text()
    body = text[text.index("var defaultVersionedKubernetesFeatureGates") :]
    minor = int(version.split(".")[1])
    out: dict[str, str] = {}
    for name, specs in _GATE.findall(body):
        at = [(d, stage) for m, d, stage in _SPEC.findall(specs) if int(m) <= minor]
        if at:
            default, stage = at[-1]
            word = stage if stage == "GA" else stage.lower()
            out[name] = f"{'on' if default == 'true' else 'off'} ({word})"
    return out


@pytest.mark.tier("control plane")
def test_the_gate_table_is_each_releases_kube_features_go(control_plane_bins: Path) -> None:
    """docs/dra.md's gates: each release's default and stage as its own source has them; a gate
    the release lacks is `removed`. The releases are the rig's."""
    doc = DRA_DOC.read_text()
    table = doc[doc.index("<!-- gates:start -->") : doc.index("<!-- gates:end -->")]
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in table.splitlines()
        if line.startswith("| `")
    ]
    header = next(line for line in table.splitlines() if line.startswith("| gate"))
    releases = [c.strip() for c in header.strip("|").split("|")][1:3]
    assert sorted(releases) == sorted(rig.KUBERNETES_VERSIONS)
    assert len(rows) >= 10
    for version, column in zip(releases, (1, 2), strict=True):
        defaults = gate_defaults(version)
        assert len(defaults) > 150, "kube_features.go was not read"
        documented = {r[0].strip("`"): r[column] for r in rows}
        actual = {g: defaults.get(g, "removed") for g in documented}
        assert documented == actual, version
