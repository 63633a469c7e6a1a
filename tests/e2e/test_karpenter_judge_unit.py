"""The Karpenter judge's Python side without Go (unit tier): pins, cache key, build outcomes
(with a stand-in `go`), request encoding and answer parsing."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import karpenter_judge as kj
import pytest

from components.model.deploy.versions import KARPENTER_VERSION

# ---------------------------------------------------------------------------------------------
# Pins and the cache
# ---------------------------------------------------------------------------------------------


def test_the_aws_build_is_the_karpenter_the_stacks_install_on_the_core_it_pins() -> None:
    """The judge runs the Karpenter the EKS stacks install: the AWS provider and core at
    KARPENTER_VERSION (one fact; bumping the pin without the judge, or the judge without the pin,
    fails here). aws/karpenter-provider-aws v1.15.0's go.mod requires sigs.k8s.io/karpenter
    v1.15.0 (a tag, unlike v1.14.1's pseudo-version); go.mod holds the AWS provider alone, so
    nothing raises it."""
    versions = kj.module_versions()
    assert versions[kj.AWS_MODULE] == versions[kj.CORE_MODULE] == f"v{KARPENTER_VERSION}"
    assert kj.karpenter_version() == KARPENTER_VERSION == "1.15.0"
    assert kj.AZURE_MODULE not in versions
    sums = kj.sumfile().read_text().splitlines()
    for module in (kj.AWS_MODULE, kj.CORE_MODULE):
        assert any(line.startswith(f"{module} {versions[module]} h1:") for line in sums), module


def test_the_azure_build_pins_karpenter_on_azure_on_the_core_it_pins() -> None:
    """Karpenter on Azure v1.14.2 (the newest release the proxy serves) builds on
    sigs.k8s.io/karpenter v1.14.0; its own module file keeps the AWS build's v1.15.0 out of its
    minimal version selection."""
    versions = kj.module_versions(provider="azure")
    assert versions[kj.AZURE_MODULE] == "v1.14.2"
    assert versions[kj.CORE_MODULE] == "v1.14.0"
    assert versions["github.com/Azure/skewer"] == "v0.0.24"
    assert kj.AWS_MODULE not in versions
    assert kj.sumfile(provider="azure") == kj.SOURCE / "go.azure.sum"
    sums = kj.sumfile(provider="azure").read_text().splitlines()
    for module in (kj.AZURE_MODULE, kj.CORE_MODULE, "github.com/Azure/skewer"):
        assert any(line.startswith(f"{module} {versions[module]} h1:") for line in sums), module
    for name in ("provider_azure.go", "core_v1_14.go"):
        assert "//go:build azure" in (kj.SOURCE / name).read_text(), name
    for name in ("provider_aws.go", "core_v1_15.go"):
        assert "//go:build !azure" in (kj.SOURCE / name).read_text(), name


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("GPU_INFERENCE_RIG_CACHE", str(root))
    return root


def test_the_cache_dir_names_the_version_and_follows_every_go_source(
    tmp_path: Path, cache: Path
) -> None:
    copy = tmp_path / "src"
    shutil.copytree(kj.SOURCE, copy)
    here = kj.cache_dir(copy)
    assert here == kj.cache_dir() and here.parent == cache
    assert here.name.startswith(f"karpenter-judge-{kj.karpenter_version()}-")
    for name in ("main.go", "go.sum", "go.azure.sum"):
        f = copy / name
        before = f.read_bytes()
        f.write_bytes(before + b"\n")
        assert kj.cache_dir(copy) != here, name
        f.write_bytes(before)
    (copy / "extra.go").write_text("package main\n")
    assert kj.cache_dir(copy) != here


def _fake_go(bin_dir: Path, script: str) -> None:
    """A stand-in `go` on PATH: `script` is bash run with the real arguments."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    go = bin_dir / "go"
    go.write_text('#!/bin/bash\necho "$*" >> "$(dirname "$0")/calls"\n' + script)
    go.chmod(go.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return bin_dir


def test_without_go_the_judge_is_unavailable_with_a_reason(cache: Path, fake_path: Path) -> None:
    assert kj.unavailable_reason() == (
        "karpenter judge: no `go` on PATH (Go >= 1.26 builds the harness)"
    )
    with pytest.raises(kj.SourceUnavailable, match="no `go` on PATH"):
        kj.build()


def test_a_proxy_refusal_is_unavailable_not_a_build_failure(cache: Path, fake_path: Path) -> None:
    _fake_go(
        fake_path,
        'if [ "$1 $2" = "mod download" ]; then echo "go: sigs.k8s.io/karpenter@v1.15.0: reading '
        'https://proxy.golang.org/sigs.k8s.io/karpenter/@v/v1.15.0.zip: 403 Forbidden"; exit 1; fi\n',
    )
    assert kj.unavailable_reason() is None  # Go is there: only trying tells
    with pytest.raises(kj.SourceUnavailable, match="403 Forbidden"):
        kj.build()


def test_a_compile_error_is_a_build_failure(cache: Path, fake_path: Path) -> None:
    _fake_go(
        fake_path,
        'if [ "$1" = "build" ]; then echo "./judge.go:9:2: undefined: nope"; exit 1; fi\n',
    )
    with pytest.raises(kj.BuildError, match="undefined: nope") as err:
        kj.build()
    assert not isinstance(err.value, kj.SourceUnavailable)
    assert "go build" in str(err.value) and str(kj.cache_dir() / "build.log") in str(err.value)


def test_a_build_lands_in_the_cache_once_and_leaves_the_clone_alone(
    cache: Path, fake_path: Path
) -> None:
    before = {p: p.read_bytes() for p in kj.SOURCE.rglob("*") if p.is_file()}
    _fake_go(
        fake_path,
        'case "$1" in\n'
        '  env) echo "$GOTOOLCHAIN" ;;\n'
        '  build) printf "#!/bin/sh\\n" > "$4"; chmod +x "$4"; [ "$GOFLAGS" = "-mod=readonly -buildvcs=false" ]'
        ' && [ "$GOTOOLCHAIN $CGO_ENABLED" = "go1.27.3 0" ] ;;\n'
        "esac\n",
    )
    exe = kj.build()
    assert exe == kj.cache_dir() / "karpenter_judge" and os.access(exe, os.X_OK)
    assert (kj.cache_dir() / "src" / "main.go").read_bytes() == (kj.SOURCE / "main.go").read_bytes()
    record = json.loads((kj.cache_dir() / "build.json").read_text())
    assert record["go"] == "go1.27.3" and record["modules"] == kj.module_versions()
    assert record["modfile"] == "go.mod"
    calls = (fake_path / "calls").read_text().splitlines()
    assert [c.split()[0] for c in calls] == ["mod", "build", "env"]
    assert kj.build() == exe
    assert len((fake_path / "calls").read_text().splitlines()) == 3  # cached: no go at all
    assert {p: p.read_bytes() for p in kj.SOURCE.rglob("*") if p.is_file()} == before


def test_the_azure_build_takes_the_tag_and_a_binary_of_its_own(
    cache: Path, fake_path: Path
) -> None:
    _fake_go(
        fake_path,
        'case "$1" in\n'
        "  env) echo go1.26.8 ;;\n"
        '  build) printf "#!/bin/sh\\n" > "$4"; chmod +x "$4"'
        ' && [ "$GOTOOLCHAIN $CGO_ENABLED" = "local 0" ] ;;\n'
        "esac\n",
    )
    exe = kj.build(provider="azure")
    assert exe == kj.cache_dir() / "karpenter_judge_azure" and os.access(exe, os.X_OK)
    calls = (fake_path / "calls").read_text().splitlines()
    assert calls[0].split() == ["mod", "download", "-modfile", "go.azure.mod"]
    assert calls[1].split()[-5:] == ["-modfile", "go.azure.mod", "-tags", "azure", "."]
    record = json.loads((kj.cache_dir() / "build-azure.json").read_text())
    assert record["modfile"] == "go.azure.mod"
    assert record["modules"] == kj.module_versions(provider="azure")
    assert not (kj.cache_dir() / "karpenter_judge").exists()  # the AWS build is another binary
    with pytest.raises(ValueError, match="not one of"):
        kj.binary(provider="gcp")


@pytest.mark.parametrize(
    ("provider", "tags", "exe", "record", "module"),
    [
        ("aws", [], "karpenter_judge", "build.json", kj.AWS_MODULE),
        (
            "azure",
            ["-modfile", "go.azure.mod", "-tags", "azure"],
            "karpenter_judge_azure",
            "build-azure.json",
            kj.AZURE_MODULE,
        ),
    ],
)
def test_each_build_has_its_tags_binary_and_record_in_the_one_cache_dir(
    cache: Path, provider: str, tags: list[str], exe: str, record: str, module: str
) -> None:
    assert kj.build_tags(provider) == tags
    assert kj.binary(provider=provider) == kj.cache_dir() / exe
    assert kj.build_record(provider=provider) == kj.cache_dir() / record
    assert kj.PROVIDER_MODULES[provider] == module


@pytest.mark.parametrize(
    "name", ["provider_aws.go", "provider_azure.go", "core_v1_14.go", "go.mod", "go.azure.mod"]
)
def test_a_change_to_either_build_moves_the_key_both_builds_share(
    tmp_path: Path, cache: Path, name: str
) -> None:
    """One key for both builds: an edit to the Azure file rebuilds the AWS binary too (cheap with
    Go's build cache warm) rather than risk a binary of a source no longer there."""
    copy = tmp_path / "src"
    shutil.copytree(kj.SOURCE, copy)
    before = kj.cache_dir(copy)
    (copy / name).write_text((copy / name).read_text() + "\n")
    after = kj.cache_dir(copy)
    assert after != before
    assert {kj.binary(copy, p).parent for p in kj.PROVIDERS} == {after}


def test_each_build_imports_its_own_provider_and_its_module_file_requires_no_more(
    tmp_path: Path,
) -> None:
    """The module set, read from the files each build compiles (//go:build azure / !azure):
    the builds share everything but the provider (and skewer, which only Karpenter on Azure
    uses); each module file's direct requirements are exactly its build's imports, each on its
    provider's core (AWS v1.15.0, Azure v1.14.0)."""
    aws = kj.imported_modules(provider="aws")
    azure = kj.imported_modules(provider="azure")
    assert set(aws) - set(azure) == {kj.AWS_MODULE}
    assert set(azure) - set(aws) == {kj.AZURE_MODULE, "github.com/Azure/skewer"}
    assert (aws[kj.CORE_MODULE], azure[kj.CORE_MODULE]) == ("v1.15.0", "v1.14.0")
    assert aws == kj.direct_requirements(provider="aws")
    assert azure == kj.direct_requirements(provider="azure")
    # A shared file that imported a provider would need it in the other build's module file.
    copy = tmp_path / "src"
    shutil.copytree(kj.SOURCE, copy)
    main = copy / "main.go"
    main.write_text(
        main.read_text().replace(
            "import (\n", 'import (\n\t_ "github.com/Azure/karpenter-provider-azure/pkg/utils"\n', 1
        )
    )
    with pytest.raises(
        ValueError, match=r"main\.go: .*karpenter-provider-azure/pkg/utils is in no"
    ):
        kj.imported_modules(copy, "aws")
    shutil.copy(kj.SOURCE / "main.go", main)
    (copy / "x.go").write_text('package main\n\nimport _ "example.com/nowhere"\n')
    with pytest.raises(ValueError, match=re.escape("x.go: example.com/nowhere is in no module")):
        kj.imported_modules(copy, "aws")
    (copy / "x.go").write_text("//go:build linux\n\npackage main\n")
    with pytest.raises(ValueError, match="neither azure nor !azure"):
        kj.imported_modules(copy, "azure")


def test_one_builds_binary_never_stands_in_for_the_other(cache: Path, fake_path: Path) -> None:
    _fake_go(
        fake_path,
        'case "$1" in\n'
        "  env) echo go1.26.8 ;;\n"
        '  build) printf "#!/bin/sh\\n" > "$4"; chmod +x "$4" ;;\n'
        "esac\n",
    )
    kj.build(provider="aws")
    kj.build(provider="azure")
    builds = [c for c in (fake_path / "calls").read_text().splitlines() if c.startswith("build")]
    assert [c.split()[4:] for c in builds] == [
        ["."],
        ["-modfile", "go.azure.mod", "-tags", "azure", "."],
    ]
    for provider, module, version in (
        ("aws", kj.AWS_MODULE, "v1.15.0"),
        ("azure", kj.AZURE_MODULE, "v1.14.2"),
    ):
        record = json.loads(kj.build_record(provider=provider).read_text())
        assert (record["provider"], record["provider_module"], record["provider_version"]) == (
            provider,
            module,
            version,
        )
        assert record["imports"] == kj.imported_modules(provider=provider)
        assert record["modules"] == kj.module_versions(provider=provider)
    # Only the AWS binary cached and no Go: the Azure judge is unavailable, not the AWS one.
    kj.binary(provider="azure").unlink()
    (fake_path / "go").unlink()
    assert kj.unavailable_reason("aws") is None
    assert kj.unavailable_reason("azure") == (
        "karpenter judge: no `go` on PATH (Go >= 1.26 builds the harness)"
    )


AWS_LINKS = {kj.CORE_MODULE: "v1.15.0", kj.AWS_MODULE: "v1.15.0", "k8s.io/api": "v0.37.0"}
AZURE_LINKS = {
    kj.CORE_MODULE: "v1.14.0",
    kj.AZURE_MODULE: "v1.14.2",
    "github.com/Azure/skewer": "v0.0.24",
}


@pytest.mark.parametrize(
    ("provider", "modules", "refused"),
    [
        ("aws", AWS_LINKS, False),
        ("azure", AZURE_LINKS, False),
        ("azure", AWS_LINKS, True),  # the default build in the azure slot
        ("aws", AZURE_LINKS, True),
        ("azure", {**AZURE_LINKS, kj.AWS_MODULE: "v1.15.0"}, True),  # both providers linked
        ("aws", {**AWS_LINKS, kj.CORE_MODULE: "v1.14.1"}, True),  # another Karpenter
        ("azure", {**AZURE_LINKS, kj.CORE_MODULE: "v1.15.0"}, True),  # the AWS build's core
        ("azure", {**AZURE_LINKS, kj.AZURE_MODULE: "v1.14.1"}, True),
    ],
)
def test_an_answer_must_come_from_the_build_asked_for(
    provider: str, modules: dict[str, str], refused: bool
) -> None:
    answer = kj.Answer(modules=modules, cases=())
    if refused:
        with pytest.raises(kj.JudgeError, match=f"karpenter judge \\({provider}\\): the binary"):
            kj.check_modules(answer, provider)
    else:
        assert kj.check_modules(answer, provider) is answer


def test_run_refuses_a_binary_of_the_other_build(cache: Path) -> None:
    exe = kj.binary(provider="azure")
    exe.parent.mkdir(parents=True)
    exe.write_text(
        f"#!/bin/sh\ncat > /dev/null\necho '{json.dumps({'modules': AWS_LINKS, **CASE})}'\n"
    )
    exe.chmod(0o755)
    with pytest.raises(kj.JudgeError, match=r"links .*karpenter-provider-aws': 'v1\.15\.0'"):
        kj.run(kj.request(instance_types=[], node_pools=[], pods=[]), provider="azure")


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [(1, "1"), (2.0, "2"), (0.5, "0.5"), ("8Gi", "8Gi"), ("250m", "250m"), (300.0, "300")],
)
def test_quantities_go_as_strings(value: Any, text: str) -> None:
    assert kj.quantity(value) == text


@pytest.mark.parametrize("value", [True, "", None, [1]])
def test_what_is_not_a_quantity_is_refused(value: Any) -> None:
    with pytest.raises(TypeError, match="not a quantity"):
        kj.quantity(value)


def test_a_pod_holds_exactly_the_given_placement_and_resources() -> None:
    tol = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert kj.pod(
        "m",
        requests={"cpu": 2, "memory": "8Gi", "nvidia.com/gpu": 1.0},
        limits={"nvidia.com/gpu": 1},
        node_selector={"pool": "gpu"},
        tolerations=[tol],
    ) == {
        "name": "m",
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "judge",
                    "resources": {
                        "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
                        "limits": {"nvidia.com/gpu": "1"},
                    },
                }
            ],
            "nodeSelector": {"pool": "gpu"},
            "tolerations": [tol],
        },
    }
    assert kj.pod("bare") == {
        "name": "bare",
        "spec": {"containers": [{"name": "main", "image": "judge"}]},
    }
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": 2.0}}}], "priority": 5.0}
    assert kj.pod_from_spec("p", spec)["spec"] == {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": 2}}}],
        "priority": 5,
    }


def test_an_instance_type_carries_capacity_overhead_labels_and_offerings() -> None:
    it = kj.instance_type(
        "g6.xlarge",
        capacity={"cpu": 4, "memory": "14Gi", "nvidia.com/gpu": 1},
        kube_reserved={"memory": "893Mi"},
        eviction_threshold={"memory": "100Mi"},
        labels={"kubernetes.io/arch": "amd64", "karpenter.k8s.aws/instance-gpu-count": "1"},
        offerings=[
            kj.offering("on-demand", "us-east-1a", price=0.8),
            kj.offering("spot", "us-east-1b", price=0.3, available=False),
            kj.offering("reserved", "us-east-1a", reservation_id="cr-1", reservation_capacity=2),
        ],
    )
    assert it == {
        "name": "g6.xlarge",
        "capacity": {"cpu": "4", "memory": "14Gi", "nvidia.com/gpu": "1"},
        "overhead": {"kubeReserved": {"memory": "893Mi"}, "evictionThreshold": {"memory": "100Mi"}},
        "labels": {"kubernetes.io/arch": "amd64", "karpenter.k8s.aws/instance-gpu-count": "1"},
        "offerings": [
            {"capacityType": "on-demand", "zone": "us-east-1a", "price": 0.8},
            {"capacityType": "spot", "zone": "us-east-1b", "price": 0.3, "available": False},
            {
                "capacityType": "reserved",
                "zone": "us-east-1a",
                "price": 0.0,
                "reservationID": "cr-1",
                "reservationCapacity": 2,
            },
        ],
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("reserved", "z"), "reservation ID goes with, and only with, a reserved offering"),
        (
            ("on-demand", "z", "cr-1"),
            "reservation ID goes with, and only with, a reserved offering",
        ),
        (("dedicated", "z"), "capacity type 'dedicated' is not one of"),
    ],
)
def test_offerings_refuse_what_aws_would_never_offer(args: tuple[str, ...], message: str) -> None:
    kw = {"reservation_id": args[2]} if len(args) > 2 else {}
    with pytest.raises(ValueError, match=message):
        kj.offering(args[0], args[1], **kw)


def test_a_request_refuses_repeated_names_and_keeps_pools_whole() -> None:
    it = kj.instance_type("a", capacity={"cpu": 1}, labels={}, offerings=[kj.offering("spot", "z")])
    pool = {"metadata": {"name": "p"}, "spec": {"weight": 10.0, "limits": {"nvidia.com/gpu": 4.0}}}
    req = kj.request(
        instance_types=[it],
        node_pools=[pool],
        pods=[kj.pod("x")],
        per_node_pool=True,
        node_class_instance_types={"nc": [it]},
        options=["--min-values-policy=BestEffort"],
        name="c1",
    )
    assert req == {
        "name": "c1",
        "instanceTypes": [it],
        "nodePools": [
            {"metadata": {"name": "p"}, "spec": {"weight": 10, "limits": {"nvidia.com/gpu": 4}}}
        ],
        "pods": [kj.pod("x")],
        "perNodePool": True,
        "nodeClassInstanceTypes": {"nc": [it]},
        "options": ["--min-values-policy=BestEffort"],
    }
    with pytest.raises(ValueError, match="repeated pod names"):
        kj.request(instance_types=[it], node_pools=[pool], pods=[kj.pod("x"), kj.pod("x")])
    with pytest.raises(ValueError, match="repeated instance type names"):
        kj.request(instance_types=[it, it], node_pools=[pool], pods=[])
    with pytest.raises(ValueError, match=r"distinct metadata\.name"):
        kj.request(instance_types=[it], node_pools=[pool, pool], pods=[])


# ---------------------------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------------------------

CASE = {
    "nodePools": [
        {"name": "g6", "considered": True, "instanceTypes": ["g6.xlarge"]},
        {"name": "bad", "considered": False, "reason": "not Ready", "instanceTypes": []},
    ],
    "results": [
        {
            "pod": "m",
            "scheduled": True,
            "nodePool": "g6",
            "instanceTypes": ["g6.xlarge"],
            "capacityTypes": ["on-demand"],
        },
        {
            "pod": "n",
            "onlyNodePool": "g6",
            "scheduled": False,
            "instanceTypes": [],
            "capacityTypes": [],
            "error": "did not tolerate taint (taint=nvidia.com/gpu=present:NoSchedule)",
        },
    ],
}
MODULES = {"sigs.k8s.io/karpenter": "v1.14.1"}


def test_an_answer_reads_into_verdicts() -> None:
    answer = kj.parse_answer(json.dumps({"modules": MODULES, **CASE}))
    assert answer.modules == MODULES
    (case,) = answer.cases
    assert case.node_pools == (
        kj.PoolStatus("g6", True, "", ("g6.xlarge",)),
        kj.PoolStatus("bad", False, "not Ready", ()),
    )
    assert case.verdict("m") == kj.Verdict("m", True, "g6", ("g6.xlarge",), ("on-demand",), "")
    assert case.verdict("n", "g6") == kj.Verdict(
        "n", False, "", (), (), CASE["results"][1]["error"], "g6"
    )
    with pytest.raises(KeyError, match="0 verdicts for pod 'n'"):
        case.verdict("n")
    many = kj.parse_answer(json.dumps({"modules": MODULES, "cases": [{**CASE, "name": "a"}, CASE]}))
    assert [c.name for c in many.cases] == ["a", ""]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({**CASE}, "'modules' missing"),
        ({"modules": MODULES, "results": []}, "'nodePools' missing"),
        (
            {
                "modules": MODULES,
                "nodePools": [],
                "results": [{**CASE["results"][0], "nodePool": ""}],
            },
            "inconsistent verdict",
        ),
        (
            {"modules": MODULES, "nodePools": [], "results": [{**CASE["results"][1], "error": ""}]},
            "inconsistent verdict",
        ),
        (
            {
                "modules": MODULES,
                "nodePools": [],
                "results": [{**CASE["results"][0], "instanceTypes": [1]}],
            },
            "holds a non-string",
        ),
    ],
)
def test_a_malformed_answer_is_refused(answer: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kj.parse_answer(json.dumps(answer))
