"""`addons.<name>.chart` / `knative.chart`: local charts from the stack config, checked like every
other key (one error naming the key path), handed to the Helm Releases unchanged."""

from pathlib import Path

import pytest
from config_bases import NS, mutated

from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform

RELEASE = "kubernetes:helm.sh/v3:Release"
CHARTS = Path(__file__).resolve().parents[1] / "e2e" / "charts"
PLUGIN = str(CHARTS / "nvidia-device-plugin")
MARKER = str(CHARTS / "marker")
RULE = (
    "a chart directory holding Chart.yaml, or a chart archive (.tgz, as `helm package` makes); "
    "a relative path is read from the project directory"
)
SELDON = {"crds": MARKER, "setup": MARKER, "runtime": MARKER}
LOCAL_EVERYWHERE = {
    "knative": {"mode": "operator", "chart": MARKER},
    "addons.kserve.chart": {"crd": MARKER, "controller": MARKER, "runtimes": MARKER},
    "addons.seldon": {"enabled": True, "chart": SELDON},
    "addons.nvidiaDevicePlugin.chart": PLUGIN,
    "addons.certManager.chart": MARKER,
}


def test_every_release_comes_from_its_local_chart(run):
    spec = load_spec(mutated("existing", LOCAL_EVERYWHERE))
    g = run(lambda: InferencePlatform("gi", spec))
    got = {
        r.inputs["name"]: (
            r.inputs["chart"],
            r.inputs.get("version"),
            r.inputs.get("repositoryOpts"),
        )
        for r in g.of_type(RELEASE)
    }
    assert got == {
        "knative-operator": (MARKER, None, None),
        "kserve-crd": (MARKER, None, None),
        "kserve": (MARKER, None, None),
        "kserve-runtime-configs": (MARKER, None, None),
        "seldon-core-v2-crds": (MARKER, None, None),
        "seldon-core-v2-setup": (MARKER, None, None),
        "seldon-core-v2-runtime": (MARKER, None, None),
        "nvidia-device-plugin": (PLUGIN, None, None),
        "cert-manager": (MARKER, None, None),
    }


def test_a_relative_path_is_read_from_the_project_directory(monkeypatch, run):
    monkeypatch.chdir(CHARTS.parent)
    spec = load_spec(mutated("existing", {"addons.nvidiaDevicePlugin.chart": "charts/marker"}))
    g = run(lambda: InferencePlatform("gi", spec))
    (plugin,) = [r for r in g.of_type(RELEASE) if r.inputs["name"] == "nvidia-device-plugin"]
    assert plugin.inputs["chart"] == "charts/marker"  # the provider reads it from there too


@pytest.mark.parametrize(
    ("changes", "path", "message"),
    [
        (
            {"addons.nvidiaDevicePlugin.chart": "/nonexistent/plugin"},
            "addons.nvidiaDevicePlugin.chart",
            f"chart path '/nonexistent/plugin' does not exist (allowed: {RULE})",
        ),
        (
            {"addons.certManager.chart": str(CHARTS)},
            "addons.certManager.chart",
            f"chart path '{CHARTS}' is a directory without a Chart.yaml (allowed: {RULE})",
        ),
        (
            {
                "addons.kserve.chart": {
                    "crd": MARKER,
                    "controller": str(CHARTS / "README.md"),
                    "runtimes": MARKER,
                }
            },
            "addons.kserve.chart.controller",
            f"chart path '{CHARTS / 'README.md'}' is a file but not a chart archive (.tgz) "
            f"(allowed: {RULE})",
        ),
        (
            {"addons.seldon": {"enabled": True, "chart": {**SELDON, "runtime": "/nonexistent/rt"}}},
            "addons.seldon.chart.runtime",
            f"chart path '/nonexistent/rt' does not exist (allowed: {RULE})",
        ),
        (
            {"knative": {"mode": "operator", "chart": "/nonexistent/op"}},
            "knative.chart",
            f"chart path '/nonexistent/op' does not exist (allowed: {RULE})",
        ),
        (
            {"knative.chart": MARKER},
            "knative.chart",
            "a local chart is given but knative.mode is 'patch', which installs no chart "
            "(allowed: leave chart out, or knative.mode: operator)",
        ),
        (
            {"addons.seldon": {"enabled": False, "chart": SELDON}},
            "addons.seldon.chart",
            "a local chart is given but the add-on is not enabled "
            "(allowed: leave chart out, or enabled: true)",
        ),
        (
            {"addons.nvidiaDevicePlugin": {"chart": PLUGIN, "version": "0.17.1"}},
            "addons.nvidiaDevicePlugin.version",
            "version '0.17.1' picks a chart from the repository, and a local chart is given "
            "too; a local chart carries its own version (allowed: chart or version, not both)",
        ),
    ],
    ids=[
        "missing",
        "dir-without-chart-yaml",
        "not-an-archive",
        "seldon-part-missing",
        "knative-missing",
        "knative-patch-mode",
        "addon-disabled",
        "version-and-chart",
    ],
)
def test_bad_chart_paths(changes, path, message):
    with pytest.raises(InputError) as e:
        load_spec(mutated("existing", changes))
    assert str(e.value) == f"{NS}:{path}: {message}"


def test_a_multi_chart_addon_needs_every_chart():
    with pytest.raises(InputError) as e:
        load_spec(mutated("existing", {"addons.kserve.chart": {"crd": MARKER}}))
    assert e.value.path == f"{NS}:addons.kserve.chart.controller"
    assert "required" in e.value.problem
