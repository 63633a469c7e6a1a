"""docs/config-reference.md is generated from the one declaration of every input (the components'
Args and what the stack adds): it cannot drift."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from components.model.inputs import inputs, stack
from components.platform import reference
from components.platform.derive import section_model


def test_the_committed_reference_is_the_generated_one():
    assert reference.OUTPUT.read_text() == reference.render(reference.TEMPLATE.read_text()), (
        "docs/config-reference.md is stale: run python -m components.platform.reference"
    )


def test_every_key_of_every_section_has_a_row():
    text = reference.OUTPUT.read_text()
    for name, model in reference.sections().items():
        for path, _ in reference._rows(model):
            assert f"| `{path}` |" in text, f"{name}: {path}"


def test_every_section_has_a_placeholder():
    template = reference.TEMPLATE.read_text()
    for name in reference.sections():
        assert f"<!-- keys: {name} -->" in template


@dataclass
class _Args:
    """A component's inputs."""

    pool_name: Optional[str] = field(default=None, metadata=stack("name", required=True))
    """The pool's name (`pool_name`)."""
    max_ttl: Optional[int] = field(default=60, metadata=stack(ge=1))
    """How long it lives; a `pool_name` is needed."""
    mode: Optional[str] = field(default="fast", metadata=stack(choices=("fast", "slow")))
    """Speed."""
    cluster: Optional[str] = field(default=None, metadata=stack(source="cluster.name"))
    """Fed from the cluster section: not a key here."""
    internal: Optional[int] = field(default=None, metadata=stack(hidden=True))
    """Set by the platform."""


def test_a_new_field_gets_its_row_with_type_default_and_meaning():
    table = reference.table(section_model("Thing", inputs(_Args), args=_Args))
    assert table.splitlines()[2:] == [
        "| `name` | string | required | The pool's name (`name`). |",
        "| `maxTtl` | int ≥ 1 | `60` | How long it lives; a `name` is needed. |",
        "| `mode` | `fast` \\| `slow` | `fast` | Speed. |",
    ]


def test_the_check_command_fails_on_a_stale_file(tmp_path, monkeypatch):
    stale = tmp_path / "config-reference.md"
    stale.write_text("old\n")
    monkeypatch.setattr(reference, "OUTPUT", stale)
    assert reference.main(["--check"]) == 1
    assert reference.main([]) == 0
    assert reference.main(["--check"]) == 0


def test_the_committed_config_summary_is_the_generated_one():
    from components.platform import summary

    text = reference.SUMMARY.read_text()
    assert text == summary.render(text), (
        "docs/config.md's summary is stale: run python -m components.platform.reference"
    )


def test_the_summary_names_every_provider_every_section_and_every_pool_kinds_keys():
    from components.platform import summary
    from components.platform.config import CLUSTER_KEYS_BY_PROVIDER, SECTIONS
    from components.platform.pool_kinds import KINDS, pool_model

    rows = dict(summary.rows())
    assert list(rows) == [
        f"gpu-inference:{s}" for s in (*SECTIONS[:7], "workloadFiles", *SECTIONS[7:])
    ]
    cluster = rows["gpu-inference:cluster"]
    assert "`provider` (`gke` \\| `eks` \\| `aks` \\| `existing`)" in cluster
    for provider, keys in CLUSTER_KEYS_BY_PROVIDER.items():
        assert " / ".join(f"`{k}`" for k in keys) + f" ({provider})" in cluster
    pools = rows["gpu-inference:pools"]
    for kind in KINDS:
        assert f"{kind.title} (`{kind.provider}`): " in pools
        for key in summary._keys(pool_model(kind)):
            assert f"`{key}`" in pools, (kind.name, key)
    assert "AKS agent pool (`aks`): `vmSize`" in pools


def test_the_check_command_fails_on_a_stale_summary(tmp_path, monkeypatch):
    stale = tmp_path / "config.md"
    stale.write_text("a\n<!-- generated: summary (x) -->\n| old |\n<!-- end: summary -->\nb\n")
    monkeypatch.setattr(reference, "SUMMARY", stale)
    assert reference.main(["--check"]) == 1
    assert reference.main([]) == 0
    assert reference.main(["--check"]) == 0
    assert "| `gpu-inference:pools` | list, one entry per pool" in stale.read_text()
