"""The rig's own logic, without Go or Pulumi (these run in the unit suite): the per-component
cache (each component's build record kept, the old one-key layout reused where the versions
match) and how an installed Pulumi is found, or what the skip says is missing."""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path

import pytest
import rig

SDK = metadata.version("pulumi_kubernetes")
GET = "curl -fsSL https://get.pulumi.com | sh"
PLUGIN_CMD = f"`pulumi plugin install resource kubernetes v{SDK}`"


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("GPU_INFERENCE_RIG_CACHE", str(root))
    return root


def fake_component(name: str, version: str, built: list[str]) -> rig.Component:
    def run(b: rig.Builder) -> None:
        out = b.work(name) / f"{name}.out"
        out.write_text(f"{name} {version}\n")
        b.install(out, name)
        b.timings[f"{name}-binary"] = 0.5
        built.append(name)

    return rig.Component(name, version, (name,), run, "control-plane")


def test_each_component_keeps_its_build_record_when_another_is_built(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    alpha = fake_component("alpha", "1.0", built)
    monkeypatch.setattr(rig, "COMPONENTS", (alpha,))
    monkeypatch.setattr(rig.shutil, "which", lambda name: f"/usr/bin/{name}")
    report = rig.build()
    assert built == ["alpha"] and set(report.built) == {"alpha-1.0"}
    first = rig.build_record(alpha)
    assert first is not None and first["version"] == "1.0" and first["recipe"] == 1
    assert first["steps"] == {"alpha-binary": 0.5}
    assert (cache / "alpha-1.0-r1" / "bin" / "alpha").read_text() == "alpha 1.0\n"

    # A second component appears (say, a new judge): only it is built, alpha's record stays.
    beta = fake_component("beta", "2.0", built)
    monkeypatch.setattr(rig, "COMPONENTS", (alpha, beta))
    rig.build()
    assert built == ["alpha", "beta"]
    assert rig.build_record(alpha) == first
    m = rig.manifest()
    assert set(m["components"]) == {"alpha-1.0", "beta-2.0"}
    assert m["build_seconds"] == pytest.approx(
        first["seconds"] + m["components"]["beta-2.0"]["seconds"]
    )

    # A version change keys a new directory: that component is rebuilt, the other is not.
    alpha2 = fake_component("alpha", "1.1", built)
    monkeypatch.setattr(rig, "COMPONENTS", (alpha2, beta))
    rig.build()
    assert built == ["alpha", "beta", "alpha"]
    assert (cache / "alpha-1.1-r1" / "bin" / "alpha").read_text() == "alpha 1.1\n"


LEGACY = "k8s1.36.3-etcd3.6.16-kwok0.8.0-pulumi3.259.0-pk8s4.32.0-r1"


def legacy_cache(cache: Path, key: str = LEGACY) -> Path:
    d = cache / key
    (d / "bin").mkdir(parents=True)
    for c in rig.COMPONENTS:
        for x in c.binaries:
            (d / "bin" / x).write_text(f"old {x}\n")
    (d / "manifest.json").write_text(
        json.dumps(
            {
                "key": key,
                "go": "go1.26.8",
                "last_build": {
                    "seconds": 681.7,
                    "steps": {
                        "etcd": 101.6,
                        "kwok": 121.0,
                        "kubernetes": 459.1,
                        "kube-apiserver": 310.3,
                        "kube-scheduler": 37.1,
                        "kube-controller-manager": 93.4,
                    },
                },
            }
        )
    )
    return d


def test_the_old_one_key_cache_is_reused_without_go_when_the_versions_match(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = legacy_cache(cache)
    monkeypatch.setattr(rig.shutil, "which", lambda name: None)  # no Go: nothing may be built
    report = rig.build(("control-plane",), kubernetes_versions=["1.36.3"])
    assert report.built == {}
    assert report.adopted == {
        "etcd-3.6.16": str(old),
        "kwok-0.8.0": str(old),
        "kubernetes-1.36.3": str(old),
    }
    # The old layout had 1.36.3 only: 1.37.2 is still to build, and without Go the build says so.
    assert [c.label for c in rig.missing()] == ["kubernetes-1.37.2"]
    with pytest.raises(rig.BuildError, match="no `go` on PATH"):
        rig.build(("control-plane",))
    adopted = [c for c in rig.COMPONENTS if c.label in report.adopted]
    for c in adopted:
        for x in c.binaries:
            new, before = c.dir / "bin" / x, old / "bin" / x
            assert new.read_text() == f"old {x}\n"
            assert os.stat(new).st_ino == os.stat(before).st_ino  # a hard link, not a copy
            assert before.exists()  # the old layout stays usable by older checkouts
    kube = rig.build_record(rig.component_of("kube-apiserver", "1.36.3"))
    assert kube is not None
    assert kube["seconds"] == 459.1 and kube["adopted_from"] == str(old)
    assert kube["steps"] == {
        "kube-apiserver": 310.3,
        "kube-scheduler": 37.1,
        "kube-controller-manager": 93.4,
    }
    assert rig.manifest()["build_seconds"] == pytest.approx(101.6 + 121.0 + 459.1)


@pytest.mark.parametrize(
    "key",
    [
        "k8s1.36.3-etcd3.6.15-kwok0.7.0-pulumi3.259.0-pk8s4.32.0-r1",  # etcd and kwok differ
        "k8s1.36.3-etcd3.6.16-kwok0.8.0-pulumi3.259.0-pk8s4.32.0-r2",  # another recipe
    ],
)
def test_an_old_cache_of_other_versions_or_recipe_is_not_reused(cache: Path, key: str) -> None:
    legacy_cache(cache, key)
    reusable = {c.label for c in rig.COMPONENTS if rig.legacy_source(c) is not None}
    assert reusable == ({"kubernetes-1.36.3"} if key.endswith("-r1") else set())


def test_each_kubernetes_release_has_its_own_cache_directory_and_binaries(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both releases are components of their own (keyed by version), the newest is the default,
    and a control plane asked for a release runs that release's binaries."""
    assert rig.KUBERNETES_VERSIONS == ("1.37.2", "1.36.3")
    assert rig.KUBERNETES_VERSION == "1.37.2"
    kube = [c for c in rig.COMPONENTS if c.name == "kubernetes"]
    assert [(c.label, c.dir.name) for c in kube] == [
        ("kubernetes-1.37.2", "kubernetes-1.37.2-r1"),
        ("kubernetes-1.36.3", "kubernetes-1.36.3-r1"),
    ]
    assert rig.binary_path("kube-scheduler") == (
        cache / "kubernetes-1.37.2-r1" / "bin" / "kube-scheduler"
    )
    assert rig.binary_path("kube-scheduler", "v1.36.3") == (
        cache / "kubernetes-1.36.3-r1" / "bin" / "kube-scheduler"
    )
    # etcd and kwok are shared by both releases.
    assert (
        rig.binary_path("etcd", "1.36.3")
        == rig.binary_path("etcd")
        == (cache / "etcd-3.6.16-r1" / "bin" / "etcd")
    )
    old = rig.ControlPlane(kubernetes_version="1.36.3", workdir=cache / "cp")
    assert old._file("kube-apiserver") == cache / "kubernetes-1.36.3-r1" / "bin" / "kube-apiserver"
    assert rig.ControlPlane(workdir=cache / "cp2").kubernetes_version == "1.37.2"
    with pytest.raises(ValueError, match=r"Kubernetes '1.35.0' is not one the rig builds"):
        rig.ControlPlane(kubernetes_version="1.35.0")
    # Building one release leaves the other alone.
    assert [c.label for c in rig.missing(kubernetes_versions=["1.36.3"])] == [
        "etcd-3.6.16",
        "kwok-0.8.0",
        "kubernetes-1.36.3",
    ]
    assert [c.label for c in rig.missing(names=["kubernetes"])] == [
        "kubernetes-1.37.2",
        "kubernetes-1.36.3",
    ]
    # A quick run on one release, and a release the rig does not build refused by name.
    monkeypatch.setenv("GPU_INFERENCE_KUBERNETES_VERSIONS", "1.36.3")
    assert rig.run_versions() == ("1.36.3",)
    monkeypatch.setenv("GPU_INFERENCE_KUBERNETES_VERSIONS", "1.36.3,1.37.2")
    assert rig.run_versions() == ("1.37.2", "1.36.3")
    monkeypatch.setenv("GPU_INFERENCE_KUBERNETES_VERSIONS", "1.38.0")
    with pytest.raises(ValueError, match=r"Kubernetes '1.38.0' is not one the rig builds"):
        rig.run_versions()
    monkeypatch.delenv("GPU_INFERENCE_KUBERNETES_VERSIONS")
    assert rig.run_versions() == rig.KUBERNETES_VERSIONS
    # Each release's binaries say their own version (the ldflags pulumi-kubernetes needs).
    assert "gitVersion=v1.36.3" in rig._kube_ldflags("1.36.3")
    assert "gitMinor=37" in rig._kube_ldflags("1.37.2")


# ---- finding an installed Pulumi --------------------------------------------------------------


def executable(path: Path, body: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty home and a PATH with nothing of Pulumi's, node's or npm's on it."""
    h = tmp_path / "home"
    h.mkdir()
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("PULUMI_HOME", raising=False)
    return h


def install_pulumi(bin_dir: Path, hosts: tuple[str, ...] = ("python",)) -> Path:
    cli = executable(
        bin_dir / "pulumi", 'if [ "$1" = version ]; then echo v3.999.0; exit 0; fi; echo "$@"'
    )
    for lang in hosts:
        executable(bin_dir / f"pulumi-language-{lang}")
    return cli


def install_plugin(plugins: Path, version: str = SDK) -> Path:
    return executable(plugins / f"resource-kubernetes-v{version}" / "pulumi-resource-kubernetes")


def test_nothing_installed_names_the_cli_and_the_plugin_and_their_commands(home: Path) -> None:
    with pytest.raises(rig.PulumiMissing) as e:
        rig.find_pulumi()
    assert str(e.value) == (
        f"no `pulumi` on PATH or in {home}/.pulumi/bin: install it with `{GET}`; "
        f"no kubernetes resource plugin v{SDK} in {home}/.pulumi/plugins (the installed "
        f"pulumi_kubernetes SDK {SDK} runs exactly the plugin v{SDK}): install it with "
        f"{PLUGIN_CMD}"
    )


def test_a_pulumi_installed_by_its_installer_is_found(home: Path) -> None:
    cli = install_pulumi(home / ".pulumi" / "bin")
    install_plugin(home / ".pulumi" / "plugins")
    found = rig.find_pulumi()
    assert found == rig.PulumiInstall(cli, "v3.999.0", home / ".pulumi" / "plugins", SDK)


def test_only_the_sdk_version_of_the_plugin_counts_and_a_partial_install_does_not(
    home: Path,
) -> None:
    install_pulumi(home / ".pulumi" / "bin")
    plugins = home / ".pulumi" / "plugins"
    install_plugin(plugins, "4.0.0")
    with pytest.raises(rig.PulumiMissing, match=f"no kubernetes resource plugin v{SDK} in"):
        rig.find_pulumi()
    install_plugin(plugins)
    (plugins / f"resource-kubernetes-v{SDK}.partial").write_text("")
    with pytest.raises(rig.PulumiMissing, match=f"install it with {PLUGIN_CMD}$"):
        rig.find_pulumi()


def test_pulumi_on_path_through_a_symlink_needs_its_hosts_beside_the_real_cli(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = install_pulumi(tmp_path / "opt" / "pulumi", hosts=())
    link = tmp_path / "links" / "pulumi"
    link.parent.mkdir()
    link.symlink_to(real)
    monkeypatch.setenv("PATH", str(link.parent))
    plugins = tmp_path / "pulumi-home" / "plugins"
    monkeypatch.setenv("PULUMI_HOME", str(plugins.parent))
    install_plugin(plugins)
    with pytest.raises(rig.PulumiMissing) as e:
        rig.find_pulumi()
    assert str(e.value) == (
        f"no pulumi-language-python beside {real} (where the CLI looks for its language hosts): "
        f"reinstall Pulumi with `{GET}`, which installs them together"
    )
    executable(real.parent / "pulumi-language-python")
    assert rig.find_pulumi() == rig.PulumiInstall(link, "v3.999.0", plugins, SDK)


def test_the_typescript_tier_also_needs_the_nodejs_host_node_and_npm(home: Path) -> None:
    install_pulumi(home / ".pulumi" / "bin")
    install_plugin(home / ".pulumi" / "plugins")
    with pytest.raises(rig.PulumiMissing) as e:
        rig.find_pulumi(rig.PULUMI_TIERS["TypeScript"])
    cli = home / ".pulumi" / "bin" / "pulumi"
    assert str(e.value) == (
        f"no pulumi-language-nodejs beside {cli} (where the CLI looks for its language hosts): "
        f"reinstall Pulumi with `{GET}`, which installs them together; "
        "no `node` on PATH: the TypeScript program needs Node.js and npm; "
        "no `npm` on PATH: the TypeScript program needs Node.js and npm"
    )


def test_the_engine_runs_with_a_private_home_holding_the_installed_plugins(
    home: Path, tmp_path: Path
) -> None:
    cli = install_pulumi(home / ".pulumi" / "bin")
    plugins = home / ".pulumi" / "plugins"
    provider = install_plugin(plugins)
    executable(plugins / "resource-random-v4.16.0" / "pulumi-resource-random")
    (plugins / "resource-random-v4.16.0.partial").write_text("")
    (plugins / f"resource-kubernetes-v{SDK}.lock").write_text("")

    pulumi = rig.Pulumi(tmp_path / "work", kubeconfig=tmp_path / "kubeconfig")
    linked = pulumi.home / "plugins" / f"resource-kubernetes-v{SDK}"
    # A real directory (the CLI skips a symlinked one), its binary a link to the installed one.
    assert linked.is_dir() and not linked.is_symlink()
    assert (linked / "pulumi-resource-kubernetes").resolve() == provider
    assert sorted(p.name for p in (pulumi.home / "plugins").iterdir()) == [linked.name]
    assert pulumi.env["PULUMI_HOME"] == str(pulumi.home)
    assert pulumi.env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] == "true"
    assert pulumi.env["PATH"].split(os.pathsep)[0] == str(cli.parent)
    assert pulumi.env["KUBECONFIG"] == str(tmp_path / "kubeconfig")
    out = pulumi.run("stack", "ls", cwd=tmp_path).stdout
    assert out == "stack ls --non-interactive\n"
    assert not (home / ".pulumi" / "workspaces").exists()
