#!/usr/bin/env python3
"""Helm as a judge of the charts we install: the charts' own sources from the Go modules that hold
them, Helm itself (``helm.sh/helm/v3``) built from its module to render them with our values.

Two facts are held here for every Helm release (and ``helm.v4.Chart``) an example stack emits
whose chart a module the Go module proxy serves holds (``SOURCES``):

- every value key we set is a key of the chart (``chart_keys``: Helm ignores an unknown key
  without a word, so a typo is a setting lost);
- the controllers' pods that ``helm template`` renders from our values (every Deployment and
  StatefulSet) stay off the stack's GPU pools, and land on one of its CPU pools where it
  declares some (``placement_faults``).

The charts whose modules the proxy does not serve are listed with the reason (``NOT_SERVED``).
Pure standard library but for PyYAML (to read the rendered manifests) and the project's
scheduling model (a pod's fit to a pool's labels and taints, held by kube-scheduler in the
scheduler differential). Usable as a command::

    python tests/e2e/helm_judge.py build     # helm into the cache (a no-op when cached)
    python tests/e2e/helm_judge.py charts    # where each served chart is (downloads the modules)

Helm goes to ``${GPU_INFERENCE_RIG_CACHE:-~/.cache/gpu-inference-rig}/helm-<version>-r1/bin/helm``
(``go install helm.sh/helm/v3/cmd/helm@<version>``, ``GOTOOLCHAIN=local CGO_ENABLED=0``: the
module's own go.mod, which has no ``replace``), with ``build.json`` beside it. The modules go to
Go's module cache, keyed by version; each chart is copied out of it before it is prepared.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

HELM_MODULE = "helm.sh/helm/v3"
HELM_VERSION = "v3.22.0"
HELM_RECIPE = 1
BUILD_TIMEOUT = 3600
KNATIVE_OPERATOR_MODULE_VERSION = "v0.50.0"
"""knative.dev/operator's module version of the Knative release we pin (v1.23.0): the proxy
refuses v1.23.0 (403), and the module's v0.50.0 `hack/generate-helm.sh` packages the chart as
`VERSION=v1.23.0` (checked by ``prepare``)."""


class BuildError(RuntimeError):
    """Helm failed to build, or a chart failed to render; the message names the command."""


class SourceUnavailable(BuildError):
    """Go, or the module proxy with the pinned module, is not there: a reason to skip."""


@dataclass(frozen=True)
class ChartSource:
    """Where a chart we install lives in a served module, at the version we install."""

    chart: str
    version: str  # the chart version the release installs (versions.py, llm_install.py)
    module: str
    module_version: str
    path: str  # the chart's directory inside the module


def sources() -> dict[str, ChartSource]:
    """The served charts by name, at the versions the project pins (imported, so a bump of a pin
    moves the module version with it)."""
    from components.model.deploy import versions as v
    from components.serving import llm_install as llm

    kserve = "github.com/kserve/kserve"
    out = [
        *(
            ChartSource(c.chart, c.version, kserve, c.version, f"charts/{c.chart}")
            for c in (
                v.KSERVE_CRD,
                v.KSERVE_CONTROLLER,
                v.KSERVE_RUNTIME_CONFIGS,
                llm.KSERVE_LLMISVC_CRD,
                llm.KSERVE_LLMISVC_RESOURCES,
            )
        ),
        ChartSource(
            v.KNATIVE_OPERATOR.chart,
            v.KNATIVE_OPERATOR.version,
            "knative.dev/operator",
            KNATIVE_OPERATOR_MODULE_VERSION,
            "config/charts/knative-operator",
        ),
        *(
            ChartSource(
                c.chart,
                c.version,
                "github.com/aws/karpenter-provider-aws",
                f"v{c.version}",
                f"charts/{c.chart}",
            )
            for c in (v.KARPENTER_CRD, v.KARPENTER)
        ),
        ChartSource(
            v.CERT_MANAGER.chart,
            v.CERT_MANAGER.version,
            "github.com/cert-manager/cert-manager",
            v.CERT_MANAGER.version,
            "deploy/charts/cert-manager",
        ),
        ChartSource(
            v.NVIDIA_DRA_DRIVER.chart,
            v.NVIDIA_DRA_DRIVER.version,
            "sigs.k8s.io/dra-driver-nvidia-gpu",
            f"v{v.NVIDIA_DRA_DRIVER.version}",
            f"deployments/helm/{v.NVIDIA_DRA_DRIVER.chart}",
        ),
        *(
            ChartSource(
                c.chart, c.version, "github.com/envoyproxy/gateway", c.version, f"charts/{c.chart}"
            )
            for c in (llm.ENVOY_GATEWAY, llm.ENVOY_GATEWAY_CRDS)
        ),
        *(
            ChartSource(
                c.chart,
                c.version,
                "github.com/envoyproxy/ai-gateway",
                c.version,
                f"manifests/charts/{c.chart}",
            )
            for c in (llm.ENVOY_AI_GATEWAY, llm.ENVOY_AI_GATEWAY_CRDS)
        ),
    ]
    return {s.chart: s for s in out}


def not_served() -> dict[str, str]:
    """The charts we install that no served module holds, with why (checked 2026-12-06)."""
    from components.model.deploy import versions as v

    seldon = (
        f"Seldon Core 2 {v.SELDON_VERSION}: the proxy serves no module of it "
        f"(github.com/seldonio/seldon-core/operator/v2@v{v.SELDON_VERSION}: 403 'not available'; "
        "its tags do not match its module paths)"
    )
    return {
        v.NVIDIA_DEVICE_PLUGIN.chart: (
            f"github.com/NVIDIA/k8s-device-plugin@v{v.NVIDIA_DEVICE_PLUGIN.version}: the proxy "
            "refuses it (403 'not available'; of 0.17 it serves v0.17.4 only)"
        ),
        v.SELDON_CRDS.chart: seldon,
        v.SELDON_SETUP.chart: seldon,
        v.SELDON_RUNTIME.chart: seldon,
    }


# ---------------------------------------------------------------------------------------------
# The cache, modules and Helm
# ---------------------------------------------------------------------------------------------


def cache_root() -> Path:
    env = os.environ.get("GPU_INFERENCE_RIG_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "gpu-inference-rig"


def helm_dir() -> Path:
    return cache_root() / f"helm-{HELM_VERSION.lstrip('v')}-r{HELM_RECIPE}"


def helm_binary() -> Path:
    return helm_dir() / "bin" / "helm"


def _go_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOWORK": "off", "GOFLAGS": "-mod=mod"})
    env.update(extra)
    return env


_UNSERVED = re.compile(
    r"403 Forbidden|404 Not Found|410 Gone|not available|dial tcp|no such host|"
    r"connection refused|i/o timeout|TLS handshake|proxyconnect|GOPROXY=off|"
    r"module lookup disabled",
    re.I,
)


_NEWER_GO = re.compile(r"requires go (>=|\\u003e=) ")
KARPENTER_AWS_TOOLCHAIN = "go1.27.3"
"""karpenter_judge.TOOLCHAINS["aws"] (test_helm_judge holds them equal)."""


def _download(module: str, version: str, toolchain: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as d:
        return subprocess.run(
            ["go", "mod", "download", "-json", f"{module}@{version}"],
            cwd=d,
            env=_go_env(GOTOOLCHAIN=toolchain),
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )


def module_dir(module: str, version: str) -> Path:
    """The module's extracted zip in Go's module cache (downloaded from the proxy if missing)."""
    if shutil.which("go") is None:
        raise SourceUnavailable("helm judge: no `go` on PATH (it fetches the charts' modules)")
    proc = _download(module, version, "local")
    if _NEWER_GO.search(proc.stdout + proc.stderr):
        # A module newer than the Go on PATH (aws/karpenter-provider-aws v1.15.0 says go 1.26.9):
        # the toolchain the Karpenter judge's AWS build already runs.
        proc = _download(module, version, KARPENTER_AWS_TOOLCHAIN)
    try:
        info = json.loads(proc.stdout or "{}")
    except json.JSONDecodeError:
        info = {}
    err = info.get("Error") or (proc.stderr if proc.returncode else "")
    if err or not info.get("Dir"):
        kind = SourceUnavailable if _UNSERVED.search(err or "") else BuildError
        raise kind(f"helm judge: `go mod download {module}@{version}` failed: {err.strip()}")
    return Path(info["Dir"])


@contextlib.contextmanager
def _lock(d: Path) -> Iterator[None]:
    import fcntl

    d.mkdir(parents=True, exist_ok=True)
    with open(d / "build.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build() -> Path:
    """Helm, built into the cache if it is not there yet (``SourceUnavailable`` when Go or the
    proxy is missing, ``BuildError`` for any other failure)."""
    target = helm_binary()
    if target.exists():
        return target
    if shutil.which("go") is None:
        raise SourceUnavailable("helm judge: no `go` on PATH (Go >= 1.26 builds Helm)")
    root = helm_dir()
    with _lock(root):
        if target.exists():
            return target
        gobin = root / "work" / "bin"
        shutil.rmtree(gobin, ignore_errors=True)
        gobin.mkdir(parents=True)
        log = root / "build.log"
        cmd = ["go", "install", f"{HELM_MODULE}/cmd/helm@{HELM_VERSION}"]
        t0 = time.monotonic()
        with open(log, "a") as f, tempfile.TemporaryDirectory() as d:
            f.write(f"\n$ GOBIN={gobin} {' '.join(cmd)}\n")
            proc = subprocess.run(
                cmd,
                cwd=d,
                env=_go_env(GOBIN=str(gobin)),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
            f.write(proc.stdout)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-20:])
            kind = SourceUnavailable if _UNSERVED.search(proc.stdout) else BuildError
            raise kind(f"helm judge: `{' '.join(cmd)}` failed (log {log}):\n{tail}")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(gobin / "helm", target)
        go = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True)
        (root / "build.json").write_text(
            json.dumps(
                {
                    "module": f"{HELM_MODULE}@{HELM_VERSION}",
                    "go": go.stdout.strip(),
                    "seconds": round(time.monotonic() - t0, 1),
                    "binary_bytes": target.stat().st_size,
                },
                indent=2,
            )
            + "\n"
        )
    return target


# ---------------------------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------------------------


def prepare(source: ChartSource, module: Path, into: Path) -> Path:
    """The chart copied out of its module into ``into``, made as its release tooling makes it:

    - knative-operator: ``{{ version }}`` in Chart.yaml and ``{{ tag }}`` in values.yaml are
      replaced by the release (knative/operator v0.50.0 ``hack/generate-helm.sh``: ``s/{{
      version }}/${VERSION:1}/``, ``s/{{ tag }}/${VERSION}/``, ``VERSION=v1.23.0``);
    - cert-manager: Chart.yaml is ``Chart.template.yaml`` with version and appVersion set (v1.18.2
      ``make/manifests.mk``: ``.version = "$(VERSION)" | .appVersion = "$(VERSION)"``);
    - gateway-helm: values.yaml is ``values.tmpl.yaml`` with the release's image and pull policy
      (envoyproxy/gateway ``tools/make/helm.mk`` ``helm-generate``, ``IMAGE_PULL_POLICY ?=
      IfNotPresent``; ``tools/`` is a module of its own, not in the zip). Any other placeholder
      left is an error: a new one needs its value.
    """
    src = module / source.path
    if not (src / "Chart.yaml").exists() and not (src / "Chart.template.yaml").exists():
        raise BuildError(
            f"helm judge: {source.module}@{source.module_version} has no chart at {source.path}"
        )
    dest = into / source.chart
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    for p in dest.rglob("*"):
        if p.is_file():
            p.chmod(0o644)  # the module cache's files are read-only
    if source.chart == "knative-operator":
        script = (module / "hack" / "generate-helm.sh").read_text()
        packaged = re.search(r"^VERSION=(\S+)$", script, flags=re.M)
        if packaged is None or packaged.group(1) != source.version:
            raise BuildError(
                f"helm judge: knative.dev/operator@{source.module_version} packages its chart as "
                f"{packaged.group(1) if packaged else '?'}, not {source.version}: a new module version"
            )
        for name, old, new in (
            ("Chart.yaml", "{{ version }}", source.version[1:]),
            ("values.yaml", "{{ tag }}", source.version),
        ):
            f = dest / name
            f.write_text(f.read_text().replace(old, new))
    if source.chart == "cert-manager":
        text = (dest / "Chart.template.yaml").read_text()
        text = re.sub(r"^version: .*$", f"version: {source.version}", text, flags=re.M)
        text = re.sub(r"^appVersion: .*$", f"appVersion: {source.version}", text, flags=re.M)
        (dest / "Chart.yaml").write_text(text)
    if source.chart == "gateway-helm":
        text = (dest / "values.tmpl.yaml").read_text()
        text = text.replace("${GatewayImage}", f"docker.io/envoyproxy/gateway:{source.version}")
        text = text.replace("${GatewayImagePullPolicy}", "IfNotPresent")
        left = sorted(set(re.findall(r"\$\{\w+\}", text)))
        if left:
            raise BuildError(f"helm judge: gateway-helm values.tmpl.yaml has placeholders {left}")
        (dest / "values.yaml").write_text(text)
    return dest


GIVEN: dict[str, tuple[tuple[str, ...], str, str]] = {
    "gateway-helm": (("config", "envoyGateway"), "api/v1alpha1", "EnvoyGateway"),
}
"""Value subtrees a chart hands whole to its program, and the Go type (package directory in the
module, type) whose json names are their keys: gateway-helm's `config.envoyGateway` is merged
over its defaults and written as the EnvoyGateway configuration (envoyproxy/gateway v1.8.1
`charts/gateway-helm/templates/envoy-gateway-config.yaml`: `merge $userEnvoyGatewayConfig
$baseEnvoyGatewayConfig | toYaml`, kind EnvoyGateway; `api/v1alpha1/envoygateway_types.go`)."""


def chart_keys(source: ChartSource, chart: Path, module: Path) -> Any:
    """The chart's keys (``chart_keys.ChartKeys``), with the subtrees it hands to its program
    checked against that program's configuration type."""
    import chart_keys as ck

    keys = ck.load_chart(chart)
    if source.chart in GIVEN:
        prefix, package, root = GIVEN[source.chart]
        texts = [f.read_text() for f in sorted((module / package).glob("*.go"))]
        types = ck.go_struct_fields(t for t in texts)
        if root not in types:
            raise BuildError(f"helm judge: {source.module} {package} defines no type {root}")
        keys.given[prefix] = lambda rest: ck.go_accepts(types, root, rest)
    return keys


def render(
    helm: Path,
    chart: Path,
    release: str,
    namespace: str,
    values: Mapping[str, Any],
    kube_version: str,
) -> list[dict[str, Any]]:
    """``helm template`` of ``chart`` with ``values`` for a cluster at ``kube_version``: the
    objects it renders. The version is given: a Helm built without the Makefile's ldflags
    (``-X .../pkg/chartutil.k8sVersionMajor``) assumes Kubernetes v1.20, which charts with a
    ``kubeVersion`` refuse."""
    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(values, f)
        f.flush()
        cmd = [str(helm), "template", release, str(chart), "--namespace", namespace]
        cmd += ["--kube-version", kube_version, "-f", f.name]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise BuildError(f"helm judge: `{' '.join(cmd)}` failed:\n{proc.stderr.strip()}")
    return [d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict)]


CONTROLLER_KINDS = ("Deployment", "StatefulSet")


def controller_pods(objects: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """``(Kind/name, pod spec)`` of every Deployment and StatefulSet rendered."""
    return [
        (
            f"{o['kind']}/{o.get('metadata', {}).get('name')}",
            o["spec"]["template"].get("spec") or {},
        )
        for o in objects
        if o.get("kind") in CONTROLLER_KINDS
    ]


# ---------------------------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------------------------

GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"
KUBELET_LABELS = {"kubernetes.io/os": "linux"}
"""What the kubelet labels every node with that a pool's labels in placement.json leave out
(Kubernetes 1.37.2 `pkg/kubelet/kubelet_node_status.go` initialNode: `v1.LabelOSStable:
goruntime.GOOS`; every pool the project makes runs Linux). Charts select it (cert-manager
v1.18.2 values.yaml `nodeSelector: kubernetes.io/os: linux`)."""
PLACEMENT_KEYS = ("nodeSelector", "affinity", "tolerations")
"""The top-level values our code sets to place a chart's controller (the Karpenter chart's
`affinity`, `nodeSelector`, `tolerations`, which its Deployment takes whole: aws/
karpenter-provider-aws v1.14.1 `charts/karpenter/templates/deployment.yaml`)."""


def elsewhere(passed: Mapping[str, Any]) -> bool:
    """Whether the placement we pass sends the pod to nodes that are no pool of the stack: the
    cluster's own EKS node groups (the Karpenter controller's `nodeGroups`, by their
    `eks.amazonaws.com/nodegroup` label)."""
    from components.model.nodes.labels import EKS_NODEGROUP_LABEL

    terms = (
        ((passed.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    return any(
        e.get("key") == EKS_NODEGROUP_LABEL for t in terms for e in t.get("matchExpressions") or ()
    )


def placement_faults(
    pod: Mapping[str, Any],
    pools: Sequence[Mapping[str, Any]],
    passed: Mapping[str, Any],
) -> list[str]:
    """Why a controller pod (its rendered pod spec) could land on a GPU pool of the stack, or
    lands nowhere we say. ``pools``: the stack's pools as its preview's placement.json gives them
    (labels and taints as the cloud makes them); ``passed``: the placement values we set.

    A pod must tolerate no ``nvidia.com/gpu`` taint, be admitted by no GPU pool, carry the
    placement we passed unchanged, and, when the stack has CPU pools, be admitted by one of them
    (unless what we pass sends it to the cluster's own node groups: ``elsewhere``)."""
    from components.model.scheduling.placement import Placement
    from components.model.scheduling.taints import Taint

    faults = []
    placement = Placement.from_pod_spec(pod)
    gpu = Taint.parse(GPU_TAINT)
    if any(t.tolerates(gpu) for t in placement.tolerations or ()):
        faults.append(f"tolerates {GPU_TAINT}: {pod.get('tolerations')}")

    def admitted(pool: Mapping[str, Any]) -> bool:
        labels = {**KUBELET_LABELS, **pool["labels"]}
        return placement.admits(labels, [Taint.parse(t) for t in pool["taints"]])

    on_gpu = [p["name"] for p in pools if p["gpu"] and admitted(p)]
    if on_gpu:
        faults.append(f"can land on GPU pool(s) {', '.join(on_gpu)}")
    for key, value in passed.items():
        rendered = pod.get(key)
        if key == "tolerations":
            kept = all(t in (rendered or ()) for t in value)
        else:  # nodeSelector, affinity: each of ours kept (a chart adds its podAntiAffinity)
            kept = all((rendered or {}).get(k) == v for k, v in value.items())
        if not kept:
            faults.append(f"{key} we pass is not the pod's: passed {value}, rendered {rendered}")
    cpu = [p for p in pools if not p["gpu"]]
    if cpu and not elsewhere(passed) and not any(admitted(p) for p in cpu):
        faults.append(
            f"no CPU pool of the stack admits it ({', '.join(p['name'] for p in cpu)}): "
            f"nodeSelector {pod.get('nodeSelector')}, affinity {pod.get('affinity')}, "
            f"tolerations {pod.get('tolerations')}"
        )
    return faults


# ---------------------------------------------------------------------------------------------
# Releases of a preview
# ---------------------------------------------------------------------------------------------

HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")


@dataclass(frozen=True)
class Release:
    """A Helm release (or helm.v4 Chart) a stack's preview emits, with what we gave it."""

    stack: str
    resource: str
    chart: str  # the chart's name (an `oci://` reference's last part)
    version: str
    namespace: str
    name: str
    values: Mapping[str, Any]
    kind: str


def releases(stack: str, resources: Sequence[Mapping[str, Any]]) -> list[Release]:
    out = []
    for r in resources:
        if r.get("type") not in HELM_TYPES:
            continue
        i = r.get("inputs") or {}
        out.append(
            Release(
                stack,
                r["name"],
                str(i["chart"]).rstrip("/").rsplit("/", 1)[-1],
                str(i.get("version", "")),
                str(i.get("namespace") or "default"),
                str(i.get("name") or r["name"]),
                i.get("values") or {},
                r["type"].rsplit(":", 1)[-1],
            )
        )
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="build Helm into the cache (a no-op when cached)")
    sub.add_parser("charts", help="download the modules and print where each chart is")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        print(build())
        return 0
    for s in sources().values():
        print(f"{s.chart} {s.version}: {module_dir(s.module, s.module_version) / s.path}")
    for chart, why in not_served().items():
        print(f"{chart}: not checked: {why}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main())
