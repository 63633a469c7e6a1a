"""Add-on installs from a local chart (directory or .tgz) instead of a repository: air-gapped
clusters and the e2e rig. The Release gets the path as its chart, no repository, no version."""

import io
import tarfile
from pathlib import Path

import pytest

from components.model.deploy.charts import check_local_chart, local_chart_problem
from components.model.errors import InputError
from components.serving.cert_manager import CertManager, CertManagerArgs
from components.serving.knative import KnativeServing, KnativeServingArgs
from components.serving.kserve_install import KServeInstall, KServeInstallArgs
from components.serving.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.serving.seldon_install import SeldonCoreInstall, SeldonCoreInstallArgs
from tests.conftest import marked

RELEASE = "kubernetes:helm.sh/v3:Release"
CHARTS = Path(__file__).resolve().parents[1] / "e2e" / "charts"
PLUGIN = str(CHARTS / "nvidia-device-plugin")
MARKER = str(CHARTS / "marker")


def releases(g):
    return {r.inputs["name"]: r.inputs for r in g.of_type(RELEASE)}


def packaged(tmp_path: Path, files: dict[str, str], name: str = "chart.tgz") -> Path:
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as tar:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_device_plugin_from_a_local_directory(run):
    args = NvidiaDevicePluginArgs(chart=PLUGIN)
    rel = run(lambda: NvidiaDevicePlugin("dp", args)).one(RELEASE).inputs
    assert rel == {
        "name": "nvidia-device-plugin",
        "chart": PLUGIN,
        "namespace": "nvidia-device-plugin",
        # Made by the stack as a Namespace (destroy deletes it), not by Helm.
        "createNamespace": False,
        "values": marked(
            {
                "tolerations": [
                    {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                ],
                "nfd": {
                    "worker": {
                        "tolerations": [
                            {"key": "CriticalAddonsOnly", "operator": "Exists"},
                            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        ]
                    }
                },
            },
            "dp-release",
        ),
        "atomic": True,
        "timeout": 900,
        "compat": "true",  # added by the SDK
    }


def test_cert_manager_from_a_packaged_chart(run, tmp_path):
    tgz = str(packaged(tmp_path, {"cert-manager/Chart.yaml": "name: cert-manager\n"}))
    rel = run(lambda: CertManager("cm", CertManagerArgs(chart=tgz))).one(RELEASE).inputs
    assert rel["chart"] == tgz
    assert "version" not in rel and "repositoryOpts" not in rel


def test_kserve_takes_every_chart_locally(run):
    args = KServeInstallArgs(crd_chart=MARKER, controller_chart=PLUGIN, runtime_chart=MARKER)
    rel = releases(run(lambda: KServeInstall("kserve", args)))
    assert {n: (r["chart"], "version" in r, "repositoryOpts" in r) for n, r in rel.items()} == {
        "kserve-crd": (MARKER, False, False),
        "kserve": (PLUGIN, False, False),
        "kserve-runtime-configs": (MARKER, False, False),
    }
    # The version still says which KServe the charts hold: v0.20 spells Serverless "Knative".
    assert rel["kserve"]["values"]["kserve"]["controller"]["deploymentMode"] == "Knative"


def test_seldon_takes_its_three_charts_locally(run):
    args = SeldonCoreInstallArgs(crds_chart=MARKER, setup_chart=MARKER, runtime_chart=PLUGIN)
    rel = releases(run(lambda: SeldonCoreInstall("seldon", args)))
    assert {n: r["chart"] for n, r in rel.items()} == {
        "seldon-core-v2-crds": MARKER,
        "seldon-core-v2-setup": MARKER,
        "seldon-core-v2-runtime": PLUGIN,
    }
    assert not any("version" in r or "repositoryOpts" in r for r in rel.values())


def test_only_the_charts_given_are_local(run):
    rel = releases(
        run(lambda: SeldonCoreInstall("seldon", SeldonCoreInstallArgs(setup_chart=MARKER)))
    )
    assert rel["seldon-core-v2-setup"]["chart"] == MARKER
    assert rel["seldon-core-v2-crds"]["chart"] == "seldon-core-v2-crds"
    assert rel["seldon-core-v2-crds"]["repositoryOpts"] == {
        "repo": "https://seldonio.github.io/helm-charts"
    }


def test_knative_operator_from_a_local_chart(run):
    g = run(lambda: KnativeServing("knative", KnativeServingArgs(operator_chart=MARKER)))
    rel = g.one(RELEASE).inputs
    assert rel == {
        "name": "knative-operator",
        "chart": MARKER,
        "namespace": "knative-operator",
        "values": marked({}, "knative-operator"),
        "compat": "true",
    }


def test_knative_patch_mode_refuses_an_operator_chart():
    with pytest.raises(InputError) as e:
        KnativeServing("knative", KnativeServingArgs(mode="patch", operator_chart=MARKER))
    assert str(e.value) == (
        "KnativeServing('knative').args.operator_chart: operator_chart is given in mode 'patch', "
        "which installs no chart (allowed: operator_chart only with mode 'operator')"
    )


RULE = (
    "a chart directory holding Chart.yaml, or a chart archive (.tgz, as `helm package` makes); "
    "a relative path is read from the project directory"
)


def test_component_refuses_a_bad_path_naming_the_arg(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(InputError) as e:
        KServeInstall("kserve", KServeInstallArgs(crd_chart=MARKER, controller_chart=missing))
    assert str(e.value) == (
        f"KServeInstall('kserve').args.controller_chart: chart path '{missing}' does not exist "
        f"(allowed: {RULE})"
    )


def test_what_is_a_local_chart(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "values.yaml").write_text("a: 1\n")
    (tmp_path / "broken.tgz").write_text("not gzip")
    packaged(tmp_path, {"c/values.yaml": "a: 1\n"}, "nochart.tgz")
    packaged(tmp_path, {"c/Chart.yaml": "name: c\n"}, "good.tgz")
    packaged(tmp_path, {"c/Chart.yaml": "name: c\n"}, "good-1.0.0.tar.gz")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "Chart.yaml").write_text("name: dir\n")
    problems = {
        p: local_chart_problem(p, tmp_path)
        for p in ("", "gone", "empty", "values.yaml", "broken.tgz", "nochart.tgz")
    }
    assert problems == {
        "": "chart path '' is empty",
        "gone": f"chart path 'gone' does not exist (read from {tmp_path})",
        "empty": "chart path 'empty' is a directory without a Chart.yaml",
        "values.yaml": "chart path 'values.yaml' is a file but not a chart archive (.tgz)",
        "broken.tgz": "chart path 'broken.tgz' is not a gzipped tar archive",
        "nochart.tgz": "chart archive 'nochart.tgz' holds no <chart>/Chart.yaml",
    }
    for good in ("good.tgz", "good-1.0.0.tar.gz", "dir", str(tmp_path / "dir")):
        assert local_chart_problem(good, tmp_path) is None, good
    assert check_local_chart(PLUGIN) == PLUGIN
