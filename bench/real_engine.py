"""Real-engine figures: `pulumi preview` and `pulumi up` of a stack with N InferenceServices on the
e2e rig, against a bare Pulumi program creating the same custom resources, in the same run.

    python bench/real_engine.py                  # N = 100, 1000
    python bench/real_engine.py --sizes 100
    python bench/real_engine.py --skip-checkpoints   # the state saved once, not after every step

Needs the control plane built (`python tests/e2e/rig.py build`), an installed Pulumi with the
kubernetes resource plugin (`rig.find_pulumi`: the README's e2e section says how to install them)
and ../shared/crds (the InferenceService CRD). For each N, one control plane with the CRD and two kwok GPU nodes:

- **ours**: the on-prem stack shape (existing nodes patched, Knative config-features patched, one
  model namespace) with N InferenceServices in a workload file (`gpu-inference:workloadFiles`),
  run by the repository's `__main__.py`;
- **bare**: a program that creates the same N InferenceServices (the exact objects our offline
  preview emitted) and their namespace as plain `kubernetes.apiextensions.CustomResource`s.

Each is timed for `pulumi preview` (fresh stack), `pulumi up --skip-preview`, then destroyed
before the other runs. Also reports the control plane's build times from its cache records and the time of
a warm `build` (everything cached). Prints a Markdown table; `--json FILE` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
E2E = HERE.parent / "tests" / "e2e"
sys.path.insert(0, str(E2E))

import rig  # noqa: E402
import stack  # noqa: E402

NODES = ("gpu-node-01", "gpu-node-02")

BARE_PROGRAM = '''\
"""The same custom resources as the gpu-inference stack, created directly (the floor)."""
import json
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

docs = json.loads(Path("objects.json").read_text())
provider = k8s.Provider("k8s", kubeconfig=pulumi.Config().require("kubeconfig"),
                        enable_server_side_apply=True)
opts = pulumi.ResourceOptions(provider=provider)
namespaces = {}
for doc in docs:
    if doc["kind"] == "Namespace":
        namespaces[doc["metadata"]["name"]] = k8s.core.v1.Namespace(
            doc["metadata"]["name"], metadata=doc["metadata"], opts=opts)
for doc in docs:
    if doc["kind"] != "InferenceService":
        continue
    ns = namespaces.get(doc["metadata"]["namespace"])
    k8s.apiextensions.CustomResource(
        f"{doc['metadata']['namespace']}-{doc['metadata']['name']}",
        api_version=doc["apiVersion"], kind=doc["kind"], metadata=doc["metadata"],
        spec=doc["spec"],
        opts=pulumi.ResourceOptions(provider=provider, depends_on=[ns] if ns else None),
    )
'''


WORKLOAD_FILE = "stacks/models.yaml"


def inference_services(n: int) -> list[dict[str, Any]]:
    """n InferenceServices on the one GPU pool."""
    return [
        {
            "name": f"model-{i:04d}",
            "namespace": "models",
            "predictor": {
                "pool": "gpu",
                "gpus": 1,
                "minReplicas": 0,
                "model": {"format": "sklearn", "storageUri": f"gs://bench-models/model-{i:04d}"},
            },
        }
        for i in range(n)
    ]


def stack_config(kubeconfig: Path) -> dict[str, Any]:
    """The on-prem shape; its InferenceServices are in WORKLOAD_FILE (`workloadFiles`): a stack
    config holding 1000 of them exceeds the 128 KiB one environment variable may hold on Linux,
    and the Pulumi CLI hands the whole config to the program in one (`PULUMI_CONFIG`)."""
    return {
        "cluster": {
            "provider": "existing",
            "name": "bench",
            "kubeconfig": str(kubeconfig),
            "context": "rig",
        },
        "pools": [
            {
                "name": "gpu",
                "nodes": list(NODES),
                "gpusPerNode": 4,
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            }
        ],
        "knative": {"mode": "patch"},
        "addons": {
            "kserve": {"enabled": False},
            "certManager": {"enabled": False},
            "seldon": {"enabled": False},
            "nvidiaDevicePlugin": {"enabled": False},
        },
        "workloadFiles": [WORKLOAD_FILE],
    }


def timed(pulumi: rig.Pulumi, *args: str, cwd: Path) -> float:
    t0 = time.monotonic()
    pulumi.run(*args, cwd=cwd, timeout=3600)
    return time.monotonic() - t0


def run_size(n: int, work: Path, skip_checkpoints: bool = False) -> dict[str, Any]:
    with rig.ControlPlane(extended_resource_toleration=False) as cp:
        cp.apply_crd_files([stack.CRDS / "serving.kserve.io_inferenceservices.yaml"])
        for node in NODES:
            cp.create_node(node, gpus=4)
        cp.create_namespace("knative-serving")
        cp.request(
            "POST",
            "/api/v1/namespaces/knative-serving/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "config-features", "namespace": "knative-serving"},
                "data": {},
            },
        )
        ours = stack.write_project(work / "ours", "bench", stack_config(cp.kubeconfig))
        (ours / WORKLOAD_FILE).write_text(
            yaml.safe_dump({"inferenceServices": inference_services(n)})
        )
        docs = stack.offline_preview(ours, "bench", work / "preview")
        objects = [d for d in docs if d["kind"] in ("Namespace", "InferenceService")]
        bare = rig.Pulumi.write_project(work / "bare", "bare", BARE_PROGRAM)
        (bare / "objects.json").write_text(json.dumps(objects))
        pulumi = rig.Pulumi(work, kubeconfig=cp.kubeconfig)
        if skip_checkpoints:
            # The engine saves the whole state after every resource step by default (O(N^2)
            # bytes written for N resources); this saves it once, at the end.
            pulumi.env["PULUMI_SKIP_CHECKPOINTS"] = "true"
        out: dict[str, Any] = {"n": n}
        for label, project, stack_name in (("ours", ours, "bench"), ("bare", bare, "bare")):
            pulumi.run("stack", "init", stack_name, cwd=project)
            if label == "bare":
                pulumi.run("config", "set", "kubeconfig", str(cp.kubeconfig), cwd=project)
            out[f"{label}_preview"] = timed(pulumi, "preview", cwd=project)
            out[f"{label}_up"] = timed(pulumi, "up", "--yes", "--skip-preview", cwd=project)
            state = pulumi.run("stack", "export", cwd=project).stdout
            out[f"{label}_resources"] = len(json.loads(state)["deployment"]["resources"])
            pulumi.run("destroy", "--yes", "--skip-preview", cwd=project, timeout=3600)
        for step in ("preview", "up"):
            out[f"{step}_ratio"] = out[f"ours_{step}"] / out[f"bare_{step}"]
        return out


def build_figures() -> dict[str, Any]:
    recorded = rig.manifest()
    t0 = time.monotonic()
    rig.build()
    return {"warm_build_seconds": time.monotonic() - t0, "manifest": recorded}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--skip-checkpoints",
        action="store_true",
        help="PULUMI_SKIP_CHECKPOINTS=true for both programs: the state saved once, at the end",
    )
    a = ap.parse_args()
    missing = rig.status()["missing"]
    if missing:
        print(
            f"the rig is not built (missing: {', '.join(missing)}): run rig.py build",
            file=sys.stderr,
        )
        return 2
    try:
        print(f"pulumi {rig.find_pulumi().version}", file=sys.stderr)
    except rig.PulumiMissing as e:
        print(f"needs an installed Pulumi: {e}", file=sys.stderr)
        return 2
    figures: dict[str, Any] = {"build": build_figures(), "sizes": []}
    print(
        "| N | resources ours / bare | preview ours (s) | bare (s) | ratio | up ours (s) | bare (s) | ratio |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in (int(s) for s in a.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"gi-bench-{n}-") as tmp:
            r = run_size(n, Path(tmp), a.skip_checkpoints)
        figures["sizes"].append(r)
        print(
            f"| {n} | {r['ours_resources']} / {r['bare_resources']} | {r['ours_preview']:.1f} | "
            f"{r['bare_preview']:.1f} | {r['preview_ratio']:.2f} | {r['ours_up']:.1f} | "
            f"{r['bare_up']:.1f} | {r['up_ratio']:.2f} |",
            flush=True,
        )
    b = figures["build"]
    print(f"\nwarm rig build (everything cached): {b['warm_build_seconds']:.3f} s")
    print("rig cache manifest (last build):", json.dumps(b["manifest"].get("last_build", {})))
    if a.json:
        a.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
