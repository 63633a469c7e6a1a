"""The dependency lists outside pyproject.toml say what it says.

pyproject.toml's [project] dependencies and cloud extras are the source. provider/requirements.txt
(the component provider's virtualenv, made by Pulumi from that file; it serves every cloud's
components) is a copy of the dependencies and the `all` extra's SDKs; the policy pack's
requirements name only some of them, each within pyproject's range (the pack imports the same
`components`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def project_dependencies() -> dict[str, Requirement]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = [Requirement(line) for line in doc["project"]["dependencies"]]
    return {canonicalize_name(r.name): r for r in reqs}


def project_extras() -> dict[str, list[Requirement]]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {
        extra: [Requirement(line) for line in lines]
        for extra, lines in doc["project"]["optional-dependencies"].items()
    }


def test_each_cloud_sdk_is_installed_by_the_extra_of_its_cloud_and_not_by_the_core() -> None:
    """`pip install 'gpu-inference[gke]'` brings the GCP SDK only; the core none (together some
    920 MB installed); `[all]` the three; the test extra every cloud (the tests preview every
    example stack). The extras are the ones `components.kube.sdks` names when an SDK is missing."""
    from components.kube.sdks import CLOUD_SDKS

    extras = project_extras()
    clouds = {extra: [str(r) for r in extras[extra]] for extra in CLOUD_SDKS}
    assert {
        extra: [canonicalize_name(Requirement(r).name) for r in reqs]
        for extra, reqs in clouds.items()
    } == {extra: [dist] for extra, (_, dist) in CLOUD_SDKS.items()}
    assert not set(project_dependencies()) & {dist for _, dist in CLOUD_SDKS.values()}
    assert [str(r) for r in extras["all"]] == ["gpu-inference[aks,eks,gke]"]
    assert "gpu-inference[all]" in [str(r) for r in extras["test"]]


def requirements_file(path: Path) -> dict[str, Requirement]:
    reqs = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            reqs.append(Requirement(line))
    return {canonicalize_name(r.name): r for r in reqs}


def test_provider_requirements_are_pyprojects_dependencies() -> None:
    ours = project_dependencies()
    for extra in ("gke", "eks", "aks"):
        ours.update({canonicalize_name(r.name): r for r in project_extras()[extra]})
    provider = requirements_file(ROOT / "provider" / "requirements.txt")
    expected = "\n".join(str(r) for r in ours.values())
    assert {n: (r.specifier, r.marker, r.extras) for n, r in provider.items()} == {
        n: (r.specifier, r.marker, r.extras) for n, r in ours.items()
    }, (
        f"provider/requirements.txt must list exactly pyproject's dependencies and cloud extras:\n{expected}"
    )


def bounds(spec: SpecifierSet) -> tuple[Version | None, Version | None]:
    """The lowest version a set allows (its >= or ==) and the version it stays below (< or ==)."""
    low = high = None
    for s in spec:
        v = Version(s.version)
        if s.operator in (">=", "=="):
            low = v if low is None else max(low, v)
        if s.operator in ("<", "=="):
            high = v if high is None else min(high, v)
        if s.operator not in (">=", "<", "=="):
            raise AssertionError(f"unexpected specifier {s} (only >=, < and == are used here)")
    return low, high


def test_policy_pack_requirements_stay_within_pyprojects_ranges() -> None:
    ours = project_dependencies()
    policy = requirements_file(ROOT / "policy" / "requirements.txt")
    shared = sorted(set(ours) & set(policy))
    assert "pydantic" in shared and "pulumi" in shared
    for name in shared:
        (p_low, p_high), (o_low, o_high) = (
            bounds(policy[name].specifier),
            bounds(ours[name].specifier),
        )
        assert p_low is not None and o_low is not None and p_low >= o_low, (
            f"policy/requirements.txt allows {name} {policy[name].specifier}, below "
            f"pyproject's {ours[name].specifier}"
        )
        assert o_high is None or (p_high is not None and p_high <= o_high), (
            f"policy/requirements.txt allows {name} {policy[name].specifier}, above "
            f"pyproject's {ours[name].specifier}"
        )


def test_bounds_of_the_specifiers_used() -> None:
    assert bounds(SpecifierSet(">=3.166.0,<4")) == (Version("3.166.0"), Version("4"))
    assert bounds(SpecifierSet("==1.21.0")) == (Version("1.21.0"), Version("1.21.0"))
    assert bounds(SpecifierSet(">=6.0")) == (Version("6.0"), None)


def test_the_pulumi_floor_is_the_one_the_hooks_need() -> None:
    """The stack's provider registers resource and error hooks (`components.kube.provider`):
    pyproject's pulumi floor is the version that has them all."""
    from components.kube.provider import MIN_PULUMI

    low, _ = bounds(project_dependencies()["pulumi"].specifier)
    assert low == Version(MIN_PULUMI)
