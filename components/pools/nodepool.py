"""What the two Karpenter pool kinds share: `karpenter` (EKS, `karpenter.k8s.aws` labels, the EC2
catalog) and `nap` (AKS node auto-provisioning, `karpenter.azure.com` labels, the Azure catalog)
write the same `karpenter.sh/v1` NodePool from the same kind of inputs. The checks and the
NodePool's shape are here once; what differs per cloud (label keys, catalog, capacity types, the
CRD's restricted labels, the words of a refusal) is passed in as data by each kind's room."""

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..model.errors import InputError, show
from ..model.scheduling import GPU_RESOURCE, NodeSelectorRequirement

NODEPOOL_API = "karpenter.sh/v1"
KARPENTER_DURATION = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")


@dataclass(frozen=True)
class GpuKeys:
    """The label keys a cloud's Karpenter provider selects GPU nodes by."""

    manufacturer: str
    count: str
    name: str
    family: str
    type: str


def str_list(value: Optional[Sequence[str]], path: str, what: str) -> Optional[list[str]]:
    """The list (its shape, length and item type are declared on the field: `check_declared`
    has judged them), each item once."""
    if value is None:
        return None
    out: list[str] = []
    for i, v in enumerate(value):
        if v in out:
            raise InputError(f"{show(v)} is listed twice", f"{what}, each once", f"{path}[{i}]")
        out.append(v)
    return out


def listed_in(
    value: Optional[Sequence[str]], path: str, what: str, allowed: Sequence[str], refusal: str
) -> Optional[list[str]]:
    """`str_list`, each item one of `allowed`; `refusal` says what an item is not (`{}`: it)."""
    items = str_list(value, path, what)
    for i, v in enumerate(items or []):
        if v not in allowed:
            raise InputError(refusal.format(show(v)), ", ".join(allowed), f"{path}[{i}]")
    return items


def looked_up(
    value: Optional[Sequence[str]], path: str, what: str, lookup: Callable[[str], object]
) -> Optional[list[str]]:
    """`str_list`, each item one the catalog's `lookup` knows (its refusal, at the item)."""
    items = str_list(value, path, what)
    for i, v in enumerate(items or []):
        try:
            lookup(v)
        except InputError as e:
            raise e.at(f"{path}[{i}]") from None
    return items


def gpu_range(min_gpus: Optional[int], max_gpus: Optional[int]) -> tuple[int, Optional[int]]:
    """`min_gpus` (default 1) and `max_gpus` (none: any), at least `min_gpus` (each declared
    1..the catalog's most)."""
    low = min_gpus or 1
    if max_gpus is not None and max_gpus < low:
        raise InputError(
            f"max_gpus {max_gpus} is below min_gpus {low}", "max_gpus >= min_gpus", "args.max_gpus"
        )
    return low, max_gpus


def capacity_order(
    value: Optional[Sequence[str]], allowed: Sequence[str], path: str = "args.capacity_types"
) -> list[str]:
    """Capacity types in priority order (each declared one of the provider's own, `allowed`, in
    Karpenter's preference): the order Karpenter tries them in."""
    given = str_list(value, path, "capacity types: " + ", ".join(allowed))
    if given is None:
        return ["on-demand"]
    ordered = sorted(given, key=allowed.index)
    if ordered != given:
        raise InputError(
            f"capacity types {given} are not in the order Karpenter prefers them: within one "
            f"NodePool it always tries {', then '.join(allowed)}",
            f"{ordered}, or two pools (each with one capacity type, wired in your order)",
            path,
        )
    return given


def requirement(key: str, op: str, values: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def gpu_requirements(
    keys: GpuKeys,
    min_gpus: int,
    max_gpus: Optional[int],
    names: Optional[Sequence[str]],
    families: Optional[Sequence[str]],
    types: Optional[Sequence[str]],
) -> list[dict[str, Any]]:
    """NVIDIA GPUs always, `count Gt min-1`; `count Lt max+1`, names, families and types when
    given (Gt / Lt, not Karpenter's Gte / Lte, so that Kubernetes' own rules read them)."""
    shape = [
        requirement(keys.manufacturer, "In", ["nvidia"]),
        requirement(keys.count, "Gt", [str(min_gpus - 1)]),
    ]
    if max_gpus is not None:
        shape.append(requirement(keys.count, "Lt", [str(max_gpus + 1)]))
    for key, values in ((keys.name, names), (keys.family, families), (keys.type, types)):
        if values:
            shape.append(requirement(key, "In", values))
    return shape


def selectors(shape: Iterable[Mapping[str, Any]]) -> Iterable[NodeSelectorRequirement]:
    """The NodePool's requirements as the catalog's matcher reads them."""
    return (NodeSelectorRequirement(r["key"], r["operator"], r.get("values", ())) for r in shape)


def admits_none(shape: Sequence[Mapping[str, Any]], what: str, one: str, offer: str) -> InputError:
    """The refusal of requirements (past the manufacturer) that admit no `what` of the catalog."""
    asked = "; ".join(
        f"{r['key']} {r['operator']} {','.join(r.get('values', []))}".strip() for r in shape[1:]
    )
    return InputError(
        f"the requirements ({asked}) admit no {what} in the catalog",
        f"requirements some {one} meets: {offer}",
        "args",
    )


def offer_summary(offers: Iterable[tuple[str, int, str]], names: Optional[Sequence[str]]) -> str:
    """What a catalog offers per GPU name, from `(gpu name, GPUs, family)` rows:
    `l4: 1, 4, 8 GPUs (g6)`."""
    by_name: dict[str, tuple[set[int], list[str]]] = {}
    for g, gpus, family in offers:
        if names and g not in names:
            continue
        counts, families = by_name.setdefault(g, (set(), []))
        counts.add(gpus)
        if family not in families:
            families.append(family)
    return "; ".join(
        f"{g}: {', '.join(map(str, sorted(c)))} GPUs ({', '.join(f)})"
        for g, (c, f) in sorted(by_name.items())
    )


def refuse_restricted_labels(
    labels: Optional[Mapping[str, str]],
    domains: Sequence[str],
    keys: Sequence[str],
    refusal: str,
    allowed: str,
) -> None:
    """Template labels the provider's NodePool CRD refuses: under `domains` (or a subdomain) or
    one of `keys`; `refusal` says why (`{}`: the key)."""
    for k in labels or {}:
        domain = str(k).rpartition("/")[0]
        if k in keys or any(domain == d or domain.endswith("." + d) for d in domains):
            raise InputError(refusal.format(repr(k)), allowed, f"args.labels.{k}")


def check_duration(value: object, key: str, examples: str, required: bool = False) -> None:
    """A Karpenter duration (`30s`, `1h30m`, `Never`) at `args.<key>`; None only unless
    `required`."""
    if value is None and not required:
        return
    if not isinstance(value, str) or not KARPENTER_DURATION.match(value):
        raise InputError(
            f"{key} {show(value)} is not a Karpenter duration",
            f"a duration such as {examples}",
            f"args.{key}",
        )


def nodepool_limits(
    max_nodes: int, max_total_gpus: Optional[int], per_gpu: int = 1
) -> dict[str, str]:
    """`limits`: `nodes`, and `nvidia.com/gpu` when `max_total_gpus` is given (times `per_gpu`,
    the `nvidia.com/gpu` a physical GPU counts as); strings, as the API server keeps them."""
    limits = {"nodes": str(max_nodes)}
    if max_total_gpus is not None:
        limits[GPU_RESOURCE] = str(max_total_gpus * per_gpu)
    return limits


def nodepool(
    name: str,
    class_ref: Mapping[str, str],
    requirements: Sequence[Mapping[str, Any]],
    taints: Sequence[Mapping[str, str]],
    labels: Mapping[str, str],
    *,
    consolidate_after: object,
    expire_after: Optional[str],
    limits: Mapping[str, str],
    weight: Optional[int],
) -> dict[str, Any]:
    """NodePool `{metadata, spec}`: disruption `WhenEmpty` after `consolidate_after` (a busy node
    is never consolidated away), `expireAfter` when given."""
    template_spec: dict[str, Any] = {
        "nodeClassRef": dict(class_ref),
        "requirements": list(requirements),
        "taints": list(taints),
    }
    if expire_after is not None:
        template_spec["expireAfter"] = expire_after
    spec: dict[str, Any] = {
        "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": consolidate_after},
        "limits": dict(limits),
    }
    if weight is not None:
        spec["weight"] = weight
    return {"metadata": {"name": name}, "spec": spec}
