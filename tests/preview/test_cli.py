"""`gpu-inference` command line: exit codes 0/1/2/3, one clear message and no traceback for bad
input, no secret in any output, `check` on a hand-written graph, and the `python -m` entry point."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from preview_project import (
    CANARY_CONFIG,
    CANARY_INPUT,
    FAKE_CHECK,
    PROGRAM,
    STACK_YAML,
    make_project,
    stack_with,
)

from components.preview import cli
from components.preview import preview as pv
from components.preview.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The placement check stand-in: errors for pool `nowhere`, a warning for pool `shared`."""
    monkeypatch.setattr(pv, "check", FAKE_CHECK.check)
    monkeypatch.setattr(pv, "render_markdown", FAKE_CHECK.render_markdown)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_preview_from_a_subdirectory_writes_build_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, fake_check
) -> None:
    make_project(tmp_path)
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path / "docs")
    code, out, err = _run(capsys, "preview", "dev")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "build" / "dev").iterdir()) == sorted(pv.OUTPUT_FILES)
    assert " +   pulumi:pulumi:Stack" in out and "gpu-inference-dev" in out
    assert " +   ├─ gpu-inference:index:Demo" in out
    assert " +   │  └─ kubernetes:serving.kserve.io/v1beta1:InferenceService  sklearn-iris" in out
    assert "\n7 resources; placement: 0 errors, 0 warnings\n" in out
    assert Path.cwd() == tmp_path / "docs"  # the run restored the working directory
    assert CANARY_CONFIG not in out + err and CANARY_INPUT not in out + err


def test_placement_error_exits_1_and_prints_each_finding_with_its_fix(
    tmp_path: Path, capsys, fake_check
) -> None:
    make_project(tmp_path, stack_yaml=stack_with("pool: nowhere\nreplicas: 1\n"))
    code, out, _ = _run(
        capsys, "preview", "dev", "--project-dir", str(tmp_path), "--out", str(tmp_path / "o")
    )
    assert code == 1
    assert "7 resources; placement: 1 error, 0 warnings" in out
    assert (
        "  error no-pool kubernetes:serving.kserve.io/v1beta1:InferenceService::sklearn-iris: "
        "can land on no pool. Fix: name a pool\n"
    ) in out
    assert json.loads((tmp_path / "o" / "placement.json").read_text())["findings"][0]["code"] == (
        "no-pool"
    )


def test_warnings_alone_exit_0(tmp_path: Path, capsys, fake_check) -> None:
    make_project(tmp_path, stack_yaml=stack_with("pool: shared\nreplicas: 1\n"))
    code, out, _ = _run(capsys, "preview", "dev", "--project-dir", str(tmp_path))
    assert code == 0
    assert "placement: 0 errors, 1 warning\n  warning min-zero" in out


@pytest.mark.parametrize(
    ("stack_yaml", "argv", "message"),
    [
        (STACK_YAML, ["preview", "staging"], "error: unknown stack 'staging' ("),
        (STACK_YAML, ["preview", "staging"], "the stacks are: dev, prod\n"),
        (STACK_YAML, ["preview", "../x"], "error: invalid stack name '../x'"),
        (
            "config:\n  gpu-inference:spec: {pool: l4\n",
            ["preview", "dev"],
            "Pulumi.dev.yaml:3:1: invalid YAML in the stack file",
        ),
        (
            stack_with("pool: l4\nfail: input\n"),
            ["preview", "dev"],
            "error: gpu-inference:spec.replicas: given 0 (allowed: 1..10)\n"
            "  (stack config: stacks/Pulumi.dev.yaml:4)\n",
        ),
        (
            stack_with("pool: l4\nfail: input-in-apply\n"),
            ["preview", "dev"],
            "error: gpu-inference:spec.pool: found late\n",
        ),
        (
            stack_with("pool: l4\nfail: missing\n"),
            ["preview", "dev"],
            "error: Missing required configuration variable 'gpu-inference:absent'",
        ),
        (STACK_YAML, [], "usage: gpu-inference"),
        (STACK_YAML, ["preview"], "the following arguments are required: STACK"),
        (STACK_YAML, ["preview", "dev", "--bogus"], "unrecognized arguments: --bogus"),
        (STACK_YAML, ["check", "missing.json"], "error: missing.json: no such file"),
    ],
)
def test_bad_usage_and_bad_config_exit_2_with_one_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,
    fake_check,
    stack_yaml: str,
    argv: list[str],
    message: str,
) -> None:
    make_project(tmp_path, stack_yaml=stack_yaml)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err
    assert not (tmp_path / "build" / "dev").exists()


def test_a_stack_file_without_its_config_wrapper_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, fake_check
) -> None:
    """Not `cluster: required key is missing`: the keys are there, one level too high."""
    unwrapped = (
        "gpu-inference:spec:\n  pool: l4\ngpu-inference:team: ml\nsecretsprovider: passphrase\n"
    )
    make_project(tmp_path, stack_yaml=unwrapped)
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "preview", "dev") == (
        2,
        "",
        "error: stacks/Pulumi.dev.yaml: no `config:` key: a stack file's settings go under "
        "`config:`, indented below it (found at the top level: gpu-inference:spec, "
        "gpu-inference:team)\n",
    )


def test_project_dir_without_pulumi_yaml_exits_2(tmp_path: Path, capsys) -> None:
    code, _, err = _run(capsys, "preview", "dev", "--project-dir", str(tmp_path))
    assert code == 2
    assert "no Pulumi.yaml in the project directory" in err


def test_help_exits_0(capsys) -> None:
    code, out, _ = _run(capsys, "preview", "--help")
    assert code == 0
    assert "--project-dir DIR" in out


def test_a_bug_in_the_library_is_an_internal_error_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, fake_check
) -> None:
    make_project(tmp_path, stack_yaml=stack_with("pool: l4\nfail: library-bug\n"))
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "preview", "dev")
    assert code == 3
    assert err == (
        "internal error: TypeError: object of type 'NoneType' has no len()\n"
        "run with --debug for the traceback\n"
    )
    code, _, err = _run(capsys, "preview", "dev", "--debug")
    assert code == 3
    assert "Traceback (most recent call last)" in err
    assert "while pos < len(path):" in err


def test_an_exception_the_program_raises_is_the_users_exit_2_naming_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, fake_check
) -> None:
    make_project(tmp_path, stack_yaml=stack_with("pool: l4\nfail: bug\n"))
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "preview", "dev")
    line = PROGRAM.splitlines().index('    raise KeyError("oops")') + 1
    assert (code, err) == (2, f"error: KeyError: 'oops'\n  (program: __main__.py:{line})\n")
    code, _, err = _run(capsys, "preview", "dev", "--debug")
    assert code == 2
    assert 'raise KeyError("oops")' in err  # the program's own traceback, with --debug


def test_the_collector_is_paused_from_the_run_to_the_files_and_restored_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, fake_check
) -> None:
    """The cycles a run leaves are not scanned again while the check and the files are made
    (`preview.collector_paused`, from the config's parse on), by the command or by `preview()`;
    the collector is back on after, also when the program fails."""
    seen: list[bool] = []

    def write_outputs(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    def load_stack_config(*args, **kwargs):
        seen.append(gc.isenabled())
        return real_load(*args, **kwargs)

    real, real_load = pv.write_outputs, pv.load_stack_config
    for module in (cli, pv):
        monkeypatch.setattr(module, "write_outputs", write_outputs)
        monkeypatch.setattr(module, "load_stack_config", load_stack_config)
    make_project(tmp_path)
    code, _, err = _run(
        capsys, "preview", "dev", "--project-dir", str(tmp_path), "--out", str(tmp_path / "o")
    )
    assert (code, seen, gc.isenabled()) == (0, [False, False], True), err
    pv.preview("dev", out_dir=tmp_path / "p", project_dir=tmp_path)
    assert (seen, gc.isenabled()) == ([False] * 4, True)
    make_project(tmp_path, stack_yaml=stack_with("pool: l4\nfail: library-bug\n"))
    code, _, _ = _run(capsys, "preview", "dev", "--project-dir", str(tmp_path))
    assert (code, gc.isenabled()) == (3, True)


HAND_WRITTEN = [
    {"type": "kubernetes:core/v1:Namespace", "name": "models", "inputs": {"kind": "Namespace"}},
    {
        "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
        "name": "llm",
        "inputs": {
            "apiVersion": "serving.kserve.io/v1beta1",
            "kind": "InferenceService",
            "metadata": {
                "name": "llm",
                "namespace": "models",
                "annotations": {"gpu-inference.dev/pool": "nowhere"},
            },
            "spec": {"predictor": {"model": {"modelFormat": {"name": "huggingface"}}}},
        },
    },
]


def test_check_a_hand_written_graph(tmp_path: Path, capsys, fake_check) -> None:
    graph = tmp_path / "graph.json"
    graph.write_text(json.dumps(HAND_WRITTEN))
    code, out, _ = _run(capsys, "check", str(graph))
    assert code == 1
    assert out.startswith("2 resources; placement: 1 error, 0 warnings\n  error no-pool ")
    code, out, _ = _run(capsys, "check", str(graph), "--json")
    assert code == 1
    assert json.loads(out)["findings"][0]["resource"] == (
        "kubernetes:serving.kserve.io/v1beta1:InferenceService::llm"
    )
    graph.write_text(json.dumps(HAND_WRITTEN[:1]))
    assert _run(capsys, "check", str(graph))[0] == 0


# A KServe LLMInferenceService as anyone would write it: decode over LeaderWorkerSet groups on an
# H100 pool tainted dedicated=llm, whose worker pods lack the toleration.
LLM_GRAPH = """[
  {"type": "gcp:container/nodePool:NodePool", "name": "h100",
   "inputs": {"name": "h100", "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2},
              "nodeConfig": {"machineType": "a3-highgpu-8g", "diskSizeGb": 500,
                             "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}],
                             "labels": {"pool": "h100"},
                             "taints": [{"key": "dedicated", "value": "llm",
                                         "effect": "NO_SCHEDULE"}]}}},
  {"type": "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService", "name": "deepseek",
   "inputs": {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService",
              "metadata": {"name": "deepseek", "namespace": "llm"},
              "spec": {"model": {"uri": "pvc://models/deepseek"},
                       "parallelism": {"data": 16, "dataLocal": 8, "expert": true},
                       "template": {"nodeSelector": {"pool": "h100"},
                                    "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                                    "containers": [{"name": "main", "resources": {
                                        "limits": {"nvidia.com/gpu": "8"}}}]},
                       "worker": {"nodeSelector": {"pool": "h100"},
                                  "containers": [{"name": "main", "resources": {
                                      "limits": {"nvidia.com/gpu": "8"}}}]}}}}
]"""


def test_check_refuses_an_llm_service_whose_workers_do_not_tolerate_their_pool(
    tmp_path: Path, capsys
) -> None:
    graph = tmp_path / "graph.json"
    graph.write_text(LLM_GRAPH)
    code, out, _ = _run(capsys, "check", str(graph))
    assert code == 1
    assert out.splitlines() == [
        "2 resources; placement: 1 error, 0 warnings; pods: 0 judged clean, 2 not judged by "
        "some rule",
        "  error GI001 LLMInferenceService/deepseek/deepseek-kserve-mn/worker: selects pool(s) "
        "h100 by label but none admits it (pool h100: taint dedicated=llm:NoSchedule not "
        "tolerated): it stays Pending. Fix: tolerate dedicated=llm:NoSchedule or select the "
        "labels of a pool it may run on",
    ]
    fixed = json.loads(LLM_GRAPH)
    spec = fixed[1]["inputs"]["spec"]
    spec["worker"]["tolerations"] = spec["template"]["tolerations"]
    graph.write_text(json.dumps(fixed))
    assert _run(capsys, "check", str(graph))[0] == 0


@pytest.mark.parametrize("which", ["stand-in", "real"])
def test_check_gives_the_same_report_as_the_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, which: str
) -> None:
    if which == "stand-in":
        monkeypatch.setattr(pv, "check", FAKE_CHECK.check)
        monkeypatch.setattr(pv, "render_markdown", FAKE_CHECK.render_markdown)
    make_project(tmp_path, stack_yaml=stack_with("pool: nowhere\nreplicas: 1\n"))
    out_dir = tmp_path / "o"
    code, preview_out, _ = _run(
        capsys, "preview", "dev", "--project-dir", str(tmp_path), "--out", str(out_dir)
    )
    code2, check_out, _ = _run(capsys, "check", str(out_dir / "resources.json"))
    assert code == code2 == 1  # pool `nowhere` is no pool
    summary = preview_out[preview_out.index("7 resources") : preview_out.index("\nWrote")]
    assert check_out == summary
    _, json_out, _ = _run(capsys, "check", str(out_dir / "resources.json"), "--json")
    assert json_out == (out_dir / "placement.json").read_text()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"type": "a",\n "name": }]', "graph.json:2:10: invalid JSON"),
        ('{"type": "a"}', "a graph file is a JSON list of {type, name, inputs}, got dict"),
        ('[{"type": "a"}]', "graph.json: [0].name: missing or not a string"),
        ('[{"type": "a", "name": "b", "inputs": []}]', "[0].inputs: must be an object"),
    ],
)
def test_check_a_bad_graph_file_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, content: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("graph.json").write_text(content)
    code, _, err = _run(capsys, "check", "graph.json")
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_python_dash_m_components_preview(tmp_path: Path) -> None:
    make_project(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "components", "preview", "prod", "--out", "out"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "7 resources; placement:" in done.stdout
    assert (tmp_path / "out" / "manifests.yaml").is_file()
    assert CANARY_CONFIG not in done.stdout + done.stderr
