"""The charts we install, held to their own sources and rendered by Helm itself (helm_judge.py).

For every example stack, every Helm release (and helm.v4 Chart) whose chart a served Go module
holds: each leaf key path of the values we set is a key of that chart (``chart_keys``), and
every controller pod (Deployment, StatefulSet) ``helm template`` renders from our values stays off
the stack's GPU pools and lands on one of its CPU pools (or where we pass it). Skips, naming why,
without Go or the module proxy.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import chart_keys as ck
import helm_judge as hj
import pytest
import rig

pytestmark = [pytest.mark.e2e, pytest.mark.tier("Helm judge")]


def _marker() -> tuple[str, ...]:
    from components.model.deploy.helm_records import OWNER_VALUE

    return ("global", OWNER_VALUE)


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    """Every served chart, prepared, with its keys: name -> (directory, ChartKeys)."""
    into = tmp_path_factory.mktemp("charts")
    out = {}
    for name, source in hj.sources().items():
        try:
            module = hj.module_dir(source.module, source.module_version)
        except hj.SourceUnavailable as e:
            pytest.skip(str(e))
        chart = hj.prepare(source, module, into)
        out[name] = (chart, hj.chart_keys(source, chart, module))
    return out


@pytest.fixture(scope="module")
def helm() -> Path:
    try:
        return hj.build()
    except hj.SourceUnavailable as e:
        pytest.skip(str(e))


ROOT = Path(__file__).resolve().parents[2]
VARIANT = "eks-karpenter-system-pool"
"""eks-karpenter with the Karpenter controller on a CPU pool of the stack (`systemPools: [cpu]`,
the pool kept at one node) instead of the cluster's own node group: the values our code builds
from a pool, which no example stack has."""


def _system_pool(text: str) -> str:
    old_pool = "- name: cpu\n      instanceTypes: [m6i.xlarge]\n      minNodes: 0"
    assert old_pool in text and "nodeGroups: [system]" in text
    text = text.replace(old_pool, old_pool.replace("minNodes: 0", "minNodes: 1"))
    return text.replace("nodeGroups: [system]", "systemPools: [cpu]")


@pytest.fixture(scope="module")
def previews(example_previews: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The example stacks' previews and the variant's."""
    from components.preview.preview import preview

    project = tmp_path_factory.mktemp("variant")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    (project / "stacks").mkdir()
    text = _system_pool((ROOT / "stacks" / "Pulumi.eks-karpenter.yaml").read_text())
    (project / "stacks" / f"Pulumi.{VARIANT}.yaml").write_text(text)
    out = tmp_path_factory.mktemp(VARIANT)
    return {**example_previews, VARIANT: preview(VARIANT, out_dir=out, project_dir=project)}


def _releases(previews: dict[str, Any]) -> list[tuple[hj.Release, list[dict[str, Any]]]]:
    out = []
    for stack, result in previews.items():
        resources = json.loads((result.out_dir / "resources.json").read_text())
        pools = json.loads((result.out_dir / "placement.json").read_text())["pools"]
        out += [(r, pools) for r in hj.releases(stack, resources)]
    return out


def test_every_chart_we_install_is_judged_or_named_unserved(previews: Any) -> None:
    """A chart neither served nor listed as unserved (a new one, or a bump to a version another
    module holds) fails here until the judge knows where its sources are."""
    served, unserved = hj.sources(), hj.not_served()
    for release, _ in _releases(previews):
        if release.chart in served:
            assert release.version == served[release.chart].version, release
        else:
            assert release.chart in unserved, (
                f"{release.stack}: {release.resource} installs {release.chart} {release.version}: no served module known"
            )


def test_every_value_key_we_set_is_a_key_of_its_chart(
    previews: Any, charts: dict[str, tuple[Path, Any]], record_testsuite_property: Any
) -> None:
    unknown, lines, checked, releases = [], [], 0, 0
    skipped: dict[str, set[str]] = {}
    for release, _ in _releases(previews):
        if release.chart not in charts:
            skipped.setdefault(release.chart, set()).add(release.stack)
            continue
        verdict = ck.check_values(
            f"{release.stack}/{release.resource}",
            charts[release.chart][1],
            release.values,
            [_marker()],
        )
        unknown += verdict.unknown
        checked += len(verdict.checked)
        releases += 1
        lines.append(
            f"  {release.stack} {release.resource} ({release.chart}): {len(verdict.checked)} keys"
        )
    print(f"helm judge: {releases} releases, {checked} value keys checked against their charts")
    print("\n".join(lines))
    for chart, stacks in sorted(skipped.items()):
        print(f"  not checked: {chart} ({len(stacks)} stacks): {hj.not_served().get(chart)}")
    record_testsuite_property("helm_releases", releases)
    record_testsuite_property("helm_keys", checked)
    record_testsuite_property("helm_unknown", len(unknown))
    assert not unknown, "\n".join(unknown)


def test_controllers_rendered_by_helm_stay_off_the_gpu_pools(
    previews: Any,
    charts: dict[str, tuple[Path, Any]],
    helm: Path,
    record_testsuite_property: Any,
) -> None:
    faults, pods, renders = [], 0, 0
    t0 = time.monotonic()
    rendered: dict[str, list[dict[str, Any]]] = {}
    for release, pools in _releases(previews):
        if release.chart not in charts:
            continue
        # One render per chart, release and values but for the marker (which no chart reads:
        # the key check holds it), however many stacks install it alike.
        values = json.loads(json.dumps(release.values))
        values.get("global", {}).pop(_marker()[1], None)
        key = json.dumps([release.chart, release.name, release.namespace, values], sort_keys=True)
        if key not in rendered:
            rendered[key] = hj.render(
                helm,
                charts[release.chart][0],
                release.name,
                release.namespace,
                release.values,
                rig.KUBERNETES_VERSION,
            )
        objects = rendered[key]
        renders += 1
        passed = {k: release.values[k] for k in hj.PLACEMENT_KEYS if k in release.values}
        for name, pod in hj.controller_pods(objects):
            pods += 1
            faults += [
                f"{release.stack}: {release.resource} ({release.chart}) {name}: {f}"
                for f in hj.placement_faults(pod, pools, passed)
            ]
    seconds = time.monotonic() - t0
    print(
        f"helm judge: {renders} releases ({len(rendered)} distinct) rendered by helm "
        f"{hj.HELM_VERSION}, {pods} controller "
        f"pods judged against their stacks' pools, {len(faults)} faults, {seconds:.0f}s"
    )
    record_testsuite_property("helm_renders", renders)
    record_testsuite_property("helm_pods", pods)
    record_testsuite_property("helm_faults", len(faults))
    assert pods > 0
    assert not faults, "\n".join(faults)


def test_a_misspelt_key_of_a_real_chart_fails(charts: dict[str, tuple[Path, Any]]) -> None:
    """The check on KServe's own chart: the controller's nodeSelector misspelt is refused, named
    with the real key."""
    values = {
        "kserve": {"controller": {"nodeSelectr": {"pool": "system"}, "deploymentMode": "Standard"}}
    }
    verdict = ck.check_values(
        "gke-dev/gpu-inference-kserve-controller", charts["kserve-resources"][1], values
    )
    assert verdict.unknown == (
        "release gke-dev/gpu-inference-kserve-controller: value key kserve.controller.nodeSelectr.pool "
        "is not a key of chart kserve-resources (in no values.yaml, template or values.schema.json); "
        "the closest real key is kserve.controller.nodeSelector",
    )
    envoy = {"config": {"envoyGateway": {"extensionManager": {"hookz": {"a": 1}}}}}
    (msg,) = ck.check_values("gke-llm/eg", charts["gateway-helm"][1], envoy).unknown
    assert "config.envoyGateway.extensionManager.hookz.a is not a key of chart gateway-helm" in msg
