"""The shared node pool model: what every pool (GKE, EKS, existing nodes) knows about itself.

Pure Python (imports no Pulumi). The pool components are thin shells over these helpers.

- Every pool carries the label `POOL_LABEL: <pool name>` (known before deployment, unlike the
  cloud's generated pool name); its `placement` selects that label by default, or the labels the
  caller names with `select_labels` (the seeds select on `pool: infer-srv` or
  `k8s.amazonaws.com/accelerator: nvidia-tesla-t4`).
- `PoolFacts` holds the pool's *effective* labels and taints: what the nodes really carry,
  including what the cloud adds by itself (GKE labels and taints GPU nodes; EKS labels the
  capacity type), so that the placement check sees the nodes as the scheduler will.
- GPU pools are tainted by default with `GPU_TAINT` (`nvidia.com/gpu=present:NoSchedule`, the
  conventional key the NVIDIA device plugin and ExtendedResourceToleration rely on; GKE adds
  exactly this taint itself). A GPU pool must have a NoSchedule / NoExecute taint: without one,
  any pod lands on the GPU nodes and keeps them from scaling down.

Replacement-safe cloud names
----------------------------------------
A pool's cloud name is never fixed. Pulumi replaces a resource create-before-delete by default;
a fixed name would make the new pool collide with the old one still holding it (the cloud API
refuses the duplicate, or the replacement has to delete first: downtime). Every pool therefore
passes a *name prefix* and lets the provider add a unique suffix:

- GKE `NodePool`: neither `name` nor `name_prefix`. pulumi-gcp auto-names every resource with
  a `name` input (`prov.SetAutonaming(255, "-")` in pulumi-gcp `provider/resources.go`): the
  bridge proposes `<Pulumi resource name>-<7 random hex>`, new on every replacement, and skips
  it only for inputs the Terraform schema marks `ConflictsWith` (pulumi-terraform-bridge
  `buildConflictsWith`). `google_container_node_pool` declares no conflict between `name` and
  `name_prefix`, so a `name_prefix` gets an auto `name` beside it and create fails in
  `expandNodePool` ("Cannot specify both name and name_prefix for a node_pool"). The bridge
  checks the auto-name only against its own 255-character limit, so the Pulumi resource name
  is kept to `GKE_RESOURCE_NAME_MAX` (32) characters: with the suffix, 40, GKE's limit
  (`gke_node_pool_resource_name`).
- EKS `NodeGroup.node_group_name_prefix`: the provider appends a 26-character unique id; node
  group names are at most 63 characters, so the prefix is at most 37.
- The EKS launch template uses `name_prefix` too; the IAM role is auto-named by Pulumi.

We chose prefixes over "a name suffixed with a hash of the replacement-forcing fields" because
the set of fields that force replacement differs by provider and version (machine type, disk,
accelerators, spot, service account, oauth scopes, ...): a hash that misses one collides, a
prefix never does. The names stay stable in previews (only the prefix is an input).
On EKS the Terraform schema does declare `ConflictsWith` between `node_group_name` and
`node_group_name_prefix` (and between a launch template's `name` and `name_prefix`), so the
bridge leaves the name to the prefix there.
`replacement_collides` is the rule the tests use to prove it.
"""

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Union

from ..model.errors import InputError, show
from ..model.scheduling import (
    FILTERING_EFFECTS,
    SCHEDULING_STYLES,
    Placement,
    Taint,
)
from ..model.scheduling import POOL_LABEL as POOL_LABEL  # one spelling: the model's
from ..model.syntax import pool_name as pool_name_syntax

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
GPU_TAINT_KEY = "nvidia.com/gpu"

RESERVED_LABEL_DOMAINS = (
    "kubernetes.io",
    "k8s.io",
    "cloud.google.com",
    "eks.amazonaws.com",
    "k8s.amazonaws.com",
)
"""Label prefixes Kubernetes and the clouds own (AKS pools add `kubernetes.azure.com`) (and their subdomains, like
`node.kubernetes.io`). A user label may use one only with the value the pool sets anyway."""

GKE_RESOURCE_NAME_MAX = 32
"""GKE node pool names are at most 40 characters; Pulumi's auto-name adds `-` and 7 hex."""
EKS_NAME_PREFIX_MAX = 37

# Resource type -> the input that would fix the cloud name (camelCase, as recorded under mocks).
FIXED_NAME_INPUTS = {
    "gcp:container/nodePool:NodePool": "name",
    "aws:eks/nodeGroup:NodeGroup": "nodeGroupName",
    "aws:ec2/launchTemplate:LaunchTemplate": "name",
    "aws:iam/role:Role": "name",
}


@dataclass(frozen=True)
class PoolFacts:
    """What a pool is, as workloads and the placement check need it (known before deployment)."""

    name: str
    """The pool name (the value of `POOL_LABEL`)."""
    labels: Mapping[str, str]
    """Effective node labels, including those the cloud adds by itself."""
    taints: tuple[Taint, ...]
    """Effective node taints, including those the cloud adds by itself."""
    gpus_per_node: int
    """GPUs each node exposes (0 for a CPU pool)."""
    gpu_model: Optional[str]
    """GPU model (e.g. `A100`), None for a CPU pool or when unknown."""
    min_nodes: int
    max_nodes: int
    spot: bool
    custom_gpu_taint: bool
    """A GPU pool tainted with a key other than `nvidia.com/gpu`: the NVIDIA device plugin (and its
    NFD worker) must be given a toleration for it, or the nodes expose no GPUs."""
    placement: Placement
    """Lands a pod on this pool: selects the chosen labels, tolerates every filtering taint."""
    cloud: str = ""
    """`gke`, `eks`, `aks` or `existing`."""
    extended_resource_toleration: bool = True
    """Whether the cluster runs the ExtendedResourceToleration admission plugin (GKE and EKS do;
    self-managed clusters often do not)."""
    selected: tuple[str, ...] = field(default=(POOL_LABEL,))
    """The label keys the placement selects."""

    @property
    def is_gpu(self) -> bool:
        return self.gpus_per_node > 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for outputs and the placement check."""
        return {
            "name": self.name,
            "cloud": self.cloud,
            "labels": dict(self.labels),
            "taints": [t.to_dict() for t in self.taints],
            "gpusPerNode": self.gpus_per_node,
            "gpuModel": self.gpu_model,
            "minNodes": self.min_nodes,
            "maxNodes": self.max_nodes,
            "spot": self.spot,
            "customGpuTaint": self.custom_gpu_taint,
            "extendedResourceToleration": self.extended_resource_toleration,
            "placement": self.placement.to_pod_spec(),
        }


class HasFacts(Protocol):
    """A pool's plan: its facts and whatever its component registers from them."""

    @property
    def facts(self) -> PoolFacts: ...


Planned = Union[PoolFacts, HasFacts]
"""What a pool kind decides from its args: its facts alone, or a plan holding them."""


def facts_of(planned: Planned) -> PoolFacts:
    return planned if isinstance(planned, PoolFacts) else planned.facts


# ---------------------------------------------------------------------------------------------
# Validation pieces
# ---------------------------------------------------------------------------------------------


def pool_name_of(name: str, given: Optional[str], key: str = "pool_name") -> tuple[str, str]:
    """The pool's name and the path an error about it names: `args.<key>` when given, else the
    component's name."""
    return (given, f"args.{key}") if given is not None else (name, "name")


def validate_pool_name(name: object, path: str = "name") -> str:
    """The `pool-name` syntax (`model.syntax`) of a pool's name, given or the component's."""
    try:
        return pool_name_syntax(name)
    except InputError as e:
        raise e.at(path) from None


def check_one_taint_per_key(facts: PoolFacts, where: str) -> None:
    """One taint per key: the autoscaler's node-template tags hold one per key (`where`: the
    cloud's name of the pool, `an EKS node group`)."""
    keys = [t.key for t in facts.taints]
    for i, k in enumerate(keys):
        if keys.index(k) != i:
            raise InputError(
                f"taint key {k!r} is used twice; the autoscaler's node-template tags hold one "
                "taint per key",
                f"one taint per key on {where}",
                f"args.taints[{i}]",
            )


def validate_node_counts(min_nodes: object, max_nodes: object) -> tuple[int, int]:
    """min >= 0, max >= 1, min <= max (errors at `args.min_nodes` / `args.max_nodes`)."""
    for value, key in ((min_nodes, "min_nodes"), (max_nodes, "max_nodes")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{show(value)} is not a whole number", "an integer", f"args.{key}")
    assert isinstance(min_nodes, int) and isinstance(max_nodes, int)
    if min_nodes < 0:
        raise InputError(
            f"min_nodes {min_nodes} is negative", "0 (scale to zero) or more", "args.min_nodes"
        )
    if max_nodes < 1:
        raise InputError(
            f"max_nodes {max_nodes} leaves the pool without nodes",
            "1 or more (use min_nodes 0 to scale to zero)",
            "args.max_nodes",
        )
    if min_nodes > max_nodes:
        raise InputError(
            f"min_nodes {min_nodes} is above max_nodes {max_nodes}",
            "min_nodes <= max_nodes",
            "args.min_nodes",
        )
    return min_nodes, max_nodes


GP3_MAX_GIB = 16384
"""The largest EBS gp3 volume in GiB (EC2's gp3 limits: 1..16384), an EKS node's disk."""


def _reserved_domain(key: str, domains: Sequence[str] = RESERVED_LABEL_DOMAINS) -> str | None:
    prefix, slash, _ = key.rpartition("/")
    if not slash:
        return None
    for domain in domains:
        if prefix == domain or prefix.endswith("." + domain):
            return domain
    return None


def validate_user_labels(
    labels: Optional[Mapping[str, str]],
    pool_sets: Mapping[str, str],
    reserved_domains: Sequence[str] = RESERVED_LABEL_DOMAINS,
) -> dict[str, str]:
    """The reserved `POOL_LABEL` key, and reserved prefixes: a label under a Kubernetes or cloud
    domain (`reserved_domains`) is accepted only with exactly the value the pool sets anyway
    (`pool_sets`). Their syntax is the field's declared `labels` (`check_declared`)."""
    if labels is None:
        return {}
    out = dict(labels)
    for k, v in out.items():
        if k == POOL_LABEL:
            raise InputError(
                f"label {k!r} is reserved: every pool carries {POOL_LABEL}=<pool name> itself",
                "any other label key; name the pool to change its value",
                f"args.labels.{k}",
            )
        domain = _reserved_domain(k, reserved_domains)
        if domain is not None and pool_sets.get(k) != v:
            sets = (
                f"; the pool sets it to {pool_sets[k]!r} itself"
                if k in pool_sets
                else "; this pool does not set it"
            )
            raise InputError(
                f"label {k}={v!r} uses the prefix {domain!r}, which Kubernetes or the cloud "
                f"owns{sets}",
                f"labels outside {', '.join(reserved_domains[:-1])} and {reserved_domains[-1]} "
                "(e.g. 'pool'), or such a label with the value the pool sets",
                f"args.labels.{k}",
            )
    return out


def normalize_taints(taints: Optional[Iterable[object]], path: str = "args.taints") -> list[Taint]:
    """Taints as `Taint` objects (also accepts `key=value:Effect` strings and dicts); refuses two
    taints with the same key and effect (Kubernetes refuses them on a node)."""
    if taints is None:
        return []
    if isinstance(taints, (str, Mapping)):
        raise InputError(f"{show(taints)} is not a list of taints", "a list of taints", path)
    out: list[Taint] = []
    seen: dict[tuple[str, str], Taint] = {}
    for i, t in enumerate(taints):
        try:
            if isinstance(t, Taint):
                taint = t
            elif isinstance(t, str):
                taint = Taint.parse(t)
            elif isinstance(t, Mapping):
                taint = Taint.from_dict(t)
            else:
                raise InputError(
                    f"{show(t)} is not a taint", "Taint(key, value, effect) or 'key=value:Effect'"
                )
        except InputError as e:
            raise e.at(f"{path}[{i}]") from None
        except KeyError:
            raise InputError(
                f"{show(t)} has no key", "a taint with key, value and effect", f"{path}[{i}]"
            ) from None
        k = (taint.key, str(taint.effect))
        if k in seen:
            raise InputError(
                f"taint {taint} repeats key {taint.key!r} with effect {taint.effect} "
                f"(already {seen[k]})",
                "one taint per key and effect",
                f"{path}[{i}]",
            )
        seen[k] = taint
        out.append(taint)
    return out


def merge_forced_taints(taints: Sequence[Taint], forced: Sequence[Taint], who: str) -> list[Taint]:
    """`taints` plus the taints the cloud sets itself (`forced`), which must not be contradicted:
    a user taint with the same key and effect but another value is an error."""
    out = list(taints)
    for f in forced:
        same = [t for t in out if t.key == f.key and t.effect == f.effect]
        if not same:
            out.append(f)
        elif same[0].value != f.value:
            raise InputError(
                f"taint {same[0]} contradicts {f}, which {who} sets on this pool itself",
                f"{f} (or leave it out: it is declared for you), or another key",
                f"args.taints[{out.index(same[0])}]",
            )
    return out


def validate_style(style: object) -> str:
    if style not in SCHEDULING_STYLES:
        raise InputError(
            f"scheduling style {show(style)} is not known",
            " or ".join(SCHEDULING_STYLES),
            "args.scheduling_style",
        )
    return str(style)


def pool_placement(
    labels: Mapping[str, str],
    taints: Iterable[Taint],
    select_labels: Optional[Sequence[str]] = None,
    style: str = "nodeSelector",
) -> Placement:
    """The placement that lands a pod on a pool: select `POOL_LABEL` (default) or the label keys
    named in `select_labels` (in that order, values from the effective `labels`), and tolerate
    every NoSchedule / NoExecute taint exactly."""
    keys = list(select_labels) if select_labels is not None else [POOL_LABEL]
    if not keys:
        raise InputError(
            "select_labels is empty: the placement would select no node label and land anywhere",
            "one or more label keys of the pool (default: " + POOL_LABEL + ")",
            "args.select_labels",
        )
    selected: dict[str, str] = {}
    for i, k in enumerate(keys):
        if k in keys[:i]:
            raise InputError(
                f"label key {show(k)} is listed twice", "each key once", f"args.select_labels[{i}]"
            )
        if k not in labels:
            raise InputError(
                f"select_labels names {show(k)}, which the pool's nodes do not carry",
                "keys of the pool's effective labels: " + ", ".join(sorted(labels)),
                f"args.select_labels[{i}]",
            )
        selected[k] = labels[k]
    return Placement.for_pool(selected, taints, validate_style(style))


def build_facts(
    name: str,
    *,
    cloud: str,
    user_labels: Optional[Mapping[str, str]],
    cloud_labels: Mapping[str, str],
    taints: Optional[Iterable[object]],
    forced_taints: Sequence[Taint] = (),
    gpus_per_node: int,
    gpu_model: Optional[str],
    min_nodes: int,
    max_nodes: int,
    spot: bool,
    select_labels: Optional[Sequence[str]] = None,
    scheduling_style: Optional[str] = "nodeSelector",
    extended_resource_toleration: bool = True,
    name_path: str = "name",
    forced_by: str = "the cloud",
    reserved_domains: Sequence[str] = RESERVED_LABEL_DOMAINS,
) -> PoolFacts:
    """Validate the parts every pool shares and compute its facts.

    `cloud_labels`: labels the pool's nodes get without the user asking (from the cloud, or that
    the component sets itself, like `k8s.amazonaws.com/accelerator` on EKS).
    `taints`: the user's taints; None means the default (`GPU_TAINT` for a GPU pool, none for a
    CPU pool). `forced_taints`: taints the cloud sets itself (GKE's GPU taint).
    """
    validate_pool_name(name, name_path)
    validate_node_counts(min_nodes, max_nodes)
    labels = validate_user_labels(user_labels, cloud_labels, reserved_domains)
    style = validate_style(scheduling_style or "nodeSelector")
    default = [GPU_TAINT] if gpus_per_node > 0 else []
    own = default if taints is None else normalize_taints(taints)
    effective_taints = merge_forced_taints(own, forced_taints, forced_by)
    filtering = [t for t in effective_taints if t.effect in FILTERING_EFFECTS]
    if gpus_per_node > 0 and not filtering:
        raise InputError(
            "a GPU pool without a NoSchedule or NoExecute taint lets any pod land on its GPU "
            "nodes and keeps them from scaling down",
            f"leave taints unset (default {GPU_TAINT}) or give a NoSchedule / NoExecute taint",
            "args.taints",
        )
    effective_labels = {POOL_LABEL: name, **labels, **cloud_labels}
    if select_labels is not None and (
        isinstance(select_labels, (str, Mapping)) or not isinstance(select_labels, Sequence)
    ):
        raise InputError(
            f"{show(select_labels)} is not a list of label keys",
            "a list of label keys, e.g. ['pool']",
            "args.select_labels",
        )
    placement = pool_placement(effective_labels, effective_taints, select_labels, style)
    custom = gpus_per_node > 0 and any(t.key != GPU_TAINT_KEY for t in filtering)
    return PoolFacts(
        name=name,
        labels=effective_labels,
        taints=tuple(effective_taints),
        gpus_per_node=gpus_per_node,
        gpu_model=gpu_model,
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        spot=spot,
        custom_gpu_taint=custom,
        placement=placement,
        cloud=cloud,
        extended_resource_toleration=extended_resource_toleration,
        selected=tuple(select_labels) if select_labels is not None else (POOL_LABEL,),
    )


def declared_labels(facts: PoolFacts, cloud_adds: Iterable[str]) -> dict[str, str]:
    """The labels to declare on the cloud resource: the effective ones minus those the cloud adds
    by itself (declaring those would be refused or show a permanent diff)."""
    skip = set(cloud_adds)
    return {k: v for k, v in facts.labels.items() if k not in skip}


# ---------------------------------------------------------------------------------------------
# Replacement-safe naming
# ---------------------------------------------------------------------------------------------


def cloud_name_prefix(pool_name: str, max_length: int) -> str:
    """`<pool name, cut to fit>-`: the prefix the provider completes with a unique suffix."""
    head = pool_name[: max_length - 1].rstrip("-")
    return f"{head}-"


def gke_node_pool_resource_name(component_name: str, pool_name: str) -> str:
    """The Pulumi resource name of a GKE `NodePool`, which Pulumi's auto-name completes with
    `-` and 7 random hex into the cloud name: a DNS-1035 label of at most 32 characters. The
    pool name itself when the component is named after it and it fits; else the pool name cut
    to 24 characters plus 7 hex of a hash of the component name, so two components on one pool
    name (or two long names with one head) still get distinct resource names."""
    if component_name == pool_name and len(pool_name) <= GKE_RESOURCE_NAME_MAX:
        return pool_name
    digest = hashlib.sha256(component_name.encode()).hexdigest()[:7]
    return f"{pool_name[:24].rstrip('-')}-{digest}"


def eks_name_prefix(pool_name: str) -> str:
    return cloud_name_prefix(pool_name, EKS_NAME_PREFIX_MAX)


def replacement_collides(
    typ: str, old_inputs: Mapping[str, Any], new_inputs: Mapping[str, Any]
) -> bool:
    """Whether replacing a resource with `old_inputs` by one with `new_inputs` (create before
    delete, Pulumi's default) would ask the cloud for a name the old resource still holds: both
    fix the same cloud name. With a name prefix (or an auto-name) the provider picks a fresh
    name for the new resource, so this is False."""
    key = FIXED_NAME_INPUTS.get(typ, "name")
    old, new = old_inputs.get(key), new_inputs.get(key)
    return old is not None and old == new


# ---------------------------------------------------------------------------------------------
# Pool kinds
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolKind:
    """One kind of pool, as the stack config and the platform meet it: each `components.pools`
    module declares its own (`KIND`). A `pools[i]` entry is of the kind whose `provider` is the
    cluster's and whose `block` it gives (`karpenter:`), else of the provider's kind without a
    block; on a GKE Autopilot cluster, of the `autopilot` kind."""

    name: str
    """Short name (`gke`, `karpenter`), as the modules are named."""
    title: str
    """What a person calls it (`EKS managed node group`)."""
    provider: str
    """`gke`, `eks`, `aks` or `existing`: the cluster provider it runs on."""
    args: type
    """The component's Args dataclass: the one declaration of its inputs and stack keys."""
    plan: Callable[[str, Any], Planned]
    """Validates the args (pure, nothing registered) and decides the pool: its facts, or a plan
    holding them."""
    component: type
    """The ComponentResource class, constructed as `component(name, args, opts=...)`."""
    block: Optional[str] = None
    """The key of its own block in a `pools[i]` entry (`karpenter`), if it has one."""
    autopilot: bool = False
    """The kind every pool of a GKE Autopilot cluster is."""
    kubernetes: bool = False
    """Its component makes Kubernetes objects (it needs the cluster's kubernetes provider)."""
    node_startup: bool = True
    """Its nodes are made on demand: `nodeStartupSeconds` applies."""
    note: str = ""
    """What sets it apart, said when a key of another kind is given to it."""

    def facts(self, name: str, args: Any) -> PoolFacts:
        """Validates the args (pure, nothing registered) and returns the pool's facts."""
        return facts_of(self.plan(name, args))
