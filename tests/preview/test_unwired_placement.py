"""Workloads with a placement of their own are wired to no pool (no `gpu-inference.dev/pool`
annotation), and the placement check still judges them: one that tolerates the GPU taint without
asking for a GPU would keep a GPU node up (GI003), one that asks for a GPU and selects a GPU pool
it cannot enter stays Pending (GI001), one with no scheduling field at all is fine."""

from __future__ import annotations

import shutil
from pathlib import Path

from components.preview.preview import preview

ROOT = Path(__file__).resolve().parents[2]
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"

STACK = """\
config:
  gpu-inference:cluster: {provider: existing, name: lab}
  gpu-inference:pools:
    - name: gpu
      nodes: [gpu-node-1]
      gpusPerNode: 1
      labels: {tier: gpu}
  gpu-inference:inferenceServices:
    - name: sneaky
      predictor:
        placement:
          tolerations: [{key: nvidia.com/gpu, operator: Exists}]
        model: {format: sklearn, storageUri: gs://b/m}
    - name: lost
      predictor:
        gpus: 1
        placement:
          nodeSelector: {tier: gpu}
        model: {format: sklearn, storageUri: gs://b/m}
    - name: anywhere
      predictor:
        placement: {}
        model: {format: sklearn, storageUri: gs://b/m}
"""


def test_unwired_pods_are_judged_by_the_check(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    shutil.copy(ROOT / "__main__.py", tmp_path)
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.u.yaml").write_text(STACK)
    result = preview("u", out_dir=tmp_path / "out", project_dir=tmp_path)

    isvcs = {
        e["inputs"]["metadata"]["name"]: e["inputs"] for e in result.entries if e["type"] == ISVC
    }
    for name, inputs in isvcs.items():
        annotations = inputs["metadata"].get("annotations") or {}
        assert not [k for k in annotations if k.startswith("gpu-inference.dev/pool")], name
    assert (
        isvcs["anywhere"]["spec"]["predictor"]
        .keys()
        .isdisjoint({"nodeSelector", "affinity", "tolerations"})
    )
    assert isvcs["lost"]["spec"]["predictor"]["nodeSelector"] == {"tier": "gpu"}

    found = sorted(
        (f.code, f.resource.split("-models-")[-1])
        for f in result.placement.findings
        if f.severity == "error"
    )
    assert found == [("GI001", "lost/predictor"), ("GI003", "sneaky/predictor")]
