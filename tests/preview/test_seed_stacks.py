"""Every YAML example of the seeds, produced from a stack file: `tests/seed_stacks/stacks/
Pulumi.<case>.yaml` previewed by the real stack program emits the seed document field for field.

The expected documents are `tests/serving/test_seeds.py`'s (the same seed text the Python-API
tests compare with). A stack may add only the fields listed in `ADDED` (none of them a scheduling
field): the wiring annotations, a namespace where the seed has none, what the CRD requires and
the seed leaves out, and the defaults the stack config resolves. A nodeSelector key, an affinity
term or a toleration the seed does not have is a difference, and fails.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from components.preview.preview import preview
from tests.serving.test_seeds import CASES, CR_TYPES, Case, diff

SEED_STACKS = Path(__file__).resolve().parents[1] / "seed_stacks"
ROOT = Path(__file__).resolve().parents[2]

# Fields a stack adds to the seed document (paths as `diff` prints them), and why.
ADDED: dict[str, tuple[str, ...]] = {
    # The seeds' KServe examples have no namespace (kubectl's current one): the stack names one.
    # Wired components carry the pool they were wired to (what the placement check reads).
    "*": (
        r"\.metadata\.namespace",
        r"\.metadata\.annotations",
        r"\.metadata\.annotations\.gpu-inference\.dev/[\w./-]+",
        # Knative waits this long for a GPU node to start from zero (the pools' start-up).
        r"\.metadata\.annotations\.serving\.knative\.dev/progress-deadline",
        # The stack's server-side apply field manager, on every object we make.
        r"\.metadata\.annotations\.pulumi\.com/patchFieldManager",
    ),
    # The model namespace's ServiceAccount (workload identity), and minReplicas resolved from the
    # deployment mode (0 for Serverless, 1 for RawDeployment).
    "InferenceService": (
        r"\.spec\.(predictor|transformer|explainer)\.serviceAccountName",
        r"\.spec\.(predictor|transformer|explainer)\.minReplicas",
    ),
    # Required by the v2.6.0 CRDs, left out by the seed (serverConfig), and the replicas default.
    "Server": (r"\.spec\.serverConfig", r"\.spec\.replicas"),
    "ServerConfig": (r"\.spec\.volumeClaimTemplates",),
    "Model": (r"\.spec\.storageUri",),
}
SCHEDULING = re.compile(r"\.(nodeSelector|affinity|tolerations)(\.|\[|$)")


def stack_id(case: Case) -> str:
    return case.id


@pytest.fixture(scope="module")
def previews(tmp_path_factory):
    out = {}
    for case in CASES:
        d = tmp_path_factory.mktemp(case.id)
        out[case.id] = preview(case.id, out_dir=d, project_dir=SEED_STACKS)
    return out


# Seed 004's ServerConfigs show some containers and elide the rest ("Additional container
# configurations", "Other configurations go here"); a stack declares the whole pod (agent, rclone
# and the server). Containers the seed does not name are compared by name, not by position.
ELIDED_CONTAINERS = {"ServerConfig": {"agent", "rclone", "mlserver"}}


def seed_view(got: dict, want: dict, kind: str) -> dict:
    """`got` with the containers the seed elides taken out (checked against ELIDED_CONTAINERS)."""
    elided = ELIDED_CONTAINERS.get(kind)
    pod = (got.get("spec") or {}).get("podSpec") or {}
    if not elided or "containers" not in pod:
        return got
    named = {c["name"] for c in want["spec"]["podSpec"]["containers"]}
    extra = {c["name"] for c in pod["containers"]} - named
    assert extra <= elided, extra
    view = copy.deepcopy(got)
    view["spec"]["podSpec"]["containers"] = [c for c in pod["containers"] if c["name"] in named]
    return view


def emitted(result, case: Case) -> dict:
    name = case.expected["metadata"]["name"]
    found = [
        e
        for e in result.entries
        if e["type"] == CR_TYPES[case.kind] and e["inputs"]["metadata"]["name"] == name
    ]
    assert len(found) == 1, f"{case.kind} {name}: {len(found)} emitted"
    return {k: found[0]["inputs"][k] for k in ("apiVersion", "kind", "metadata", "spec")}


def test_every_seed_case_has_a_stack_file():
    stacks = sorted(p.name for p in (SEED_STACKS / "stacks").glob("Pulumi.*.yaml"))
    assert stacks == sorted(f"Pulumi.{c.id}.yaml" for c in CASES)


def test_the_seed_project_is_the_real_project():
    """The seed stacks run the project's own Pulumi.yaml and program, nothing made for them."""
    for name in ("Pulumi.yaml", "__main__.py"):
        assert (SEED_STACKS / name).read_text() == (ROOT / name).read_text(), name


@pytest.mark.parametrize("case", CASES, ids=stack_id)
def test_stack_emits_the_seed_document(previews, case: Case):
    want = yaml.safe_load(case.yaml_text)  # the seed as written (no namespace added)
    got = seed_view(emitted(previews[case.id], case), want, case.kind)
    allowed = [re.compile(p + "$") for p in ADDED["*"] + ADDED.get(case.kind, ())]
    problems = []
    for line in diff(got, want):
        path, _, what = line.partition(": ")
        added = what.startswith("unexpected ")
        if added and any(p.match(path) for p in allowed) and not SCHEDULING.search(path):
            continue
        problems.append(line)
    assert problems == []


@pytest.mark.parametrize("case", CASES, ids=stack_id)
def test_scheduling_fields_are_exactly_the_seeds(previews, case: Case):
    """No extra selector key, affinity term or toleration anywhere in the document."""
    want = yaml.safe_load(case.yaml_text)
    got = seed_view(emitted(previews[case.id], case), want, case.kind)
    extra = [line for line in diff(got, want) if SCHEDULING.search(line.partition(": ")[0])]
    assert extra == []


@pytest.mark.parametrize("case", CASES, ids=stack_id)
def test_seed_stack_places_cleanly(previews, case: Case):
    """The placement check finds no error in the seed stacks (an existing cluster that runs
    ExtendedResourceToleration says so on its nodes, so seed 001's GPU pod without the explicit
    toleration places too)."""
    result = previews[case.id]
    errors = [f.code for f in result.placement.findings if f.severity == "error"]
    assert errors == []


def test_seed_stack_through_the_cli(tmp_path, capsys):
    """`gpu-inference preview STACK --project-dir tests/seed_stacks` works as documented."""
    from components.preview.cli import main

    code = main(
        [
            "preview",
            "001-predictor-tolerations",
            "--project-dir",
            str(SEED_STACKS),
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0, capsys.readouterr().err
    text = (tmp_path / "manifests.yaml").read_text()
    assert "yourTaintKeyHere" in text
