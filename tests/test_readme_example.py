"""The README's library example runs as written and places the predictor on the pool."""

import re

from tests.conftest import ROOT


def test_readme_python_example_runs(run):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Use the components.*?```python\n(.*?)```", text, re.S)
    assert block, "the README lost its Python example"
    g = run(lambda: exec(block.group(1), {}))
    isvc = g.one("kubernetes:serving.kserve.io/v1beta1:InferenceService")
    predictor = isvc.inputs["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"gpu-inference.dev/pool": "l4"}
    assert {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "present",
        "effect": "NoSchedule",
    } in predictor["tolerations"]
    assert g.depends_on(isvc, g.one("kubernetes:operator.knative.dev/v1beta1:KnativeServing"))
