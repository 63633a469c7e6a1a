"""The offline preview: project and stack config loading, the graph as written, the manifests,
and a whole preview of a tiny throwaway project (files, secrets, byte-identical reruns)."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest
import yaml
from preview_project import CANARY_CONFIG, CANARY_INPUT, FAKE_CHECK, make_project

from components.model.errors import InputError
from components.preview import errors
from components.preview import preview as pv
from components.preview.manifests import helm_releases, pools_named, render_manifests
from tests.preview.test_manifests_schemas import problems

# ------------------------------------------------------------------------------ config loading


@pytest.fixture
def project(tmp_path: Path) -> pv.Project:
    return pv.load_project(make_project(tmp_path))


def test_project_defaults_both_forms_and_bare_keys(project: pv.Project) -> None:
    assert project.name == "gpu-inference"
    assert project.stack_dir.name == "stacks"
    assert project.defaults == {"gpu-inference:team": "ml", "gpu-inference:region": "eu-west"}
    assert project.stacks() == ["dev", "prod"]


def test_stack_config_merges_and_hides_secure_values(project: pv.Project) -> None:
    config = pv.load_stack_config(project, "dev")
    assert config.values == {
        "gpu-inference:region": "eu-west",
        "gpu-inference:spec": {"pool": "l4", "replicas": 2},
        "gpu-inference:team": "ml",
        "gpu-inference:token": "[secret]",
    }
    assert config.secret_keys == {"gpu-inference:token"}


def test_stack_overrides_defaults_and_nested_secure(tmp_path: Path) -> None:
    stack = (
        "config:\n  gpu-inference:team: infra\n  storage:\n"
        "    accessKey: {secure: v1:abc}\n    bucket: models\n"
    )
    project = pv.load_project(make_project(tmp_path, stack_yaml=stack))
    config = pv.load_stack_config(project, "dev")
    assert config.values["gpu-inference:team"] == "infra"
    assert config.values["gpu-inference:storage"] == {"accessKey": "[secret]", "bucket": "models"}
    assert config.secret_keys == {"gpu-inference:storage"}


def test_unknown_stack_lists_the_stacks(project: pv.Project) -> None:
    with pytest.raises(pv.PreviewError) as err:
        pv.load_stack_config(project, "staging")
    assert "unknown stack 'staging'" in str(err.value)
    assert "dev, prod" in str(err.value)


def test_no_stacks_at_all(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nstackConfigDir: stacks\n")
    with pytest.raises(pv.PreviewError, match=r"no stack files \(Pulumi.<stack>.yaml\)"):
        pv.load_stack_config(pv.load_project(tmp_path), "dev")


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("config:\n  a: [1,\n  b: 2\n", "Pulumi.dev.yaml:4:1", "expected ',' or ']'"),
        ("config:\n  a: 1\n  a: 2\n", "Pulumi.dev.yaml:3:3", "found the key 'a' twice"),
        ("config:\n\tb: 1\n", "Pulumi.dev.yaml:2:1", "found character '\\t'"),
        ("- a\n- b\n", "Pulumi.dev.yaml", "a stack file is a mapping"),
        ("config: [1, 2]\n", "Pulumi.dev.yaml", "`config:` must be a mapping"),
    ],
)
def test_bad_stack_yaml_names_file_and_line(tmp_path: Path, text: str, where: str, what: str):
    project = pv.load_project(make_project(tmp_path, stack_yaml=text))
    with pytest.raises(pv.PreviewError) as err:
        pv.load_stack_config(project, "dev")
    assert where in str(err.value)
    assert what in str(err.value)


def test_project_dir_is_the_nearest_parent_with_pulumi_yaml(tmp_path: Path) -> None:
    make_project(tmp_path)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert pv.find_project_dir(deep) == tmp_path.resolve()


def test_no_project_anywhere(tmp_path: Path) -> None:
    with pytest.raises(pv.PreviewError, match=r"no Pulumi\.yaml in"):
        pv.find_project_dir(tmp_path)


def test_config_line_finds_the_deepest_key(project: pv.Project) -> None:
    config = pv.load_stack_config(project, "dev")
    assert errors.config_line(config, "gpu-inference:spec.replicas") == 5
    assert errors.config_line(config, "gpu-inference:spec.pool") == 4
    assert errors.config_line(config, "gpu-inference:spec.nothere") == 3
    # a missing section belongs under `config:` (line 2)
    assert errors.config_line(config, "gpu-inference:elsewhere") == 2
    assert errors.config_line(config, "Thing('x').args.name") is None


STACK_WITH_MAP_KEYS = """\
config:
  gpu-inference:pools:
    - name: l4
      labels:
        pool: l4
        -tier: a
        cloud.google.com/gke-nodepool: x
      taints:
        - key: inference
          value: "true"
          effect: NO_SCHEDULE
"""


@pytest.mark.parametrize(
    ("key_path", "line"),
    [
        ("gpu-inference:pools[0].taints[0].effect", 11),
        ("gpu-inference:pools[0].taints[0]", 9),
        ('gpu-inference:pools[0].labels["cloud.google.com/gke-nodepool"]', 7),
        ("gpu-inference:pools[0].labels.-tier", 6),
        ("gpu-inference:pools[0].labels.missing", 4),
        ("gpu-inference:pools[1]", 2),
    ],
)
def test_config_line_is_the_offending_keys_line(tmp_path: Path, key_path: str, line: int) -> None:
    """The line of the key itself, not its parent's: map keys with dots, slashes or a leading '-'
    too; a key the file lacks gives its parent's line."""
    (tmp_path / "Pulumi.x.yaml").write_text(STACK_WITH_MAP_KEYS)
    config = pv.StackConfig("x", tmp_path / "Pulumi.x.yaml", {}, set())
    assert errors.config_line(config, key_path) == line


# ------------------------------------------------------------------------------ errors


def _wrapped(inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as e:
            raise RuntimeError("runtime wrapper") from e
    except RuntimeError as outer:
        return outer


@pytest.mark.parametrize(
    ("exc", "found"),
    [
        (InputError("bad", "good", "k"), InputError),
        (_wrapped(InputError("bad", "good", "k")), InputError),
        (ExceptionGroup("g", [ValueError("x"), InputError("bad")]), InputError),
        (pulumi.RunError("stop"), pulumi.RunError),
        (pulumi.InputPropertyError("args.x", "is bad"), pulumi.InputPropertyError),
        (KeyError("oops"), type(None)),
        (_wrapped(KeyError("oops")), type(None)),
    ],
)
def test_user_error_unwraps_to_bad_input(exc: BaseException, found: type) -> None:
    assert isinstance(errors.user_error(exc), found)


def test_input_property_error_message() -> None:
    assert errors.error_message(pulumi.InputPropertyError("args.x", "is bad")) == "args.x: is bad"


# ------------------------------------------------------------------------------ manifests

GRAPH = [
    {"type": "gpu-inference:index:Demo", "name": "demo", "inputs": {}},
    {
        "type": "gcp:container/nodePool:NodePool",
        "name": "l4",
        "inputs": {"nodeConfig": {"machineType": "g2-standard-8"}},
    },
    {
        "type": "kubernetes:core/v1:NodePatch",
        "name": "gpu-0",
        "inputs": {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "gpu-0", "labels": {"pool": "onprem"}},
            "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        },
    },
    {
        "type": "kubernetes:mlops.seldon.io/v1alpha1:Server",
        "name": "triton",
        "inputs": {
            "apiVersion": "mlops.seldon.io/v1alpha1",
            "kind": "Server",
            "metadata": {
                "namespace": "seldon",
                "name": "triton",
                "annotations": {"gpu-inference.dev/pool": "l4-spot, l4"},
            },
            "spec": {"serverConfig": "triton", "replicas": 1},
        },
    },
    {
        "type": "kubernetes:core/v1:ConfigMap",
        "name": "script",
        "inputs": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "script", "namespace": "seldon"},
            "data": {"run.sh": "#!/bin/sh\necho hi\n"},
        },
    },
    {
        "type": "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "name": "crd",
        "inputs": {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com"},
        },
    },
    {
        "type": "kubernetes:core/v1:Namespace",
        "name": "seldon",
        "inputs": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "seldon"}},
    },
    {
        "type": "kubernetes:core/v1:ServiceAccount",
        "name": "auto",
        "inputs": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {}},
    },
    {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "kserve",
        "inputs": {
            "chart": "oci://ghcr.io/kserve/charts/kserve",
            "version": "v0.15.2",
            "namespace": "kserve",
            "name": "kserve",
            "values": {"a": 1},
        },
    },
    {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "knative-operator",
        "inputs": {
            "chart": "knative-operator",
            "version": "v1.16.0",
            "repositoryOpts": {"repo": "https://knative.github.io/operator"},
            "namespace": "knative-operator",
        },
    },
]


@pytest.fixture(scope="module")
def manifests_text() -> str:
    return render_manifests(GRAPH, title="test")


def test_manifests_hold_only_kubernetes_objects_in_stable_order(manifests_text: str) -> None:
    docs = [d for d in yaml.safe_load_all(manifests_text) if d is not None]
    assert [(d["kind"], d["metadata"].get("name")) for d in docs] == [
        ("Namespace", "seldon"),
        ("CustomResourceDefinition", "things.example.com"),
        ("ServiceAccount", None),
        ("ConfigMap", "script"),
        ("Server", "triton"),
        ("Node", "gpu-0"),  # the patch, last
    ]
    assert "gcp:" not in manifests_text.replace("# cloud", "")
    assert render_manifests(list(reversed(GRAPH)), title="test") == manifests_text


def test_manifests_comment_patches_helm_releases_and_auto_names(manifests_text: str) -> None:
    assert (
        "# kubernetes:core/v1:NodePatch::gpu-0\n"
        "# server-side-apply patch of an existing object, not a whole object: "
        "kubectl apply --server-side\napiVersion: v1\nkind: Node\n"
    ) in manifests_text
    assert "# metadata.name is not set: Pulumi auto-names it auto-<random>" in manifests_text
    assert (
        "#   knative-operator: chart knative-operator v1.16.0 from "
        "https://knative.github.io/operator, namespace knative-operator\n"
        "#   kserve: chart oci://ghcr.io/kserve/charts/kserve v0.15.2, namespace kserve\n"
    ) in manifests_text
    assert "# 6 Kubernetes objects" not in manifests_text
    assert "# 5 Kubernetes objects and 1 server-side-apply patch;" in manifests_text


def test_manifest_documents_read_well(manifests_text: str) -> None:
    assert (
        "apiVersion: mlops.seldon.io/v1alpha1\nkind: Server\nmetadata:\n  name: triton\n"
        "  namespace: seldon\n  annotations:\n"
    ) in manifests_text
    assert "  run.sh: |\n    #!/bin/sh\n    echo hi\n" in manifests_text


def test_helm_releases_and_pools_named() -> None:
    assert [r["release"] for r in helm_releases(GRAPH)] == ["knative-operator", "kserve"]
    assert pools_named(GRAPH[3]) == ["l4-spot", "l4"]
    assert pools_named(GRAPH[4]) == []


def test_run_placement_turns_the_checks_report_into_findings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pv, "check", FAKE_CHECK.check)
    monkeypatch.setattr(pv, "render_markdown", FAKE_CHECK.render_markdown)
    graph = [
        dict(GRAPH[3], inputs={"metadata": {"annotations": {"gpu-inference.dev/pool": "nowhere"}}})
    ]
    result = pv.run_placement(graph)
    assert result.errors == 1 and result.warnings == 0
    assert result.findings[0].line() == (
        "error no-pool kubernetes:mlops.seldon.io/v1alpha1:Server::triton: "
        "can land on no pool. Fix: name a pool"
    )
    assert result.json["resources"] == 1


def test_refs_and_tree_order() -> None:
    urn = "urn:pulumi:dev::proj::gpu-inference:index:Demo$kubernetes:core/v1:Namespace::models"
    assert pv.ref(urn) == "kubernetes:core/v1:Namespace::models"
    entries = [
        {"type": "b", "name": "child", "parent": "a::root"},
        {"type": "z", "name": "top", "parent": None},
        {"type": "a", "name": "root", "parent": None},
        {"type": "a", "name": "kid", "parent": "a::root"},
    ]
    assert [e["name"] for e in pv.tree_order(entries)] == ["root", "kid", "child", "top"]


# ------------------------------------------------------------------------------ a whole preview


@pytest.fixture(scope="module")
def previewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[pv.PreviewResult, dict, dict]:
    """The tiny project previewed twice into two directories: (result, files 1, files 2)."""
    root = make_project(tmp_path_factory.mktemp("proj"))
    first = pv.preview("dev", project_dir=root, out_dir=root / "out1")
    pv.preview("dev", project_dir=root, out_dir=root / "out2")
    read = lambda d: {n: (root / d / n).read_bytes() for n in pv.OUTPUT_FILES}  # noqa: E731
    return first, read("out1"), read("out2")


def test_preview_writes_the_four_files_byte_identically(previewed) -> None:
    _, one, two = previewed
    assert sorted(one) == sorted(pv.OUTPUT_FILES)
    assert one == two
    for text in one.values():
        assert text.endswith(b"\n")


def test_resources_json_is_the_whole_graph_with_refs(previewed) -> None:
    _, files, _ = previewed
    text = files["resources.json"].decode()
    graph = json.loads(text)
    assert text == json.dumps(graph, indent=2, sort_keys=True) + "\n"
    by_ref = {f"{e['type']}::{e['name']}": e for e in graph}
    assert sorted(by_ref) == [
        "gpu-inference:index:Demo::demo",
        "kubernetes:core/v1:ConfigMap::facts",
        "kubernetes:core/v1:ConfigMapPatch::config-features",
        "kubernetes:core/v1:Namespace::models",
        "kubernetes:core/v1:Secret::creds",
        "kubernetes:helm.sh/v3:Release::knative-operator",
        "kubernetes:serving.kserve.io/v1beta1:InferenceService::sklearn-iris",
    ]
    isvc = by_ref["kubernetes:serving.kserve.io/v1beta1:InferenceService::sklearn-iris"]
    assert isvc["parent"] == "gpu-inference:index:Demo::demo"
    assert isvc["dependsOn"] == ["kubernetes:core/v1:Namespace::models"]
    assert isvc["inputs"]["spec"]["predictor"]["minReplicas"] == 2
    assert set(isvc) == {"type", "name", "parent", "dependsOn", "inputs", "options"}
    assert by_ref["kubernetes:core/v1:Namespace::models"]["parent"] is None
    # The options that decide deletion, for every resource (the engine's URN form for aliases).
    none = {
        "aliases": [],
        "deletedWith": None,
        "hooks": {},
        "ignoreChanges": [],
        "protect": False,
        "retainOnDelete": False,
    }
    assert by_ref["kubernetes:core/v1:Namespace::models"]["options"] == none
    assert isvc["options"] == {
        **none,
        "aliases": [
            "gpu-inference:index:Demo$kubernetes:serving.kserve.io/v1beta1:InferenceService::"
            "iris-before"
        ],
    }
    assert by_ref["kubernetes:core/v1:Secret::creds"]["options"] == {
        **none,
        "ignoreChanges": ["stringData"],
        "protect": True,
        "retainOnDelete": True,
    }
    assert by_ref["kubernetes:core/v1:ConfigMap::facts"]["options"] == {
        **none,
        "deletedWith": "kubernetes:core/v1:Namespace::models",
    }
    assert "urn:pulumi" not in text


def test_program_ran_in_its_project_with_merged_config_and_secret_keys(previewed) -> None:
    result, _, _ = previewed
    facts = next(e for e in result.entries if e["name"] == "facts")["inputs"]["data"]
    assert facts == {
        "tokenIsSecret": "true",
        "team": "ml",
        "region": "eu-west",
        "cwd": result.project.dir.name,
    }


def test_no_secret_and_no_absolute_path_in_any_file(previewed) -> None:
    result, files, _ = previewed
    creds = next(e for e in result.entries if e["name"] == "creds")
    assert creds["inputs"]["stringData"] == {"token": "[secret]", "canary": "[secret]"}
    for name, data in files.items():
        text = data.decode()
        assert CANARY_CONFIG not in text and CANARY_INPUT not in text, name
        assert str(result.project.dir) not in text, name


def test_manifests_of_the_preview_parse_and_list_the_release(previewed) -> None:
    _, files, _ = previewed
    text = files["manifests.yaml"].decode()
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert [d["kind"] for d in docs] == [
        "Namespace",
        "Secret",
        "ConfigMap",
        "InferenceService",
        "ConfigMap",
    ]
    # The Secret keeps its keys, each value redacted, and is one the API server takes.
    secret = docs[1]
    assert secret["stringData"] == {"canary": "[secret]", "token": "[secret]"}
    assert problems(secret) == []
    assert "#   knative-operator: chart knative-operator v1.16.0" in text


def test_placement_files_name_the_pool(previewed) -> None:
    result, files, _ = previewed
    assert json.loads(files["placement.json"]) == result.placement.json
    assert [w["wired"] for w in result.placement.json["workloads"]] == [["l4"]]
    assert "```mermaid" in files["placement.md"].decode()
