"""The policy pack as a policy group member: the config files it ships (preventative, audit) read
as the engine reads them, each policy's effective enforcement level, the config each policy's
`validate` then gets, and the self-contained folder `pulumi policy publish` uploads."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from typing import Any

import jsonschema
import pytest
import yaml

pytest.importorskip("pulumi_policy", reason="pip install -r policy/requirements.txt")

from pulumi_policy import EnforcementLevel

from tests.conftest import ROOT
from tests.test_policy import ONPREM, validate_stack

sys.path.insert(0, str(ROOT / "policy"))
import bundle
import gpu_inference_policies as gp

CONFIGS = ROOT / "policy" / "config"
LEVELS = {"advisory", "mandatory", "remediate", "disabled"}
"""apitype.EnforcementLevel's valid values (pulumi sdk/go/common/apitype/policy.go)."""
POLICIES = {p.name: p for p in gp.POLICIES}


def effective(config: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each policy's (enforcement level, properties) once the engine has applied `config`, as
    pulumi v3.259 does it: `pkg/resource/analyzer/config.go` parsePolicyPackConfig (a string is
    a level; an object's `enforcementLevel` is taken out of its properties), then
    createConfigWithDefaults (the policies' own levels) and applyConfig (`all` first, then each
    policy's own entry)."""
    given: dict[str, tuple[str | None, dict[str, Any]]] = {}
    for name, value in config.items():
        if isinstance(value, str):
            assert value in LEVELS, (name, value)
            given[name] = (value, {})
        else:
            props = dict(value)
            level = props.pop("enforcementLevel", None)
            assert level is None or level in LEVELS, (name, level)
            given[name] = (level, props)
    result = {name: (p.enforcement_level.value, {}) for name, p in POLICIES.items()}
    all_level = given.get("all", (None, {}))[0]
    if all_level:
        result = {name: (all_level, props) for name, (_, props) in result.items()}
    for name, (level, props) in given.items():
        if name == "all":
            continue
        assert name in POLICIES, f"no policy {name!r} in the pack"
        old_level, old_props = result[name]
        result[name] = (level or old_level, {**old_props, **props})
    return result


def check_schemas(config: dict[str, Any]) -> None:
    """Each policy's properties against its config schema, as the engine validates them
    (`validatePolicyConfig`: an object with the schema's properties and required keys)."""
    for name, (_, props) in effective(config).items():
        schema = POLICIES[name].config_schema
        if schema is None:
            assert props == {}, name
            continue
        jsonschema.validate(props, {"type": "object", "properties": schema.properties})


def load(name: str) -> dict[str, Any]:
    return json.loads((CONFIGS / name).read_text())


def test_the_preventative_config_states_every_policys_default_level():
    config = load("preventative.json")
    assert set(config) == set(POLICIES)
    levels = {name: level for name, (level, _) in effective(config).items()}
    assert levels == {name: p.enforcement_level.value for name, p in POLICIES.items()}
    check_schemas(config)


def test_the_audit_config_makes_every_policy_advisory():
    levels = {name: level for name, (level, _) in effective(load("audit.json")).items()}
    assert levels == dict.fromkeys(POLICIES, "advisory")


def test_a_group_sets_one_rule_apart_and_configures_another():
    config = {
        "all": "advisory",
        "gpu-placement-errors": {"enforcementLevel": "mandatory", "ignoreCodes": ["GI008"]},
        "isvc-gpu-without-toleration": "disabled",
        "gpu-cloud-quota": {
            "quotas": [
                {"provider": "gke", "region": "us-central1", "limits": {"NVIDIA_L4_GPUS": 8}}
            ]
        },
    }
    check_schemas(config)
    got = effective(config)
    assert got["gpu-placement-errors"] == ("mandatory", {"ignoreCodes": ["GI008"]})
    assert got["isvc-gpu-without-toleration"] == ("disabled", {})
    assert got["gpu-cloud-quota"][0] == "advisory"
    assert got["gpu-placement-warnings"] == ("advisory", {})


def test_a_config_the_schema_refuses_is_caught():
    with pytest.raises(jsonschema.ValidationError, match="'GI8' does not match"):
        check_schemas({"gpu-placement-errors": {"ignoreCodes": ["GI8"]}})


@pytest.mark.parametrize("config", ["preventative.json", "audit.json"])
def test_audit_and_preventative_report_the_same_violations(config):
    """The config changes how a violation counts (blocking or reported), never what is found:
    each policy's validate gets its properties from the config."""
    _, props = effective(load(config))["gpu-placement-errors"]
    found = validate_stack(gp.gpu_placement_errors, ONPREM, props)
    assert [m.split(":")[0] for m, _ in found] == ["GI001"]
    assert gp.gpu_placement_errors.enforcement_level is EnforcementLevel.MANDATORY


def test_the_pack_version_is_the_projects():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pack = yaml.safe_load((ROOT / "policy" / "PulumiPolicy.yaml").read_text())
    assert pack["version"] == project["version"]


def test_the_bundle_runs_with_nothing_but_its_own_folder(tmp_path):
    out = tmp_path / "policy-pack"
    files = {str(p.relative_to(out)) for p in bundle.bundle(out)}
    assert {"PulumiPolicy.yaml", "__main__.py", "requirements.txt", "config/audit.json"} <= files
    assert "components/check/rules.py" in files
    assert not any(f.startswith(("components/pools", "components/platform")) for f in files)
    probe = (
        "import sys, json\n"
        f"sys.path.insert(0, {str(out)!r})\n"
        "import gpu_inference_policies as gp, components\n"
        "print(json.dumps([components.__file__, len(gp.POLICIES), sorted(\n"
        "    m for m in sys.modules if m.startswith('components.')\n"
        "    and not m.startswith(('components.check', 'components.model')))]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    where, count, others = json.loads(run.stdout.splitlines()[-1])
    assert where == str(out / "components" / "__init__.py")
    assert (count, others) == (len(gp.POLICIES), [])


def test_the_bundle_is_never_written_into_the_pack(tmp_path):
    with pytest.raises(ValueError, match="outside policy/"):
        bundle.bundle(ROOT / "policy" / "out")


def test_the_configs_the_docs_show_are_ones_the_engine_takes():
    import re

    text = (ROOT / "docs" / "policy-pack.md").read_text()
    blocks = re.findall(r"^```json\n(.*?)^```", text, re.S | re.M)
    assert blocks
    for block in blocks:
        check_schemas(json.loads(block))
