"""GI021-GI025 on our own stacks: every example stack's pods fit its pools, and a one-line break of
a stack (the mistake users make) triggers the finding; `gpu-inference preview gke-dev` as shipped
before the fit check (seed 004's 40 CPUs on an a2-ultragpu-2g) fails with GI021."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from components.check import check
from components.preview.cli import main
from tests.conftest import EXAMPLE_STACKS

ROOT = Path(__file__).resolve().parents[2]
FIT = {"GI021", "GI022", "GI023", "GI024", "GI025"}
STACKS = EXAMPLE_STACKS
SERVER = "Server/gpu-inference-server-mlserver-llm-local-gpu"


@pytest.fixture(scope="module")
def graphs(example_previews) -> dict[str, list[dict[str, Any]]]:
    """Each example stack's graph, this module's own copy (its `resources.json` parsed)."""
    return {
        stack: json.loads((result.out_dir / "resources.json").read_text())
        for stack, result in example_previews.items()
    }


def fit_findings(graph: list[dict]) -> list[tuple[str, str]]:
    return sorted((f.code, f.resource) for f in check(graph).findings if f.code in FIT)


@pytest.mark.parametrize("stack", STACKS)
def test_every_example_stack_fits_its_pools(graphs, stack):
    """Fit is judged on every pool but Autopilot's, whose per-accelerator limits we could not
    verify (GI022 says so)."""
    found = fit_findings(graphs[stack])
    if stack == "gke-autopilot":
        assert found == [
            ("GI022", "GkeAutopilotGpuPool/l4"),
            ("GI022", "GkeAutopilotGpuPool/l4-spot"),
            ("GI022", "GkeAutopilotGpuPool/l4x4"),
        ]
    else:
        assert found == []
    report = check(graphs[stack])
    judged = [w for w in report.workloads if w.requests is not None]
    assert len(judged) == len(report.workloads)


def one(graph: list[dict], typ: str, name_part: str = "") -> dict:
    (found,) = [e for e in graph if e["type"].endswith(typ) and name_part in e["name"]]
    return found


def _container(entry: dict, name: str) -> dict:
    pod = entry["inputs"]["spec"]["podSpec"]
    (c,) = [c for c in pod["containers"] if c["name"] == name]
    return c


def _seed_004_server(g: list[dict]) -> None:
    res = _container(one(g, ":Server"), "mlserver")["resources"]
    res["requests"] |= {"cpu": 40, "memory": "360Gi", "ephemeral-storage": "290Gi"}
    res["limits"] |= {"cpu": 40, "memory": "360Gi"}


def _eks_prod_memory(g: list[dict]) -> None:
    res = _container(one(g, ":Server"), "mlserver")["resources"]
    res["requests"]["memory"] = res["limits"]["memory"] = "40Gi"  # g6.2xlarge: 32 GiB


def _onprem_cpu(g: list[dict]) -> None:
    res = _container(one(g, ":Server"), "mlserver")["resources"]
    res["requests"]["cpu"] = res["limits"]["cpu"] = "70"  # the nodes declare 62


def _karpenter_100gi(g: list[dict]) -> None:
    spec = one(g, ":EC2NodeClass", "h100")["inputs"]["spec"]
    spec["blockDeviceMappings"][0]["ebs"]["volumeSize"] = "100Gi"


def _computeclass_cpu(g: list[dict]) -> None:
    model = one(g, "v1beta1:InferenceService", "gemma")["inputs"]["spec"]["predictor"]["model"]
    model.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "16"


@pytest.mark.parametrize(
    ("stack", "code", "resource", "breaks"),
    [
        ("gke-dev", "GI021", SERVER, _seed_004_server),
        ("eks-prod", "GI021", "Server/gpu-inference-server-mlserver-l4", _eks_prod_memory),
        ("onprem", "GI021", SERVER, _onprem_cpu),
        (
            "eks-karpenter",
            "GI024",
            "InferenceService/gpu-inference-isvc-models-llama-70b/predictor",
            _karpenter_100gi,
        ),
        (
            "gke-computeclass",
            "GI021",
            "InferenceService/gpu-inference-isvc-models-gemma-9b/predictor",
            _computeclass_cpu,
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and not v.startswith(("GI", "Server", "Inf")) else None,
)
def test_breaking_a_stack_triggers_the_fit_finding(graphs, stack, code, resource, breaks):
    graph = copy.deepcopy(graphs[stack])
    breaks(graph)
    assert fit_findings(graph) == [(code, resource)]


def test_the_broken_karpenter_disk_names_the_weights_and_the_volume(graphs):
    graph = copy.deepcopy(graphs["eks-karpenter"])
    _karpenter_100gi(graph)
    (found,) = [f for f in check(graph).findings if f.code == "GI024"]
    assert found.message == (
        "its model (140 GB) is downloaded to the node's ephemeral storage, but the most any node "
        "it can land on leaves allocatable is 89Gi (p5.48xlarge, pool h100)"
    )


def test_gke_dev_as_shipped_before_the_fit_check_fails(tmp_path, capsys):
    """Seed 004's Server (40 CPUs, 360Gi, 290Gi) on a2-ultragpu-2g with the default disk: the
    preview exits 1 with GI021 naming the Server, its 40 CPUs and the node's allocatable."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    text = (ROOT / "stacks" / "Pulumi.gke-dev.yaml").read_text()
    for new, old in (
        ('cpu: "20"', 'cpu: "40"'),
        ("memory: 300Gi", "memory: 360Gi"),
        ("ephemeralStorage: 200Gi", "ephemeralStorage: 290Gi"),
        ("      diskSizeGb: 400", "      # diskSizeGb: 400"),
    ):
        assert new in text
        text = text.replace(new, old)
    (tmp_path / "stacks" / "Pulumi.gke-dev.yaml").write_text(text)
    code = main(
        ["preview", "gke-dev", "--project-dir", str(tmp_path), "--out", str(tmp_path / "out")]
    )
    shown = capsys.readouterr().out
    assert code == 1
    assert (
        f"error GI021 {SERVER}: fits no node of the pool(s) it can land on: it asks 40250m cpu in "
        "all (mlserver 40, agent 200m, rclone 50m) but the most a node leaves it beside its "
        "DaemonSets is 23720m (a2-ultragpu-2g, pool infer-srv: 23870m allocatable less 150m for "
        "its DaemonSets kube-proxy 100m, nvidia-gpu-device-plugin 50m); it stays Pending. Fix: "
        "use a2-ultragpu-4g with a boot disk of 445 GB for pool infer-srv, or ask at most 23720m "
        "cpu in all"
    ) in shown
