"""A stack that imports Pulumi ESC environments, previewed offline: what a local definition
resolves, what `pulumi env open --format detailed` values give, how they merge with the stack's
own config (as the Pulumi CLI merges them), and the one message when a value the program reads
is only known to Pulumi Cloud."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from preview_project import make_project

from components.preview import cli
from components.preview import esc as escmod
from components.preview import preview as pv
from tests.conftest import ROOT

ENV = """\
imports:
  - team/common
values:
  login:
    fn::open::gcp-login:
      project: 123
      oidc: {workloadPoolId: p, providerId: p, serviceAccount: sa@x.iam.gserviceaccount.com}
  cluster: {name: inference, zone: us-central1-a}
  token:
    fn::secret: s3cr3t
  pulumiConfig:
    gcp:project: my-project
    gcp:accessToken: ${login.accessToken}
    spec:
      pool: ${cluster.name}-l4
      zones: ["${cluster.zone}"]
      replicas: 2
    team: ml-${region}
    apiKey: ${token}
    encoded:
      fn::toBase64: ${cluster.name}
"""
COMMON = "values:\n  region: eu\n  pulumiConfig:\n    owner: platform\n    spec: {pool: other, tier: gold}\n"


def project_with(tmp_path: Path, stack: str, envs: dict[str, str]) -> pv.Project:
    make_project(tmp_path, stack_yaml=stack)
    for name, text in envs.items():
        path = tmp_path / "stacks" / "esc" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pv.load_project(tmp_path)


def test_a_definition_resolves_what_it_can_under_the_stacks_own_values(tmp_path):
    stack = "environment:\n  - team/dev\nconfig:\n  gpu-inference:spec:\n    replicas: 3\n"
    project = project_with(tmp_path, stack, {"team/dev": ENV, "team/common": COMMON})
    config = pv.load_stack_config(project, "dev")
    assert config.values == {
        "gcp:project": "my-project",
        "gpu-inference:apiKey": "[secret]",
        "gpu-inference:encoded": "aW5mZXJlbmNl",
        "gpu-inference:owner": "platform",
        "gpu-inference:region": "eu-west",
        # imports < the environment's own values < the stack's (maps merged key by key)
        "gpu-inference:spec": {
            "pool": "inference-l4",
            "replicas": 3,
            "tier": "gold",
            "zones": ["us-central1-a"],
        },
        "gpu-inference:team": "ml-eu",
    }
    assert config.secret_keys == {"gpu-inference:apiKey"}
    assert config.notes == [
        "note: ESC values not known offline, left out (the program does not read them): "
        "gcp:accessToken"
    ]


def test_a_value_the_program_reads_that_only_pulumi_cloud_knows_is_one_message(tmp_path, capsys):
    env = ENV.replace("team: ml-${region}", "team: ${login.project}")
    project = project_with(
        tmp_path, "environment: [team/dev]\n", {"team/dev": env, "team/common": COMMON}
    )
    with pytest.raises(pv.PreviewError) as err:
        pv.load_stack_config(project, "dev")
    assert str(err.value) == (
        "gpu-inference:team comes from the stack's ESC environment and is not known offline: "
        "fn::open::gcp-login at stacks/esc/team/dev.yaml:5, which only Pulumi Cloud opens. "
        "Pass the environment's values (pulumi env open team/dev --format detailed > dev.json), "
        "then: gpu-inference preview dev --env-file dev.json; or set gpu-inference:team in the "
        "stack file"
    ).replace("stacks/esc", str(tmp_path / "stacks" / "esc"))
    # The CLI: exit 2, that message, no traceback.
    code = cli.main(["preview", "dev", "--project-dir", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 2
    assert out.err.startswith("error: gpu-inference:team comes from the stack's ESC environment")
    assert "Traceback" not in out.err


def test_the_stack_file_may_set_what_the_environment_cannot(tmp_path):
    env = ENV.replace("team: ml-${region}", "team: ${login.project}")
    stack = "environment: [team/dev]\nconfig:\n  gpu-inference:team: ml\n"
    project = project_with(tmp_path, stack, {"team/dev": env, "team/common": COMMON})
    assert pv.load_stack_config(project, "dev").values["gpu-inference:team"] == "ml"


def test_a_missing_definition_says_how_to_pass_the_environment(tmp_path):
    project = project_with(tmp_path, "environment:\n  - team/prod\n", {})
    with pytest.raises(pv.PreviewError) as err:
        pv.load_stack_config(project, "dev")
    assert "imports the ESC environment team/prod, which the offline preview cannot open" in str(
        err.value
    )
    assert "pulumi env open team/prod --format detailed > env.json" in str(err.value)
    assert "--env-file env.json" in str(err.value)


def opened(value, secret=False, unknown=False):
    """A value as `pulumi env open --format detailed` writes it (esc `Value` JSON)."""
    if isinstance(value, dict):
        value = {k: opened(v) if not isinstance(v, tuple) else opened(*v) for k, v in value.items()}
    out = {"value": value, "trace": {"def": {"environment": "team/dev"}}}
    return {**out, **({"secret": True} if secret else {}), **({"unknown": True} if unknown else {})}


def test_opened_values_keep_secrets_and_unknowns(tmp_path):
    project = project_with(tmp_path, "environment: [team/dev]\n", {})
    doc = opened(
        {
            "pulumiConfig": {
                "team": "ml",
                "dbPassword": ("hunter2", True),
                "aws:sessionToken": ("", False, True),
            },
            "environmentVariables": {"AWS_REGION": "us-east-1"},
        }
    )
    file = tmp_path / "dev.json"
    file.write_text(json.dumps(doc))
    config = pv.load_stack_config(project, "dev", [file])
    assert config.values["gpu-inference:team"] == "ml"
    assert config.values["gpu-inference:dbPassword"] == "[secret]"
    assert "aws:sessionToken" not in config.values
    assert config.secret_keys == {"gpu-inference:dbPassword"}


def test_the_plain_json_format_is_refused_for_losing_which_values_are_secret(tmp_path):
    project = project_with(tmp_path, "environment: [team/dev]\n", {})
    file = tmp_path / "dev.json"
    file.write_text(json.dumps({"pulumiConfig": {"team": "ml", "dbPassword": "hunter2"}}))
    with pytest.raises(pv.PreviewError, match="--format detailed"):
        pv.load_stack_config(project, "dev", [file])


def test_an_inline_environment_in_the_stack_file(tmp_path):
    stack = (
        "environment:\n  imports: [team/common]\n  values:\n    pulumiConfig:\n"
        "      team: ${region}-team\n"
    )
    project = project_with(tmp_path, stack, {"team/common": COMMON})
    values = pv.load_stack_config(project, "dev").values
    assert (values["gpu-inference:team"], values["gpu-inference:owner"]) == ("eu-team", "platform")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("values:\n  a: ${a}\n  pulumiConfig: {x: '${a}'}\n", "a reference cycle"),
        ("values:\n  pulumiConfig: {x: '${nope.there}'}\n", "${nope.there} at"),
        (
            "values:\n  s: {fn::secret: {ciphertext: ZXhhbXBsZQ==}}\n  pulumiConfig: {x: '${s}'}\n",
            "an encrypted fn::secret",
        ),
        ("values:\n  pulumiConfig: {x: {fn::rotate::aws-iam: {}}}\n", "fn::rotate::aws-iam at"),
    ],
)
def test_what_is_unresolved_offline_says_why(tmp_path, text, why):
    project = project_with(tmp_path, "environment: [team/dev]\n", {"team/dev": text})
    with pytest.raises(pv.PreviewError) as err:
        pv.load_stack_config(project, "dev")
    assert why in str(err.value)


def test_references_escapes_and_quoted_keys():
    assert escmod.parse_path('a.b[0]["gcp:project"]', "f") == ("a", "b", 0, "gcp:project")
    env = escmod.Environment("e", Path("e.yaml"), None)
    import yaml

    env.values = yaml.compose("x: {y: 1}\nz: 'cost $${x.y} is ${x.y}'\n")
    assert env.get(("z",)) == "cost ${x.y} is 1"


@pytest.mark.parametrize("stack", ["gke-esc", "eks-esc", "aks-esc"])
def test_the_example_esc_stacks_take_their_cluster_and_pools_from_the_environment(stack):
    project = pv.load_project(ROOT)
    config = pv.load_stack_config(project, stack)
    cluster = config.values["gpu-inference:cluster"]
    assert cluster["provider"] == stack.split("-")[0]
    assert config.values["gpu-inference:pools"]
    assert config.values["gpu-inference:inferenceServices"]  # the stack file's own
    assert config.notes == []  # everything the program reads resolves from the definition
    assert config.secret_keys == set()


def test_the_message_the_docs_show(tmp_path, monkeypatch, capsys):
    """docs/esc.md's example: gke-esc with the cluster's project taken from the OIDC login."""
    import re
    import shutil

    (tmp_path / "stacks" / "esc" / "gpu-inference").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "stacks/Pulumi.gke-esc.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    definition = (ROOT / "stacks/esc/gpu-inference/gke.yaml").read_text()
    edited = definition.replace(
        "      project: ${cluster.project}\n", "      project: ${gcp.login.project}\n"
    )
    assert edited != definition
    (tmp_path / "stacks/esc/gpu-inference/gke.yaml").write_text(edited)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["preview", "gke-esc"]) == 2
    shown = re.search(r"^```\n(error: .*?)\n```", (ROOT / "docs/esc.md").read_text(), re.M | re.S)
    assert shown is not None
    assert capsys.readouterr().err == shown.group(1) + "\n"
