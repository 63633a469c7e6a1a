"""Devices by claim (DRA): whether one node of a pool can satisfy a pod's ResourceClaims, decided
as kube-scheduler's DynamicResources plugin decides it, and the DRA findings.

The allocation (k8s.io/dynamic-resource-allocation v0.36.3 `structured/internal/stable/
allocator_stable.go`, run by kube-scheduler 1.36's DynamicResources Filter on one node): the
pod's claims in order, each claim's requests in order, each request taking `count` devices (or,
with allocationMode All, every matching device, at least one) from the node's ResourceSlices in
their order, a device at most once; a `firstAvailable` request takes the first alternative that
can be allocated; when a later request cannot be met the allocator backtracks. A device matches a
request when every CEL selector of its DeviceClass, then every selector of the request, is true
(`selectorsMatch`). A selector that fails to compile or ends in a CEL error on a device the
allocator reads aborts the pod's scheduling altogether (the Filter returns an Error status, not
Unschedulable: `dynamicresources.go` Filter), on every node. A DeviceClass that does not exist
keeps the pod Pending. DynamicResources is the last filter, so only nodes whose labels, taints and
resources let the pod in are read.

Findings (declared in `registry.RULES`):
- GI050 dra-claim-count: devices of the pool match the claims' classes and selectors, but no
  node has as many as the pod's claims ask for together.
- GI051 dra-claim-selector: no device of the pool matches a request's class and selectors (a
  pool whose nodes publish no DRA device included).
- GI052 dra-selector-error: a selector that does not compile, or fails on a device.
- GI053 dra-serverless: a Serverless (Knative) InferenceService component with claims.
- GI054 dra-no-driver: a DRA pool that no NVIDIA DRA driver serves (none in the graph: warning;
  the graph's driver does not tolerate the pool's taints or select its nodes: error).
- GI055 dra-not-autoscaled: a DRA pod on a pool whose autoscaler ignores claims: GKE node
  auto-provisioning (a ComputeClass that creates node pools), EKS Auto Mode.
- GI056 dra-claim-unknown: a claim or template the graph does not hold (warning: not judged), or
  a DeviceClass neither the driver nor the graph defines (error).
- GI057 dra-no-scale-from-zero: a DRA pod that lands only on cluster-autoscaler groups on AWS
  that can be at 0 nodes (no ResourceSlices on the autoscaler's template node).
- GI058 dra-no-gpu-driver: a GKE DRA pool (GKE's GPU driver install off) that no NVIDIA GPU
  driver installer serves (none in the graph: warning; the graph's installers are for another
  node image, or do not tolerate the pool's taints or select its nodes: error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...model.deploy.versions import GKE_DRIVER_INSTALLER_PATHS, GKE_DRIVER_INSTALLER_REPO
from ...model.nodes.dra_devices import DRA_DRIVER, UNMODELLED_ATTRIBUTES
from ...model.scheduling import Placement
from ..read import Findings, Template
from ..readers.dra import Claim, DeviceRequest, DraIndex, DraUse, is_dra_node
from ..results import NodeTemplate, PoolFacts, WorkloadFacts

if TYPE_CHECKING:
    from ..rules import CheckContext, PodContext


def _installer_fix(images: Sequence[str]) -> str:
    """GKE's installer manifest for each node image (COS and Ubuntu have one; another image none)."""
    found = [
        f"{GKE_DRIVER_INSTALLER_REPO} {GKE_DRIVER_INSTALLER_PATHS[i]}"
        for i in images
        if i in GKE_DRIVER_INSTALLER_PATHS
    ]
    other = [i for i in images if i not in GKE_DRIVER_INSTALLER_PATHS]
    return " and ".join(
        found
        + (
            ["GKE's installer on COS or Ubuntu nodes (there is none for another image)"]
            if other
            else []
        )
    )


@dataclass(frozen=True)
class Allocation:
    """The allocator's verdict for one node."""

    ok: bool
    cause: str = ""  # "" | count | selector | error | class
    detail: str = ""
    unmodelled: bool = False  # a selector read an attribute this model does not publish


class _Abort(Exception):
    def __init__(self, detail: str, unmodelled: bool) -> None:
        super().__init__(detail)
        self.detail = detail
        self.unmodelled = unmodelled


def _unmodelled(expression: str, error: str) -> bool:
    return "not found" in error.lower() and any(a in expression for a in UNMODELLED_ATTRIBUTES)


class _Allocator:
    def __init__(
        self,
        devices: Sequence[Mapping[str, Any]],
        classes: Mapping[str, tuple[str, ...]],
        driver: str = DRA_DRIVER,
    ) -> None:
        self.devices = list(devices)
        self.classes = classes
        self.driver = driver
        self.cache: dict[tuple[int, str, int], bool] = {}
        self.used: set[int] = set()

    def selectable(self, rid: int, r: DeviceRequest, i: int) -> bool:
        key = (rid, r.name, i)
        if key in self.cache:
            return self.cache[key]
        from .cel import CelError, evaluate

        device = self.devices[i]
        ok = True
        for expression in (*self.classes.get(r.device_class, ()), *r.selectors):
            try:
                outcome = evaluate(expression, self.driver, device)
            except CelError as e:
                raise _Abort(f"selector {expression!r} does not compile: {e}", False) from None
            if outcome.error is not None:
                raise _Abort(
                    f"selector {expression!r} fails on device {device.get('name')}: "
                    f"{outcome.error}",
                    _unmodelled(expression, outcome.error),
                )
            if not outcome.matches:
                ok = False
                break
        self.cache[key] = ok
        return ok

    def allocate(self, requests: list[tuple[int, DeviceRequest]], k: int = 0) -> bool:
        if k == len(requests):
            return True
        rid, r = requests[k]
        for alt in r.alternatives or (r,):
            if self._take(requests, k, rid, alt, alt.count, 0, []):
                return True
        return False

    def _take(
        self,
        requests: list[tuple[int, DeviceRequest]],
        k: int,
        rid: int,
        r: DeviceRequest,
        left: int,
        start: int,
        taken: list[int],
    ) -> bool:
        if r.all_devices:
            chosen = [
                i
                for i in range(len(self.devices))
                if self.selectable(rid, r, i) and i not in self.used
            ]
            every = [i for i in range(len(self.devices)) if self.cache.get((rid, r.name, i))]
            if not chosen or len(chosen) != len(every):
                return False
            self.used.update(chosen)
            if self.allocate(requests, k + 1):
                return True
            self.used.difference_update(chosen)
            return False
        if left == 0:
            return self.allocate(requests, k + 1)
        for i in range(start, len(self.devices)):
            if i in self.used or not self.selectable(rid, r, i):
                continue
            self.used.add(i)
            if self._take(requests, k, rid, r, left - 1, i + 1, taken):
                return True
            self.used.discard(i)
        return False


def allocate(
    claims: Sequence[Claim],
    devices: Sequence[Mapping[str, Any]],
    classes: Mapping[str, tuple[str, ...]],
) -> Allocation:
    """Whether one node with `devices` can satisfy all `claims` together, as the allocator
    decides it (see the module docstring)."""
    requests = [(i, r) for i, r in enumerate(r for c in claims for r in c.requests)]
    for _, r in requests:
        for alt in r.alternatives or (r,):
            if alt.device_class not in classes:
                return Allocation(False, "class", f"DeviceClass {alt.device_class} does not exist")
    alloc = _Allocator(devices, classes)
    try:
        if alloc.allocate(requests):
            return Allocation(True)
    except _Abort as e:
        return Allocation(False, "error", e.detail, e.unmodelled)
    unmatched = []
    for rid, r in requests:
        try:
            if not any(
                alloc.selectable(rid, alt, i)
                for alt in r.alternatives or (r,)
                for i in range(len(devices))
            ):
                unmatched.append(r.name)
        except _Abort:
            unmatched.append(r.name)
    if unmatched:
        return Allocation(False, "selector", f"no device matches request(s) {', '.join(unmatched)}")
    asked = sum(r.count for _, r in requests if not r.alternatives)
    return Allocation(False, "count", f"{asked} device(s) asked, fewer match on one node")


def _describe(claims: Sequence[Claim]) -> str:
    parts = []
    for c in claims:
        for r in c.requests:
            for a in r.alternatives or (r,):
                count = "all" if a.all_devices else str(a.count)
                sel = f" where {' && '.join(a.selectors)}" if a.selectors else ""
                parts.append(f"{count} x {a.device_class}{sel}")
    return "; ".join(parts)


def is_dra_pool(pool: PoolFacts) -> bool:
    """Every node of the pool is set up for NVIDIA's DRA driver (its GPUs are published as
    ResourceSlices, not advertised by a device plugin)."""
    return bool(pool.nodes) and all(n.dra_devices is not None for n in pool.nodes)


def _devices_summary(devices: Sequence[Mapping[str, Any]]) -> str:
    if not devices:
        return "no DRA device"
    names: dict[str, int] = {}
    for d in devices:
        attrs = d.get("attributes") or {}
        label = str((attrs.get("productName") or {}).get("string") or d.get("name"))
        profile = (attrs.get("profile") or {}).get("string")
        label += f" MIG {profile}" if profile else ""
        names[label] = names.get(label, 0) + 1
    return ", ".join(f"{n} x {k}" for k, n in names.items())


class DraCheck:
    """The DRA judgement of one graph."""

    def __init__(self, index: DraIndex, autoscaled_by: Mapping[str, str]) -> None:
        self.index = index
        self.autoscaled_by = autoscaled_by  # pool -> autoscaler that ignores claims

    def nodes_for(
        self, t: Template, use: DraUse, pool: PoolFacts, placement: Placement, gpus: int
    ) -> list[NodeTemplate]:
        return [
            n
            for n in pool.nodes
            if placement.admits(n.labels, n.taints, n.name) and pool.node_fits(n, gpus)
        ]

    def lands(
        self, t: Template, use: DraUse, pool: PoolFacts, placement: Placement, gpus: int
    ) -> tuple[bool, Allocation | None]:
        """Whether a node of `pool` that lets the pod in also allocates its claims (unknown
        claims: given the benefit)."""
        if use.missing or not use.resolved:
            return True, None
        last: Allocation | None = None
        for n in self.nodes_for(t, use, pool, placement, gpus):
            result = allocate(use.resolved, n.dra_devices or (), self.index.classes)
            if result.ok:
                return True, result
            if result.cause == "error":
                return False, result
            last = result
        return False, last

    def check(
        self,
        w: WorkloadFacts,
        use: DraUse,
        verdicts: Mapping[str, Allocation | None],
        out: Findings,
    ) -> None:
        """GI050-GI052, GI056, GI057 for one pod template; `verdicts`: each pool it is placed
        on (labels, taints) with the allocation that kept it out (None: it lands there)."""
        if use.missing:
            out.add(
                "GI056",
                w.resource,
                f"names ResourceClaim / ResourceClaimTemplate {', '.join(use.missing)}, which the "
                "graph does not hold: its devices are not judged",
                "declare the claim or template in the same stack (same namespace)",
                severity="warning",
            )
            return
        landed = [p for p, v in verdicts.items() if v is None]
        if landed:
            self._check_scale_from_zero(w, use, landed, out)
            return
        wanted = _describe(use.resolved)
        claims = ", ".join(use.claims)
        for pool, v in verdicts.items():
            assert v is not None
            code, fix = _verdict_fix(v)
            out.add(
                code,
                w.resource,
                f"claims {wanted} ({claims}) but no node of pool {pool} can allocate it: "
                f"{v.detail}; the nodes publish {self._published(pool)}: it stays Pending",
                fix,
            )

    _devices: dict[str, str]
    _pools: dict[str, PoolFacts]

    def _published(self, pool: str) -> str:
        return getattr(self, "_devices", {}).get(pool, "unknown devices")

    def _check_scale_from_zero(
        self, w: WorkloadFacts, use: DraUse, landed: Sequence[str], out: Findings
    ) -> None:
        """GI057: every pool the pod lands on is a cluster-autoscaler group on AWS (an EKS managed
        node group, a self-managed Auto Scaling group) that can be at 0 nodes. cluster-autoscaler
        v1.36.1 builds the template node of a group without ResourceSlices
        (cloudprovider/aws/aws_cloud_provider.go `TemplateNodeInfo`: `framework.NewNodeInfo(node,
        nil, ...)`); only a template copied from a running node of the group carries that node's
        slices (simulator/node_info_utils.go `SanitizedTemplateNodeInfoFromNodeInfo`). With no
        node, no simulated node can allocate the claims: no scale-up, the pod stays Pending."""
        pools = getattr(self, "_pools", {})
        found = [pools.get(n) for n in landed]
        if not all(p is not None and p.provider == "eks" and p.min_nodes == 0 for p in found):
            return
        names = ", ".join(landed)
        out.add(
            "GI057",
            w.resource,
            f"takes its devices through DRA ResourceClaim(s) ({', '.join(use.claims)}) and can "
            f"only land on {names}, cluster-autoscaler group(s) that can be at 0 nodes: "
            "cluster-autoscaler (v1.36.1) builds the template node of a group with no node "
            "without ResourceSlices, so no simulated node allocates the claims and the group is "
            "never scaled up from zero: it stays Pending",
            f"minNodes 1 on {names} (cluster-autoscaler then copies a running node's "
            "ResourceSlices into its template)",
        )

    def remember_devices(self, pools: Sequence[PoolFacts]) -> None:
        self._pools = {p.name: p for p in pools}
        self._devices = {
            p.name: "; ".join(sorted({_devices_summary(n.dra_devices or ()) for n in p.nodes}))
            for p in pools
        }

    def check_drivers(
        self, pools: Sequence[PoolFacts], used: Mapping[str, bool], out: Findings
    ) -> None:
        """GI054: a DRA pool that no driver of the graph serves (only when DRA pods land there,
        or the graph installs a driver)."""
        drivers = self.index.drivers
        for p in pools:
            dra_nodes = [n for n in p.nodes if n.dra_devices is not None]
            if not dra_nodes or not (used.get(p.name) or drivers):
                continue
            if any(is_dra_node(n.labels) is False for n in dra_nodes):
                continue
            if not drivers:
                out.add(
                    "GI054",
                    p.resource,
                    f"pool {p.name} is set up for DRA but the graph installs no NVIDIA DRA "
                    "driver (chart dra-driver-nvidia-gpu): the cluster's must run there, or "
                    "its GPUs are never published",
                    "enable the DRA driver install (draDriver) or install it in the cluster",
                    severity="warning",
                )
                continue
            served = [d for d in drivers if all(d.serves(n.labels, n.taints) for n in dra_nodes)]
            if not served:
                taints = sorted({str(x) for n in dra_nodes for x in n.taints})
                out.add(
                    "GI054",
                    p.resource,
                    f"pool {p.name} is set up for DRA but no NVIDIA DRA driver's kubelet plugin "
                    f"runs on its nodes (taints {', '.join(taints) or 'none'}; the plugin's "
                    "tolerations / nodeSelector / affinity do not let it in): its GPUs are never "
                    "published",
                    "give the driver's kubeletPlugin an Exists toleration for each pool taint and "
                    "an affinity that selects the pool's nodes",
                )

    def check_gpu_drivers(
        self, pools: Sequence[PoolFacts], used: Mapping[str, bool], out: Findings
    ) -> None:
        """GI058: a GKE DRA pool whose NVIDIA GPU driver GKE does not install (its install is
        off, as GKE's DRA setup page asks) and no driver installer of the graph serves (only when
        DRA pods land there, or the graph installs an installer). Without the driver the DRA
        driver's kubelet plugin finds no GPU, and the pool's GPUs are never published.

        Severity: with no installer in the graph, a warning: the cluster may run its own (GKE's
        manual install is a `kubectl apply`, which no graph shows; the stack's
        `addons.gpuDriverInstaller.enabled: false` says so). With installers in the graph none
        of which serves the pool (another node image, or tolerations / affinity that keep its
        pod off the pool's nodes), an error: the graph's own install misses the pool."""
        installers = self.index.installers
        for p in pools:
            nodes = [
                n
                for n in p.nodes
                if n.dra_devices is not None and n.gpu_driver not in (None, "gke")
            ]
            if p.provider != "gke" or not nodes or not (used.get(p.name) or installers):
                continue
            images = sorted({str(n.gpu_driver) for n in nodes})
            if not installers:
                out.add(
                    "GI058",
                    p.resource,
                    f"pool {p.name} is set up for DRA with GKE's GPU driver installation off, but "
                    "the graph installs no NVIDIA GPU driver (GKE's nvidia-driver-installer "
                    "DaemonSet): the cluster's must run there, or its nodes have no GPU driver "
                    "and their GPUs are never published",
                    "install GKE's driver installer DaemonSet (addons.gpuDriverInstaller) or apply "
                    f"{_installer_fix(images)} in the cluster",
                    severity="warning",
                )
                continue
            if all(
                any(i.serves(n.labels, n.taints, n.gpu_driver) for i in installers) for n in nodes
            ):
                continue
            taints = sorted({str(x) for n in nodes for x in n.taints})
            why = "; ".join(
                f"{i.resource} installs for {i.image} nodes"
                if i.image not in images
                else f"{i.resource}: its tolerations / affinity do not let it in"
                for i in installers
            )
            out.add(
                "GI058",
                p.resource,
                f"pool {p.name} is set up for DRA with GKE's GPU driver installation off, but no "
                f"NVIDIA GPU driver installer of the graph runs on its {' and '.join(images)} "
                f"nodes (taints {', '.join(taints) or 'none'}; {why}): they have no GPU driver "
                "and their GPUs are never published",
                f"install {_installer_fix(images)}, tolerating the pool's taints and selecting "
                "its nodes",
            )


def _verdict_fix(v: Allocation) -> tuple[str, str]:
    """The code and fix of an allocation that keeps a pod's claims off a pool."""
    if v.cause == "class":
        return "GI056", "use gpu.nvidia.com / mig.nvidia.com or declare the class"
    if v.cause == "error" and v.unmodelled:
        return "GI052", (
            "guard machine-dependent attributes with `'name' in device.attributes"
            "['gpu.nvidia.com']` (their values are not known offline)"
        )
    if v.cause == "error":
        return "GI052", (
            "guard the attribute with `'name' in device.attributes[...]` or fix "
            "the expression (a CEL error aborts the pod's scheduling on every node)"
        )
    if v.cause == "count":
        return (
            "GI050",
            "ask for fewer devices per pod, or wire it to a pool with more GPUs per node",
        )
    return "GI051", "loosen the selectors, or wire it to a pool whose GPUs match them"


def claims(ctx: PodContext) -> None:
    """GI050-GI052, GI056, GI057: whether the pod's claims are allocated on the pools it is
    placed on (`DraCheck.check`)."""
    if ctx.use.any:
        ctx.check.dra.check(ctx.facts, ctx.use, ctx.dra_verdicts, ctx.out)


def serverless(ctx: PodContext) -> None:
    """GI053: a Serverless InferenceService component with claims."""
    if ctx.use.any and ctx.template.serverless:
        ctx.out.add(
            "GI053",
            ctx.facts.resource,
            f"takes devices through DRA ResourceClaim(s) ({', '.join(ctx.use.claims)}) in "
            "Serverless (Knative) mode: Knative's webhook refuses `resources.claims` (\"must "
            'not set the field(s): spec.template.spec.containers[0].resources.claims", '
            "knative/serving#15332), so no revision is ever created",
            "use deploymentMode Standard (RawDeployment) for a DRA component, or request "
            "nvidia.com/gpu",
        )


def not_autoscaled(ctx: PodContext) -> None:
    """GI055: a pod with claims that may land on a pool whose autoscaler ignores claims (every
    pool its labels, taints and GPUs let it onto, autoscaled ones included)."""
    use = ctx.use
    if not use.any or use.missing:
        return
    for pool in ctx.on_gpus:
        ignores = ctx.check.dra.autoscaled_by.get(pool.name)
        if ignores:
            ctx.out.add(
                "GI055",
                ctx.facts.resource,
                f"takes its devices through DRA ResourceClaim(s) ({', '.join(use.claims)}) and "
                f"may land on pool {pool.name}, whose nodes come from {ignores}: no node is made "
                "for it",
                "run DRA pods on node pools you create (GKE node pools, EKS managed node "
                "groups, existing nodes)",
            )


def no_driver(ctx: CheckContext) -> None:
    """GI054 (`DraCheck.check_drivers`)."""
    ctx.dra.check_drivers(ctx.pools, ctx.dra_pools, ctx.out)


def no_gpu_driver(ctx: CheckContext) -> None:
    """GI058 (`DraCheck.check_gpu_drivers`)."""
    ctx.dra.check_gpu_drivers(ctx.pools, ctx.dra_pools, ctx.out)
