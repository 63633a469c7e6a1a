"""Shared test helpers: run a program under Pulumi mocks and read what it registered."""

from __future__ import annotations

import base64
import gc
import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from components.model.deploy.ownership import field_manager, with_manager

# The suite keeps large object graphs alive (Pulumi registrations, parsed CRDs of 2 MB, Hypothesis
# data): with CPython's default thresholds (a young collection every 700 allocations) the
# collector rescans them all the time. Collections every 50 000 allocations do the same work
# (nothing the tests assert depends on when a cycle is freed) with a fifth less CPU overall.
gc.set_threshold(50_000, 20, 20)

# No test is timed (performance is measured in bench/): Hypothesis' per-example deadline (200 ms)
# and its too-slow health check turn a busy host into a failure (a 270 ms example on a CI runner
# at load 10 failed tests/preview/test_yaml_load.py), so both are off for the whole suite.
settings.register_profile(
    "gpu-inference", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("gpu-inference")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CRDS = SHARED / "crds"

EXAMPLE_STACKS = (
    "gke-dev",
    "eks-prod",
    "onprem",
    "eks-karpenter",
    "gke-computeclass",
    "gke-autopilot",
    "gke-llm",
    "gke-dra",
    "aks-dev",
    "aks-nap",
    "gke-esc",
    "eks-esc",
    "aks-esc",
)
"""The example stacks in `stacks/`, in the order tests report them (test_stacks holds it to the
directory: a new stack file is tested everywhere or the suite fails)."""

MANAGER = field_manager("gpu-inference", "test")
"""The field manager of what the tests' programs make (mockrun's project and stack)."""


def owned(metadata: Mapping[str, Any], manager: str = MANAGER) -> dict[str, Any]:
    """`metadata` as our components register it: with the stack's field manager annotation."""
    return with_manager(metadata, manager)


@pytest.fixture(scope="session")
def example_previews(tmp_path_factory):
    """Every example stack previewed once for the whole session (stack -> `PreviewResult`, its
    files under `<tmp>/<stack>/a`): four test modules read them, and previewing all ten costs
    seconds each time. Tests read them; a test that changes a graph changes its own copy (parse
    `resources.json` again, or deepcopy)."""
    from components.preview.preview import preview

    return {
        stack: preview(stack, out_dir=tmp_path_factory.mktemp(stack) / "a", project_dir=ROOT)
        for stack in EXAMPLE_STACKS
    }


@pytest.fixture
def run():
    """`run(program, config=None)` -> Graph: `program` runs as a stack program under mocks."""
    from components.preview.mockrun import run_program

    return run_program


def helm_secret(
    release: str,
    revision: int,
    status: str,
    chart: str = "nvidia-device-plugin",
    marker: str | None = None,
    version: str = "0.17.1",
) -> dict:
    """A release Secret as the API returns it (Helm's base64 of gzip, base64 again by the API);
    `marker`: the `global.gpuInferenceResource` value its release was given (none: installed
    by plain Helm)."""
    body: dict[str, Any] = {
        "name": release,
        "version": revision,
        "chart": {"metadata": {"name": chart, "version": version}},
        "config": {"global": {"gpuInferenceResource": marker}} if marker else {},
    }
    helm = base64.b64encode(gzip.compress(json.dumps(body).encode()))
    return {
        "metadata": {
            "name": f"sh.helm.release.v1.{release}.v{revision}",
            "labels": {
                "owner": "helm",
                "name": release,
                "status": status,
                "version": str(revision),
            },
        },
        "data": {"release": base64.b64encode(helm).decode()},
    }


def values_of(release: Any, stack: str = "test") -> dict:
    """A Helm release's values (a mockrun registration or a resources.json entry) without the
    marker every release we install carries, after checking the marker names this stack and the
    release's resource (`components.model.deploy.helm_records`)."""
    name = release["name"] if isinstance(release, Mapping) else release.name
    inputs = release["inputs"] if isinstance(release, Mapping) else release.inputs
    values = dict(inputs["values"])
    marker = dict(values.pop("global"))
    assert marker.pop("gpuInferenceResource") == f"{field_manager('gpu-inference', stack)}/{name}"
    if marker:
        values["global"] = marker
    return values


def marked(values: Mapping[str, Any], resource: str, stack: str = "test") -> dict:
    """`values` with the marker of the release the resource `resource` installs."""
    marker = {"gpuInferenceResource": f"{field_manager('gpu-inference', stack)}/{resource}"}
    return {**values, "global": {**(values.get("global") or {}), **marker}}


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection loaded (modules, the SDKs, parsed CRDs) lives until the end: moved out of
    the collector's generations (`gc.freeze`), the full collections scan only what tests make."""
    gc.freeze()
