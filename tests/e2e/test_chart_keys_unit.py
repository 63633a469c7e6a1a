"""The value-key check without Go (unit tier): a small chart written here, the keys a release sets
held to it, a misspelt one failing with the release, the key path and the closest real key."""

from __future__ import annotations

import json
from pathlib import Path

import chart_keys as ck
import pytest

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: fixture\nversion: 1.0.0\n"
    "dependencies:\n  - name: sub\n    alias: crds\n    version: 0.1.0\n",
    "values.yaml": "controller:\n  replicas: 1\n  nodeSelector: {}\n  tolerations: []\n"
    "  image:\n    tag: v1\nsettings:\n  clusterName: ''\nextraEnv:\n",
    "templates/deployment.yaml": "spec:\n  replicas: {{ .Values.controller.replicas }}\n"
    "  {{- with .Values.controller.nodeSelector }}{{ toYaml . }}{{ end }}\n"
    "  {{ $.Values.podAnnotations | toYaml }}\n"
    '  {{ index .Values "serviceAccount" "annotations" | toYaml }}\n'
    "  {{ if .Values.controller.featureGate }}on{{ end }}\n",
    "files/config.json": '{"mode": "{{ .Values.mode.default }}"}\n',
    "README.md": "Set `.Values.documentedOnly`.\n",
    "values.schema.json": json.dumps(
        {
            "type": "object",
            "properties": {
                "webhook": {"$ref": "#/$defs/webhook"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "strict": {
                    "type": "object",
                    "properties": {"on": {"type": "boolean"}},
                    "additionalProperties": False,
                },
            },
            "$defs": {"webhook": {"type": "object", "properties": {"port": {"type": "integer"}}}},
        }
    ),
    "charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
    "charts/sub/values.yaml": "enabled: true\ngatewayAPI:\n  channel: standard\n",
    "charts/sub/templates/x.yaml": "{{ .Values.global.region }}\n",
}


@pytest.fixture
def chart(tmp_path: Path) -> ck.ChartKeys:
    for rel, text in CHART.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return ck.load_chart(tmp_path)


def test_every_kind_of_real_key_passes(chart: ck.ChartKeys) -> None:
    values = {
        "controller": {
            "replicas": 2,  # values.yaml
            "nodeSelector": {"pool": "system"},  # under an open map of values.yaml
            "tolerations": [{"key": "a", "operator": "Exists"}],  # a list: a leaf
            "featureGate": True,  # read by a template only
        },
        "settings": {"clusterName": "c"},
        "extraEnv": {"A": "1"},  # a null default: open
        "podAnnotations": {"x": "y"},  # read whole by a template, not in values.yaml
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn"}},  # index
        "mode": {"default": "fast"},  # read by a rendered file under files/
        "webhook": {"port": 9443},  # the schema, through a $ref
        "labels": {"team": "a"},  # the schema's typed additionalProperties
        "strict": {"on": True},
        "crds": {"enabled": False, "gatewayAPI": {"channel": "experimental"}},  # subchart alias
        "global": {"region": "eu", "ourMarker": "m"},
    }
    verdict = ck.check_values("rel", chart, values, exempt=[("global", "ourMarker")])
    assert verdict.unknown == ()
    assert len(verdict.checked) == 15
    assert verdict.exempt == (("global", "ourMarker"),)


@pytest.mark.parametrize(
    ("values", "path", "near"),
    [
        (
            {"controller": {"nodeSelectr": {"pool": "system"}}},
            "controller.nodeSelectr.pool",
            "controller.nodeSelector",
        ),
        (
            {"controller": {"image": {"tags": "v2"}}},
            "controller.image.tags",
            "controller.image.tag",
        ),
        ({"setings": {"clusterName": "c"}}, "setings.clusterName", "settings"),
        ({"strict": {"of": True}}, "strict.of", "strict.on"),  # the schema closes `strict`
        ({"crds": {"enabeld": True}}, "crds.enabeld", "crds.enabled"),  # in the subchart
        ({"documentedOnly": 1}, "documentedOnly", None),  # a README is not a template
    ],
)
def test_a_misspelt_key_fails_naming_release_path_and_closest(
    chart: ck.ChartKeys, values: dict, path: str, near: str | None
) -> None:
    verdict = ck.check_values("gpu-inference-kserve-controller", chart, values)
    assert len(verdict.unknown) == 1, verdict.unknown
    msg = verdict.unknown[0]
    assert msg.startswith(
        f"release gpu-inference-kserve-controller: value key {path} is not a key of chart fixture"
    )
    if near is not None:
        assert msg.endswith(f"the closest real key is {near}")


def test_a_read_of_an_enumerated_map_does_not_make_new_keys_under_it(
    chart: ck.ChartKeys,
) -> None:
    # `.Values.controller.nodeSelector` is read, and `controller` is enumerated in values.yaml:
    # a key beside `replicas` that nothing reads is still unknown.
    assert ck.known(chart, ("controller", "nodeSelector", "any"))
    assert not ck.known(chart, ("controller", "replica"))


def test_template_reads_and_leaf_paths() -> None:
    text = (
        '{{ .Values.a.b }} {{ $.Values.c }} {{ index .Values "d" "e.f" }} {{ index .Values.g "h" }}'
    )
    assert ck.template_reads(text) == {("a", "b"), ("c",), ("d", "e.f"), ("g",), ("g", "h")}
    assert list(ck.leaf_paths({"a": {"b": 1, "c": {}}, "d": [1]})) == [
        ("a", "b"),
        ("a", "c"),
        ("d",),
    ]
    assert ck.show_path(("sa", "annotations", "eks.amazonaws.com/role-arn")) == (
        'sa.annotations["eks.amazonaws.com/role-arn"]'
    )
