"""Helpers for the preview and CLI tests: a tiny throwaway Pulumi project, and a stand-in for the
placement check so that exit codes can be tested whatever the real check decides."""

from __future__ import annotations

import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

CANARY_CONFIG = "CANARY-CONFIG-9d1e"
CANARY_INPUT = "CANARY-INPUT-7f3a"

PROJECT_YAML = """\
name: gpu-inference
runtime: python
stackConfigDir: stacks
config:
  gpu-inference:team:
    default: ml
  region: eu-west
  gpu-inference:ignored:
    type: string
    description: no default
"""

STACK_YAML = f"""\
# a commented stack file
config:
  gpu-inference:spec:
    pool: l4
    replicas: 2
  gpu-inference:token:
    secure: {CANARY_CONFIG}
"""

PROGRAM = f'''\
import json

import pulumi
import pulumi_kubernetes as k8s

from components.model.errors import InputError

cfg = pulumi.Config()
spec = cfg.require_object("spec")
fail = spec.get("fail")
if fail == "input":
    raise InputError("given 0", "1..10", "gpu-inference:spec.replicas")
if fail == "input-in-apply":

    def late(_):
        raise InputError("found late", "", "gpu-inference:spec.pool")

    pulumi.Output.from_input(1).apply(late)
if fail == "bug":
    raise KeyError("oops")
if fail == "library-bug":  # an exception raised inside the library: a bug of ours
    from components.model.key_paths import path_steps

    path_steps(None)
if fail == "missing":
    cfg.require("absent")

ns = k8s.core.v1.Namespace("models", metadata={{"name": "models"}})
k8s.core.v1.ConfigMapPatch(
    "config-features",
    metadata={{"name": "config-features", "namespace": "knative-serving"}},
    data={{"kubernetes.podspec-nodeselector": "enabled"}},
)
k8s.core.v1.ConfigMap(
    "facts",
    metadata={{"name": "facts", "namespace": "models"}},
    data={{
        "tokenIsSecret": json.dumps(pulumi.runtime.is_config_secret("gpu-inference:token")),
        "team": cfg.require("team"),
        "region": cfg.require("region"),
        "cwd": __import__("os").path.basename(__import__("os").getcwd()),
    }},
    opts=pulumi.ResourceOptions(depends_on=[ns], deleted_with=ns),
)
k8s.core.v1.Secret(
    "creds",
    metadata={{"name": "creds", "namespace": "models"}},
    string_data={{"token": cfg.require_secret("token"),
                 "canary": pulumi.Output.secret("{CANARY_INPUT}")}},
    opts=pulumi.ResourceOptions(
        depends_on=[ns], retain_on_delete=True, protect=True, ignore_changes=["stringData"]
    ),
)


class Demo(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("gpu-inference:index:Demo", name)
        k8s.apiextensions.CustomResource(
            "sklearn-iris",
            api_version="serving.kserve.io/v1beta1",
            kind="InferenceService",
            metadata={{
                "name": "sklearn-iris",
                "namespace": "models",
                "annotations": {{"gpu-inference.dev/pool": spec["pool"]}},
            }},
            spec={{"predictor": {{"minReplicas": spec["replicas"],
                                 "model": {{"modelFormat": {{"name": "sklearn"}}}}}}}},
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[ns], aliases=[pulumi.Alias(name="iris-before")]
            ),
        )
        self.register_outputs({{}})


Demo("demo")
k8s.helm.v3.Release(
    "knative-operator",
    chart="knative-operator",
    version="v1.16.0",
    repository_opts={{"repo": "https://knative.github.io/operator"}},
    namespace="knative-operator",
)
pulumi.export("token", cfg.require_secret("token"))
'''


def make_project(root: Path, stack_yaml: str = STACK_YAML, program: str = PROGRAM) -> Path:
    """A project in `root` with stacks `dev` (given text) and `prod` (the default stack)."""
    (root / "stacks").mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text(PROJECT_YAML)
    (root / "__main__.py").write_text(program)
    (root / "stacks" / "Pulumi.dev.yaml").write_text(stack_yaml)
    (root / "stacks" / "Pulumi.prod.yaml").write_text(STACK_YAML)
    return root


def stack_with(spec_yaml: str) -> str:
    """A stack file whose `gpu-inference:spec` is the given YAML mapping body."""
    return (
        f"config:\n  gpu-inference:token:\n    secure: {CANARY_CONFIG}\n  gpu-inference:spec:\n"
        + textwrap.indent(spec_yaml, "    ")
    )


@dataclass
class FakeFinding:
    code: str
    severity: str
    resource: str
    message: str
    fix: str


class FakeReport:
    def __init__(self, findings: list[FakeFinding], graph: list[dict[str, Any]]) -> None:
        self.findings = findings
        self.graph = graph

    @property
    def errors(self) -> list[FakeFinding]:
        return [f for f in self.findings if f.severity == "error"]

    def to_json(self) -> dict[str, Any]:
        return {"findings": [asdict(f) for f in self.findings], "resources": len(self.graph)}


def _fake_check(
    graph: list[dict[str, Any]],
    *,
    extended_resource_toleration: bool | None = None,
    not_judged: str = "info",
) -> FakeReport:
    """Errors for a workload naming pool `nowhere`, a warning for pool `shared`."""
    findings = []
    for entry in graph:
        md = (entry.get("inputs") or {}).get("metadata") or {}
        pool = (md.get("annotations") or {}).get("gpu-inference.dev/pool")
        resource = f"{entry['type']}::{entry['name']}"
        if pool == "nowhere":
            findings.append(
                FakeFinding("no-pool", "error", resource, "can land on no pool", "name a pool")
            )
        if pool == "shared":
            findings.append(
                FakeFinding("min-zero", "warning", resource, "never scales to zero", "scale it")
            )
    return FakeReport(findings, graph)


def _fake_markdown(report: FakeReport) -> str:
    return "# Placement\n\n" + "".join(f"- {f.code} {f.resource}\n" for f in report.findings)


FAKE_CHECK = SimpleNamespace(check=_fake_check, render_markdown=_fake_markdown)
