"""The component package through the real engine from another language: TypeScript.

`pulumi package add` runs a copy of provider/ (the Python components, served by the Python
language host) to get the package schema, generates the Node.js SDK `@pulumi/gpu-inference` and
links it into the TypeScript program of tests/e2e/typescript/, which creates an `ExistingGpuNodes`
over a kwok node and an `InferenceService` placed on it. After `pulumi up` the API server must hold
what the Python components would have set (the node's labels and taints, the InferenceService as
`inference_service_body` builds it, admitted by the real KServe CRD), the real scheduler must bind
a pod with the service's scheduling to the node, a second preview must find no change,
`pulumi destroy` must remove the service, and a bad input given in TypeScript must come back as
the component's own error.

Needs, beside the control plane: an installed Pulumi with pulumi-language-python and
pulumi-language-nodejs beside the CLI and the kubernetes resource plugin (`rig.find_pulumi`),
node and npm on PATH, the npm registry (the program's packages, pinned in
typescript/package.json, are installed into the test's temp dir, downloads cached under the rig
cache) and PyPI once (the provider's own virtualenv, see `provider_virtualenv`). It skips, naming
what is missing and how to install it, when Pulumi, its Node.js host, node or npm is not there;
anything else that goes wrong fails it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
import rig
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from stack import REPO, crd_files, node_state, not_in, require_shared, taint_set

from components.pools.existing import ExistingGpuNodesArgs, validate_existing_nodes_args
from components.provider import as_schema_value
from components.serving.inference_service import (
    InferenceServiceArgs,
    PredictorArgs,
    inference_service_body,
    service_url,
)

pytestmark = [pytest.mark.e2e, pytest.mark.tier("TypeScript")]

PROGRAM = Path(__file__).resolve().parent / "typescript"
STACK = "e2e"
NODE = "gpu-node-01"
# What the site set on the node before: a rack label and a maintenance taint of its own.
SITE_LABELS = {"site.example/rack": "r1"}
SITE_TAINT = {"key": "site.example/maintenance", "value": "planned", "effect": "PreferNoSchedule"}
NAMESPACE = "models"
# What typescript/index.ts asks for, said in Python: the pool, and the service wired to the pool's
# placement as a Python program would (`placement=pool.placement`).
POOL_ARGS = ExistingGpuNodesArgs(
    nodes=[NODE], gpus_per_node=4, gpu_model="L40S", labels={"site.example/team": "ml"}
)
POOL = validate_existing_nodes_args("gpu", POOL_ARGS)
ISVC_ARGS = InferenceServiceArgs(
    name="llm",
    namespace=NAMESPACE,
    predictor=PredictorArgs(
        model_format="huggingface",
        storage_uri="gs://models.example/llm",
        gpus=1,
        memory="24Gi",
        placement=POOL.facts.placement,
    ),
)
# The Python distributions the two components need at run time (pulumi_aws / pulumi_gcp are
# imported only by the GKE / EKS components).
PROVIDER_DISTRIBUTIONS = ("pulumi", "pulumi-kubernetes", "pydantic", "PyYAML")


def provider_pins() -> list[str]:
    """`name==version` of PROVIDER_DISTRIBUTIONS and everything they require, at the versions this
    interpreter has: the provider runs the libraries the unit tests run."""
    seen: dict[str, str] = {}
    todo = list(PROVIDER_DISTRIBUTIONS)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        dist = metadata.distribution(name)
        seen[name] = dist.version
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(f"{n}=={v}" for n, v in seen.items())


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def provider_virtualenv() -> Path:
    """A virtualenv for the provider, cached under the rig cache, keyed by `provider_pins`.

    Not this interpreter's: for a plugin the Python language host upgrades pip, setuptools and
    wheel in the plugin's virtualenv (pulumi sdk/python/toolchain/pip.go InstallDependencies),
    and asks for the resource plugin of every `pulumi-*` package installed there
    (`GetRequiredPackages`): pulumi-aws and pulumi-gcp, which cannot be had here."""
    pins = provider_pins()
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    key = hashlib.sha256("\n".join([sys.version, *pins]).encode()).hexdigest()[:12]
    venv = rig.cache_root() / f"provider-venv-py{py}-{key}"
    done = venv / "gpu-inference-pins.txt"
    with _locked(rig.cache_root() / "locks" / f"{venv.name}.lock"):
        if done.exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        t0 = time.monotonic()
        for cmd in (
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *pins],
        ):
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if proc.returncode:
                pytest.fail(
                    f"provider virtualenv: {' '.join(cmd[:5])} ... exited {proc.returncode}\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}",
                    pytrace=False,
                )
        done.write_text("\n".join(pins) + "\n")
        print(f"provider virtualenv {venv} built in {time.monotonic() - t0:.0f}s")
    return venv


def provider_copy(directory: Path, venv: Path) -> Path:
    """provider/ with its runtime in `venv`, beside a link to the repository's `components`
    (provider/__main__.py imports them from its parent folder). Not its requirements.txt: the host
    would install it, pulumi-aws and pulumi-gcp included."""
    plugin = directory / "provider"
    plugin.mkdir(parents=True)
    shutil.copyfile(REPO / "provider" / "__main__.py", plugin / "__main__.py")
    doc = yaml.safe_load((REPO / "provider" / "PulumiPlugin.yaml").read_text())
    doc["runtime"]["options"]["virtualenv"] = str(venv)
    (plugin / "PulumiPlugin.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (directory / "components").symlink_to(REPO / "components", target_is_directory=True)
    return plugin


def npm_env() -> dict[str, str]:
    """npm (run by the Node.js host) downloads into a cache beside the rig's, not ~/.npm."""
    return {
        "npm_config_cache": str(rig.cache_root() / "npm-cache"),
        "npm_config_prefer_offline": "true",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
    }


@pytest.fixture(scope="module")
def cluster(typescript_pulumi: rig.PulumiInstall):
    """A control plane with the upstream CRDs, the node as the site left it, the namespace."""
    require_shared()
    kserve = [p for p in crd_files() if p.name.startswith("serving.kserve.io_")]
    assert kserve, "../shared/crds holds no serving.kserve.io CRD"
    # With the controller manager: pulumi-kubernetes deletes with foreground propagation, and only
    # its garbage collector removes the `foregroundDeletion` finalizer (destroy hangs without it).
    with rig.ControlPlane(extended_resource_toleration=False) as cp:
        cp.apply_crd_files(kserve)
        cp.create_node(NODE, labels=SITE_LABELS, taints=[SITE_TAINT], gpus=4)
        cp.create_namespace(NAMESPACE)
        yield cp


def timed(pulumi: rig.Pulumi, times: dict[str, float], *args: str, cwd: Path) -> str:
    t0 = time.monotonic()
    proc = pulumi.run(*args, cwd=cwd, timeout=300, extra_env=npm_env())
    what = " ".join(args[:2]) if args[0] in ("package", "stack") else args[0]
    times[what] = time.monotonic() - t0
    print(f"pulumi {what}: {times[what]:.1f}s")
    return proc.stdout


def test_typescript_program_deploys_existing_nodes_and_an_inference_service(cluster, tmp_path):
    cp = cluster
    times: dict[str, float] = {}
    t0 = time.monotonic()
    venv = provider_virtualenv()
    times["provider virtualenv"] = time.monotonic() - t0
    plugin = provider_copy(tmp_path / "package", venv)
    project = tmp_path / "program"
    shutil.copytree(PROGRAM, project)
    pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig)

    # The SDK from the component package, generated and linked into the program.
    timed(pulumi, times, "package", "add", str(plugin), cwd=project)
    assert yaml.safe_load((project / "Pulumi.yaml").read_text())["packages"] == {
        "gpu-inference": str(plugin)
    }
    manifest = json.loads((project / "package.json").read_text())
    assert manifest["dependencies"]["@pulumi/gpu-inference"] == "file:sdks/gpu-inference"
    installed = json.loads(
        (project / "node_modules" / "@pulumi" / "pulumi" / "package.json").read_text()
    )
    assert installed["version"] == manifest["dependencies"]["@pulumi/pulumi"]

    before = node_state(cp.get(f"/api/v1/nodes/{NODE}"))
    timed(pulumi, times, "stack", "init", STACK, cwd=project)
    timed(pulumi, times, "up", "--yes", "--skip-preview", cwd=project)

    # The node: the site's labels and taint, plus exactly what the Python component sets.
    patch = POOL.patches[NODE]
    live = cp.get(f"/api/v1/nodes/{NODE}")
    labels, taints = node_state(live)
    assert labels == {**before[0], **patch["metadata"]["labels"]}, "node labels"
    assert taints == before[1] | taint_set(POOL.taints), "node taints (the site's must stay)"
    ours = {k: v for k, v in patch["metadata"]["annotations"].items() if "pulumi.com/" not in k}
    assert not_in(ours, live["metadata"]["annotations"]) == [], "node annotations"

    # The InferenceService as the Python component builds it when wired to the pool's placement,
    # admitted by the KServe CRD (a field it did not know would be pruned: reported missing).
    body = inference_service_body("llm", ISVC_ARGS)
    path = f"/apis/serving.kserve.io/v1beta1/namespaces/{NAMESPACE}/inferenceservices/llm"
    isvc = cp.get(path)
    assert isvc is not None, "the InferenceService was not created"
    wrong = not_in({"metadata": body["metadata"], "spec": body["spec"]}, isvc)
    # ...and the real scheduler binds a pod with the predictor's scheduling to the pool's node.
    predictor = isvc["spec"]["predictor"]
    cp.create_pod(
        "probe-llm-predictor",
        gpus=1,
        node_selector=predictor.get("nodeSelector"),
        affinity=predictor.get("affinity"),
        tolerations=predictor.get("tolerations") or (),
    )
    placed = cp.wait_pod_scheduled("probe-llm-predictor")
    assert wrong == [] and placed == ("bound", NODE), (
        f"InferenceService differs from the Python component's: {wrong}; "
        f"a pod with its predictor's scheduling: {placed}"
    )
    cp.delete_pod("probe-llm-predictor")

    # The component's outputs reach the program through the package.
    outputs = json.loads(timed(pulumi, times, "stack", "output", "--json", cwd=project))
    assert outputs == {
        "url": service_url("llm", NAMESPACE, True, False, "kourier"),
        "namespace": NAMESPACE,
        "placement": as_schema_value(POOL.facts.placement),
    }

    # No perma-diff through the package either.
    timed(pulumi, times, "preview", "--expect-no-changes", cwd=project)

    timed(pulumi, times, "destroy", "--yes", "--skip-preview", cwd=project)
    assert cp.get(path) is None, "destroy left the InferenceService"
    # The tainting patch is kept on destroy (see components/pools/existing.py): the node keeps
    # the site's labels and taint and what the pool added, nothing else.
    assert node_state(cp.get(f"/api/v1/nodes/{NODE}")) == (labels, taints)

    # Bad input from TypeScript gets the component's own error, naming the argument.
    program = project / "index.ts"
    program.write_text(
        program.read_text().replace('gpuModel: "L40S",', 'gpuModel: "L40S",\n    taints: [],', 1)
    )
    t0 = time.monotonic()
    refused = pulumi.run("preview", cwd=project, check=False, timeout=300, extra_env=npm_env())
    times["preview refused"] = time.monotonic() - t0
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, f"taints: [] on a GPU pool was accepted:\n{out}"
    assert (
        "ExistingGpuNodes('gpu').args.taints: a GPU pool without a NoSchedule or NoExecute taint"
        in out
    ), out
    print("timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in times.items()))
