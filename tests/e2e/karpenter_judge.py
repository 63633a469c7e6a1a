#!/usr/bin/env python3
"""Karpenter's own provisioning scheduler as a judge: build our Go harness, feed it, read it.

The harness (``karpenter_judge/``, one Go source directory with two module files) links
``sigs.k8s.io/karpenter`` at the version its cloud provider's release pins, and that provider's
API package for its label registrations; for each pending pod it runs one provisioning round (no
existing nodes) and answers whether Karpenter would create a NodeClaim, from which NodePool, with
which instance types, or Karpenter's own error. The default build (``go.mod``) links
``github.com/aws/karpenter-provider-aws`` v1.15.0 on core v1.15.0 (EKS); built with the tag
``azure`` and ``-modfile=go.azure.mod`` (``provider="azure"``) it links
``github.com/Azure/karpenter-provider-azure`` v1.14.2 on the core that release pins, v1.14.0 (AKS
node auto-provisioning; the proxy serves no later Azure release), and builds VM sizes as that
provider does (``provider_azure.go``). Each module file has its own minimal version selection, so
neither provider raises the other's core.

Pure standard library, like rig.py. Usable as a library (``build``, ``run``, the request
helpers) and as a command::

    python tests/e2e/karpenter_judge.py build     # build into the cache (a no-op when cached)
    python tests/e2e/karpenter_judge.py run < request.json
    python tests/e2e/karpenter_judge.py --provider azure run < request.json

The binary goes to ``${GPU_INFERENCE_RIG_CACHE:-~/.cache/gpu-inference-rig}/
karpenter-judge-<version>-<hash>/``, ``<hash>`` covering every file of the Go module; it is built
from a copy of the sources there (``-mod=readonly``: the clone is never written), modules from the
Go module proxy only (``CGO_ENABLED=0``, the Go toolchain of ``TOOLCHAINS``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
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

SOURCE = Path(__file__).resolve().parent / "karpenter_judge"
AWS_MODULE = "github.com/aws/karpenter-provider-aws"
AZURE_MODULE = "github.com/Azure/karpenter-provider-azure"
PROVIDER_MODULES = {"aws": AWS_MODULE, "azure": AZURE_MODULE}
"""The builds of the harness and the provider module each links: the default one the AWS
provider's API package, `azure` (the build tag) Karpenter on Azure's; a binary links one
provider's label registrations, as a controller does. They share the source directory and a
cache directory (its key covers every file, so a change to either provider's file rebuilds both);
each has its own module file, binary and build record."""
PROVIDERS = tuple(PROVIDER_MODULES)
MODFILES = {"aws": "go.mod", "azure": "go.azure.mod"}
"""Each build's module file (its go.sum beside it: go.sum, go.azure.sum). `go build -modfile`
reads the Azure one; go.mod must be there anyway to mark the module root."""
TOOLCHAINS = {"aws": "go1.27.3", "azure": "local"}
"""The Go toolchain each build runs (GOTOOLCHAIN). aws/karpenter-provider-aws v1.15.0 and
sigs.k8s.io/karpenter v1.15.0 say `go 1.26.9`, newer than the machine's Go 1.26.8, so the AWS
build takes go1.27.3, the toolchain module the Go module proxy serves and this workplace names;
the Azure modules (`go 1.26.6`) build with the Go on PATH."""
CORE_MODULE = "sigs.k8s.io/karpenter"
BUILD_TIMEOUT = 3600
RUN_TIMEOUT = 600


class BuildError(RuntimeError):
    """The harness failed to build; the message names the command, its directory and log."""


class SourceUnavailable(BuildError):
    """Go, or the module proxy with the pinned modules, is not there: a reason to skip."""


class JudgeError(RuntimeError):
    """The harness refused a request (bad input) or failed; the message carries its stderr."""


# ---------------------------------------------------------------------------------------------
# Versions and the cache
# ---------------------------------------------------------------------------------------------


def modfile(source: Path = SOURCE, provider: str = "aws") -> Path:
    return source / MODFILES[_provider(provider)]


def sumfile(source: Path = SOURCE, provider: str = "aws") -> Path:
    return modfile(source, provider).with_suffix(".sum")


def module_versions(source: Path = SOURCE, provider: str = "aws") -> dict[str, str]:
    """The versions `provider`'s module file requires, by module path."""
    text = modfile(source, provider).read_text()
    return dict(re.findall(r"^\s*(?:require\s+)?([\w./-]+)\s+(v\S+)", text, flags=re.M))


def direct_requirements(source: Path = SOURCE, provider: str = "aws") -> dict[str, str]:
    """The module file's requirements not marked `// indirect`: the modules its build's files
    import."""
    text = modfile(source, provider).read_text()
    return {
        m: v
        for m, v, note in re.findall(r"^\s*(?:require\s+)?([\w./-]+)\s+(v\S+)(.*)$", text, re.M)
        if "// indirect" not in note
    }


def _builds_with(path: Path, provider: str) -> bool:
    """Whether `provider`'s build compiles `path`: the only constraints the harness uses are
    `//go:build azure` and `//go:build !azure` (provider_<name>.go); any other is refused."""
    constraint = re.search(r"^//go:build (.+)$", path.read_text(), flags=re.M)
    if constraint is None:
        return True
    expr = constraint.group(1).strip()
    if expr not in ("azure", "!azure"):
        raise ValueError(f"{path.name}: build constraint {expr!r} is neither azure nor !azure")
    return (expr == "azure") == (provider == "azure")


def imported_modules(source: Path = SOURCE, provider: str = "aws") -> dict[str, str]:
    """The modules (with go.mod's versions) that the files of `provider`'s build import: each
    non-standard import path belongs to the longest module path of go.mod that prefixes it. An
    import no module of go.mod provides is refused (the build would fail to resolve it)."""
    pinned = module_versions(source, provider)
    out: dict[str, str] = {}
    for f in sorted(source.glob("*.go")):
        if not _builds_with(f, provider):
            continue
        text = f.read_text()
        blocks = re.findall(r"^import \((.*?)^\)", text, flags=re.M | re.S)
        blocks += re.findall(r"^import (.+)$", text, flags=re.M)
        for path in re.findall(r'"([^"]+)"', "\n".join(blocks)):
            if "." not in path.split("/")[0]:
                continue  # the standard library
            owners = [m for m in pinned if path == m or path.startswith(m + "/")]
            if not owners:
                raise ValueError(f"{f.name}: {path} is in no module {MODFILES[provider]} requires")
            module = max(owners, key=len)
            out[module] = pinned[module]
    return out


def karpenter_version(source: Path = SOURCE) -> str:
    """The Karpenter release the harness is pinned to (the AWS provider's version, no `v`)."""
    return module_versions(source)[AWS_MODULE].removeprefix("v")


def source_hash(source: Path = SOURCE) -> str:
    """A digest of every file of the Go module (names and contents)."""
    h = hashlib.sha256()
    for f in sorted(p for p in source.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(source)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_root() -> Path:
    env = os.environ.get("GPU_INFERENCE_RIG_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "gpu-inference-rig"


def cache_dir(source: Path = SOURCE) -> Path:
    return cache_root() / f"karpenter-judge-{karpenter_version(source)}-{source_hash(source)}"


def _provider(provider: str) -> str:
    if provider not in PROVIDERS:
        raise ValueError(f"provider {provider!r} is not one of {PROVIDERS}")
    return provider


def binary(source: Path = SOURCE, provider: str = "aws") -> Path:
    return cache_dir(source) / (
        "karpenter_judge" if _provider(provider) == "aws" else f"karpenter_judge_{provider}"
    )


def build_record(source: Path = SOURCE, provider: str = "aws") -> Path:
    """Where a build writes what it was: Go, times, size, the provider module it links."""
    return cache_dir(source) / (
        "build.json" if _provider(provider) == "aws" else f"build-{provider}.json"
    )


def build_tags(provider: str = "aws") -> list[str]:
    """The `go` arguments that select `provider`'s files (provider_<name>.go, core_*.go) and its
    module file."""
    if _provider(provider) == "aws":
        return []
    return ["-modfile", MODFILES[provider], "-tags", provider]


def _go_env(provider: str = "aws") -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GOTOOLCHAIN=TOOLCHAINS[_provider(provider)],
        CGO_ENABLED="0",
        GOWORK="off",
        GOFLAGS="-mod=readonly -buildvcs=false",
    )
    return env


# Errors of `go mod download` that mean the proxy (or the network) does not serve a module.
_UNSERVED = re.compile(
    r"403 Forbidden|404 Not Found|410 Gone|not available|dial tcp|no such host|"
    r"connection refused|i/o timeout|TLS handshake|proxyconnect|GOPROXY=off|"
    r"module lookup disabled",
    re.I,
)


def unavailable_reason(provider: str = "aws") -> Optional[str]:
    """Why the harness cannot be had here without trying the proxy (None: try building)."""
    if binary(provider=provider).exists():
        return None
    if shutil.which("go") is None:
        return "karpenter judge: no `go` on PATH (Go >= 1.26 builds the harness)"
    return None


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


def _run_logged(
    cmd: Sequence[str], cwd: Path, log: Path, provider: str = "aws"
) -> subprocess.CompletedProcess[str]:
    with open(log, "a") as f:
        f.write(f"\n$ cd {cwd} && {' '.join(cmd)}\n")
        proc = subprocess.run(
            list(cmd),
            cwd=cwd,
            env=_go_env(provider),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
        f.write(proc.stdout)
    return proc


def build(source: Path = SOURCE, provider: str = "aws") -> Path:
    """The harness binary for `provider` (`PROVIDERS`), built into the cache if it is not there
    yet.

    Raises ``SourceUnavailable`` when Go is missing or the module proxy does not serve a pinned
    module, ``BuildError`` for any other failure."""
    target = binary(source, provider)
    if target.exists():
        return target
    if shutil.which("go") is None:
        raise SourceUnavailable("karpenter judge: no `go` on PATH (Go >= 1.26 builds the harness)")
    root = cache_dir(source)
    with _lock(root):
        if target.exists():
            return target
        log = root / "build.log"
        src = root / "src"
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(source, src)
        t0 = time.monotonic()
        tags = build_tags(provider)
        modfile_args = tags[:2]
        proc = _run_logged(["go", "mod", "download", *modfile_args], src, log, provider)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-15:])
            kind = SourceUnavailable if _UNSERVED.search(proc.stdout) else BuildError
            raise kind(f"karpenter judge: `go mod download` failed in {src} (log {log}):\n{tail}")
        downloaded = time.monotonic() - t0
        tmp = root / f".karpenter_judge.{os.getpid()}"
        proc = _run_logged(
            ["go", "build", "-trimpath", "-o", str(tmp), *tags, "."], src, log, provider
        )
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-25:])
            raise BuildError(
                f"karpenter judge: `go build` failed in {src} (log {log}):\n{tail}\nRerun: cd "
                f"{src} && GOTOOLCHAIN={TOOLCHAINS[provider]} CGO_ENABLED=0 GOWORK=off "
                "GOFLAGS=-mod=readonly "
                f"go build {' '.join(tags)} ."
            )
        os.replace(tmp, target)
        go = subprocess.run(
            ["go", "env", "GOVERSION"],
            cwd=src,
            env=_go_env(provider),
            capture_output=True,
            text=True,
        )
        versions = module_versions(source, provider)
        build_record(source, provider).write_text(
            json.dumps(
                {
                    "provider": provider,
                    "provider_module": PROVIDER_MODULES[provider],
                    "provider_version": versions[PROVIDER_MODULES[provider]],
                    "modfile": MODFILES[provider],
                    "imports": imported_modules(source, provider),
                    "go": go.stdout.strip(),
                    "download_seconds": round(downloaded, 1),
                    "total_seconds": round(time.monotonic() - t0, 1),
                    "binary_bytes": target.stat().st_size,
                    "modules": versions,
                },
                indent=2,
            )
            + "\n"
        )
    return target


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------

OFFERING_CAPACITY_TYPES = ("on-demand", "spot", "reserved")


def quantity(value: Any) -> str:
    """A Kubernetes quantity as a string (JSON numbers through Pulumi come back as floats)."""
    if isinstance(value, bool):
        raise TypeError(f"not a quantity: {value!r}")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str) and value:
        return value
    raise TypeError(f"not a quantity: {value!r}")


def resources(values: Optional[Mapping[str, Any]]) -> dict[str, str]:
    return {str(k): quantity(v) for k, v in (values or {}).items()}


def offering(
    capacity_type: str,
    zone: str,
    *,
    price: float = 0.0,
    available: bool = True,
    reservation_id: Optional[str] = None,
    reservation_capacity: int = 0,
    zone_id: Optional[str] = None,
) -> dict[str, Any]:
    """One offering (capacity type x zone, or a capacity reservation) of an instance type."""
    if capacity_type not in OFFERING_CAPACITY_TYPES:
        raise ValueError(f"capacity type {capacity_type!r} is not one of {OFFERING_CAPACITY_TYPES}")
    if (capacity_type == "reserved") != (reservation_id is not None):
        raise ValueError("a reservation ID goes with, and only with, a reserved offering")
    out: dict[str, Any] = {"capacityType": capacity_type, "zone": zone, "price": float(price)}
    if not available:
        out["available"] = False
    if reservation_id is not None:
        out["reservationID"] = reservation_id
        out["reservationCapacity"] = int(reservation_capacity)
    if zone_id is not None:
        out["zoneID"] = zone_id
    return out


def instance_type(
    name: str,
    *,
    capacity: Mapping[str, Any],
    labels: Mapping[str, str],
    offerings: Sequence[Mapping[str, Any]],
    kube_reserved: Optional[Mapping[str, Any]] = None,
    system_reserved: Optional[Mapping[str, Any]] = None,
    eviction_threshold: Optional[Mapping[str, Any]] = None,
    requirements: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """An instance type as the AWS provider hands it to the scheduler: capacity, the overhead
    (allocatable = capacity - kubeReserved - systemReserved - evictionThreshold), its labels
    (zone and capacity type come from the offerings) and offerings."""
    if not offerings:
        raise ValueError(f"instance type {name}: no offerings")
    overhead = {
        key: resources(part)
        for key, part in (
            ("kubeReserved", kube_reserved),
            ("systemReserved", system_reserved),
            ("evictionThreshold", eviction_threshold),
        )
        if part
    }
    out: dict[str, Any] = {
        "name": name,
        "capacity": resources(capacity),
        "overhead": overhead,
        "labels": {str(k): str(v) for k, v in labels.items()},
        "offerings": [dict(o) for o in offerings],
    }
    if requirements:
        out["requirements"] = [dict(r) for r in requirements]
    return out


def pod(
    name: str,
    *,
    requests: Optional[Mapping[str, Any]] = None,
    limits: Optional[Mapping[str, Any]] = None,
    node_selector: Optional[Mapping[str, str]] = None,
    affinity: Optional[Mapping[str, Any]] = None,
    tolerations: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A pending pod with one container holding exactly these requests and limits."""
    container: dict[str, Any] = {"name": "main", "image": "judge"}
    res = {}
    if requests:
        res["requests"] = resources(requests)
    if limits:
        res["limits"] = resources(limits)
    if res:
        container["resources"] = res
    spec: dict[str, Any] = {"containers": [container]}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    return {"name": name, "spec": spec}


def pod_from_spec(name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A pending pod with a pod spec as a component emits it (nodeSelector, affinity,
    tolerations, containers with resources, ...)."""
    return {"name": name, "spec": _whole_numbers(spec)}


def _whole_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_whole_numbers(v) for v in value]
    return value


def daemon_set(
    name: str, spec: Mapping[str, Any], namespace: str = "kube-system"
) -> dict[str, Any]:
    """An apps/v1 DaemonSet whose pods have this pod spec (what the provisioner lists)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": _whole_numbers(spec)},
        },
    }


def request(
    *,
    instance_types: Sequence[Mapping[str, Any]],
    node_pools: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    daemon_sets: Sequence[Mapping[str, Any]] = (),
    per_node_pool: bool = False,
    node_class_instance_types: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None,
    options: Sequence[str] = (),
    name: str = "",
) -> dict[str, Any]:
    """One case: every pod judged alone against all NodePools (or against each one alone, with
    ``per_node_pool``). NodePools are karpenter.sh/v1 objects (``{metadata, spec}``);
    ``daemon_sets`` apps/v1 DaemonSets (``daemon_set``) whose pods Karpenter counts on every node
    they would run on."""
    for kind, items in (("instance type", instance_types), ("pod", pods)):
        names = [i["name"] for i in items]
        if len(set(names)) != len(names):
            raise ValueError(f"repeated {kind} names: {names}")
    pool_names = [p.get("metadata", {}).get("name") for p in node_pools]
    if None in pool_names or len(set(pool_names)) != len(pool_names):
        raise ValueError(f"every NodePool needs a distinct metadata.name: {pool_names}")
    out: dict[str, Any] = {
        "instanceTypes": list(instance_types),
        "nodePools": [_whole_numbers(p) for p in node_pools],
        "pods": list(pods),
    }
    if name:
        out["name"] = name
    if per_node_pool:
        out["perNodePool"] = True
    if node_class_instance_types:
        out["nodeClassInstanceTypes"] = {k: list(v) for k, v in node_class_instance_types.items()}
    if options:
        out["options"] = list(options)
    if daemon_sets:
        names = [d["metadata"]["name"] for d in daemon_sets]
        if len(set(names)) != len(names):
            raise ValueError(f"repeated DaemonSet names: {names}")
        out["daemonSets"] = list(daemon_sets)
    return out


# ---------------------------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Karpenter's decision for one pod (against all pools, or ``only_node_pool``)."""

    pod: str
    scheduled: bool
    node_pool: str
    instance_types: tuple[str, ...]
    capacity_types: tuple[str, ...]
    error: str
    only_node_pool: str = ""


@dataclass(frozen=True)
class PoolStatus:
    name: str
    considered: bool
    reason: str
    instance_types: tuple[str, ...]


@dataclass(frozen=True)
class CaseAnswer:
    name: str
    node_pools: tuple[PoolStatus, ...]
    verdicts: tuple[Verdict, ...]

    def verdict(self, pod: str, only_node_pool: str = "") -> Verdict:
        found = [v for v in self.verdicts if v.pod == pod and v.only_node_pool == only_node_pool]
        if len(found) != 1:
            raise KeyError(f"{len(found)} verdicts for pod {pod!r} ({only_node_pool!r})")
        return found[0]


@dataclass(frozen=True)
class Answer:
    modules: Mapping[str, str]
    cases: tuple[CaseAnswer, ...]


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj or not isinstance(obj[key], kind):
        raise ValueError(f"judge answer: {where}: {key!r} missing or not {kind.__name__}")
    return obj[key]


def _strings(obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    values = _field(obj, key, list, where)
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"judge answer: {where}: {key!r} holds a non-string")
    return tuple(values)


def _case(obj: Mapping[str, Any]) -> CaseAnswer:
    name = obj.get("name", "")
    pools = tuple(
        PoolStatus(
            name=_field(p, "name", str, "nodePools"),
            considered=_field(p, "considered", bool, "nodePools"),
            reason=p.get("reason", ""),
            instance_types=_strings(p, "instanceTypes", "nodePools"),
        )
        for p in _field(obj, "nodePools", list, f"case {name!r}")
    )
    verdicts = []
    for r in _field(obj, "results", list, f"case {name!r}"):
        where = f"result {r.get('pod')!r}"
        v = Verdict(
            pod=_field(r, "pod", str, where),
            scheduled=_field(r, "scheduled", bool, where),
            node_pool=r.get("nodePool", ""),
            instance_types=_strings(r, "instanceTypes", where),
            capacity_types=_strings(r, "capacityTypes", where),
            error=r.get("error", ""),
            only_node_pool=r.get("onlyNodePool", ""),
        )
        if v.scheduled != bool(v.node_pool and v.instance_types) or v.scheduled == bool(v.error):
            raise ValueError(f"judge answer: {where}: inconsistent verdict {r}")
        verdicts.append(v)
    return CaseAnswer(name=name, node_pools=pools, verdicts=tuple(verdicts))


def parse_answer(text: str) -> Answer:
    """The harness's stdout as dataclasses; a malformed answer raises ValueError."""
    obj = json.loads(text)
    if not isinstance(obj, dict):
        raise ValueError("judge answer: not a JSON object")
    modules = _field(obj, "modules", dict, "answer")
    if "cases" in obj:
        cases = tuple(_case(c) for c in _field(obj, "cases", list, "answer"))
    else:
        cases = (_case(obj),)
    return Answer(modules=modules, cases=cases)


def check_modules(answer: Answer, provider: str = "aws", source: Path = SOURCE) -> Answer:
    """The answer, if it comes from `provider`'s build of this source: the modules the binary
    names (runtime/debug build info) are its module file's versions of Karpenter and of that
    provider's module alone. A binary of the other build, or of another module file, is refused:
    its verdicts would be another Karpenter's."""
    pinned = module_versions(source, provider)
    want = PROVIDER_MODULES[_provider(provider)]
    got = {m: answer.modules.get(m) for m in (CORE_MODULE, *PROVIDER_MODULES.values())}
    expected = {m: pinned[m] if m in (CORE_MODULE, want) else None for m in got}
    if got != expected:
        raise JudgeError(
            f"karpenter judge ({provider}): the binary links {got}, not this source's {expected}"
        )
    return answer


def run(req: Mapping[str, Any], *, verbose: bool = False, provider: str = "aws") -> Answer:
    """Build the harness if needed, hand it ``req`` (one case, or ``{"cases": [...]}``); with
    ``provider="azure"``, the build that links Karpenter on Azure. The answer must name the
    modules of that build (``check_modules``)."""
    exe = build(provider=provider)
    cmd = [str(exe), *(["-v"] if verbose else [])]
    proc = subprocess.run(
        cmd, input=json.dumps(req), capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    if proc.returncode != 0:
        raise JudgeError(f"karpenter judge exited {proc.returncode}: {proc.stderr.strip()}")
    if verbose and proc.stderr:
        sys.stderr.write(proc.stderr)
    return check_modules(parse_answer(proc.stdout), provider)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--provider", choices=PROVIDERS, default="aws")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="build the harness into the cache")
    r = sub.add_parser("run", help="run a request read from stdin; print the raw answer")
    r.add_argument("-v", action="store_true", help="Karpenter's logs to stderr")
    args = ap.parse_args(argv)
    try:
        exe = build(provider=args.provider)
    except BuildError as e:
        print(e, file=sys.stderr)
        return 2
    if args.cmd == "build":
        record = build_record(provider=args.provider)
        print(exe)
        print(record.read_text() if record.exists() else "")
        return 0
    with tempfile.TemporaryFile("w+") as f:
        f.write(sys.stdin.read())
        f.seek(0)
        proc = subprocess.run([str(exe), *(["-v"] if args.v else [])], stdin=f)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
