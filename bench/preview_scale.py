"""How the offline preview scales with the number of models, against Pulumi's own floor.

Run by hand (not a test):  python bench/preview_scale.py [--sizes 10,100,1000]

For each N it writes a GKE stack with N InferenceServices (and N/10 Seldon Models on two Servers)
spread over four GPU pools, previews it in a fresh process (`python -m components preview`), and in
the same run measures the floor: a bare Pulumi program under the same mock runtime, in a fresh
process, registering the same N InferenceService custom resources (the exact specs the preview
emitted) as plain `kubernetes.apiextensions.CustomResource`s; and a second floor with each of
those CRs inside a ComponentResource of its own, the shape every component library has. It prints wall time, the ratio, the
peak RSS of each child, the growth from 100 to 1000, the placement check alone on 1000 pod
templates x 20 pools, and which cloud SDKs each kind of stack imports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
POOLS = 4

RUNNER = """
import resource, runpy, sys
target, rss_file, *sys.argv[1:] = sys.argv[1:]
try:
    if target.endswith(".py"):
        sys.argv[0] = target
        runpy.run_path(target, run_name="__main__")
    else:
        sys.argv[0] = target
        runpy.run_module(target, run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
finally:
    open(rss_file, "w").write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(code)
"""

FLOOR = """
import json, sys
import pulumi
import pulumi_kubernetes as k8s
from components.mockrun import run_program
crs = json.load(open(sys.argv[1]))
wrapped = len(sys.argv) > 2  # each CR inside a component of its own, as our InferenceService does
def program():
    for e in crs:
        i = e["inputs"]
        parent = pulumi.ComponentResource("bench:index:Wrapper", e["name"]) if wrapped else None
        k8s.apiextensions.CustomResource(
            e["name"], api_version=i["apiVersion"], kind=i["kind"],
            metadata=i["metadata"], spec=i["spec"],
            opts=pulumi.ResourceOptions(parent=parent),
        )
        if parent is not None:
            parent.register_outputs({})
run_program(program)
"""


def stack_config(n: int) -> dict:
    pools = [
        {
            "name": f"l4-{i}",
            "machineType": "g2-standard-8",
            "accelerator": "nvidia-l4",
            "gpusPerNode": 1,
            "minNodes": 0,
            "maxNodes": 8,
        }
        for i in range(POOLS)
    ]
    isvcs = [
        {
            "name": f"model-{i}",
            "namespace": "models",
            "predictor": {
                "pool": f"l4-{i % POOLS}",
                "gpus": 1,
                "minReplicas": 0,
                "maxReplicas": 2,
                "model": {"format": "sklearn", "storageUri": f"gs://bench-models/model-{i}"},
            },
        }
        for i in range(n)
    ]
    servers = [
        {"name": f"mlserver-{i}", "pool": f"l4-{i}", "gpus": 1, "capabilities": ["gpu"]}
        for i in range(2)
    ]
    models = [
        {"name": f"seldon-{i}", "storageUri": f"gs://bench-models/s-{i}", "requirements": ["gpu"]}
        for i in range(max(1, n // 10))
    ]
    return {
        "config": {
            "gpu-inference:cluster": {
                "provider": "gke",
                "name": "bench",
                "location": "us-central1",
                "project": "bench-project",
            },
            "gpu-inference:pools": pools,
            "gpu-inference:knative": {"mode": "operator"},
            "gpu-inference:inferenceServices": isvcs,
            "gpu-inference:seldon": {"servers": servers, "models": models},
        }
    }


def run_child(target: str, args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of `target` (a module or a .py file) in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rss_file = cwd / "rss.txt"
    cmd = [sys.executable, str(cwd / "runner.py"), target, str(rss_file), *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, int(rss_file.read_text()) / 1024


def check_alone(pods: int = 1000, pools: int = 20) -> float:
    sys.path.insert(0, str(ROOT))
    from components.placement_check import check

    graph = [
        {
            "type": "gcp:container/nodePool:NodePool",
            "name": f"p{i}",
            "inputs": {
                "nodeConfig": {
                    "machineType": "g2-standard-8",
                    "labels": {"gpu-inference.dev/pool": f"p{i}"},
                    "taints": [
                        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
                    ],
                },
                "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4},
            },
        }
        for i in range(pools)
    ]
    for i in range(pods):
        pool = f"p{i % pools}"
        graph.append(
            {
                "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
                "name": f"m{i}",
                "inputs": {
                    "metadata": {
                        "name": f"m{i}",
                        "namespace": "models",
                        "annotations": {"gpu-inference.dev/pool.predictor": pool},
                    },
                    "spec": {
                        "predictor": {
                            "minReplicas": 0,
                            "nodeSelector": {"gpu-inference.dev/pool": pool},
                            "tolerations": [
                                {
                                    "key": "nvidia.com/gpu",
                                    "operator": "Equal",
                                    "value": "present",
                                    "effect": "NoSchedule",
                                }
                            ],
                            "model": {
                                "modelFormat": {"name": "sklearn"},
                                "resources": {
                                    "limits": {"nvidia.com/gpu": 1},
                                    "requests": {"nvidia.com/gpu": 1},
                                },
                            },
                        }
                    },
                },
            }
        )
    start = time.perf_counter()
    report = check(graph)
    elapsed = time.perf_counter() - start
    assert len(report.workloads) == pods and not report.errors
    return elapsed


def sdk_imports(provider_module: str, program: str) -> list[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); {program}; "
        "print([m for m in ('pulumi_aws', 'pulumi_gcp') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().replace("'", '"'))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]

    work = Path(tempfile.mkdtemp(prefix="gpu-inference-bench-"))
    shutil.copy(ROOT / "Pulumi.yaml", work)
    shutil.copy(ROOT / "__main__.py", work)
    (work / "stacks").mkdir()
    (work / "floor.py").write_text(FLOOR)
    (work / "runner.py").write_text(RUNNER)
    rows = []
    for n in sizes:
        stack = f"bench-{n}"
        (work / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_config(n)))
        out = work / "out" / stack
        ours, ours_rss = run_child(
            "components", ["preview", stack, "--project-dir", str(work), "--out", str(out)], work
        )
        graph = json.loads((out / "resources.json").read_text())
        crs = [
            e for e in graph if e["type"] == "kubernetes:serving.kserve.io/v1beta1:InferenceService"
        ]
        (work / f"crs-{n}.json").write_text(json.dumps(crs))
        floor, floor_rss = run_child(str(work / "floor.py"), [str(work / f"crs-{n}.json")], work)
        shaped, _ = run_child(
            str(work / "floor.py"), [str(work / f"crs-{n}.json"), "wrapped"], work
        )
        rows.append((n, len(graph), ours, floor, ours / floor, ours_rss, floor_rss, shaped))

    print(
        f"{'N':>6} {'resources':>9} {'ours s':>8} {'floor s':>8} {'ratio':>6} {'ours MB':>8} "
        f"{'floor MB':>9} {'floor+component s':>18} {'ratio':>6}"
    )
    for n, count, ours, floor, ratio, ours_rss, floor_rss, shaped in rows:
        print(
            f"{n:>6} {count:>9} {ours:>8.2f} {floor:>8.2f} {ratio:>6.2f} {ours_rss:>8.0f} "
            f"{floor_rss:>9.0f} {shaped:>18.2f} {ours / shaped:>6.2f}"
        )
    by_n = {r[0]: r for r in rows}
    if 100 in by_n and 1000 in by_n:
        print(
            f"growth 100 -> 1000: ours {by_n[1000][2] / by_n[100][2]:.1f}x, floor {by_n[1000][3] / by_n[100][3]:.1f}x"
        )
    print(f"placement check alone, 1000 pod templates x 20 pools: {check_alone():.3f} s")
    print(
        "cloud SDKs imported: `import components` ->",
        sdk_imports("", "import components") or "none",
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
