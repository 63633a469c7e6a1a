"""Pods of one shape, decided once.

The pod templates of a stack repeat a few shapes: the same containers, requests, placement. What
the check derives from a shape is derived for the first template of that shape and reused for
its twins, with the twin's own resource id in its findings:

- from the template's inputs (`shape_key`: its type, pod spec fragment, containers; a
  `storageUri` by what the check reads of it, `read.storage_reading`), its placement, GPUs and
  requests;
- from what those give (`landing_key`, `fit_key`: the placement, GPUs, requests, the containers'
  names and resources, the model size and whether it is downloaded), where Karpenter would
  launch for it and the fit judgement with its findings. Templates that differ only in what the
  rules do not read (each model's own `storageUri`, say) share these.

The keys are exact: `marshal` writes only Python's own types (dict, list, str, int, float, bool,
None and such) and refuses any other, and two values written alike are equal, so equal keys mean
equal inputs (a dict written in another key order only misses), but for the texts of storage
URIs of one reading (two models downloaded from two buckets make the same pods). A template
whose inputs marshal refuses, a DaemonSet's (the node's DaemonSets are judged by its own name)
and an LLM pod's (its model and flags) are decided alone, and so is the fit of a pod with DRA
claims.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, TypeVar

from ..model.errors import InputError
from ..model.scheduling import Placement
from .read import Findings, Template, storage_reading
from .results import Finding, PoolFacts, WorkloadFacts


def shape_key(t: Template) -> bytes | None:
    """What the check reads of the template's pods beside its name, namespace and annotations:
    its type, pod spec fragment, containers, init containers, what controllers add (and the
    queue-proxy and the webhook's nodeSelector, which annotations decide), each `storageUri` as
    its reading. None: not shared (see the module docstring)."""
    if t.daemonset or t.llm is not None:
        return None
    rest = (t.init_containers, t.added, t.serverless, t.queue_proxy, t.added_node_selector)
    # Inputs that name no storageUri read as they are: written without the walk (a Seldon
    # Server's containers are some 1500 values, walked for every template otherwise).
    as_written: Any = (t.type, t.fragment, t.containers, *rest)
    try:
        raw = marshal.dumps(as_written, 2)
    except ValueError:
        raw = b""  # a type marshal refuses (a dict subclass, say): the walk may still write it
    if raw and b"storageUri" not in raw:
        return raw
    inputs: Any = (t.type, _read_uris(t.fragment), _read_uris(t.containers), *rest)
    try:
        return marshal.dumps(inputs, 2)
    except ValueError:
        return None


def _read_uris(value: Any) -> Any:
    """`value` with every `storageUri` as the check reads it (`read.storage_reading`): a model
    of its own per InferenceService does not make a shape of its own."""
    if isinstance(value, dict):
        return {
            k: storage_reading(v) if k == "storageUri" else _read_uris(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_read_uris(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_read_uris(v) for v in value)
    return value


class Pod(NamedTuple):
    """What the shape's pods need: the placement as written, its GPUs, the placement with the
    tolerations admission adds."""

    base: Placement
    gpus: int
    placement: Placement


@dataclass(frozen=True)
class Fit:
    """The fit judgement of a shape (with one stated model size): what `fit.judge_fit` gave."""

    facts: WorkloadFacts
    findings: tuple[Finding, ...]
    unknown: tuple[str, ...]  # pools where its fit is not judged (GI022)


def landing_key(t: Template, placement: Placement, gpus: int, dra: bool) -> Hashable | None:
    """What `scaleup.ScaleUp.karpenter_landing` reads of the pod (None: decided alone)."""
    if t.daemonset:
        return None
    try:
        return (placement, gpus, t.ask, dra)
    except (InputError, TypeError, ValueError):
        return None


def fit_key(
    t: Template, placement: Placement, gpus: int, model_size: float | None, dra: bool
) -> Hashable | None:
    """What `fit.judge_fit` reads of the pod beside its resource id (None: decided alone)."""
    if t.daemonset or t.llm is not None or dra:
        return None
    try:
        ask = t.ask
    except (InputError, TypeError, ValueError):
        return None
    containers, inits, added = t.pod_containers
    said: Any = (
        [(c.get("name"), c.get("resources")) for c in containers],
        [(c.get("name"), c.get("resources")) for c in inits],
        added,
    )
    try:
        words = marshal.dumps(said, 2)
    except ValueError:
        return None
    downloads = t.storage_uri is not None
    return (placement, gpus, ask, words, downloads, t.fragment.get("hostIPC") is True, model_size)


T = TypeVar("T")


def _once(decided: dict[Any, T], key: Hashable | None, decide: Callable[[], T]) -> T:
    """`decide()` once per key in `decided` (None: every time)."""
    if key is None:
        return decide()
    found = decided.get(key)
    if found is None:
        found = decided[key] = decide()
    return found


@dataclass
class Shapes:
    """The decisions of one check, by shape. `on` False: every template is decided alone (the
    tests hold that sharing changes nothing)."""

    on: bool = True
    twins: dict[bytes, Template] = field(default_factory=dict)
    pods: dict[bytes, Pod] = field(default_factory=dict)
    landings: dict[Hashable, list[PoolFacts]] = field(default_factory=dict)
    fits: dict[Hashable, Fit] = field(default_factory=dict)

    def key(self, t: Template) -> bytes | None:
        """The template's shape key (None: decided alone); a twin's derived requests are
        taken over."""
        if not self.on:
            return None
        key = shape_key(t)
        if key is not None:
            twin = self.twins.setdefault(key, t)
            if twin is not t:
                t.share(twin)
        return key

    def pod(self, key: bytes | None, decide: Callable[[], Pod]) -> Pod:
        return _once(self.pods, key, decide)

    def landing(
        self, key: Callable[[], Hashable | None], decide: Callable[[], list[PoolFacts]]
    ) -> list[PoolFacts]:
        return _once(self.landings, key() if self.on else None, decide)

    def fit(
        self,
        key: Callable[[], Hashable | None],
        w: WorkloadFacts,
        out: Findings,
        unknown: dict[str, list[str]],
        decide: Callable[[Findings, dict[str, list[str]]], WorkloadFacts],
    ) -> WorkloadFacts:
        """`decide(out, unknown)` (`fit.judge_fit`) once per key; its findings and GI022 pools
        replayed under each twin's resource id."""
        known = key() if self.on else None
        if known is None:
            return decide(out, unknown)
        found = self.fits.get(known)
        if found is None:
            mine = Findings()
            pools: dict[str, list[str]] = {}
            facts = decide(mine, pools)
            own = all(f.resource == w.resource for f in mine.items) and all(
                names == [w.resource] for names in pools.values()
            )
            out.items |= mine.items
            for pool, names in pools.items():
                unknown.setdefault(pool, []).extend(names)
            if own:
                self.fits[known] = Fit(facts, tuple(mine.items), tuple(pools))
            return facts
        for f in found.findings:
            out.items.add(replace(f, resource=w.resource))
        for pool in found.unknown:
            unknown.setdefault(pool, []).append(w.resource)
        return replace(w, requests=found.facts.requests, unfit=found.facts.unfit)
