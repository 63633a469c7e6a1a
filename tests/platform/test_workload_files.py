"""`gpu-inference:workloadFiles`: workloads read from YAML files the stack config names, merged
after the stack config's own (stack first, then each file in order), and every fault reported as
ONE InputError: about a file itself at `gpu-inference:workloadFiles[i]`, about an item in a file
at `<file>:<line>: <key path in the file>`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from config_bases import GKE, LLM

from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.platform import from_config
from components.platform.workload_files import (
    WorkloadFileError,
    expand_workload_files,
    project_dir,
)
from components.platform.workloads import InferenceService

NS = "gpu-inference"
KEY = f"{NS}:workloadFiles"


def _load(tmp_path: Path, config: dict[str, Any], files: dict[str, str | bytes]) -> Any:
    """expand + load_spec as the stack program runs them; the located error's text on failure."""
    for name, body in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body)
    expanded, sources = {}, None
    try:
        expanded, sources = expand_workload_files(config, tmp_path)
        return load_spec(expanded)
    except InputError as e:
        return str(sources.locate(e) if sources else e)


def _split_gke() -> tuple[dict[str, Any], str]:
    """The GKE base with its second InferenceService and all Seldon servers and models moved to
    a workload file (serverConfigs and the namespace stay in the stack config)."""
    config = copy.deepcopy(GKE)
    isvcs = config[f"{NS}:inferenceServices"]
    seldon = config[f"{NS}:seldon"]
    body = {
        "inferenceServices": isvcs[1:],
        "seldon": {"servers": seldon.pop("servers"), "models": seldon.pop("models")},
    }
    config[f"{NS}:inferenceServices"] = isvcs[:1]
    config[KEY] = ["stacks/models.yaml"]
    return config, yaml.safe_dump(body, sort_keys=False)


def test_the_file_gives_the_same_spec_as_the_stack_config_inline(tmp_path: Path) -> None:
    config, body = _split_gke()
    assert _load(tmp_path, config, {"stacks/models.yaml": body}) == load_spec(GKE)


def test_llm_inference_services_from_a_file(tmp_path: Path) -> None:
    """The LLM base's second service kept in a file gives the spec of the stack inline; an error in
    it names the file, its line and the key path inside it."""
    config = copy.deepcopy(LLM)
    services = config[f"{NS}:llmInferenceServices"]
    config[f"{NS}:llmInferenceServices"] = services[:1]
    config[KEY] = ["llm.yaml"]
    body = yaml.safe_dump({"llmInferenceServices": services[1:]}, sort_keys=False)
    assert _load(tmp_path, config, {"llm.yaml": body}) == load_spec(LLM)
    broken = body.replace("pool: h100", "pool: h200")
    assert _load(tmp_path, config, {"llm.yaml": broken}) == (
        "llm.yaml:6: llmInferenceServices[0].decode.pool: pool 'h200' does not exist "
        "(allowed: h100, router)"
    )


def test_stack_items_first_then_each_file_in_order(tmp_path: Path) -> None:
    config = copy.deepcopy(GKE)
    llm, iris = config[f"{NS}:inferenceServices"]
    config[f"{NS}:inferenceServices"] = [dict(iris, name="inline")]
    config[KEY] = ["b.yaml", "a.yaml"]
    files = {
        "a.yaml": yaml.safe_dump({"inferenceServices": [dict(iris, name="from-a")]}),
        "b.yaml": yaml.safe_dump({"inferenceServices": [llm, dict(iris, name="from-b")]}),
    }
    spec = _load(tmp_path, config, files)
    assert [i.name for i in spec.inference_services] == ["inline", "llm", "from-b", "from-a"]


def test_a_file_may_hold_only_seldon_and_keep_the_stack_seldon_settings(tmp_path: Path) -> None:
    config = copy.deepcopy(GKE)
    models = config[f"{NS}:seldon"].pop("models")
    config[f"{NS}:seldon"]["namespace"] = "mesh"
    config[KEY] = ["m.yaml"]
    spec = _load(tmp_path, config, {"m.yaml": yaml.safe_dump({"seldon": {"models": models}})})
    assert [m.name for m in spec.seldon.models] == ["llama3", "iris"]
    assert spec.seldon.namespace == "mesh"
    assert [s.name for s in spec.seldon.servers] == ["gpu-server", "cpu-server"]


def test_a_stack_without_the_key_is_unchanged(tmp_path: Path) -> None:
    expanded, sources = expand_workload_files(GKE, tmp_path)
    assert expanded == GKE and sources.segments == []
    err = InputError("x", "", f"{NS}:inferenceServices[0].name")
    assert sources.locate(err) is err


def test_the_config_value_as_json_text(tmp_path: Path) -> None:
    """`pulumi config set --path` / the runtime may hand a list over as JSON text."""
    config, body = _split_gke()
    config[KEY] = '["stacks/models.yaml"]'
    assert _load(tmp_path, config, {"stacks/models.yaml": body}) == load_spec(GKE)


def test_project_dir_is_the_nearest_with_pulumi_yaml(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\n")
    (tmp_path / "stacks" / "deep").mkdir(parents=True)
    assert project_dir(tmp_path / "stacks" / "deep") == tmp_path.resolve()


MODELS = """\
inferenceServices:
  - name: a
    predictor:
      pool: cpu
      model: {format: sklearn, storageUri: gs://m/a}
  - name: b
    predictor:
      pool: cpu
      gpus: -1
      model: {format: sklearn, storageUri: gs://m/b}
"""

ONE_SERVICE = yaml.safe_load(MODELS)["inferenceServices"][0]
ALLOWED_PATH = "a YAML file path relative to the project directory"
SHAPE = (
    "a YAML mapping with inferenceServices: [...], llmInferenceServices: [...] and/or "
    "seldon: {serverConfigs: [...], servers: [...], models: [...]}"
)

# fmt: off
# id, the workloadFiles value, the files (name -> text), the exact error ({tmp}: the directory)
ERRORS = [
    # --- the key itself --------------------------------------------------------------------
    ("not-a-list", "m.yaml", {}, f"{KEY}: expected a list of file paths, got 'm.yaml' (allowed: a non-empty list of YAML file paths relative to the project directory)"),
    ("empty-list", [], {}, f"{KEY}: expected a list of file paths, got [] (allowed: a non-empty list of YAML file paths relative to the project directory)"),
    ("item-not-a-string", ["m.yaml", 3], {"m.yaml": MODELS}, f"{KEY}[1]: expected a file path, got 3 (allowed: {ALLOWED_PATH})"),
    ("item-empty", [""], {}, f"{KEY}[0]: expected a file path, got '' (allowed: {ALLOWED_PATH})"),
    # --- the file ----------------------------------------------------------------------------
    ("missing-file", ["stacks/nope.yaml"], {}, f"{KEY}[0]: file 'stacks/nope.yaml' not found (looked for {{tmp}}/stacks/nope.yaml) (allowed: {ALLOWED_PATH} (where Pulumi.yaml is))"),
    ("a-directory", ["stacks"], {"stacks/x.yaml": ""}, f"{KEY}[0]: cannot read file 'stacks': Is a directory"),
    ("not-utf8", ["m.yaml"], {"m.yaml": b"inferenceServices: [\xff]\n"}, f"{KEY}[0]: cannot read file 'm.yaml': 'utf-8' codec can't decode byte 0xff in position 20: invalid start byte"),
    ("not-yaml", ["m.yaml"], {"m.yaml": "inferenceServices:\n  - name: a\n    predictor: {pool: cpu\n"}, f"{KEY}[0]: m.yaml:4:1: not valid YAML: did not find expected ',' or '}}' (allowed: {SHAPE})"),
    ("key-twice", ["m.yaml"], {"m.yaml": "inferenceServices:\n  - name: a\n    name: b\n"}, f"{KEY}[0]: m.yaml:3:5: not valid YAML: the key 'name' is given twice (first on line 2) (allowed: {SHAPE})"),
    ("empty-file", ["m.yaml"], {"m.yaml": "# nothing yet\n"}, f"{KEY}[0]: m.yaml holds an empty file, not a mapping (allowed: {SHAPE})"),
    ("a-list", ["m.yaml"], {"m.yaml": yaml.safe_dump([ONE_SERVICE])}, f"{KEY}[0]: m.yaml holds a list, not a mapping (allowed: {SHAPE})"),
    ("unknown-top-key", ["m.yaml"], {"m.yaml": "\ninferenceService: []\n"}, f"{KEY}[0]: m.yaml:2: unknown key 'inferenceService' (did you mean 'inferenceServices'?) (allowed: {SHAPE})"),
    ("pools-in-a-file", ["m.yaml"], {"m.yaml": "pools: []\n"}, f"{KEY}[0]: m.yaml:1: unknown key 'pools' (allowed: {SHAPE})"),
    ("isvcs-not-a-list", ["m.yaml"], {"m.yaml": "inferenceServices: {a: 1}\n"}, f"{KEY}[0]: m.yaml:1: inferenceServices holds a mapping, not a list (allowed: {SHAPE})"),
    ("seldon-not-a-mapping", ["m.yaml"], {"m.yaml": "seldon: [a]\n"}, f"{KEY}[0]: m.yaml:1: seldon holds a list, not a mapping (allowed: {SHAPE})"),
    ("seldon-namespace", ["m.yaml"], {"m.yaml": "seldon:\n  namespace: x\n"}, f"{KEY}[0]: m.yaml:2: unknown key 'namespace' (allowed: under seldon: serverConfigs, servers, models (the rest of seldon stays in the stack config))"),
    ("seldon-models-not-a-list", ["m.yaml"], {"m.yaml": "seldon:\n  models: x\n"}, f"{KEY}[0]: m.yaml:2: seldon.models holds the str 'x', not a list (allowed: {SHAPE})"),
    # --- an item in a file: the file, its line, the key path inside it ----------------------
    ("item-out-of-range", ["stacks/m.yaml"], {"stacks/m.yaml": MODELS}, "stacks/m.yaml:9: inferenceServices[1].predictor.gpus: -1 is out of range (allowed: a number >= 0)"),
    ("item-missing-key", ["m.yaml"], {"m.yaml": "inferenceServices:\n  - name: a\n"}, "m.yaml:2: inferenceServices[0].predictor: required key is missing (allowed: The predictor: where it runs (`pool`, or a `placement` of its own) and what it serves (`model`, `framework` or `containers`).)"),
    ("item-unknown-pool", ["m.yaml"], {"m.yaml": MODELS.replace("pool: cpu", "pool: gpu", 1).replace("gpus: -1", "gpus: 0")}, "m.yaml:4: inferenceServices[0].predictor.pool: pool 'gpu' does not exist (allowed: l4-spot, l4, cpu)"),
    ("seldon-item", ["m.yaml"], {"m.yaml": "seldon:\n  models:\n    - name: x\n      storageUri: gs://m/x\n      server: nowhere\n"}, "m.yaml:5: seldon.models[0].server: model pins server 'nowhere', but no server has that name; a pinned model fails to load instead of trying another server (allowed: gpu-server, cpu-server)"),
    ("the-second-file", ["m.yaml", "n.yaml"], {"m.yaml": "inferenceServices: []\n", "n.yaml": MODELS}, "n.yaml:9: inferenceServices[1].predictor.gpus: -1 is out of range (allowed: a number >= 0)"),
    # --- names given twice: across the stack and a file, across files -----------------------
    ("twice-stack-and-file", ["m.yaml"], {"m.yaml": MODELS.replace("name: a", "name: llm").replace("gpus: -1", "gpus: 0")}, f"m.yaml:2: inferenceServices[0].name: InferenceService 'llm' in namespace 'models' is declared twice ({NS}:inferenceServices[0] and here) (allowed: unique names per namespace)"),
    ("twice-across-files", ["m.yaml", "n.yaml"], {"m.yaml": MODELS.replace("gpus: -1", "gpus: 0"), "n.yaml": "\ninferenceServices:\n  - name: b\n    predictor: {pool: cpu, model: {format: sklearn, storageUri: gs://m/b}}\n"}, "n.yaml:3: inferenceServices[0].name: InferenceService 'b' in namespace 'models' is declared twice (m.yaml:6: inferenceServices[1] and here) (allowed: unique names per namespace)"),
    ("seldon-twice", ["m.yaml"], {"m.yaml": "seldon:\n  models:\n    - {name: iris, storageUri: gs://m/x}\n"}, "m.yaml:3: seldon.models[0].name: name 'iris' is used twice (gpu-inference:seldon.models[1] and here) (allowed: unique names)"),
]
# fmt: on


@pytest.mark.parametrize(
    ("value", "files", "expected"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS]
)
def test_errors(tmp_path: Path, value: Any, files: dict[str, str], expected: str) -> None:
    config = {**GKE, KEY: value}
    assert _load(tmp_path, config, files) == expected.replace("{tmp}", str(tmp_path))


def test_an_item_error_carries_file_line_and_the_key_that_named_it(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(MODELS)
    config, sources = expand_workload_files({**GKE, KEY: ["x.yaml", "m.yaml"][1:]}, tmp_path)
    with pytest.raises(InputError) as caught:
        load_spec(config)
    err = sources.locate(caught.value)
    assert isinstance(err, WorkloadFileError)
    assert (err.file, err.line, err.inner, err.key) == (
        "m.yaml",
        9,
        "inferenceServices[1].predictor.gpus",
        f"{KEY}[0]",
    )


def test_a_component_error_about_a_file_item_points_into_the_file(tmp_path: Path) -> None:
    """What a component refuses after `load_spec` (located by `from_config`) names the file too,
    when the stack program's `load_stack_spec` recorded where the item came from."""
    config, body = _split_gke()
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "models.yaml").write_text(body)
    expanded, sources = expand_workload_files(config, tmp_path)
    spec = load_spec(expanded)
    spec._workload_sources = sources
    with (
        pytest.raises(pulumi.RunError) as caught,
        from_config("inferenceServices[1]", InferenceService, spec=spec),
    ):
        raise InputError("refused", "something else", "InferenceService('x').args.name")
    assert str(caught.value) == (
        "stacks/models.yaml:2: inferenceServices[0].name: refused (allowed: something else)"
    )


def test_load_spec_itself_reads_no_file() -> None:
    with pytest.raises(InputError) as caught:
        load_spec({**GKE, KEY: ["m.yaml"]})
    assert str(caught.value) == (
        f"{KEY}: names files, and load_spec reads none (allowed: the config after "
        "expand_workload_files(config, project_dir), which merges them)"
    )
