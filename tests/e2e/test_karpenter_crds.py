"""The Karpenter objects the stacks emit against the CRDs of the Karpenter they install.

The unit tests validate NodePools, EC2NodeClasses and NodeOverlays against ../shared/crds, which
holds v1.14.1's files; the stacks install KARPENTER_VERSION. Here they are validated against that
release's own CRDs (`pkg/apis/crds/` of github.com/aws/karpenter-provider-aws at the pin, read from
its Go module: `go mod download`, the module cache; never copied into this repository). Where the
Go module proxy does not serve the module, the tests skip saying so; GPU_INFERENCE_KARPENTER_CRDS
may name a directory holding the same CRD files instead (`pkg/apis/crds` of a checkout at the tag).

What v1.15.0's CRDs change against v1.14.1's, for what the stacks write: the NodePool's
`disruption.consolidateAfter` is no longer required (default `0s`; ours is always written) and
`Unhealthy` joins the disruption budget reasons (ours name none); the EC2NodeClass gains
`enclaveOptions` and its `kubelet` keeps no schema (`x-kubernetes-preserve-unknown-fields`: the
controller validates it and reports `ValidationSucceeded=False`; ours writes no kubelet block);
requirement operators list `Gte` / `Lte` in another order. Nothing the stacks write is refused by
one and taken by the other.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import karpenter_judge
import pytest

from components.model.deploy.versions import KARPENTER_VERSION
from components.pools.karpenter import KarpenterGpuNodePool, KarpenterGpuNodePoolArgs
from components.preview.mockrun import run_program
from tests.crdschema import validate_cr

pytestmark = [pytest.mark.e2e, pytest.mark.tier("packaging")]

MODULE = "github.com/aws/karpenter-provider-aws"
AWS_GROUPS = ("karpenter.sh", "karpenter.k8s.aws")
"""The API groups of the CRDs the pinned install brings (karpenter-crd chart)."""
AKS_STACKS = ("aks-nap",)
"""Stacks whose NodePools AKS's own Karpenter serves (node auto-provisioning: AKS installs and
upgrades it; we install none), so the pin does not apply to them."""
EKS_KARPENTER_STACKS = ("eks-karpenter",)
"""The example stacks that emit objects of the pinned install's groups (the test fails when one
more or one fewer does: each is validated, or none is claimed to be)."""


@pytest.fixture(scope="module")
def crds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("GPU_INFERENCE_KARPENTER_CRDS")
    if given:
        return Path(given)
    work = tmp_path_factory.mktemp("karpenter-module")
    # The module says `go 1.26.9`: `go mod download` runs the toolchain the judge's AWS build
    # runs, not an older local Go, which refuses the module.
    env = {
        **os.environ,
        "GOFLAGS": "-mod=mod",
        "GOWORK": "off",
        "GOTOOLCHAIN": karpenter_judge.TOOLCHAINS["aws"],
    }
    try:
        out = subprocess.run(
            ["go", "mod", "download", "-json", f"{MODULE}@v{KARPENTER_VERSION}"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except FileNotFoundError:
        pytest.skip("no `go` on PATH to read the pinned Karpenter's CRDs from its Go module")
    found = json.loads(out.stdout or "{}")
    if found.get("Error") or not found.get("Dir"):
        pytest.skip(
            f"Karpenter's Go module {MODULE}@v{KARPENTER_VERSION} is not available here "
            f"({found.get('Error') or out.stderr.strip()}); set GPU_INFERENCE_KARPENTER_CRDS to "
            "its pkg/apis/crds directory to validate the stacks' Karpenter objects"
        )
    return Path(found["Dir"]) / "pkg" / "apis" / "crds"


def aws_karpenter_objects(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The registered objects of the pinned install's API groups (NodePool, EC2NodeClass,
    NodeOverlay): they go through the cluster's provider, not manifests.yaml."""
    return [
        e["inputs"]
        for e in entries
        if e["type"].startswith("kubernetes:")
        and e["inputs"].get("apiVersion", "").split("/")[0] in AWS_GROUPS
    ]


def test_every_example_stacks_karpenter_objects_validate_against_the_pinned_crds(
    example_previews: dict[str, Any], crds: Path
) -> None:
    emitting = {}
    for stack, result in example_previews.items():
        objects = aws_karpenter_objects(result.entries)
        if objects and stack not in AKS_STACKS:
            emitting[stack] = objects
    assert sorted(emitting) == sorted(EKS_KARPENTER_STACKS)
    kinds = set()
    for objects in emitting.values():
        for obj in objects:
            validate_cr(obj, crds)
            kinds.add(obj["kind"])
    assert kinds == {"NodePool", "EC2NodeClass"}


def pool_objects(**kw: Any) -> list[dict[str, Any]]:
    base: dict[str, Any] = dict(cluster_name="inference", node_role="KarpenterNodeRole-inference")
    g = run_program(lambda: KarpenterGpuNodePool("gpu", KarpenterGpuNodePoolArgs(**{**base, **kw})))
    return aws_karpenter_objects([{"type": r.type, "inputs": r.inputs} for r in g.resources])


@pytest.mark.parametrize(
    "kw, kinds",
    [
        # What the examples do not emit: NodeOverlays (time-sliced GPUs), reservation terms,
        # an Auto Mode NodePool (no EC2NodeClass), expireAfter and a spot/on-demand mix.
        (
            dict(gpu_names=["l4"], time_slicing_replicas=4, max_nodes=2),
            {"NodePool", "EC2NodeClass", "NodeOverlay"},
        ),
        (
            dict(
                instance_families=["p5"],
                capacity_types=["reserved", "on-demand"],
                capacity_reservations=["cr-0123456789abcdef0"],
                capacity_reservation_tags={"team": "llm"},
                expire_after="720h",
            ),
            {"NodePool", "EC2NodeClass"},
        ),
        (dict(auto_mode=True, gpu_names=["l40s"], node_role=None), {"NodePool"}),
        (
            dict(gpu_names=["l4"], capacity_types=["spot", "on-demand"]),
            {"NodePool", "EC2NodeClass"},
        ),
    ],
)
def test_every_kind_of_karpenter_pool_validates_against_the_pinned_crds(
    kw: dict[str, Any], kinds: set[str], crds: Path
) -> None:
    objects = pool_objects(**kw)
    assert {o["kind"] for o in objects} == kinds
    for obj in objects:
        validate_cr(obj, crds)


def test_the_pinned_crds_refuse_what_the_api_server_refuses(crds: Path) -> None:
    """The validation can fail: a misspelled key and a policy the NodePool CRD does not list."""
    (pool,) = [o for o in pool_objects(gpu_names=["l4"]) if o["kind"] == "NodePool"]
    bad = copy.deepcopy(pool)
    bad["spec"]["disruption"]["consolidationPolicy"] = "WhenIdle"
    with pytest.raises(AssertionError, match="consolidationPolicy"):
        validate_cr(bad, crds)
    bad = copy.deepcopy(pool)
    bad["spec"]["template"]["spec"]["expireAftr"] = "720h"
    with pytest.raises(AssertionError, match="expireAftr"):
        validate_cr(bad, crds)
