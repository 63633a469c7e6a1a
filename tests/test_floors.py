"""The lowest versions pyproject.toml admits are ones the project works with (checked by installing
exactly those floors in a scratch virtualenv and running the unit suite): each floor below is the
first release with what we use."""

import inspect
import subprocess
import sys
import tomllib

from tests.conftest import ROOT

# distribution -> (lowest version we need, why)
NEEDED = {
    # pulumi.provider.experimental.component.ComponentProvider (components/provider.py): 3.166.0
    # (pulumi #19360 moved it there); pulumi-aws 7.0.0 itself requires pulumi >= 3.165.0.
    "pulumi": ((3, 166, 0), "ComponentProvider in pulumi.provider.experimental.component"),
    # the `pulumi.com/waitFor` annotation on the KnativeServing CR: pulumi-kubernetes 4.18.0.
    "pulumi-kubernetes": ((4, 18, 0), "pulumi.com/waitFor"),
    # eks.get_cluster_output(region=...) (cluster_access.py): 7.0.0; the last 6.x, 6.83.4, has
    # no `region` parameter.
    "pulumi-aws": ((7, 0, 0), "eks.get_cluster_output(region=...)"),
    # pydantic < 2.10 warns at import that `model_size_gb` is in the protected `model_` namespace.
    "pydantic": ((2, 10), "no protected-namespace warning on model_* fields"),
}


def _floors() -> dict[str, tuple[int, ...]]:
    """The floors of the core's dependencies and of the cloud extras' SDKs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    deps = [*project["dependencies"], *extras["gke"], *extras["eks"], *extras["aks"]]
    out = {}
    for dep in deps:
        name, _, rest = dep.partition(">=")
        floor = rest.split(",")[0]
        out[name.strip()] = tuple(int(p) for p in floor.split("."))
    return out


def test_floors_are_the_first_versions_with_what_we_use():
    floors = _floors()
    for dist, (needed, why) in NEEDED.items():
        assert floors[dist] >= needed, f"{dist} floor {floors[dist]} predates {why}"


def test_the_installed_aws_sdk_takes_a_region_on_the_cluster_lookup():
    import pulumi_aws as aws

    assert "region" in inspect.signature(aws.eks.get_cluster_output).parameters


def test_the_stack_config_model_imports_without_warnings():
    """A pydantic warning at import would print on every `gpu-inference` run."""
    code = "import components.platform.config"
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
