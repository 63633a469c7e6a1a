#!/usr/bin/env python3
"""The e2e rig: a real Pulumi CLI and a real Kubernetes control plane, built from Go modules.

Pure standard library (PyYAML is imported lazily, only to apply YAML files). Usable as a library
(``ControlPlane``, ``Pulumi``, ``build``) and as a command::

    python tests/e2e/rig.py build              # build what is missing (a no-op when all is cached)
    python tests/e2e/rig.py status             # what is cached, where, and what is missing
    python tests/e2e/rig.py up --nodes nodes.json [--no-ert] [--no-controller-manager]
    python tests/e2e/rig.py down

Binaries go to ``${GPU_INFERENCE_RIG_CACHE:-~/.cache/gpu-inference-rig}/<key>/bin``, where
``<key>`` names every version below. Each component is built from its own wrapper module
(``GOTOOLCHAIN=local CGO_ENABLED=0``), so minimal version selection never mixes their dependencies.

Two components are not served by the Go module proxy reachable here (it answers 403 for the
modules ``github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3`` and
``github.com/pulumi/pulumi-kubernetes/provider/v4`` at every version tried): the Python language
host and the pulumi-kubernetes provider. They are built from a source tree or git repository
named by ``GPU_INFERENCE_RIG_PULUMI_SRC`` (pulumi/pulumi at tag v<PULUMI_VERSION>) and
``GPU_INFERENCE_RIG_PULUMI_KUBERNETES_SRC`` (pulumi/pulumi-kubernetes at tag
v<PULUMI_KUBERNETES_VERSION>), everything else they need still coming from the module proxy. When
neither the proxy nor a source is there, ``build`` raises ``SourceUnavailable`` for those two only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # imported where used: a no-op `build` stays fast
    import ssl

# --------------------------------------------------------------------------------------------
# Versions. Changing any of them changes the cache key.
# --------------------------------------------------------------------------------------------

KUBERNETES_VERSION = "1.36.3"
ETCD_VERSION = "3.6.16"
KWOK_VERSION = "0.8.0"
# The module proxy here serves github.com/pulumi/pulumi/pkg/v3 only at v3.259.0 (v3.272.0, the
# Python SDK's version, is refused), so the CLI is 3.259.0.
PULUMI_VERSION = "3.259.0"
PULUMI_COMMIT = "a05d88f24d05726fa3beae771bfdedb0c0c6a94a"  # tag pkg/v3.259.0 (Origin.Hash)
# The newest tag whose sources could be had here; the Python SDK must be pinned to it.
PULUMI_KUBERNETES_VERSION = "4.32.0"
PULUMI_KUBERNETES_COMMIT = "a03ff6ba58d2f1ea68319dda4b2c982119489c71"  # tag v4.32.0
# v4.32.0 wants fluxcd/pkg/ssa v0.71.1-0.20260424094917-4f94dc680419, which the proxy here does
# not serve; v0.71.0 still imports k8s.io/api/autoscaling/v2beta2 (gone from k8s.io/api v0.36), and
# v0.80+ need go >= 1.27. v0.78.0 builds; it lifts the provider's k8s.io libraries to v0.37.0.
FLUXCD_SSA_VERSION = "v0.78.0"
RECIPE = 1  # bump when the build recipe changes in a way that changes the binaries

KUBERNETES_STAGING = [
    "api",
    "apiextensions-apiserver",
    "apimachinery",
    "apiserver",
    "cli-runtime",
    "client-go",
    "cloud-provider",
    "cluster-bootstrap",
    "code-generator",
    "component-base",
    "component-helpers",
    "controller-manager",
    "cri-api",
    "cri-client",
    "cri-streaming",
    "csi-translation-lib",
    "dynamic-resource-allocation",
    "endpointslice",
    "externaljwt",
    "kms",
    "kube-aggregator",
    "kube-controller-manager",
    "kube-proxy",
    "kube-scheduler",
    "kubectl",
    "kubelet",
    "metrics",
    "mount-utils",
    "pod-security-admission",
    "sample-apiserver",
    "sample-cli-plugin",
    "sample-controller",
    "streaming",
]

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_CONFIG = "kwok-stages.yaml"
# Not in bin/ (which goes on PATH, where the CLI would take it for any version the SDK asks for):
# each Pulumi home gets it installed at its exact version with `pulumi plugin install --file`.
PROVIDER = "../plugins/pulumi-resource-kubernetes"
GPU = "nvidia.com/gpu"


def cache_root() -> Path:
    env = os.environ.get("GPU_INFERENCE_RIG_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "gpu-inference-rig"


def cache_key() -> str:
    return (
        f"k8s{KUBERNETES_VERSION}-etcd{ETCD_VERSION}-kwok{KWOK_VERSION}"
        f"-pulumi{PULUMI_VERSION}-pk8s{PULUMI_KUBERNETES_VERSION}-r{RECIPE}"
    )


def cache_dir() -> Path:
    return cache_root() / cache_key()


def bin_dir() -> Path:
    return cache_dir() / "bin"


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------


class BuildError(RuntimeError):
    """A build step failed. The message names the step, the command, its directory and log."""


class SourceUnavailable(BuildError):
    """A component's source is neither on the module proxy nor in a local source named by env."""


def _log(msg: str) -> None:
    print(f"[rig] {msg}", file=sys.stderr, flush=True)


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GOTOOLCHAIN="local", CGO_ENABLED="0", GOWORK="off", GOFLAGS="-mod=mod")
    return env


class _RssSampler:
    """Peak of the summed RSS of all our descendant processes (the whole go build tree)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = os.getpid()
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.wait(0.5):
            parents: dict[int, int] = {}
            rss: dict[int, int] = {}
            for d in os.listdir("/proc"):
                if not d.isdigit():
                    continue
                try:
                    with open(f"/proc/{d}/stat") as f:
                        stat = f.read()
                    fields = stat[stat.rindex(")") + 2 :].split()
                    parents[int(d)] = int(fields[1])
                    rss[int(d)] = int(fields[21]) * page
                except (OSError, ValueError, IndexError):
                    continue
            total = 0
            for pid in rss:
                p, seen = pid, 0
                while p and p != me and seen < 64:
                    p, seen = parents.get(p, 0), seen + 1
                if p == me and pid != me:
                    total += rss[pid]
            self.peak = max(self.peak, total)


@dataclass
class Builder:
    root: Path
    step: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def work(self, name: str) -> Path:
        d = self.root / "work" / name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def log_path(self, name: str) -> Path:
        d = self.root / "logs"
        d.mkdir(parents=True, exist_ok=True)
        return d / f"{name}.log"

    def run(
        self, cmd: Sequence[str], cwd: Path, env: Optional[dict[str, str]] = None
    ) -> subprocess.CompletedProcess[str]:
        env = env if env is not None else _go_env()
        log = self.log_path(self.step)
        with open(log, "a") as f:
            f.write(f"\n$ cd {cwd} && {' '.join(cmd)}\n")
            f.flush()
            proc = subprocess.run(
                list(cmd),
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            f.write(proc.stdout)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-25:])
            overrides = " ".join(
                f"{k}={env[k]}"
                for k in ("GOTOOLCHAIN", "CGO_ENABLED", "GOWORK", "GOFLAGS", "GONOSUMDB")
                if k in env
            )
            raise BuildError(
                f"build step {self.step!r} failed (exit {proc.returncode}).\n"
                f"Rerun: cd {cwd} && env {overrides} {' '.join(_quote(c) for c in cmd)}\n"
                f"Full log: {log}\n--- last lines ---\n{tail}"
            )
        return proc

    def go_wrapper(self, name: str, module: str) -> Path:
        """A fresh wrapper module directory (go.mod only)."""
        d = self.work(name)
        for f in ("go.mod", "go.sum"):
            (d / f).unlink(missing_ok=True)
        self.run(["go", "mod", "init", module], d)
        return d

    def install(self, built: Path, name: str) -> None:
        dest = self.bin / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(built, dest)


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def _kube_ldflags() -> str:
    major, minor, _ = KUBERNETES_VERSION.split(".")
    values = {
        "gitVersion": f"v{KUBERNETES_VERSION}",
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "gitCommit": "0" * 40,
        "buildDate": "2026-01-01T00:00:00Z",
    }
    parts = ["-s", "-w"]
    for k, v in values.items():
        for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            parts.append(f"-X {pkg}.{k}={v}")
    return " ".join(parts)


def _build_etcd(b: Builder) -> None:
    d = b.go_wrapper("etcd", "rigwrap/etcd")
    b.run(["go", "get", "-tool", f"go.etcd.io/etcd/server/v3@v{ETCD_VERSION}"], d)
    out = d / "etcd.out"
    b.run(
        ["go", "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), "go.etcd.io/etcd/server/v3"],
        d,
    )
    b.install(out, "etcd")


def _build_kwok(b: Builder) -> None:
    d = b.go_wrapper("kwok", "rigwrap/kwok")
    b.run(["go", "get", "-tool", f"sigs.k8s.io/kwok/cmd/kwok@v{KWOK_VERSION}"], d)
    out = d / "kwok.out"
    b.run(
        ["go", "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), "sigs.k8s.io/kwok/cmd/kwok"],
        d,
    )
    b.install(out, "kwok")
    # kwok runs no stage unless configured. Its module embeds its default stages (what kwokctl
    # feeds it): node-initialize + node-heartbeat, pod-ready/-complete/-delete. Write them, from
    # the module, as kwok's config beside the binary.
    mod = Path(b.run(["go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok"], d).stdout.strip())
    stages = mod / "kustomize" / "stage"
    files = [
        stages / "node" / "fast" / "node-initialize.yaml",
        stages / "node" / "heartbeat" / "node-heartbeat.yaml",
        *sorted((stages / "pod" / "fast").glob("pod-*.yaml")),
    ]
    cfg = d / "kwok-stages.yaml.out"
    cfg.write_text("\n---\n".join(f.read_text().strip() for f in files) + "\n")
    b.install(cfg, KWOK_CONFIG)


KUBE_BINARIES = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")


def _build_kubernetes(b: Builder) -> None:
    d = b.go_wrapper("kubernetes", "rigwrap/kubernetes")
    staging = "0." + KUBERNETES_VERSION.split(".", 1)[1]
    edits = [f"-replace=k8s.io/{m}=k8s.io/{m}@v{staging}" for m in KUBERNETES_STAGING]
    b.run(["go", "mod", "edit", *edits], d)
    b.run(
        [
            "go",
            "get",
            "-tool",
            *(f"k8s.io/kubernetes/cmd/{c}@v{KUBERNETES_VERSION}" for c in KUBE_BINARIES),
        ],
        d,
    )
    for c in KUBE_BINARIES:
        t0 = time.monotonic()
        out = d / f"{c}.out"
        b.run(
            [
                "go",
                "build",
                "-trimpath",
                f"-ldflags={_kube_ldflags()}",
                "-o",
                str(out),
                f"k8s.io/kubernetes/cmd/{c}",
            ],
            d,
        )
        b.install(out, c)
        b.timings[c] = time.monotonic() - t0
        _log(f"  {c}: {b.timings[c]:.0f}s")


PULUMI_LDFLAGS = (
    f"-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v{PULUMI_VERSION}"
)


def _build_pulumi(b: Builder) -> None:
    d = b.go_wrapper("pulumi", "rigwrap/pulumi")
    b.run(
        [
            "go",
            "get",
            "-tool",
            f"github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v{PULUMI_VERSION}",
            f"github.com/pulumi/pulumi/sdk/v3@v{PULUMI_VERSION}",
        ],
        d,
    )
    out = d / "pulumi.out"
    b.run(
        [
            "go",
            "build",
            "-trimpath",
            "-tags",
            "osusergo,grpcnotrace",
            f"-ldflags={PULUMI_LDFLAGS}",
            "-o",
            str(out),
            "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
        ],
        d,
    )
    b.install(out, "pulumi")
    # The -exec shim the Python language host runs is a Python script in the sdk/v3 module.
    sdk = b.run(["go", "list", "-m", "-f", "{{.Dir}}", "github.com/pulumi/pulumi/sdk/v3"], d)
    shim = Path(sdk.stdout.strip()) / "python" / "cmd" / "pulumi-language-python-exec"
    tmp = d / "pulumi-language-python-exec.out"
    shutil.copyfile(shim, tmp)
    tmp.chmod(0o755)
    b.install(tmp, "pulumi-language-python-exec")


def _source_tree(b: Builder, env_var: str, tag: str, paths: Sequence[str], dest: Path) -> None:
    """Extract ``paths`` at ``tag`` from the git repository or source tree named by env_var.

    Blobs absent from a partial clone are left out (the caller fills in what it needs)."""
    src = os.environ.get(env_var)
    if not src:
        raise SourceUnavailable(
            f"build step {b.step!r}: its module is not served by the Go module proxy here, and "
            f"{env_var} is not set (point it at a git repository or source tree at tag {tag})."
        )
    srcp = Path(src)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    git_dir = srcp / ".git" if (srcp / ".git").exists() else srcp
    if (git_dir / "objects").is_dir():
        ls = b.run(
            ["git", f"--git-dir={git_dir}", "ls-tree", "-r", tag, "--", *paths],
            dest,
            env=dict(os.environ),
        )
        entries = [line.split(None, 3) for line in ls.stdout.splitlines() if line.strip()]
        blobs = [e for e in entries if e[1] == "blob"]
        check = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch-check"],
            input="".join(e[2] + "\n" for e in blobs),
            capture_output=True,
            text=True,
        )
        missing = {ln.split()[0] for ln in check.stdout.splitlines() if ln.endswith(" missing")}
        excludes = [f":(exclude){e[3]}" for e in blobs if e[2] in missing]
        if excludes:
            _log(
                f"  {len(excludes)} file(s) absent from {src}, left out: "
                + ", ".join(x.split(")", 1)[1] for x in excludes)
            )
        archive = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "archive", tag, "--", *paths, *excludes],
            stdout=subprocess.PIPE,
        )
        tar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout)
        archive.wait()
        if archive.returncode or tar.returncode:
            raise BuildError(f"build step {b.step!r}: git archive {tag} from {git_dir} failed")
    else:
        for p in paths:
            s = srcp / p
            if s.is_dir():
                shutil.copytree(s, dest / p)
            elif s.exists():
                (dest / p).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(s, dest / p)


def _proxy_has(b: Builder, module_at: str, cwd: Path) -> bool:
    proc = subprocess.run(
        ["go", "mod", "download", "-json", module_at],
        cwd=cwd,
        env=_go_env(),
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0


def _build_language_host(b: Builder, lang: str) -> None:
    """pulumi-language-<lang>, a module of its own in the pulumi repository (sdk/<lang>/cmd)."""
    name = f"pulumi-language-{lang}"
    d = b.work(name)
    mod = f"github.com/pulumi/pulumi/sdk/{lang}/cmd/{name}/v3"
    src = d / "src"
    host = src / "sdk" / lang / "cmd" / name
    if _proxy_has(b, f"{mod}@{PULUMI_COMMIT}", d):
        w = b.go_wrapper(name, f"rigwrap/{name}")
        b.run(["go", "get", "-tool", f"{mod}@{PULUMI_COMMIT}"], w)
        pkg, cwd = mod, w
    else:
        _source_tree(
            b,
            "GPU_INFERENCE_RIG_PULUMI_SRC",
            f"v{PULUMI_VERSION}",
            [f"sdk/{lang}/cmd/{name}"],
            src,
        )
        shutil.rmtree(host / "testdata", ignore_errors=True)
        for t in host.glob("*_test.go"):
            t.unlink()
        # Its go.mod points pkg/v3 and sdk/v3 at the repository (../../..): take them from the
        # module proxy at the same version instead.
        b.run(
            [
                "go",
                "mod",
                "edit",
                "-dropreplace=github.com/pulumi/pulumi/pkg/v3",
                "-dropreplace=github.com/pulumi/pulumi/sdk/v3",
                f"-require=github.com/pulumi/pulumi/pkg/v3@v{PULUMI_VERSION}",
                f"-require=github.com/pulumi/pulumi/sdk/v3@v{PULUMI_VERSION}",
            ],
            host,
        )
        b.run(["go", "mod", "tidy"], host)
        pkg, cwd = ".", host
    out = d / f"{name}.out"
    b.run(
        [
            "go",
            "build",
            "-trimpath",
            "-tags",
            "osusergo,grpcnotrace",
            f"-ldflags={PULUMI_LDFLAGS}",
            "-o",
            str(out),
            pkg,
        ],
        cwd,
    )
    b.install(out, name)


def _build_language_python(b: Builder) -> None:
    _build_language_host(b, "python")


def _build_language_nodejs(b: Builder) -> None:
    _build_language_host(b, "nodejs")


def _build_provider_kubernetes(b: Builder) -> None:
    d = b.work("pulumi-resource-kubernetes")
    src = d / "src"
    _source_tree(
        b,
        "GPU_INFERENCE_RIG_PULUMI_KUBERNETES_SRC",
        f"v{PULUMI_KUBERNETES_VERSION}",
        ["provider"],
        src,
    )
    prov = src / "provider"
    cmd = prov / "cmd" / "pulumi-resource-kubernetes"
    schema = cmd / "schema.json"
    if not schema.exists():
        # The generated schema (some MB) can be absent from a partial clone. The provider uses it
        # to answer GetSchema and to import resources; `up`/`preview`/`destroy` do not need it.
        _log("  schema.json absent: embedding a stub schema (GetSchema and import will not work)")
        schema.write_text(json.dumps({"name": "kubernetes", "displayName": "Kubernetes"}))
    # v4.32.0 was built against pulumi pkg/v3 v3.243.0, which the proxy here does not serve; in
    # v3.259.0 (the one served) PackageSpec.Provider became a pointer. The one source change needed:
    gen = prov / "pkg" / "gen" / "schema.go"
    text = gen.read_text()
    if "Provider: pschema.ResourceSpec{" in text:
        gen.write_text(
            text.replace("Provider: pschema.ResourceSpec{", "Provider: &pschema.ResourceSpec{")
        )
    # sdk/v4 comes from the module proxy (the checksum database does not know it: skip it for
    # that one module) instead of the repository's ../sdk.
    env = _go_env()
    env["GONOSUMDB"] = "github.com/pulumi/pulumi-kubernetes/sdk"
    env["GOFLAGS"] = "-mod=mod"
    b.run(
        [
            "go",
            "mod",
            "edit",
            "-dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4",
            f"-require=github.com/pulumi/pulumi-kubernetes/sdk/v4@v{PULUMI_KUBERNETES_VERSION}",
            f"-require=github.com/pulumi/pulumi/pkg/v3@v{PULUMI_VERSION}",
            f"-require=github.com/pulumi/pulumi/sdk/v3@v{PULUMI_VERSION}",
            # See FLUXCD_SSA_VERSION.
            f"-require=github.com/fluxcd/pkg/ssa@{FLUXCD_SSA_VERSION}",
        ],
        prov,
        env=env,
    )
    # No `go mod tidy`: it would resolve the imports of every package of the module, and the
    # code generator's (pulumi-language-dotnet) is not served here. `go build -mod=mod` resolves
    # only what the provider binary imports.
    # Its own go generate step: embeds the versioned schema and the terraform mapping.
    genv = dict(env, VERSION=PULUMI_KUBERNETES_VERSION)
    b.run(["go", "generate", "./cmd/pulumi-resource-kubernetes"], prov, env=genv)
    out = d / "pulumi-resource-kubernetes.out"
    ld = (
        "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version="
        f"{PULUMI_KUBERNETES_VERSION}"
    )
    b.run(
        [
            "go",
            "build",
            "-trimpath",
            f"-ldflags={ld}",
            "-o",
            str(out),
            "./cmd/pulumi-resource-kubernetes",
        ],
        prov,
        env=env,
    )
    b.install(out, PROVIDER)


@dataclass(frozen=True)
class Step:
    name: str
    binaries: tuple[str, ...]
    run: Callable[[Builder], None]
    group: str  # "control-plane" or "pulumi"


STEPS: tuple[Step, ...] = (
    Step("etcd", ("etcd",), _build_etcd, "control-plane"),
    Step("kwok", ("kwok", KWOK_CONFIG), _build_kwok, "control-plane"),
    Step("kubernetes", KUBE_BINARIES, _build_kubernetes, "control-plane"),
    Step("pulumi", ("pulumi", "pulumi-language-python-exec"), _build_pulumi, "pulumi"),
    Step("pulumi-language-python", ("pulumi-language-python",), _build_language_python, "pulumi"),
    # For a later test of the component package from TypeScript (not built unless asked for).
    Step("pulumi-language-nodejs", ("pulumi-language-nodejs",), _build_language_nodejs, "extra"),
    Step(
        "pulumi-resource-kubernetes",
        (PROVIDER,),
        _build_provider_kubernetes,
        "pulumi",
    ),
)


STEPS_PULUMI = tuple(s for s in STEPS if s.group == "pulumi")


def missing(
    groups: Iterable[str] = ("control-plane", "pulumi"), steps: Optional[Iterable[str]] = None
) -> list[Step]:
    b = bin_dir()
    wanted = set(steps) if steps else None
    return [
        s
        for s in STEPS
        if s.group in groups
        and (wanted is None or s.name in wanted)
        and not all((b / x).exists() for x in s.binaries)
    ]


@dataclass
class BuildReport:
    built: dict[str, float]
    peak_rss: int
    total: float
    unavailable: dict[str, str]


def build(
    groups: Iterable[str] = ("control-plane", "pulumi"),
    *,
    strict: bool = True,
    steps: Optional[Iterable[str]] = None,
) -> BuildReport:
    """Build every missing binary of ``groups`` into the cache. A no-op when all are there.

    ``strict=False`` records components whose source is unavailable (``SourceUnavailable``)
    instead of raising; any other failure raises ``BuildError``."""
    groups = tuple(groups)
    todo = missing(groups, steps)
    report = BuildReport({}, 0, 0.0, {})
    if not todo:
        return report
    if shutil.which("go") is None:
        raise BuildError("build: no `go` on PATH (Go >= 1.26 is needed to build the rig)")
    if not strict:
        todo = _drop_unbuildable(todo, report)
        if not todo:
            return report
    return _build_locked(todo, report, strict)


def _source_problem(step: str) -> Optional[str]:
    """Why a step's source cannot be had here (None: it can), found without building anything:
    the language hosts come from the module proxy or GPU_INFERENCE_RIG_PULUMI_SRC, the provider
    only from GPU_INFERENCE_RIG_PULUMI_KUBERNETES_SRC."""
    if step.startswith("pulumi-language-"):
        env_var, tag = "GPU_INFERENCE_RIG_PULUMI_SRC", f"v{PULUMI_VERSION}"
        mod = f"github.com/pulumi/pulumi/sdk/{step.split('-')[-1]}/cmd/{step}/v3@{PULUMI_COMMIT}"
        if os.environ.get(env_var):
            return None
        with tempfile.TemporaryDirectory() as d:
            probe = ["go", "mod", "download", "-json", mod]
            if subprocess.run(probe, cwd=d, env=_go_env(), capture_output=True).returncode == 0:
                return None
    elif step == "pulumi-resource-kubernetes":
        env_var, tag = "GPU_INFERENCE_RIG_PULUMI_KUBERNETES_SRC", f"v{PULUMI_KUBERNETES_VERSION}"
        if os.environ.get(env_var):
            return None
    else:
        return None
    return (
        f"build step {step!r}: its module is not served by the Go module proxy here, and "
        f"{env_var} is not set (point it at a git repository or source tree at tag {tag})."
    )


def _drop_unbuildable(todo: list[Step], report: BuildReport) -> list[Step]:
    """Leave out, before building anything, the steps whose source is missing, and with them the
    rest of the Pulumi half: the CLI is no use without the Python host and the provider, and it
    takes twenty minutes to build."""
    problems = {s.name: p for s in todo if (p := _source_problem(s.name))}
    for name, why in problems.items():
        report.unavailable[name] = why
        _log(f"{name}: UNAVAILABLE: {why}")
    if any(s.group == "pulumi" and s.name in problems for s in todo):
        for s in todo:
            if s.group == "pulumi" and s.name not in problems:
                blocking = sorted(n for n in problems if n in {t.name for t in STEPS_PULUMI})
                report.unavailable[s.name] = (
                    f"not built: {', '.join(blocking)} cannot be built here, and the "
                    "Pulumi e2e tests need all of the Pulumi half"
                )
    return [s for s in todo if s.name not in report.unavailable]


@contextlib.contextmanager
def _step_lock(step: str) -> Iterator[None]:
    """One builder per step and cache key at a time (pytest runs and the CLI may overlap)."""
    import fcntl

    (cache_dir() / "locks").mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "locks" / f"{step}.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log(f"{step}: another rig build is building it: waiting for it")
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _build_locked(todo: list[Step], report: BuildReport, strict: bool) -> BuildReport:
    b = Builder(cache_dir())
    t_all = time.monotonic()
    _log(f"building {', '.join(s.name for s in todo)} into {b.root}")
    with _RssSampler() as sampler:
        for s in todo:
            b.step = s.name
            t0 = time.monotonic()
            _log(f"{s.name}: building {', '.join(s.binaries)} ...")
            try:
                with _step_lock(s.name):
                    if not missing((s.group,), (s.name,)):
                        _log(f"{s.name}: built meanwhile by another process")
                        continue
                    s.run(b)
            except SourceUnavailable as e:
                if strict:
                    raise
                report.unavailable[s.name] = str(e)
                _log(f"{s.name}: UNAVAILABLE: {e}")
                continue
            report.built[s.name] = time.monotonic() - t0
            _log(
                f"{s.name}: done in {report.built[s.name]:.0f}s "
                f"(peak RSS so far {sampler.peak / 2**30:.1f} GiB)"
            )
        report.peak_rss = sampler.peak
    report.total = time.monotonic() - t_all
    report.built.update({f"  {k}": v for k, v in b.timings.items()})
    manifest = {
        "key": cache_key(),
        "go": subprocess.run(
            ["go", "env", "GOVERSION"], capture_output=True, text=True
        ).stdout.strip(),
        "last_build": {
            "seconds": round(report.total, 1),
            "peak_rss_bytes": report.peak_rss,
            "steps": {k.strip(): round(v, 1) for k, v in report.built.items()},
        },
    }
    (b.root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    _log(f"build done in {report.total:.0f}s, peak RSS {report.peak_rss / 2**30:.2f} GiB")
    return report


# --------------------------------------------------------------------------------------------
# Control plane
# --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _openssl(args: Sequence[str], cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {proc.stderr}")


def make_pki(d: Path) -> None:
    """CA, API server serving cert, admin client cert (system:masters), service-account keys."""
    d.mkdir(parents=True, exist_ok=True)
    _openssl(
        [
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "7",
            "-subj",
            "/CN=gpu-inference-rig-ca",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        ],
        d,
    )
    (d / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc\n"
        "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    (d / "client.ext").write_text(
        "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    for name, subj, ext in (
        ("apiserver", "/CN=kube-apiserver", "server.ext"),
        ("admin", "/O=system:masters/CN=gpu-inference-rig-admin", "client.ext"),
    ):
        _openssl(
            [
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                f"{name}.key",
                "-out",
                f"{name}.csr",
                "-subj",
                subj,
            ],
            d,
        )
        _openssl(
            [
                "x509",
                "-req",
                "-in",
                f"{name}.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                f"{name}.crt",
                "-days",
                "7",
                "-extfile",
                ext,
            ],
            d,
        )
    _openssl(["genrsa", "-out", "sa.key", "2048"], d)
    _openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], d)


def write_kubeconfig(path: Path, server: str, pki: Path) -> None:
    # JSON is valid YAML: no YAML library needed.
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "rig",
                "cluster": {"server": server, "certificate-authority": str(pki / "ca.crt")},
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate": str(pki / "admin.crt"),
                    "client-key": str(pki / "admin.key"),
                },
            }
        ],
        "contexts": [{"name": "rig", "context": {"cluster": "rig", "user": "admin"}}],
        "current-context": "rig",
    }
    path.write_text(json.dumps(cfg, indent=2) + "\n")


class ApiError(RuntimeError):
    def __init__(self, status: int, body: Any, what: str) -> None:
        super().__init__(f"{what}: HTTP {status}: {body}")
        self.status = status
        self.body = body


@dataclass
class Proc:
    name: str
    pid: int
    log: str


class ControlPlane:
    """etcd + kube-apiserver + kube-scheduler (+ kube-controller-manager) + kwok on 127.0.0.1.

    Use as a context manager; every process is started in its own process group and stopped by
    pid (SIGTERM, then SIGKILL) on exit, also when the body raised. The temp dir is removed."""

    def __init__(
        self,
        *,
        extended_resource_toleration: bool = True,
        controller_manager: bool = True,
        bin_path: Optional[Path] = None,
        workdir: Optional[Path] = None,
        keep_workdir: bool = False,
    ) -> None:
        self.ert = extended_resource_toleration
        self.with_cm = controller_manager
        self.bin = Path(bin_path) if bin_path else bin_dir()
        self._own_dir = workdir is None
        self.dir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="gpu-inference-rig-"))
        self.keep_workdir = keep_workdir
        self.procs: list[Proc] = []
        self.kubeconfig = self.dir / "kubeconfig"
        self.pki = self.dir / "pki"
        self.server = ""
        self.startup_seconds = 0.0
        self._ctx: Optional[ssl.SSLContext] = None
        self._port = 0

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, args: Sequence[str]) -> Proc:
        exe = self.bin / args[0]
        if not exe.exists():
            raise FileNotFoundError(f"{exe} is missing: run `python tests/e2e/rig.py build`")
        log = self.dir / f"{name}.log"
        with open(log, "wb") as f:
            p = subprocess.Popen(
                [str(exe), *args[1:]],
                stdout=f,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.dir,
                start_new_session=True,
            )
        proc = Proc(name, p.pid, str(log))
        self.procs.append(proc)
        self._popen = getattr(self, "_popen", {})
        self._popen[p.pid] = p
        return proc

    def _alive(self, proc: Proc) -> bool:
        p = getattr(self, "_popen", {}).get(proc.pid)
        if p is not None:
            return p.poll() is None
        try:
            os.kill(proc.pid, 0)
            return True
        except ProcessLookupError:
            return False

    def log_tail(self, name: str, lines: int = 30) -> str:
        p = self.dir / f"{name}.log"
        if not p.exists():
            return ""
        return "\n".join(p.read_text(errors="replace").splitlines()[-lines:])

    def _wait(
        self, what: str, cond: Callable[[], bool], timeout: float, procs: Sequence[Proc]
    ) -> None:
        import http.client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pr in procs:
                if not self._alive(pr):
                    raise RuntimeError(
                        f"{pr.name} exited while waiting for {what}:\n{self.log_tail(pr.name)}"
                    )
            try:
                if cond():
                    return
            except (OSError, ApiError, ValueError, http.client.HTTPException):
                pass
            time.sleep(0.2)
        tails = "\n".join(f"--- {p.name} ---\n{self.log_tail(p.name, 15)}" for p in procs)
        raise TimeoutError(f"timed out after {timeout}s waiting for {what}\n{tails}")

    def start(self) -> None:
        t0 = time.monotonic()
        self.dir.mkdir(parents=True, exist_ok=True)
        make_pki(self.pki)
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        etcd = self._spawn(
            "etcd",
            [
                "etcd",
                "--name=rig",
                f"--data-dir={self.dir / 'etcd-data'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=rig=http://127.0.0.1:{peer_port}",
                "--listen-metrics-urls=",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
        )
        self._wait("etcd", lambda: _tcp_open(etcd_port), 30, [etcd])
        plugins = "ExtendedResourceToleration" if self.ert else ""
        pki = self.pki
        api_args = [
            "kube-apiserver",
            f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={api_port}",
            f"--cert-dir={self.dir / 'apiserver-certs'}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--authorization-mode=RBAC",
            "--allow-privileged=true",
            "--endpoint-reconciler-type=none",
            "--profiling=false",
            "--v=1",
        ]
        if plugins:
            api_args.append(f"--enable-admission-plugins={plugins}")
        disabled = [] if self.ert else ["ExtendedResourceToleration"]
        if not self.with_cm:
            # Its node.kubernetes.io/not-ready taint is lifted by the controller-manager's node
            # lifecycle controller only: without one, every node would stay tainted.
            disabled.append("TaintNodesByCondition")
        if disabled:
            api_args.append(f"--disable-admission-plugins={','.join(disabled)}")
        api = self._spawn("kube-apiserver", api_args)
        self._port = api_port
        self.server = f"https://127.0.0.1:{api_port}"
        write_kubeconfig(self.kubeconfig, self.server, pki)
        self._wait(
            "kube-apiserver /readyz", lambda: self.get("/readyz", raw=True) == "ok", 90, [etcd, api]
        )
        kc = str(self.kubeconfig)
        sched = self._spawn(
            "kube-scheduler",
            [
                "kube-scheduler",
                f"--kubeconfig={kc}",
                f"--authentication-kubeconfig={kc}",
                f"--authorization-kubeconfig={kc}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--leader-elect=false",
                "--v=1",
            ],
        )
        waits = [etcd, api, sched]
        if self.with_cm:
            cm = self._spawn(
                "kube-controller-manager",
                [
                    "kube-controller-manager",
                    f"--kubeconfig={kc}",
                    f"--authentication-kubeconfig={kc}",
                    f"--authorization-kubeconfig={kc}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={free_port()}",
                    "--leader-elect=false",
                    f"--service-account-private-key-file={pki / 'sa.key'}",
                    f"--root-ca-file={pki / 'ca.crt'}",
                    "--use-service-account-credentials=false",
                    "--v=1",
                ],
            )
            waits.append(cm)
        kwok = self._spawn(
            "kwok",
            [
                "kwok",
                f"--config={self.bin / KWOK_CONFIG}",
                f"--kubeconfig={kc}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
                "--node-lease-duration-seconds=40",
                f"--server-address=127.0.0.1:{free_port()}",
            ],
        )
        waits.append(kwok)
        self._waits = waits
        # Pods need their namespace's `default` ServiceAccount: the controller-manager makes it;
        # without one, the rig does.
        if not self.with_cm:
            self._ensure_default_sa("default")
        else:
            self._wait(
                "default ServiceAccount",
                lambda: self.get("/api/v1/namespaces/default/serviceaccounts/default") is not None,
                60,
                waits,
            )
        self.startup_seconds = time.monotonic() - t0

    def stop(self) -> None:
        popens = getattr(self, "_popen", {})
        _kill_groups([(pr.pid, popens.get(pr.pid)) for pr in reversed(self.procs)])
        self.procs.clear()
        if self._own_dir and not self.keep_workdir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def check_alive(self) -> None:
        for pr in self.procs:
            if not self._alive(pr):
                raise RuntimeError(f"{pr.name} died:\n{self.log_tail(pr.name)}")

    # -- API -----------------------------------------------------------------------------------

    def _ssl(self) -> ssl.SSLContext:
        import ssl

        if self._ctx is None:
            ctx = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
            ctx.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
            self._ctx = ctx
        return self._ctx

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        raw: bool = False,
    ) -> Any:
        import http.client

        conn = http.client.HTTPSConnection("127.0.0.1", self._port, context=self._ssl(), timeout=30)
        try:
            data = None
            if body is not None:
                data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers = {"Content-Type": content_type, "Accept": "application/json"}
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            text = resp.read().decode()
        finally:
            conn.close()
        if resp.status == 404 and method == "GET":
            return None
        if resp.status >= 400:
            try:
                parsed: Any = json.loads(text)
            except ValueError:
                parsed = text
            raise ApiError(resp.status, parsed, f"{method} {path}")
        if raw:
            return text
        return json.loads(text) if text else None

    def get(self, path: str, raw: bool = False) -> Any:
        return self.request("GET", path, raw=raw)

    def apply(self, path: str, obj: dict[str, Any]) -> Any:
        """Server-side apply of ``obj`` at its object ``path`` (field manager ``gpu-inference-rig``)."""
        return self.request(
            "PATCH",
            f"{path}?fieldManager=gpu-inference-rig&force=true",
            json.dumps(obj),
            content_type="application/apply-patch+yaml",
        )

    # -- helpers -------------------------------------------------------------------------------

    def create_node(
        self,
        name: str,
        *,
        labels: Optional[dict[str, str]] = None,
        taints: Sequence[dict[str, str]] = (),
        gpus: int = 0,
        cpu: str = "256",
        memory: str = "2Ti",
        pods: str = "1000",
        wait_ready: bool = True,
    ) -> dict[str, Any]:
        """A kwok-managed fake node with ``gpus`` allocatable ``nvidia.com/gpu``."""
        capacity = {"cpu": cpu, "memory": memory, "pods": pods}
        if gpus:
            capacity[GPU] = str(gpus)
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "type": "kwok",
                    **(labels or {}),
                },
                "annotations": {KWOK_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
            },
            "spec": {"taints": [dict(t) for t in taints]},
            "status": {"capacity": capacity, "allocatable": capacity},
        }
        created = self.request("POST", "/api/v1/nodes", node)
        if wait_ready:
            self.wait_node_ready(name)
        return created

    def wait_node_ready(self, name: str, timeout: float = 60) -> None:
        def ready() -> bool:
            n = self.get(f"/api/v1/nodes/{name}")
            if not n:
                return False
            conds = {c["type"]: c["status"] for c in n.get("status", {}).get("conditions", [])}
            taints = {t["key"] for t in n.get("spec", {}).get("taints", []) or []}
            return conds.get("Ready") == "True" and not any(
                k.startswith("node.kubernetes.io/") for k in taints
            )

        self._wait(f"node {name} Ready", ready, timeout, self._waits)

    def delete_node(self, name: str) -> None:
        self.request("DELETE", f"/api/v1/nodes/{name}")

    def _ensure_default_sa(self, namespace: str) -> None:
        try:
            self.request(
                "POST",
                f"/api/v1/namespaces/{namespace}/serviceaccounts",
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
            )
        except ApiError as e:
            if e.status != 409:
                raise

    def create_namespace(self, name: str) -> None:
        if not self.with_cm:
            self._create_namespace(name)
            self._ensure_default_sa(name)
        else:
            self._create_namespace(name)

    def _create_namespace(self, name: str) -> None:
        try:
            self.request(
                "POST",
                "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
            )
        except ApiError as e:
            if e.status != 409:
                raise

    def create_pod(
        self,
        name: str,
        *,
        namespace: str = "default",
        gpus: int = 0,
        node_selector: Optional[dict[str, str]] = None,
        affinity: Optional[dict[str, Any]] = None,
        tolerations: Sequence[dict[str, Any]] = (),
        labels: Optional[dict[str, str]] = None,
    ) -> dict[str, Any]:
        resources: dict[str, Any] = {"requests": {"cpu": "10m", "memory": "16Mi"}}
        if gpus:
            resources["requests"][GPU] = str(gpus)
            resources["limits"] = {GPU: str(gpus)}
        spec: dict[str, Any] = {
            "containers": [
                {"name": "main", "image": "example.invalid/rig/pause:1", "resources": resources}
            ],
            "tolerations": [dict(t) for t in tolerations],
            "automountServiceAccountToken": False,
        }
        if node_selector:
            spec["nodeSelector"] = dict(node_selector)
        if affinity:
            spec["affinity"] = affinity
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": spec,
        }
        return self.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)

    def pod_placement(self, name: str, namespace: str = "default") -> tuple[str, str]:
        """('bound', node) | ('unschedulable', message) | ('pending', '') from PodScheduled."""
        pod = self.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        if pod is None:
            raise KeyError(f"pod {namespace}/{name} not found")
        if pod["spec"].get("nodeName"):
            return "bound", pod["spec"]["nodeName"]
        for c in pod.get("status", {}).get("conditions", []) or []:
            if (
                c["type"] == "PodScheduled"
                and c["status"] == "False"
                and c.get("reason") == "Unschedulable"
            ):
                return "unschedulable", c.get("message", "")
        return "pending", ""

    def wait_pod_scheduled(
        self, name: str, namespace: str = "default", timeout: float = 30
    ) -> tuple[str, str]:
        """Wait until the pod is bound or marked Unschedulable; returns ``pod_placement``."""
        result: list[tuple[str, str]] = []

        def decided() -> bool:
            r = self.pod_placement(name, namespace)
            result[:] = [r]
            return r[0] != "pending"

        self._wait(
            f"pod {namespace}/{name} scheduled or Unschedulable", decided, timeout, self._waits
        )
        return result[0]

    def delete_pod(self, name: str, namespace: str = "default") -> None:
        self.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}?gracePeriodSeconds=0")

    def apply_crd_files(self, paths: Iterable[Path], timeout: float = 60) -> list[str]:
        """Server-side apply every CustomResourceDefinition in the YAML files; wait Established."""
        import yaml  # the project depends on PyYAML; the rest of the rig does not need it

        names = []
        for p in paths:
            # The C loader where PyYAML has it: the KServe CRD file (2 MB) parses in 1.7 s, not 6 s.
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            for doc in yaml.load_all(Path(p).read_text(), Loader=loader):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                name = doc["metadata"]["name"]
                doc.get("metadata", {}).pop("resourceVersion", None)
                self.apply(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}", doc)
                names.append(name)

        def established() -> bool:
            for n in names:
                crd = self.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{n}")
                conds = {
                    c["type"]: c["status"]
                    # status.conditions is null until the CRD's controller first reports.
                    for c in ((crd or {}).get("status") or {}).get("conditions") or []
                }
                if conds.get("Established") != "True":
                    return False
            return True

        self._wait("CRDs Established", established, timeout, self._waits)
        return names

    # -- state for the CLI (`up` leaves the processes running, `down` stops them) --------------

    def state(self) -> dict[str, Any]:
        return {
            "dir": str(self.dir),
            "kubeconfig": str(self.kubeconfig),
            "server": self.server,
            "procs": [p.__dict__ for p in self.procs],
        }


def _tcp_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _kill_groups(
    procs: Sequence[tuple[int, Optional[subprocess.Popen[bytes]]]], grace: float = 3
) -> None:
    """SIGTERM each process group (led by its pid), then SIGKILL what is left after ``grace``
    (kube-apiserver does not exit on SIGTERM within 15 s here: nothing of a test cluster is kept)."""

    def gone(pid: int, popen: Optional[subprocess.Popen[bytes]]) -> bool:
        if popen is not None:
            return popen.poll() is not None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    for pid, _ in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not all(gone(p, po) for p, po in procs):
        time.sleep(0.1)
    for pid, popen in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        if popen is not None:
            with contextlib.suppress(Exception):
                popen.wait(timeout=5)


# --------------------------------------------------------------------------------------------
# The real Pulumi CLI, offline
# --------------------------------------------------------------------------------------------


class Pulumi:
    """Runs the rig's ``pulumi`` with a file backend, a private PULUMI_HOME, no update check and no
    plugin downloads; the rig's bin dir first on PATH (language host and provider beside it)."""

    def __init__(
        self, workdir: Path, *, kubeconfig: Optional[Path] = None, bin_path: Optional[Path] = None
    ) -> None:
        self.bin = Path(bin_path) if bin_path else bin_dir()
        self.workdir = Path(workdir)
        self.home = self.workdir / "pulumi-home"
        self.backend = self.workdir / "backend"
        self.home.mkdir(parents=True, exist_ok=True)
        self.backend.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("PULUMI_") or k in ("KUBECONFIG",):
                del env[k]
        env.update(
            PULUMI_BACKEND_URL=f"file://{self.backend}",
            PULUMI_HOME=str(self.home),
            PULUMI_CONFIG_PASSPHRASE="",
            PULUMI_SKIP_UPDATE_CHECK="true",
            PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="true",
            PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK="true",
            PULUMI_SKIP_CONFIRMATIONS="true",
            PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            NO_COLOR="1",
        )
        if kubeconfig:
            env["KUBECONFIG"] = str(kubeconfig)
        self.env = env
        provider = (self.bin / PROVIDER).resolve()
        if os.environ.get("GPU_INFERENCE_RIG_AMBIENT_PROVIDER") == "1":
            # Any pulumi_kubernetes SDK version then gets this provider (the CLI warns).
            env["PATH"] = f"{provider.parent}{os.pathsep}{env['PATH']}"
        elif provider.exists():
            plugin = self.home / "plugins" / f"resource-kubernetes-v{PULUMI_KUBERNETES_VERSION}"
            if not plugin.exists():
                self.run(
                    "plugin",
                    "install",
                    "resource",
                    "kubernetes",
                    PULUMI_KUBERNETES_VERSION,
                    "--file",
                    str(provider),
                    cwd=self.workdir,
                )

    def run(
        self,
        *args: str,
        cwd: Path,
        check: bool = True,
        timeout: float = 600,
        extra_env: Optional[dict[str, str]] = None,
    ) -> subprocess.CompletedProcess[str]:
        env = dict(self.env, **(extra_env or {}))
        proc = subprocess.run(
            [str(self.bin / "pulumi"), *args, "--non-interactive"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"pulumi {' '.join(args)} exited {proc.returncode}\n--- stdout ---\n"
                f"{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
            )
        return proc

    @staticmethod
    def write_project(
        directory: Path, name: str, program: str, virtualenv: Optional[str] = None
    ) -> Path:
        """A Python project whose runtime is the given virtualenv (default: this interpreter's)."""
        directory.mkdir(parents=True, exist_ok=True)
        venv = virtualenv or sys.prefix
        (directory / "Pulumi.yaml").write_text(
            json.dumps(
                {
                    "name": name,
                    "runtime": {
                        "name": "python",
                        "options": {"toolchain": "pip", "virtualenv": venv},
                    },
                },
                indent=2,
            )
            + "\n"
        )
        (directory / "__main__.py").write_text(program)
        return directory


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def _state_file() -> Path:
    return cache_root() / "control-plane.json"


def status() -> dict[str, Any]:
    b = bin_dir()
    out: dict[str, Any] = {"cache": str(cache_dir()), "present": {}, "missing": []}
    for s in STEPS:
        for x in s.binaries:
            p = b / x
            if p.exists():
                out["present"][x] = p.stat().st_size
            elif s.group == "extra":
                out.setdefault("optional_missing", []).append(x)
            else:
                out["missing"].append(x)
    m = cache_dir() / "manifest.json"
    if m.exists():
        out["manifest"] = json.loads(m.read_text())
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="rig.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    bp = sub.add_parser("build", help="build what is missing into the cache")
    bp.add_argument("--only", choices=["control-plane", "pulumi", "extra"], action="append")
    bp.add_argument("--step", choices=[s.name for s in STEPS], action="append")
    sub.add_parser("status", help="what is cached and what is missing")
    up = sub.add_parser("up", help="start a control plane and leave it running")
    up.add_argument("--nodes", type=Path, help="JSON list of {name, labels, taints, gpus}")
    up.add_argument("--no-ert", action="store_true", help="ExtendedResourceToleration off")
    up.add_argument("--no-controller-manager", action="store_true")
    sub.add_parser("down", help="stop the control plane `up` started")
    a = ap.parse_args(argv)

    if a.cmd == "build":
        t0 = time.monotonic()
        try:
            rep = build(
                a.only or ("control-plane", "pulumi", "extra")
                if a.step
                else a.only or ("control-plane", "pulumi"),
                steps=a.step,
            )
        except BuildError as e:
            print(f"rig build FAILED: {e}", file=sys.stderr)
            return 1
        if not rep.built:
            print(f"rig: everything cached in {cache_dir()} ({time.monotonic() - t0:.3f}s)")
        return 0
    if a.cmd == "status":
        st = status()
        print(json.dumps(st, indent=2))
        return 0 if not st["missing"] else 1
    if a.cmd == "up":
        if _state_file().exists():
            print(
                f"a control plane is already up ({_state_file()}): run `down` first",
                file=sys.stderr,
            )
            return 1
        cp = ControlPlane(
            extended_resource_toleration=not a.no_ert,
            controller_manager=not a.no_controller_manager,
            workdir=Path(tempfile.mkdtemp(prefix="gpu-inference-rig-")),
        )
        try:
            cp.start()
            for n in json.loads(a.nodes.read_text()) if a.nodes else []:
                cp.create_node(
                    n["name"],
                    labels=n.get("labels"),
                    taints=n.get("taints", ()),
                    gpus=int(n.get("gpus", 0)),
                )
        except BaseException:
            cp.stop()
            shutil.rmtree(cp.dir, ignore_errors=True)
            raise
        _state_file().parent.mkdir(parents=True, exist_ok=True)
        _state_file().write_text(json.dumps(cp.state(), indent=2) + "\n")
        print(f"control plane up in {cp.startup_seconds:.1f}s: {cp.server}")
        print(f"export KUBECONFIG={cp.kubeconfig}")
        return 0
    if a.cmd == "down":
        if not _state_file().exists():
            print("no control plane is up", file=sys.stderr)
            return 0
        st = json.loads(_state_file().read_text())
        _kill_groups([(int(pr["pid"]), None) for pr in reversed(st["procs"])])
        shutil.rmtree(st["dir"], ignore_errors=True)
        _state_file().unlink()
        print("control plane stopped")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
