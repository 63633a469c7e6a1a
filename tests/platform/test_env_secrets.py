"""Credentials from Secrets: an env value read from a Secret (`valueFrom.secretKeyRef`) in the stack
config, and a model-download credential (`namespaces.staticCredentials.HF_TOKEN`) that KServe's
storage initializer reads from the Secret the stack makes, under the same data-safety rules as
every object (a create never takes over another's Secret)."""

from __future__ import annotations

import copy

import pytest
import yaml

from components.model.errors import InputError
from components.platform.load import load_spec
from components.preview import preview as pv
from tests.conftest import CRDS, ROOT

LLMISVC = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
HF = {"valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN"}}}


def stack_config(stack: str) -> dict:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]


def with_decode_env(env: object) -> dict:
    config = stack_config("gke-llm")
    config["gpu-inference:llmInferenceServices"][0]["decode"]["env"] = env
    return config


def test_a_decode_env_value_from_a_secret_is_taken():
    spec = load_spec(with_decode_env({"HF_TOKEN": HF, "VLLM_LOGGING_LEVEL": "INFO"}))
    assert spec.llm_inference_services[0].decode.env == {
        "HF_TOKEN": HF,
        "VLLM_LOGGING_LEVEL": "INFO",
    }


P = "gpu-inference:llmInferenceServices[0].decode.env.HF_TOKEN"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"valueFrom": {"secretKeyRef": {"name": "Hf_Token", "key": "HF_TOKEN"}}},
            f"{P}.valueFrom.secretKeyRef.name: 'Hf_Token' has 2 faults: it has uppercase letters "
            "and contains '_' (a DNS subdomain is lowercase; not allowed in a DNS subdomain) "
            "(allowed: at most 253 characters: dot-separated DNS-1123 labels (lowercase letters, "
            "digits, '-'))",
        ),
        (
            {"valueFrom": {"secretKeyRef": {"name": "hf", "key": "HF TOKEN"}}},
            f"{P}.valueFrom.secretKeyRef.key: 'HF TOKEN' is not a Secret key (allowed: at most "
            "253 letters, digits, '-', '_' or '.' (e.g. HF_TOKEN))",
        ),
        (
            {"valueFrom": {"secretKeyRef": {"name": "hf"}}},
            f"{P}.valueFrom.secretKeyRef.key: required key is missing (allowed: the Secret's key)",
        ),
        (
            {"valueFrom": {"secretKeyRef": {"name": "hf", "key": "k", "optinal": True}}},
            f"{P}.valueFrom.secretKeyRef.optinal: unknown key 'optinal' (allowed: name, key, "
            "optional)",
        ),
        (
            {"valueFrom": {"secretKeyRef": {"name": "hf", "key": "k", "optional": "yes"}}},
            f"{P}.valueFrom.secretKeyRef.optional: 'yes' is not true or false (allowed: true or "
            "false)",
        ),
        (
            {"valueFrom": {"configMapKeyRef": {"name": "hf", "key": "k"}}},
            f"{P}.valueFrom.configMapKeyRef: unknown key 'configMapKeyRef' (allowed: secretKeyRef)",
        ),
        (
            {"valueFrom": {}},
            f"{P}.valueFrom: valueFrom {{}} names no source (allowed: one of secretKeyRef)",
        ),
        (
            {"secretKeyRef": {"name": "hf", "key": "k"}},
            f"{P}.secretKeyRef: unknown key 'secretKeyRef' (allowed: valueFrom)",
        ),
        (
            {},
            f"{P}.valueFrom: required key is missing (allowed: {{valueFrom: {{secretKeyRef: "
            "{name: SECRET, key: KEY}}})",
        ),
        (
            5,
            f"{P}: 5 is not a string (allowed: a string (quote numbers and booleans in YAML), or "
            "{valueFrom: {secretKeyRef: {name: SECRET, key: KEY}}})",
        ),
    ],
    ids=[
        "bad-name",
        "bad-key",
        "no-key",
        "unknown-key",
        "optional-not-bool",
        "not-a-secret",
        "no-source",
        "no-valueFrom-wrapper",
        "empty",
        "number",
    ],
)
def test_a_malformed_secret_reference_is_one_error_naming_its_key(value, message):
    with pytest.raises(InputError) as err:
        load_spec(with_decode_env({"HF_TOKEN": value}))
    assert str(err.value) == message


def test_static_credentials_of_two_kinds_in_one_secret_are_refused():
    config = stack_config("gke-dev")
    config["gpu-inference:namespaces"] = {
        "staticCredentials": {"HF_TOKEN": {"secure": "a"}, "AWS_SECRET_ACCESS_KEY": {"secure": "b"}}
    }
    with pytest.raises(InputError) as err:
        load_spec(config)
    assert str(err.value) == (
        "gpu-inference:namespaces.staticCredentials: 'AWS_SECRET_ACCESS_KEY' and 'HF_TOKEN' are "
        "credentials of different kinds; KServe's storage initializer reads one kind from a "
        "Secret (the first: 'AWS_SECRET_ACCESS_KEY') and ignores 'HF_TOKEN' (allowed: the keys "
        "of one kind of storage (e.g. AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY, or HF_TOKEN "
        "alone))"
    )


def previewed(stack: str, change: dict, secret: bool = False) -> list[dict]:
    project = pv.load_project(ROOT)
    config = pv.load_stack_config(project, stack)
    values = {**copy.deepcopy(config.values), **change}
    keys = set(config.secret_keys) | ({"gpu-inference:namespaces"} if secret else set())
    run = pv.run_stack(project, pv.StackConfig(config.stack, config.file, values, keys))
    return pv.graph_entries(run.resources)


@pytest.fixture(scope="module")
def gated():
    """gke-llm with llama-70b's decode and aks-dev's llama-8b predictor reading HF_TOKEN from a
    Secret, and gke-llm's model namespace holding HF_TOKEN for the storage initializer."""
    llm = copy.deepcopy(stack_config("gke-llm")["gpu-inference:llmInferenceServices"])
    llm[0]["decode"]["env"] = {"HF_TOKEN": HF}
    llm[0]["prefill"]["env"] = {"HF_TOKEN": HF}
    namespaces = {"staticCredentials": {"HF_TOKEN": "[secret]"}}
    change = {"gpu-inference:llmInferenceServices": llm, "gpu-inference:namespaces": namespaces}
    isvcs = copy.deepcopy(stack_config("aks-dev")["gpu-inference:inferenceServices"])
    (llama,) = [i for i in isvcs if i["name"] == "llama-8b"]
    llama["predictor"]["env"] = {"HF_TOKEN": HF}
    return {
        "gke-llm": previewed("gke-llm", change, secret=True),
        "aks-dev": previewed("aks-dev", {"gpu-inference:inferenceServices": isvcs}),
    }


def main_env(template: dict) -> list[dict]:
    (main,) = [c for c in template["containers"] if c["name"] == "main"]
    return main.get("env", [])


SECRET_ENV = {
    "name": "HF_TOKEN",
    "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN"}},
}


def test_the_llm_services_decode_and_prefill_pods_read_it_from_the_secret(gated):
    (svc,) = [
        e
        for e in gated["gke-llm"]
        if e["type"] == LLMISVC and e["inputs"]["metadata"]["name"] == "llama-70b"
    ]
    spec = svc["inputs"]["spec"]
    assert main_env(spec["template"]) == [SECRET_ENV]
    assert main_env(spec["prefill"]["template"]) == [SECRET_ENV]
    if CRDS.exists():
        from tests.crdschema import validate_cr

        validate_cr(svc["inputs"])


def test_the_inference_services_predictor_reads_it_from_the_secret(gated):
    (isvc,) = [
        e
        for e in gated["aks-dev"]
        if e["type"] == ISVC and e["inputs"]["metadata"]["name"] == "llama-8b"
    ]
    predictor = isvc["inputs"]["spec"]["predictor"]
    body = next(v for k, v in predictor.items() if isinstance(v, dict) and "env" in v)
    assert SECRET_ENV in body["env"]
    if CRDS.exists():
        from tests.crdschema import validate_cr

        validate_cr(isvc["inputs"])


def test_the_storage_initializer_credential_is_a_secret_the_stack_makes_and_never_takes_over(gated):
    """The model namespace's ServiceAccount references the Secret (KServe's storage initializer
    reads the Secrets of the pod's ServiceAccount, kserve v0.20.0
    pkg/credentials/service_account_credentials.go); the Secret is created with the
    refuse-foreign hook, as every object the stack makes; its value is never written."""
    from tests.preview.test_manifests_schemas import problems

    (secret,) = [e for e in gated["gke-llm"] if e["type"] == "kubernetes:core/v1:Secret"]
    assert secret["inputs"]["stringData"] == {"HF_TOKEN": "[secret]"}
    assert secret["inputs"]["metadata"]["name"] == "model-reader-storage"
    assert secret["options"]["hooks"] == {
        "before_create": ["gpu-inference-cluster-k8s-refuse-foreign-namespaces"]
    }
    sa = next(
        e
        for e in gated["gke-llm"]
        if e["type"] == "kubernetes:core/v1:ServiceAccount"
        and e["inputs"]["metadata"]["namespace"] == "models"
    )
    assert sa["inputs"]["secrets"] == [{"name": "model-reader-storage"}]
    assert problems(secret["inputs"]) == []


def test_the_llm_services_pods_run_as_the_serviceaccount_holding_the_credentials(
    gated, example_previews
):
    """KServe's LLMInferenceService storage initializer takes its credentials from the pods'
    ServiceAccount (kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/workload_storage.go): with
    static credentials, decode, prefill and workers run as the model namespace's; without, the
    stack sets none (KServe's own)."""
    accounts = {}
    for e in gated["gke-llm"]:
        if e["type"] == LLMISVC:
            spec = e["inputs"]["spec"]
            accounts[e["inputs"]["metadata"]["name"]] = [
                part.get("serviceAccountName")
                for part in (
                    spec["template"],
                    spec.get("prefill", {}).get("template"),
                    spec.get("worker"),
                )
                if part is not None
            ]
    assert accounts == {
        "llama-70b": ["model-reader", "model-reader"],
        "qwen-72b": ["model-reader", "model-reader"],
    }
    plain = [e for e in example_previews["gke-llm"].entries if e["type"] == LLMISVC]
    assert plain and all("serviceAccountName" not in e["inputs"]["spec"]["template"] for e in plain)


def test_the_gated_model_example_of_the_llm_page_is_a_valid_config():
    """docs/llm-serving.md's example, in gke-llm with the download token set, loads as written."""
    import re

    page = (ROOT / "docs" / "llm-serving.md").read_text()
    (block,) = [
        b for b in re.findall(r"^```yaml\n(.*?)^```", page, re.S | re.M) if "secretKeyRef" in b
    ]
    example = yaml.safe_load(block)
    config = stack_config("gke-llm")
    (llama,) = example["gpu-inference:llmInferenceServices"]
    services = config["gpu-inference:llmInferenceServices"]
    services[[s["name"] for s in services].index("llama-70b")] = llama
    config["gpu-inference:namespaces"] = {"staticCredentials": {"HF_TOKEN": {"secure": "x"}}}
    spec = load_spec(config)
    (svc,) = [s for s in spec.llm_inference_services if s.name == "llama-70b"]
    assert svc.decode.env == {"HF_TOKEN": HF}
    assert spec.namespaces.static_credentials == {"HF_TOKEN": "x"}
