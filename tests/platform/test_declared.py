"""Every constraint an Args field declares (`stack(choices=, ge=, le=, min_items=, syntax=)`, its
plain type (int, float, bool) and a value for a field without default) is enforced by one mechanism on both entry paths, in the same
words: the stack config's model of the field (`derive.config_type`, read through
`config_errors`) and the Python args (`inputs.check_declared`). The table is derived from the
declarations: for each constrained field of every component's Args, a value that breaks each of
its constraints goes through both, and the two errors must say the same thing at the same place."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any, get_args, get_origin

import pytest
from pydantic import Field, ValidationError, create_model

from components import pools, serving
from components.model.errors import InputError
from components.model.inputs import (
    REQUIRED,
    Input,
    check_declared,
    field_violation,
    inputs,
    int_bounds,
    plain_number_type,
    plain_type,
    single_type,
)
from components.model.syntax import CHECKS
from components.platform.config_errors import from_validation_error
from components.platform.derive import config_type
from components.platform.pool_kinds import KINDS
from components.platform.reference import SYNTAX_WORDS
from components.platform.syntax import SYNTAX, ConfigModel
from components.pools.aks import AksGpuAgentPoolArgs
from components.pools.eks import EksGpuNodeGroupArgs
from components.pools.gke import GkeGpuNodePoolArgs
from components.pools.karpenter import KarpenterGpuNodePoolArgs

BAD_SYNTAX: dict[str, Any] = {
    "pool-name": "Bad_Pool",
    "label-keys": ["bad key"],
    "dns1123": "Bad",
    "dns1035": "1abc",
    "server-name": "s" * 53,
    "label-key": "bad key",
    "labels": {"bad key": "v"},
    "quantity": "12 GB",
    "version": "latest",
    "storage-uri": "models/x",
    "env": {"1A": "x"},
    "pool-ref": [],
    "capabilities": ["a,b"],
    "resources": {"cpu": "lots"},
    "kubernetes-version": "latest",
    "aks-agent-pool-name": "Gpu-Pool",
    "eks-cluster-name": "-dev",
    "gcp-zones": ["us-central1-a", "us-central1-a"],
    "gcp-service-account": "nodes@example.com",
    "gce-reservations": ["Res_1"],
    "node-names": ["gpu-1", "gpu-1"],
    "aks-spot-price": 0.123456,
    "azure-zones": ["east"],
}
"""A value that breaks each named syntax."""

WRONG_TYPES: dict[type, list[Any]] = {
    int: ["3", 1.5, True],
    float: ["16GB", True],
    bool: ["yes", 1],
}
"""Values of the wrong type for each plain type."""

WRONG_SHAPES: dict[Any, Any] = {str: 5, Mapping: "x", list: "x", float: "x"}
"""A value of another shape for each syntax's shape."""


def _args_classes() -> list[type]:
    found: dict[str, type] = {}
    for pkg in (pools, serving):
        for m in pkgutil.iter_modules(pkg.__path__):
            mod = importlib.import_module(f"{pkg.__name__}.{m.name}")
            for name, obj in vars(mod).items():
                if (
                    isinstance(obj, type)
                    and dataclasses.is_dataclass(obj)
                    and name.endswith("Args")
                    and obj.__module__ == mod.__name__
                ):
                    found[f"{mod.__name__}.{name}"] = obj
    return [found[k] for k in sorted(found)]


def _bad_values(inp: Input) -> list[tuple[str, Any]]:
    """(the constraint, a value breaking it) for each constraint the field declares."""
    d, out = inp.decl, []
    if d.syntax:
        shape = CHECKS[d.syntax][0]
        wrong = [] if shape is object else [(f"type {d.syntax}", WRONG_SHAPES[shape])]
        return [(f"syntax {d.syntax}", BAD_SYNTAX[d.syntax]), *wrong]
    listed = d.min_items is not None or (
        (d.choices and "Sequence" in str(inp.annotation)) or "list" in str(inp.annotation)
    )
    if d.min_items is not None:
        out.append((f"min_items {d.min_items}", []))
    if d.choices:
        out.append(("choices", ["nonsense"] if listed else "nonsense"))
    one = single_type(inp.annotation)
    origin = get_origin(one)
    if one is str and not d.choices:
        out.append(("type str", 5))
    if origin in (list, Sequence):
        out.append(("type list", "x"))
        if get_args(one) and get_args(one)[0] is str and not d.choices:
            out.append(("type list[str]", ["a", 5]))
    if origin in (dict, Mapping):
        out.append(("type mapping", "x"))
    plain = plain_type(inp.annotation)
    if plain is not None and not d.choices:
        out += [(f"type {plain.__name__}", bad) for bad in WRONG_TYPES[plain]]
    tp = plain_number_type(inp.annotation)
    if tp is not None and not d.choices:
        ge, le = int_bounds(d) if tp is int else (d.ge, d.le)
        if ge is not None:
            out.append((f"ge {ge}", tp(ge) - 1))
        if le is not None:
            out.append((f"le {le}", tp(le) + 1))
    return out


CASES = [
    pytest.param(inp, value, id=f"{cls.__name__}.{inp.field}:{what}")
    for cls in _args_classes()
    for inp in inputs(cls)
    for what, value in _bad_values(inp)
]


def _stack_error(inp: Input, value: Any) -> InputError:
    """The stack config's refusal of `value` for this field (its config type, alone in a
    section)."""
    model = create_model(
        "Section", __base__=ConfigModel, v=(config_type(inp.annotation, inp.decl), Field(alias="v"))
    )
    with pytest.raises(ValidationError) as caught:
        model.model_validate({"v": value})
    return from_validation_error(caught.value, "ns", model)


@pytest.mark.parametrize(("inp", "value"), CASES)
def test_both_paths_refuse_a_declared_constraint_in_the_same_words(inp, value):
    stack = _stack_error(inp, value)
    found = field_violation(inp, value)
    assert found is not None, f"the Python path takes {value!r}"
    sub, python = found
    assert (python.problem, python.allowed) == (stack.problem, stack.allowed)
    assert stack.path == "ns:v" + (sub if not sub or sub[0] in "[." else "." + sub)


def test_the_table_covers_every_kind_of_constraint():
    kinds = {p.id.split(":", 1)[1].split(" ")[0] for p in CASES}
    assert {"syntax", "min_items", "choices", "type", "ge", "le"} <= kinds
    assert len(CASES) > 150
    assert set(BAD_SYNTAX) == set(CHECKS) == set(SYNTAX) == set(SYNTAX_WORDS)


def test_a_missing_value_is_refused_as_a_missing_key():
    inp = next(i for i in inputs(EksGpuNodeGroupArgs) if i.field == "instance_types")
    assert inp.default is REQUIRED
    found = field_violation(inp, None)
    assert found is not None
    assert found[1].problem == "required key is missing"
    assert found[1].allowed == inp.doc


# A row per constraint kind through the components' own entry points: what a Python program gets.
# fmt: off
PYTHON_CASES = [
    (AksGpuAgentPoolArgs(resource_group_name="rg", cluster_name="c", vm_size="Standard_NC4as_T4_v3", os_sku="Windows"),
     "args.os_sku: 'Windows' is not a valid value (allowed: Ubuntu, AzureLinux)"),
    (GkeGpuNodePoolArgs(cluster="dev", machine_type="g2-standard-8", node_locations=[]),
     "args.node_locations: the list is empty; at least 1 item required (allowed: a list of at least 1)"),
    (KarpenterGpuNodePoolArgs(capacity_types=["spot", "ondemand"]),
     "args.capacity_types[1]: 'ondemand' is not a valid value (did you mean 'on-demand'?) (allowed: reserved, spot, on-demand)"),
    (GkeGpuNodePoolArgs(cluster="dev", machine_type="g2-standard-8", labels={"tier": "a b"}),
     "args.labels.tier: 'a b' is not a valid label value (allowed: empty, or at most 63 characters: alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric)"),
    (EksGpuNodeGroupArgs(cluster_name="c", node_role_arn="arn", subnet_ids=["s"], instance_types=["g5.xlarge"], disk_size_gb=5),
     "args.disk_size_gb: 5 is out of range (allowed: a number >= 10)"),
]
# fmt: on


@pytest.mark.parametrize(("args", "message"), PYTHON_CASES)
def test_python_args_are_refused_by_their_declarations(args, message):
    with pytest.raises(InputError) as caught:
        check_declared(args)
    assert str(caught.value) == message


class _Declared(Exception):
    pass


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_pool_kind_plans_after_its_declarations(kind, monkeypatch):
    """Each kind's plan (what its component and the platform call) runs `check_declared` before
    anything else: the validators keep only what the declarations do not say."""
    module = sys.modules[kind.plan.__module__]

    def declared(args, *_, **__):
        raise _Declared

    monkeypatch.setattr(module, "check_declared", declared)
    with pytest.raises(_Declared):
        kind.plan("p", object.__new__(kind.args))
