"""How the offline preview scales with the number of models, against Pulumi's own floor.

Run by hand (not a test):  python bench/preview_scale.py [--sizes 10,100,1000] [--repeat 3]

For each N it writes a GKE stack with N InferenceServices, N/10 Seldon Models and two Seldon
Servers spread over four GPU pools into a temporary copy of the project (Pulumi.yaml and
__main__.py), and times, each in a fresh process, `python -m components preview STACK` and:

- the floor: a bare Pulumi program under the same mock runtime (components.preview.mockrun.run_program)
  registering every custom resource the preview emitted (the N InferenceServices, the Models, the
  Servers, the KnativeServing: same names, same specs) as plain
  `kubernetes.apiextensions.CustomResource`s and nothing else. That is what Pulumi itself costs to
  register the same custom resources;
- typed: the replay with every resource an SDK has a class for registered through that typed class
  (`kubernetes.core.v1.Namespace`, `helm.v3.Release`, `gcp.container.NodePool`, ...): what a user
  writing the same stack by hand pays, SDK imports included. Ours / typed is the floor a user
  would compare with; ours / floor the limit;
- the replay: the same mock runtime registering the preview's whole graph as it was emitted (every
  resource, same types, names, inputs, parents and dependencies; components as bare
  `ComponentResource`s, other resources as generic ones) and no component code, no SDK imports, no
  files. Ours / replay is what our own code costs; replay / floor is what Pulumi costs for the
  extra resources of our graph (one component per model, namespaces, Helm releases, pools).

All three end with `os._exit` once their work is done (the `gpu-inference` command does: freeing
a large heap object by object costs a second at N=1000 and is nobody's work). Wall times are the
median of --repeat runs; CPU is user + system of the child; peak RSS is the
child's ru_maxrss. The three programs take turns within each repeat, so a ratio compares runs made
under the same load. On a shared machine the wall ratios move with the load (a child waits for a
core); the CPU ratios much less: both are printed, with the load average before and after each N.
Every child runs with bytecode as an installed package has it: the project's modules are compiled
ahead (`compileall`, as pip does at install), and PYTHONDONTWRITEBYTECODE is dropped from the
children's environment. With it set (some shells and CI images set it) every run compiles our
modules from source, about 0.4 s at any N, which no installed package pays.
It also times the placement check alone on 1000 pod templates x 20 pools (wall and CPU), the
import of `components`, the typed SDK modules ours loads beyond the floor's, and which cloud SDKs
each kind of stack loads.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
POOLS = 4
SDKS = ("pulumi_aws", "pulumi_gcp")

FLOOR = """
import importlib, json, os, re, sys
import pulumi
import pulumi_kubernetes as k8s
from components.preview.mockrun import run_program

entries = json.load(open(sys.argv[1]))
replay = sys.argv[2] in ("replay", "typed")
typed = sys.argv[2] == "typed"


def is_cr(e):
    i = e["inputs"]
    return e["type"] == f"kubernetes:{i.get('apiVersion')}:{i.get('kind')}"


def custom_resource(e, opts):
    i = dict(e["inputs"])
    return k8s.apiextensions.CustomResource(
        e["name"], api_version=i.pop("apiVersion"), kind=i.pop("kind"),
        metadata=i.pop("metadata", None), opts=opts, **i)


def floor():
    for e in entries:
        if is_cr(e):
            custom_resource(e, None)


def snake(key):
    return re.sub(r"(?<!^)([A-Z])", r"_\\1", key).lower()


TYPED = {"kubernetes": "pulumi_kubernetes", "gcp": "pulumi_gcp", "aws": "pulumi_aws",
         "azure-native": "pulumi_azure_native"}
typed_count = [0, 0]


def typed_resource(e, opts):
    # The SDK's own class for the type token (kubernetes:core/v1:Namespace -> k8s.core.v1.Namespace,
    # gcp:container/nodePool:NodePool -> pulumi_gcp.container.NodePool), top-level inputs as its
    # snake_case arguments, nested values as emitted; None where the SDK has no such class.
    pkg, mod, cls = e["type"].split(":")
    if pkg not in TYPED:
        return None
    if pkg == "kubernetes":
        group, _, version = mod.rpartition("/")
        path = f"{group.split('.')[0] or 'core'}.{version}"
    else:
        path = mod.split("/")[0]
    try:
        module = importlib.import_module(f"{TYPED[pkg]}.{path}")
        klass = getattr(module, cls)
    except (ImportError, AttributeError):
        return None
    return klass(e["name"], opts=opts, **{snake(k): v for k, v in e["inputs"].items()})


def replay_graph():
    # Parents and dependencies first (the graph is a DAG); each resource as emitted.
    made, components, todo = {}, [], list(entries)
    while todo:
        later = []
        for e in todo:
            needs = [d for d in ([e["parent"]] if e["parent"] else []) + e["dependsOn"]]
            if any(n not in made for n in needs):
                later.append(e)
                continue
            opts = pulumi.ResourceOptions(
                parent=made.get(e["parent"]), depends_on=[made[d] for d in e["dependsOn"]])
            t = e["type"]
            if t.startswith("pulumi:providers:"):
                r = pulumi.ProviderResource(t.split(":")[2], e["name"], e["inputs"], opts)
            elif is_cr(e):
                r = custom_resource(e, opts)
            elif t.startswith("gpu-inference:"):
                r = pulumi.ComponentResource(t, e["name"], None, opts)
                components.append(r)
            else:
                r = typed_resource(e, opts) if typed else None
                typed_count[r is None] += 1
                if r is None:
                    r = pulumi.CustomResource(t, e["name"], e["inputs"], opts)
            made[f"{t}::{e['name']}"] = r
        if len(later) == len(todo):
            sys.exit("replay: unresolvable parents or dependencies")
        todo = later
    for c in components:
        c.register_outputs({})


run_program(replay_graph if replay else floor)
if typed:
    print(json.dumps({"typed": typed_count[0], "generic": typed_count[1]}), file=sys.stderr)
# Like the gpu-inference command (components.preview.cli.run): end without tearing the
# interpreter down, so that all three programs are timed for their work alone.
sys.stdout.flush()
os._exit(0)
"""


def stack_config(n: int) -> dict:
    """A GKE stack: four L4 pools, N InferenceServices round-robin over them, two Seldon
    Servers on the first two pools and N/10 Models placed by capability."""
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


class Run:
    """One child process: wall seconds, CPU seconds (user + system), peak RSS in MB."""

    def __init__(self, wall: float, cpu: float, rss_mb: float) -> None:
        self.wall, self.cpu, self.rss_mb = wall, cpu, rss_mb


def child_env() -> dict[str, str]:
    """The children's environment: the project on the path, bytecode allowed (module docstring)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(ROOT)}


def compile_ahead() -> None:
    """Write the project's bytecode, as `pip install` does for an installed package."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "components")],
        env=child_env(),
        check=True,
    )


def run_child(args: list[str], cwd: Path) -> Run:
    """Run `python ARGS` in a fresh process; its own rusage comes from wait4."""
    env = child_env()
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(args)} failed ({proc.returncode}):\n{err.read().decode()[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def median(runs: list[Run]) -> Run:
    return Run(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rss_mb for r in runs),
    )


def check_alone(pods: int = 1000, pools: int = 20) -> tuple[float, float]:
    """(wall, CPU) seconds the placement check takes on a synthetic graph (best of five)."""
    sys.path.insert(0, str(ROOT))
    from components.check import check

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
    best = cpu = float("inf")
    for _ in range(5):
        start, start_cpu = time.perf_counter(), time.process_time()
        report = check(graph)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    assert len(report.workloads) == pods and not report.errors, report.errors
    return best, cpu


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def import_cost() -> tuple[float, float]:
    """(`import components` cumulative ms from -X importtime, whole interpreter ms)."""
    env = child_env()
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import components"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = (time.perf_counter() - start) * 1000
    line = [ln for ln in out.stderr.splitlines() if re.search(r"\|\s*components$", ln)][-1]
    return int(line.split("|")[1]) / 1000, wall


TYPED = (
    "import sys, json\n"
    "print(json.dumps(sorted(m[: -len('._inputs')] for m in sys.modules"
    " if m.startswith('pulumi_') and m.endswith('._inputs'))))\n"
)
"""Prints the SDK packages whose typed classes were loaded (each has an `_inputs` module, the
bulk of its import; a cloud SDK's lazy placeholders have none)."""


def typed_sdk_packages(code: str, cwd: Path) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\n" + TYPED], cwd=cwd, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []


def sdk_import_cpu(work: Path, stack: str) -> tuple[float, list[str]]:
    """The SDK packages a preview of `stack` loads typed classes of beyond what the floor loads
    (pulumi_kubernetes and its apiextensions), and the CPU seconds a fresh process spends
    importing them: SDK cost that ours pays and no baseline does. (We register the few types of
    core/v1, helm.v3 and gcp.container we make directly, so a GKE stack on its own cluster
    loads none of those.) A cloud SDK hands out its modules lazily (`pulumi._utils._LazyModule`):
    each is loaded here by an attribute, as a program using it loads it."""
    floor = typed_sdk_packages(
        "import pulumi_kubernetes as k8s\nk8s.apiextensions.CustomResource", work
    )
    ours = typed_sdk_packages(
        "import io, contextlib, tempfile\n"
        "from components.preview import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    cli.main(['preview', {stack!r}, '--project-dir', {str(work)!r},"
        " '--out', tempfile.mkdtemp()])\n",
        work,
    )
    mods = [m for m in ours if m not in floor]
    probe = (
        "import importlib, time\n"
        "import pulumi, pulumi_kubernetes, pulumi_kubernetes.apiextensions\n"
        "start = time.process_time()\n"
        f"for m in {mods!r}:\n"
        "    getattr(importlib.import_module(m), '__all__', None)\n"
        "print(time.process_time() - start)\n"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", probe], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        for _ in range(3)
    ]
    return min(runs), mods


def sdks_loaded(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {SDKS!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def preview_code(stack: str) -> str:
    return (
        "import pathlib, tempfile\n"
        "from components.preview.preview import preview\n"
        f"preview({stack!r}, out_dir=pathlib.Path(tempfile.mkdtemp()), "
        f"project_dir=pathlib.Path({str(ROOT)!r}))"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="comma-separated N")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]

    compile_ahead()
    work = Path(tempfile.mkdtemp(prefix="gpu-inference-bench-"))
    try:
        shutil.copy(ROOT / "Pulumi.yaml", work)
        shutil.copy(ROOT / "__main__.py", work)
        (work / "stacks").mkdir()
        (work / "floor.py").write_text(FLOOR)
        rows = []
        paired: list[tuple[int, list[Run], list[Run], list[Run]]] = []
        typed_rows: list[tuple[int, Run, list[Run]]] = []
        loads: list[tuple[int, str, str]] = []
        for n in sizes:
            stack = f"bench-{n}"
            (work / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_config(n)))
            out = work / "out" / stack
            graph_file = work / f"graph-{n}.json"
            ours, floor, replay, typed = [], [], [], []
            load_before = load()
            for rep in range(opts.repeat):
                ours.append(
                    run_child(
                        [
                            "-m",
                            "components",
                            "preview",
                            stack,
                            "--project-dir",
                            str(work),
                            "--out",
                            str(out),
                        ],
                        work,
                    )
                )
                if rep == 0:
                    shutil.copy(out / "resources.json", graph_file)
                floor.append(run_child([str(work / "floor.py"), str(graph_file), "floor"], work))
                replay.append(run_child([str(work / "floor.py"), str(graph_file), "replay"], work))
                typed.append(run_child([str(work / "floor.py"), str(graph_file), "typed"], work))
            graph = json.loads(graph_file.read_text())
            crs = sum(
                1
                for e in graph
                if e["type"]
                == f"kubernetes:{e['inputs'].get('apiVersion')}:{e['inputs'].get('kind')}"
            )
            rows.append((n, len(graph), crs, median(ours), median(floor), median(replay)))
            paired.append((n, ours, floor, replay))
            typed_rows.append((n, median(typed), typed))
            loads.append((n, load_before, load()))
            print(f"  N={n}: done", file=sys.stderr)

        print(
            "floor = the same custom resources (InferenceServices, Models, Servers, KnativeServing)"
            "\n        registered as plain kubernetes.apiextensions.CustomResource, nothing else;"
            "\nreplay = the preview's whole graph re-registered as emitted, no component code;"
            f"\nall under components.preview.mockrun, fresh process each, median of {opts.repeat}.\n"
        )
        print("wall (median):")
        print(
            f"{'N':>5} {'resources':>9} {'CRs':>5} {'ours s':>7} {'floor s':>7} {'ratio':>6}"
            f" {'replay s':>8} {'ours/replay':>11} {'ours MB':>7} {'floor MB':>8}"
        )
        for n, count, crs, o, f, r in rows:
            print(
                f"{n:>5} {count:>9} {crs:>5} {o.wall:>7.2f} {f.wall:>7.2f} {o.wall / f.wall:>6.2f}"
                f" {r.wall:>8.2f} {o.wall / r.wall:>11.2f} {o.rss_mb:>7.0f} {f.rss_mb:>8.0f}"
            )
        print("CPU, user + system (median):")
        print(
            f"{'N':>5} {'ours s':>7} {'floor s':>7} {'ratio':>6} {'replay s':>8} {'ours/replay':>11}"
            f"  load average before -> after (1/5/15 min)"
        )
        for (n, _, _, o, f, r), (_, before, after) in zip(rows, loads, strict=True):
            print(
                f"{n:>5} {o.cpu:>7.2f} {f.cpu:>7.2f} {o.cpu / f.cpu:>6.2f} {r.cpu:>8.2f}"
                f" {o.cpu / r.cpu:>11.2f}  {before} -> {after}"
            )
        # The three programs of one repeat run back to back, so their ratio is taken under the
        # same load: a burst of the host's load that slows one repeat cancels out of its ratios.
        print("CPU ratios of each repeat's three runs (median, and lowest-highest):")
        for n, o_runs, f_runs, r_runs in paired:
            to_floor = [o.cpu / f.cpu for o, f in zip(o_runs, f_runs, strict=True)]
            to_replay = [o.cpu / r.cpu for o, r in zip(o_runs, r_runs, strict=True)]
            print(
                f"{n:>5} ours/floor {statistics.median(to_floor):.2f}"
                f" ({min(to_floor):.2f}-{max(to_floor):.2f})"
                f"  ours/replay {statistics.median(to_replay):.2f}"
                f" ({min(to_replay):.2f}-{max(to_replay):.2f})"
            )
        print(
            "typed = the preview's whole graph re-registered through the SDKs' own typed classes"
            " (core.v1, helm.v3, gcp.container, ...: what a user writes by hand), custom resources"
            " as CustomResource, no component code. CPU (median), ours against it:"
        )
        for (n, t, t_runs), (_, o_runs, _, _) in zip(typed_rows, paired, strict=True):
            to_typed = [o.cpu / r.cpu for o, r in zip(o_runs, t_runs, strict=True)]
            print(
                f"{n:>5} typed {t.cpu:.2f} s  ours/typed {statistics.median(to_typed):.2f}"
                f" ({min(to_typed):.2f}-{max(to_typed):.2f})"
            )
        cpu, mods = sdk_import_cpu(work, f"bench-{sizes[-1]}")
        print(
            f"typed SDK modules ours loads beyond the floor's ({', '.join(mods) or 'none'}): "
            f"{cpu:.2f} s CPU to import, paid by ours and by no baseline"
        )
        by_n = {row[0]: row for row in rows}
        if 100 in by_n and 1000 in by_n:
            o100, f100 = by_n[100][3], by_n[100][4]
            o1k, f1k = by_n[1000][3], by_n[1000][4]
            print(
                f"\ngrowth 100 -> 1000 models: ours {o1k.wall / o100.wall:.1f}x,"
                f" floor {f1k.wall / f100.wall:.1f}x"
            )
        wall, cpu = check_alone()
        print(
            f"placement check alone, 1000 pod templates x 20 pools: {wall:.3f} s "
            f"(CPU {cpu:.3f} s; load {load()})"
        )
        own, whole = import_cost()
        print(
            f"import components: {own:.1f} ms (-X importtime, cumulative); "
            f"whole interpreter {whole:.0f} ms"
        )
        for label, code in (
            ("import components", "import components"),
            ("gke-dev stack preview", preview_code("gke-dev")),
            ("eks-prod stack preview", preview_code("eks-prod")),
            ("onprem stack preview", preview_code("onprem")),
        ):
            print(f"cloud SDKs loaded by {label}: {' '.join(sdks_loaded(code)) or 'none'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
