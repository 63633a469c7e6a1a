"""Helpers for e2e tests that deploy gpu-inference stacks with the real Pulumi CLI on the rig.

A stack project here is a throwaway directory holding `Pulumi.yaml` (runtime python in this
interpreter's virtualenv, where gpu-inference is installed), the repository's own `__main__.py`
and `stacks/Pulumi.<stack>.yaml`, so the same stack program runs under the real engine and under
the offline preview (`gpu-inference preview`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Optional

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CRDS = SHARED / "crds"
CHARTS = Path(__file__).resolve().parent / "charts"
NS = "gpu-inference"


def require_shared() -> None:
    """Skip, saying why, when the upstream CRDs the e2e stacks are validated against are absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the e2e stacks need the upstream CRDs in ../shared/crds")
    if not any(CRDS.glob("*.yaml")):
        pytest.skip(f"{CRDS} holds no CRDs: the e2e stacks need the upstream CRDs installed first")


def crd_files() -> list[Path]:
    return sorted(CRDS.glob("*.yaml"))


def write_project(directory: Path, stack: str, config: Mapping[str, Any]) -> Path:
    """A project running the repository's stack program with `config` as stack `stack`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Pulumi.yaml").write_text(
        yaml.safe_dump(
            {
                "name": NS,
                "runtime": {
                    "name": "python",
                    "options": {"toolchain": "pip", "virtualenv": sys.prefix},
                },
                "stackConfigDir": "stacks",
            },
            sort_keys=False,
        )
    )
    shutil.copyfile(REPO / "__main__.py", directory / "__main__.py")
    write_stack_config(directory, stack, config)
    return directory


def write_stack_config(directory: Path, stack: str, config: Mapping[str, Any]) -> None:
    stacks = directory / "stacks"
    stacks.mkdir(exist_ok=True)
    body = {"config": {f"{NS}:{k}" if ":" not in k else k: v for k, v in config.items()}}
    (stacks / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(body, sort_keys=False))


def policy_pack(directory: Path) -> Path:
    """A copy of the repository's policy pack whose runtime is this interpreter's virtualenv
    (pulumi-policy and gpu-inference are installed there), instead of `policy/venv`."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("__main__.py", "gpu_inference_policies.py"):
        shutil.copyfile(REPO / "policy" / name, directory / name)
    doc = yaml.safe_load((REPO / "policy" / "PulumiPolicy.yaml").read_text())
    doc["runtime"]["options"]["virtualenv"] = sys.prefix
    (directory / "PulumiPolicy.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return directory


def offline_preview(project: Path, stack: str, out: Path) -> list[dict[str, Any]]:
    """`gpu-inference preview STACK` of the project: the documents of its manifests.yaml."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "components",
            "preview",
            stack,
            "--project-dir",
            str(project),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=300,
    )
    assert proc.returncode == 0, f"offline preview failed:\n{proc.stdout}\n{proc.stderr}"
    return [d for d in yaml.safe_load_all((out / "manifests.yaml").read_text()) if d]


def of_kind(docs: Iterable[Mapping[str, Any]], *kinds: str) -> list[Mapping[str, Any]]:
    return [d for d in docs if d.get("kind") in kinds]


def api_path(doc: Mapping[str, Any], plural: str) -> str:
    """The REST path of a namespaced custom resource (or a cluster-scoped core object)."""
    api = doc["apiVersion"]
    meta = doc["metadata"]
    prefix = f"/apis/{api}" if "/" in api else f"/api/{api}"
    ns = meta.get("namespace")
    where = f"/namespaces/{ns}" if ns else ""
    return f"{prefix}{where}/{plural}/{meta['name']}"


PLURALS = {
    "InferenceService": "inferenceservices",
    "Server": "servers",
    "ServerConfig": "serverconfigs",
    "Model": "models",
    "Node": "nodes",
    "ConfigMap": "configmaps",
    "Namespace": "namespaces",
    "ServiceAccount": "serviceaccounts",
}


def not_in(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where `expected` is not found in `actual`: every key of a mapping with an equal value
    (extra keys in `actual` are fine: defaults, status), lists element by element, same length."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{path or '.'}: expected a mapping, found {actual!r}"]
        out = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{path}.{k}: missing (expected {json.dumps(v)[:120]})")
            else:
                out.extend(not_in(v, actual[k], f"{path}.{k}"))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [
                f"{path}: expected {json.dumps(expected)[:200]}, found {json.dumps(actual)[:200]}"
            ]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            out.extend(not_in(e, a, f"{path}[{i}]"))
        return out
    if expected != actual:
        return [f"{path}: expected {expected!r}, found {actual!r}"]
    return []


def taint_set(taints: Optional[Iterable[Mapping[str, Any]]]) -> set[tuple[str, str, str]]:
    return {(t["key"], t.get("value", ""), t["effect"]) for t in taints or ()}


def node_state(node: Mapping[str, Any]) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    """A live node's labels and taints (key, value, effect)."""
    return dict(node["metadata"].get("labels") or {}), taint_set(node["spec"].get("taints"))
