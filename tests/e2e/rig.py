#!/usr/bin/env python3
"""The e2e rig: a real Kubernetes control plane built from Go modules, and the Pulumi a user has.

Pure standard library (PyYAML is imported lazily, only to apply YAML files). Usable as a library
(``ControlPlane``, ``Pulumi``, ``find_pulumi``, ``build``) and as a command::

    python tests/e2e/rig.py build              # build what is missing (a no-op when all is cached)
    python tests/e2e/rig.py build --kubernetes-version 1.36.3   # one Kubernetes release only
    python tests/e2e/rig.py status             # what is cached, its build times, which Pulumi
    python tests/e2e/rig.py up --nodes nodes.json [--no-ert] [--no-controller-manager]
                              [--kubernetes-version 1.36.3]    # default: the newest
    python tests/e2e/rig.py down

Only modules the Go module proxy serves are built: etcd, kwok, and kube-apiserver,
kube-scheduler and kube-controller-manager (once per release of ``KUBERNETES_VERSIONS``), each
from a wrapper module of its own
(``GOTOOLCHAIN=local CGO_ENABLED=0``), so minimal version selection never mixes their
dependencies. Each component is cached in a directory of its own, keyed by its version and its
recipe: ``${GPU_INFERENCE_RIG_CACHE:-~/.cache/gpu-inference-rig}/<name>-<version>-r<recipe>/``
holds ``bin/``, the build's ``work/`` and ``logs/``, and ``build.json`` (how long that build took),
so changing one version rebuilds that component only.

Pulumi is never built. The real-engine tests run the ``pulumi`` CLI installed the way a user
installs it (on PATH or in ``~/.pulumi/bin``, its language hosts beside it) with the kubernetes
resource plugin from its plugin cache (``find_pulumi``); where something is missing they skip,
naming it and the command that installs it.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
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
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # imported where used: a no-op `build` stays fast
    import ssl

# --------------------------------------------------------------------------------------------
# Versions. Each one keys its own component's cache directory.
# --------------------------------------------------------------------------------------------

KUBERNETES_VERSIONS = ("1.37.2", "1.36.3")
"""The Kubernetes releases the rig builds and runs, newest first: the clouds' channels offer both,
and a verdict the check gives is held against the scheduler of each (the differentials run the
example stacks on both and alternate their generated cases between them). Each keys its own cache
directory (``kubernetes-<version>-r<recipe>/``)."""
KUBERNETES_VERSION = KUBERNETES_VERSIONS[0]
"""The default: the newest."""
ETCD_VERSION = "3.6.16"
KWOK_VERSION = "0.8.0"

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
GPU = "nvidia.com/gpu"


def cache_root() -> Path:
    env = os.environ.get("GPU_INFERENCE_RIG_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "gpu-inference-rig"


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------


class BuildError(RuntimeError):
    """A build step failed. The message names the step, the command, its directory and log."""


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
                for k in ("GOTOOLCHAIN", "CGO_ENABLED", "GOWORK", "GOFLAGS")
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


def pick_kubernetes_version(version: Optional[str] = None) -> str:
    """``version`` if the rig builds it (None: the default, the newest), else a ValueError naming
    the versions it builds."""
    if version is None:
        return KUBERNETES_VERSION
    v = str(version).removeprefix("v")
    if v not in KUBERNETES_VERSIONS:
        raise ValueError(
            f"Kubernetes {version!r} is not one the rig builds ({', '.join(KUBERNETES_VERSIONS)})"
        )
    return v


def run_versions() -> tuple[str, ...]:
    """The releases the e2e tier runs on: all of KUBERNETES_VERSIONS, or those
    ``GPU_INFERENCE_KUBERNETES_VERSIONS`` lists (comma-separated; for a quick run on one)."""
    env = os.environ.get("GPU_INFERENCE_KUBERNETES_VERSIONS", "").strip()
    if not env:
        return KUBERNETES_VERSIONS
    picked = {pick_kubernetes_version(v.strip()) for v in env.split(",") if v.strip()}
    return tuple(v for v in KUBERNETES_VERSIONS if v in picked)


def _kube_ldflags(version: str) -> str:
    major, minor, _ = version.split(".")
    values = {
        "gitVersion": f"v{version}",
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
KUBERNETES = "kubernetes"  # the component built once per version of KUBERNETES_VERSIONS


def _build_kubernetes(b: Builder, *, version: str) -> None:
    d = b.go_wrapper("kubernetes", "rigwrap/kubernetes")
    staging = "0." + version.split(".", 1)[1]
    edits = [f"-replace=k8s.io/{m}=k8s.io/{m}@v{staging}" for m in KUBERNETES_STAGING]
    b.run(["go", "mod", "edit", *edits], d)
    b.run(
        [
            "go",
            "get",
            "-tool",
            *(f"k8s.io/kubernetes/cmd/{c}@v{version}" for c in KUBE_BINARIES),
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
                f"-ldflags={_kube_ldflags(version)}",
                "-o",
                str(out),
                f"k8s.io/kubernetes/cmd/{c}",
            ],
            d,
        )
        b.install(out, c)
        b.timings[c] = time.monotonic() - t0
        _log(f"  {c}: {b.timings[c]:.0f}s")


@dataclass(frozen=True)
class Component:
    """One cached build: its own wrapper module, its binaries, its own cache directory."""

    name: str
    version: str
    binaries: tuple[str, ...]
    run: Callable[[Builder], None]
    group: str
    recipe: int = 1  # bump when this component's recipe changes its binaries: it is rebuilt

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}-r{self.recipe}"

    @property
    def label(self) -> str:
        """The component at its version (``kubernetes-1.37.2``): one per build record."""
        return f"{self.name}-{self.version}"

    @property
    def dir(self) -> Path:
        return cache_root() / self.key


COMPONENTS: tuple[Component, ...] = (
    Component("etcd", ETCD_VERSION, ("etcd",), _build_etcd, "control-plane"),
    Component("kwok", KWOK_VERSION, ("kwok", KWOK_CONFIG), _build_kwok, "control-plane"),
    *(
        Component(
            KUBERNETES,
            v,
            KUBE_BINARIES,
            functools.partial(_build_kubernetes, version=v),
            "control-plane",
        )
        for v in KUBERNETES_VERSIONS
    ),
    # The place for the next Go-module component, e.g. the Karpenter judge: its own wrapper
    # module (sigs.k8s.io/karpenter, never in the Kubernetes one's go.mod), its own cache
    # directory `karpenter-<version>-r1/` and build record, its own group so that
    # `rig.py build --only control-plane` does not build it:
    #   Component("karpenter", KARPENTER_VERSION, ("<its binary>",), _build_karpenter, "judge"),
)
GROUPS = tuple(dict.fromkeys(c.group for c in COMPONENTS))


def component_of(binary: str, kubernetes_version: Optional[str] = None) -> Component:
    """The component that builds ``binary``; a Kubernetes binary at ``kubernetes_version`` (None:
    the default)."""
    version = pick_kubernetes_version(kubernetes_version)
    for c in COMPONENTS:
        if binary in c.binaries and (c.name != KUBERNETES or c.version == version):
            return c
    raise KeyError(f"no rig component builds {binary!r}")


def binary_path(binary: str, kubernetes_version: Optional[str] = None) -> Path:
    """Where the cache holds ``binary`` (one of a component's binaries; a Kubernetes one of
    ``kubernetes_version``, None: the default)."""
    return component_of(binary, kubernetes_version).dir / "bin" / binary


def _selected(
    c: Component, names: Optional[Iterable[str]], versions: Optional[Iterable[str]]
) -> bool:
    """``c`` is among ``names`` (a component's name or label; None: all) and, for Kubernetes,
    its version among ``versions`` (None: all of KUBERNETES_VERSIONS)."""
    wanted = set(names) if names else None
    if wanted is not None and c.name not in wanted and c.label not in wanted:
        return False
    if c.name == KUBERNETES and versions is not None:
        return c.version in {pick_kubernetes_version(v) for v in versions}
    return True


def missing(
    groups: Iterable[str] = ("control-plane",),
    names: Optional[Iterable[str]] = None,
    kubernetes_versions: Optional[Iterable[str]] = None,
) -> list[Component]:
    groups = tuple(groups)
    return [
        c
        for c in COMPONENTS
        if c.group in groups
        and _selected(c, names, kubernetes_versions)
        and not all((c.dir / "bin" / x).exists() for x in c.binaries)
    ]


# The one-directory layout this cache had before (one key naming every version, the Pulumi CLI's
# and provider's included, e.g. k8s1.36.3-etcd3.6.16-kwok0.8.0-pulumi3.259.0-pk8s4.32.0-r1). Its
# recipe r1 built etcd, kwok and Kubernetes exactly as the recipes r1 here do, so a component of
# the same version is taken from there (hard links; a copy across file systems) instead of being
# rebuilt. The old directory is left as it is, for checkouts that still use it.
_LEGACY_KEY = re.compile(
    r"^k8s(?P<kubernetes>[0-9.]+)-etcd(?P<etcd>[0-9.]+)-kwok(?P<kwok>[0-9.]+)(?:-.+)?"
    r"-r(?P<recipe>[0-9]+)$"
)
LEGACY_RECIPE = 1


def legacy_source(c: Component) -> Optional[Path]:
    """A directory of the old layout holding ``c``'s binaries at ``c``'s version and recipe."""
    root = cache_root()
    if c.recipe != LEGACY_RECIPE or not root.is_dir():
        return None
    for d in sorted(root.iterdir()):
        m = _LEGACY_KEY.match(d.name)
        if m is None or m.groupdict().get(c.name) != c.version or int(m["recipe"]) != LEGACY_RECIPE:
            continue
        if all((d / "bin" / x).is_file() for x in c.binaries):
            return d
    return None


def _adopt_legacy(c: Component) -> Optional[Path]:
    src = legacy_source(c)
    if src is None:
        return None
    dest = c.dir / "bin"
    dest.mkdir(parents=True, exist_ok=True)
    for x in c.binaries:
        tmp = dest / f".{x}.adopting"
        tmp.unlink(missing_ok=True)
        try:
            os.link(src / "bin" / x, tmp)
        except OSError:
            shutil.copy2(src / "bin" / x, tmp)
        os.replace(tmp, dest / x)
    # What the old manifest knew of this component's build (only its last build's steps).
    old: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        old = json.loads((src / "manifest.json").read_text())
    steps = (old.get("last_build") or {}).get("steps") or {}
    sub = {x: steps[x] for x in c.binaries if x in steps and x != c.name}
    _write_record(
        c,
        {
            "seconds": steps.get(c.name),
            **({"steps": sub} if sub else {}),
            "go": old.get("go"),
            "adopted_from": str(src),
        },
    )
    return src


def _write_record(c: Component, fields: dict[str, Any]) -> None:
    record = {
        "component": c.name,
        "version": c.version,
        "recipe": c.recipe,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **fields,
    }
    c.dir.mkdir(parents=True, exist_ok=True)
    tmp = c.dir / "build.json.tmp"
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, c.dir / "build.json")


def build_record(c: Component) -> Optional[dict[str, Any]]:
    """``c``'s build record (how long its build took, with which Go), kept until it is rebuilt."""
    p = c.dir / "build.json"
    try:
        return dict(json.loads(p.read_text()))
    except (OSError, ValueError):
        return None


def manifest() -> dict[str, Any]:
    """Every component's build record, and the sum of their build times."""
    records = {c.label: build_record(c) for c in COMPONENTS}
    seconds = [r["seconds"] for r in records.values() if r and r.get("seconds") is not None]
    return {"cache": str(cache_root()), "components": records, "build_seconds": sum(seconds)}


@dataclass
class BuildReport:
    built: dict[str, float]
    peak_rss: int
    total: float
    adopted: dict[str, str] = field(default_factory=dict)


def build(
    groups: Iterable[str] = ("control-plane",),
    *,
    names: Optional[Iterable[str]] = None,
    kubernetes_versions: Optional[Iterable[str]] = None,
) -> BuildReport:
    """Build every missing component of ``groups`` (Kubernetes at ``kubernetes_versions``, None:
    all of KUBERNETES_VERSIONS) into the cache. A no-op when all are there. Reports are keyed by
    the components' labels (``kubernetes-1.36.3``)."""
    todo = missing(groups, names, kubernetes_versions)
    report = BuildReport({}, 0, 0.0)
    if not todo:
        return report
    t_all = time.monotonic()
    for c in todo:
        with _lock(c):
            if not missing((c.group,), (c.label,)):
                _log(f"{c.label}: built meanwhile by another process")
                continue
            src = _adopt_legacy(c)
            if src is not None:
                report.adopted[c.label] = str(src)
                _log(f"{c.label}: taken from {src} (same version and recipe)")
                continue
            if shutil.which("go") is None:
                raise BuildError("build: no `go` on PATH (Go >= 1.26 is needed to build the rig)")
            report.built[c.label] = _build_one(c, report)
    report.total = time.monotonic() - t_all
    if report.built:
        _log(f"build done in {report.total:.0f}s, peak RSS {report.peak_rss / 2**30:.2f} GiB")
    return report


@contextlib.contextmanager
def _lock(c: Component) -> Iterator[None]:
    """One builder per component at a time (pytest runs and the CLI may overlap)."""
    import fcntl

    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{c.key}.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log(f"{c.label}: another rig build is building it: waiting for it")
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _go_version() -> str:
    try:
        go = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True)
    except OSError:
        return ""
    return go.stdout.strip()


def _build_one(c: Component, report: BuildReport) -> float:
    b = Builder(c.dir, step=c.name)
    _log(f"{c.label}: building {', '.join(c.binaries)} into {b.root} ...")
    t0 = time.monotonic()
    with _RssSampler() as sampler:
        c.run(b)
    seconds = time.monotonic() - t0
    report.peak_rss = max(report.peak_rss, sampler.peak)
    _write_record(
        c,
        {
            "seconds": round(seconds, 1),
            **({"steps": {k: round(v, 1) for k, v in b.timings.items()}} if b.timings else {}),
            "go": _go_version(),
            "peak_rss_bytes": sampler.peak,
        },
    )
    _log(f"{c.label}: done in {seconds:.0f}s (peak RSS {sampler.peak / 2**30:.1f} GiB)")
    return seconds


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
        kubernetes_version: Optional[str] = None,
    ) -> None:
        # The Kubernetes release whose binaries run (one of KUBERNETES_VERSIONS; None: the newest).
        self.kubernetes_version = pick_kubernetes_version(kubernetes_version)
        self.ert = extended_resource_toleration
        self.with_cm = controller_manager
        # All binaries from one directory, or (None) each from its component's cache directory.
        self.bin = Path(bin_path) if bin_path else None
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

    def _file(self, name: str) -> Path:
        return self.bin / name if self.bin else binary_path(name, self.kubernetes_version)

    def _spawn(self, name: str, args: Sequence[str]) -> Proc:
        exe = self._file(args[0])
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
        served = self.get("/version").get("gitVersion")
        if served != f"v{self.kubernetes_version}":
            raise RuntimeError(
                f"kube-apiserver says it is {served}, not v{self.kubernetes_version}: "
                f"{self._file('kube-apiserver')} is not the build the rig asked for"
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
                f"--config={self._file(KWOK_CONFIG)}",
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
            "kubernetes_version": self.kubernetes_version,
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
# The Pulumi a user installed, run offline
# --------------------------------------------------------------------------------------------

GET_PULUMI = "curl -fsSL https://get.pulumi.com | sh"
# How the CLI finds plugins, cited below as plugins.go: pulumi/pulumi
# sdk/go/common/workspace/plugins.go, read at commit 001ffec8f0332df67ea4069234291c016c0eaa73 of
# the master branch (which release tag holds that commit was not verified).


class PulumiMissing(RuntimeError):
    """Part of the installed Pulumi the real-engine tests need is missing. The message names each
    missing part and the command that installs it."""


@dataclass(frozen=True)
class PulumiInstall:
    cli: Path  # the `pulumi` found, on PATH or in ~/.pulumi/bin
    version: str  # what `pulumi version` prints, e.g. v3.272.0
    plugins: Path  # the plugin cache holding the kubernetes resource plugin
    kubernetes: str  # that plugin's version (`kubernetes_plugin_for` the installed SDK)


def pulumi_home() -> Path:
    """``$PULUMI_HOME``, else ``~/.pulumi``: its ``plugins/`` is the CLI's plugin cache."""
    env = os.environ.get("PULUMI_HOME")
    return Path(env).expanduser() if env else Path.home() / ".pulumi"


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def find_cli() -> Optional[Path]:
    """``pulumi`` on PATH, else where Pulumi's installer puts it (``~/.pulumi/bin``)."""
    on_path = shutil.which("pulumi")
    if on_path:
        return Path(on_path)
    installed = Path.home() / ".pulumi" / "bin" / "pulumi"
    return installed if _executable(installed) else None


def plugin_dir(plugins: Path, kind: str, name: str, version: str) -> Optional[Path]:
    """The cached plugin's directory when it is installed whole: ``<kind>-<name>-v<version>/``
    holding ``pulumi-<kind>-<name>``, without the ``.partial`` marker an unfinished install leaves
    beside it (plugins.go: getPlugins, HasPlugin)."""
    d = plugins / f"{kind}-{name}-v{version}"
    if Path(f"{d}.partial").exists() or not _executable(d / f"pulumi-{kind}-{name}"):
        return None
    return d


def find_pulumi(languages: Sequence[str] = ("python",)) -> PulumiInstall:
    """The installed Pulumi, with the language hosts of ``languages`` beside the CLI (where the CLI
    looks for them: plugins.go, IsPluginBundled and
    getPluginInfoAndPath) and the kubernetes resource plugin at the pulumi_kubernetes SDK's
    version in the plugin cache (the SDK asks for exactly its own version, and the CLI selects a
    cached plugin by that exact range: SelectCompatiblePlugin). Raises ``PulumiMissing`` naming
    everything missing at once."""
    problems: list[str] = []
    cli = find_cli()
    if cli is None:
        problems.append(
            f"no `pulumi` on PATH or in {Path.home() / '.pulumi' / 'bin'}: "
            f"install it with `{GET_PULUMI}`"
        )
    else:
        beside = cli.resolve().parent
        for lang in languages:
            if not _executable(beside / f"pulumi-language-{lang}"):
                problems.append(
                    f"no pulumi-language-{lang} beside {cli.resolve()} (where the CLI looks for "
                    f"its language hosts): reinstall Pulumi with `{GET_PULUMI}`, which installs "
                    "them together"
                )
    if "nodejs" in languages:
        for tool in ("node", "npm"):
            if shutil.which(tool) is None:
                problems.append(
                    f"no `{tool}` on PATH: the TypeScript program needs Node.js and npm"
                )
    plugins = pulumi_home() / "plugins"
    try:
        sdk = metadata.version("pulumi_kubernetes")
    except metadata.PackageNotFoundError:
        sdk = ""
        problems.append("the pulumi_kubernetes SDK is not installed: `pip install -e .`")
    plugin = kubernetes_plugin_for(sdk) if sdk else ""
    if plugin and plugin_dir(plugins, "resource", "kubernetes", plugin) is None:
        problems.append(
            f"no kubernetes resource plugin v{plugin} in {plugins} (the installed pulumi_kubernetes "
            f"SDK {sdk} runs exactly the plugin v{plugin}): install it with "
            f"`pulumi plugin install resource kubernetes v{plugin}`"
        )
    if problems or cli is None:
        raise PulumiMissing("; ".join(problems))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env["PULUMI_SKIP_UPDATE_CHECK"] = "true"
    proc = subprocess.run(
        [str(cli), "version"], capture_output=True, text=True, timeout=120, env=env
    )
    if proc.returncode:
        raise PulumiMissing(
            f"`{cli} version` exited {proc.returncode}: {proc.stderr.strip()[-500:]}; "
            f"reinstall Pulumi with `{GET_PULUMI}`"
        )
    return PulumiInstall(cli, proc.stdout.strip(), plugins, plugin)


def kubernetes_plugin_for(sdk: str) -> str:
    """The kubernetes resource plugin version the pulumi_kubernetes SDK `sdk` runs: its own. Every
    resource of the SDK asks the engine for the plugin of exactly its version
    (pulumi_kubernetes/_utilities.py `get_resource_opts_defaults`: `version=get_version()`), and
    the engine takes a cached plugin only at that version (plugins.go SelectCompatiblePlugin).
    The one place the e2e tier states which plugin goes with which SDK; `pip install -e .` within
    pyproject's range gets SDK 4.34.2 today, hence plugin v4.34.2."""
    return sdk


_PLUGIN_DIR = re.compile(r"^[a-z]+-[A-Za-z0-9][A-Za-z0-9._-]*-v\S+$")


def link_plugins(installed: Path, home_plugins: Path) -> list[str]:
    """Make every whole plugin of the cache ``installed`` a plugin of ``home_plugins``: a real
    directory of the same name whose entries link to the installed ones (the CLI skips a plugin
    cache entry that is not a directory, and a symlink is not one to it: plugins.go tryPlugin)."""
    linked = []
    home_plugins.mkdir(parents=True, exist_ok=True)
    for d in sorted(installed.iterdir()) if installed.is_dir() else ():
        if not d.is_dir() or not _PLUGIN_DIR.match(d.name) or Path(f"{d}.partial").exists():
            continue
        dest = home_plugins / d.name
        if not dest.exists():
            tmp = home_plugins / f"{d.name}.linking"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            for entry in d.iterdir():
                (tmp / entry.name).symlink_to(entry)
            os.replace(tmp, dest)
        linked.append(d.name)
    return linked


class Pulumi:
    """Runs the installed ``pulumi`` offline: a file backend and a private PULUMI_HOME under
    ``workdir`` (the installed plugins linked into it; the user's own home, its workspace
    settings and credentials, is never written), no update check, no plugin downloads, the CLI's
    directory (its language hosts) first on PATH."""

    def __init__(
        self,
        workdir: Path,
        *,
        kubeconfig: Optional[Path] = None,
        install: Optional[PulumiInstall] = None,
    ) -> None:
        self.install = install or find_pulumi()
        self.workdir = Path(workdir)
        self.home = self.workdir / "pulumi-home"
        self.backend = self.workdir / "backend"
        self.home.mkdir(parents=True, exist_ok=True)
        self.backend.mkdir(parents=True, exist_ok=True)
        link_plugins(self.install.plugins, self.home / "plugins")
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
            PATH=f"{self.install.cli.resolve().parent}{os.pathsep}{env.get('PATH', '')}",
            NO_COLOR="1",
        )
        if kubeconfig:
            env["KUBECONFIG"] = str(kubeconfig)
        self.env = env

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
            [str(self.install.cli), *args, "--non-interactive"],
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

# The real-engine test tiers and the language hosts each needs.
PULUMI_TIERS = {"Pulumi half": ("python",), "TypeScript": ("python", "nodejs")}


def _state_file() -> Path:
    return cache_root() / "control-plane.json"


def status() -> dict[str, Any]:
    out: dict[str, Any] = {"cache": str(cache_root()), "components": {}, "missing": []}
    for c in COMPONENTS:
        b = c.dir / "bin"
        entry: dict[str, Any] = {
            "dir": str(c.dir),
            "present": {x: (b / x).stat().st_size for x in c.binaries if (b / x).exists()},
            "build": build_record(c),
        }
        lacking = [x for x in c.binaries if not (b / x).exists()]
        if lacking:
            entry["missing"] = lacking
            src = legacy_source(c)
            if src is not None:
                entry["reused_by_build_from"] = str(src)
            out["missing"] += [f"{c.label}/{x}" for x in lacking]
        out["components"][c.label] = entry
    out["build_seconds"] = manifest()["build_seconds"]
    pulumi: dict[str, Any] = {}
    for tier, languages in PULUMI_TIERS.items():
        try:
            inst = find_pulumi(languages)
        except PulumiMissing as e:
            pulumi[tier] = {"skipped": str(e)}
        else:
            pulumi[tier] = {
                "cli": str(inst.cli),
                "version": inst.version,
                "kubernetes plugin": f"v{inst.kubernetes} in {inst.plugins}",
            }
    out["pulumi"] = pulumi
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="rig.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    bp = sub.add_parser("build", help="build what is missing into the cache")
    bp.add_argument("--only", choices=GROUPS, action="append", help="a group of components")
    bp.add_argument(
        "--component",
        choices=list(
            dict.fromkeys([*(c.name for c in COMPONENTS), *(c.label for c in COMPONENTS)])
        ),
        action="append",
        help="a component (every version of it) or a component at a version (kubernetes-1.36.3)",
    )
    bp.add_argument(
        "--kubernetes-version",
        choices=KUBERNETES_VERSIONS,
        action="append",
        help="build Kubernetes at this version only (repeatable; default: all of them)",
    )
    sub.add_parser("status", help="what is cached and what is missing; which Pulumi was found")
    up = sub.add_parser("up", help="start a control plane and leave it running")
    up.add_argument(
        "--kubernetes-version",
        choices=KUBERNETES_VERSIONS,
        default=KUBERNETES_VERSION,
        help=f"the Kubernetes release to run (default {KUBERNETES_VERSION}, the newest)",
    )
    up.add_argument("--nodes", type=Path, help="JSON list of {name, labels, taints, gpus}")
    up.add_argument("--no-ert", action="store_true", help="ExtendedResourceToleration off")
    up.add_argument("--no-controller-manager", action="store_true")
    sub.add_parser("down", help="stop the control plane `up` started")
    a = ap.parse_args(argv)

    if a.cmd == "build":
        t0 = time.monotonic()
        try:
            rep = build(
                a.only or GROUPS, names=a.component, kubernetes_versions=a.kubernetes_version
            )
        except BuildError as e:
            print(f"rig build FAILED: {e}", file=sys.stderr)
            return 1
        if not rep.built and not rep.adopted:
            print(f"rig: everything cached in {cache_root()} ({time.monotonic() - t0:.3f}s)")
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
            kubernetes_version=a.kubernetes_version,
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
        print(
            f"control plane (Kubernetes {cp.kubernetes_version}) up in "
            f"{cp.startup_seconds:.1f}s: {cp.server}"
        )
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
