"""The platform's add-on registry (`components.platform.addons.ADDONS`): every `addons` section of
the stack config installs through exactly one entry, whose component and Args agree."""

from __future__ import annotations

import importlib

from components.platform import config as cfg
from components.platform.addons import ADDONS

# Karpenter is installed before the pools it is pinned to (`InferencePlatform._karpenter`).
BEFORE_POOLS = {"karpenter"}


def _sections(addons: cfg.Addons) -> dict[int, str]:
    """Each installable section object of `addons`, by identity, with its config path."""
    out = {
        id(getattr(addons, f)): f"addons.{f}"
        for f in type(addons).model_fields
        if f not in BEFORE_POOLS
    }
    out[id(addons.kserve.llm)] = "addons.kserve.llm"
    return out


def test_every_addons_section_has_one_registry_entry() -> None:
    addons = cfg.Addons(kserve={"llm": {}})
    sections = _sections(addons)
    reached = [id(a.section(addons)) for a in ADDONS]
    assert sorted(reached) == sorted(sections)
    assert len(set(reached)) == len(ADDONS)


def test_each_entry_names_its_own_section_and_a_component_taking_its_args() -> None:
    addons = cfg.Addons(kserve={"llm": {}})
    sections = _sections(addons)
    for a in ADDONS:
        assert sections[id(a.section(addons))].replace("_", "").lower() == a.path.lower()
        module, _, cls = a.component.rpartition(".")
        component = getattr(importlib.import_module(module, "components.platform"), cls)
        assert component.__init__.__annotations__["args"] in (a.args, a.args.__name__)
