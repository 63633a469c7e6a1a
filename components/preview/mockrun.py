"""Run a Pulumi program in-process under the mock runtime and record the resource graph.

This is the offline engine behind `gpu-inference preview` and behind every test: no Pulumi CLI,
no cluster, no cloud. It records each registration as `{type, name, parent, inputs, dependsOn}`
(inputs camelCase, as the engine would send them to a provider), with secrets replaced by
`[secret]` and unknowns by `[unknown]` so that nothing secret is ever written out.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import resource as runtime_resource
from pulumi.runtime import rpc

SECRET = "[secret]"
UNKNOWN = "[unknown]"


@dataclass
class Registered:
    """One registered resource, as the preview and the placement check read it."""

    type: str
    name: str
    urn: str
    parent: str | None
    inputs: dict[str, Any]
    custom: bool
    depends_on: list[str] = field(default_factory=list)
    provider: str | None = None
    retain_on_delete: bool = False
    hooks: dict[str, list[str]] = field(default_factory=dict)
    """The resource hooks bound to it, by kind (`before_create`, `on_error`, ...)."""
    protect: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    deleted_with: str | None = None
    """The URN of the resource whose deletion deletes this one (`deleted_with`)."""
    transforms: int = 0
    """How many resource transforms it carries (they reach its children; not run under mocks)."""
    aliases: list[dict[str, Any]] = field(default_factory=list)
    """Its aliases as the SDK sent them: `{"urn": ...}` or a spec (`name`, `type`, `parentUrn`,
    `noParent`, `project`, `stack`; empty fields left out)."""

    def as_graph_entry(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "dependsOn": self.depends_on,
            "inputs": self.inputs,
        }


def _scrub(value: Any) -> Any:
    """Replace secrets and unknowns; turn numbers that are whole back into ints (mocks send floats).

    A secret map (a Secret's `data` or `stringData`) keeps its keys, each value `[secret]`: the
    object stays one the API server takes (a map where it needs a map), and says which keys it
    holds; keys are names, never values."""
    if rpc.is_rpc_secret(value):
        inner = value.get("value")
        if isinstance(inner, dict) and rpc._special_sig_key not in inner:
            return dict.fromkeys(inner, SECRET)
        return SECRET
    if isinstance(value, pulumi.output.Unknown):
        return UNKNOWN
    if isinstance(value, dict):
        if rpc._special_sig_key in value:  # resource references, assets
            return {k: _scrub(v) for k, v in value.items() if k != rpc._special_sig_key}
        return {k: _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _fake_id(typ: str, name: str) -> str:
    return "fake-" + hashlib.sha256(f"{typ}::{name}".encode()).hexdigest()[:12]


_FAKE_AKS_KUBECONFIG = (
    "YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCmNsdXN0ZXJzOgotIG5hbWU6IGZha2UtYWtzCiAgY2x1c3Rlcjoge3"
    "NlcnZlcjogJ2h0dHBzOi8vZmFrZS1ha3MuaGNwLmVhc3R1czIuYXptazhzLmlvOjQ0MycsIGNlcnRpZmljYXRlLWF1"
    "dGhvcml0eS1kYXRhOiBabUZyWlMxallRPT19CnVzZXJzOgotIG5hbWU6IGNsdXN0ZXJVc2VyCiAgdXNlcjoge2V4ZW"
    "M6IHthcGlWZXJzaW9uOiBjbGllbnQuYXV0aGVudGljYXRpb24uazhzLmlvL3YxYmV0YTEsIGNvbW1hbmQ6IGt1YmVsb2dpbiwgYXJnczogW2dldC10b2tlbl19fQo="
)


class FakeCloud(pulumi.runtime.Mocks):
    """Answers registrations with their own inputs plus plainly fake outputs, and the few invokes
    the stack program makes with plainly fake values (`fake-project`, account `000000000000`)."""

    OUTPUTS: dict[str, dict[str, Any]] = {
        "gcp:container/cluster:Cluster": {
            "endpoint": "203.0.113.10",
            "masterAuth": {"clusterCaCertificate": "ZmFrZS1jYQ=="},
        },
        "aws:eks/cluster:Cluster": {
            "endpoint": "https://fake.eks.example",
            "certificateAuthority": {"data": "ZmFrZS1jYQ=="},
            "arn": "arn:aws:eks:us-east-1:000000000000:cluster/fake",
        },
        "aws:iam/role:Role": {"arn": "arn:aws:iam::000000000000:role/fake-node-role"},
        "aws:eks/nodeGroup:NodeGroup": {
            "resources": [{"autoscalingGroups": [{"name": "eks-fake-asg"}]}],
            "arn": "arn:aws:eks:us-east-1:000000000000:nodegroup/fake",
        },
        "aws:ec2/launchTemplate:LaunchTemplate": {"latestVersion": 1},
        "gcp:serviceaccount/account:Account": {
            "email": "fake@fake-project.iam.gserviceaccount.com"
        },
    }

    INVOKES: dict[str, dict[str, Any]] = {
        "gcp:organizations/getClientConfig:getClientConfig": {
            "project": "fake-project",
            "region": "us-central1",
            "zone": "us-central1-a",
            "accessToken": "fake-token",
            "id": "fake",
        },
        "gcp:container/getCluster:getCluster": {
            "endpoint": "203.0.113.10",
            "masterAuths": [{"clusterCaCertificate": "ZmFrZS1jYQ=="}],
            "name": "fake-cluster",
            "project": "fake-project",
            "location": "us-central1",
        },
        "aws:index/getRegion:getRegion": {
            "name": "us-east-1",
            "region": "us-east-1",
            "id": "us-east-1",
        },
        "aws:index/getCallerIdentity:getCallerIdentity": {
            "accountId": "000000000000",
            "arn": "arn:aws:iam::000000000000:user/fake",
            "userId": "fake",
            "id": "000000000000",
        },
        "aws:eks/getCluster:getCluster": {
            "endpoint": "https://fake.eks.example",
            "certificateAuthorities": [{"data": "ZmFrZS1jYQ=="}],
            "name": "fake-cluster",
            "arn": "arn:aws:eks:us-east-1:000000000000:cluster/fake-cluster",
            "vpcConfig": {"subnetIds": ["subnet-fake-a", "subnet-fake-b"]},
            "identities": [
                {"oidcs": [{"issuer": "https://oidc.eks.us-east-1.amazonaws.com/id/FAKE"}]}
            ],
        },
        "aws:iam/getPolicyDocument:getPolicyDocument": {"json": "{}", "id": "fake"},
        # An Entra ID cluster's user credentials, format exec (a kubeconfig with no secret).
        "azure-native:containerservice:listManagedClusterUserCredentials": {
            "kubeconfigs": [{"name": "clusterUser", "value": _FAKE_AKS_KUBECONFIG}]
        },
    }

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict]:
        state = dict(args.inputs)
        state.update(self.OUTPUTS.get(args.typ, {}))
        if args.typ.startswith("kubernetes:") and args.custom:
            state.setdefault("metadata", {})
        if args.typ == "kubernetes:core/v1:Node" and args.resource_id:
            # A read of an existing node (ExistingGpuNodes merges with its taints): untainted.
            state.setdefault("spec", {})
        return (_fake_id(args.typ, args.name) if args.custom else None), state

    def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
        return dict(self.INVOKES.get(args.token, {}))


class Recorder(_mocks.MockMonitor):
    """A mock monitor that also keeps parent, dependencies and the scrubbed inputs, in order."""

    def __init__(
        self, mocks: pulumi.runtime.Mocks, on_register: Callable[[str], None] | None = None
    ) -> None:
        super().__init__(mocks)
        self.registered: list[Registered] = []
        self.on_register = on_register
        """Called with each registration's type (the preview's progress line)."""

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            inputs = _scrub(rpc.deserialize_properties(request.object, keep_unknowns=True))
            deps = set(request.dependencies)
            for pd in request.propertyDependencies.values():
                deps.update(pd.urns)
            self.registered.append(
                Registered(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent or None,
                    inputs=inputs,
                    custom=bool(request.custom),
                    depends_on=sorted(deps),
                    provider=request.provider or None,
                    retain_on_delete=bool(request.retainOnDelete),
                    hooks=_hooks(request),
                    protect=bool(request.protect),
                    ignore_changes=list(request.ignoreChanges),
                    deleted_with=request.deletedWith or None,
                    aliases=_aliases(request),
                    transforms=len(request.transforms),
                )
            )
            if self.on_register is not None:
                self.on_register(request.type)
        return response


_HOOK_KINDS = (
    "before_create",
    "after_create",
    "before_update",
    "after_update",
    "before_delete",
    "after_delete",
    "on_error",
)


def _aliases(request: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"urn": u} for u in request.aliasURNs]
    for alias in request.aliases:
        if alias.HasField("urn"):
            out.append({"urn": alias.urn})
            continue
        spec = alias.spec
        fields = {k: getattr(spec, k) for k in ("name", "type", "project", "stack", "parentUrn")}
        entry: dict[str, Any] = {k: v for k, v in fields.items() if v}
        if spec.noParent:
            entry["noParent"] = True
        out.append(entry)
    return out


def _hooks(request: Any) -> dict[str, list[str]]:
    binding = getattr(request, "hooks", None)
    if binding is None:
        return {}
    return {k: list(getattr(binding, k)) for k in _HOOK_KINDS if list(getattr(binding, k, ()))}


@dataclass
class Graph:
    """What a program registered, in registration order, plus its stack outputs."""

    resources: list[Registered]
    outputs: dict[str, Any]

    def of_type(self, typ: str) -> list[Registered]:
        return [r for r in self.resources if r.type == typ]

    def one(self, typ: str, name: str | None = None) -> Registered:
        found = [r for r in self.of_type(typ) if name is None or r.name == name]
        if len(found) != 1:
            names = [r.name for r in self.of_type(typ)]
            raise LookupError(
                f"expected one {typ} named {name!r}, found {len(found)} among {names}"
            )
        return found[0]

    def by_urn(self, urn: str) -> Registered:
        for r in self.resources:
            if r.urn == urn:
                return r
        raise LookupError(urn)

    def children(self, parent: Registered) -> list[Registered]:
        return [r for r in self.resources if r.parent == parent.urn]

    def depends_on(self, res: Registered, other: Registered) -> bool:
        """Whether `res` (directly, or through its ancestors' dependencies) waits for `other` or a
        descendant of `other`: what `depends_on` on a component means to the engine."""
        targets = {other.urn} | {r.urn for r in self._descendants(other)}
        node: Registered | None = res
        while node is not None:
            if targets & set(node.depends_on):
                return True
            node = self.by_urn(node.parent) if node.parent and self._has(node.parent) else None
        return False

    def _has(self, urn: str) -> bool:
        return any(r.urn == urn for r in self.resources)

    def _descendants(self, res: Registered) -> list[Registered]:
        out: list[Registered] = []
        frontier = [res.urn]
        while frontier:
            kids = [r for r in self.resources if r.parent in frontier]
            out += kids
            frontier = [k.urn for k in kids]
        return out

    def as_graph(self) -> list[dict[str, Any]]:
        """The `[{type, name, parent, dependsOn, inputs}]` shape the placement check reads."""
        return [r.as_graph_entry() for r in self.resources]


def run_program(
    program: Callable[[], Any],
    *,
    config: Mapping[str, Any] | None = None,
    project: str = "gpu-inference",
    stack: str = "test",
    mocks: pulumi.runtime.Mocks | None = None,
    secret_keys: Iterable[str] | None = None,
    on_register: Callable[[str], None] | None = None,
) -> Graph:
    """Run `program` as a Pulumi stack program under mocks and return what it registered.

    `config` maps `namespace:key` to values; non-strings are passed as JSON text, as the engine
    passes structured config. `secret_keys` names the config keys the runtime treats as secrets
    (`pulumi.runtime.is_config_secret`), as the engine does for `secure:` stack values.
    `on_register` is called with the type of each registration, as it happens.
    Raises whatever the program raises (after the runtime settles).
    """
    with _program_loop() as loop:
        try:
            pulumi.runtime.settings.ROOT.set(None)
            recorder = Recorder(mocks or FakeCloud(), on_register)
            pulumi.runtime.set_all_config(
                {k: v if isinstance(v, str) else json.dumps(v) for k, v in (config or {}).items()},
                sorted(secret_keys or []),
            )
            pulumi.runtime.set_mocks(
                recorder.mocks, project=project, stack=stack, preview=False, monitor=recorder
            )
            outputs: dict[str, Any] = {}

            stack_resource = pulumi.runtime.get_root_resource()
            # A plain callable: older SDKs' run_pulumi_func (pulumi < 3.18x) do not await a
            # coroutine. The run's own loop is not running here: run the program to completion.
            loop.run_until_complete(pulumi.runtime.stack.run_pulumi_func(program))
            if stack_resource is not None:
                outs = getattr(stack_resource, "outputs", {}) or {}
                for key, value in outs.items():
                    outputs[key] = loop.run_until_complete(_resolve(value))
            return Graph(resources=recorder.registered, outputs=_scrub(outputs))
        finally:
            pulumi.runtime.settings.ROOT.set(None)


@contextlib.contextmanager
def _program_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The event loop a program runs on, with what makes a preview fast and quiet, undone after."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # The SDK calls the (mock) monitor in the loop's default executor, and the mock monitor gives
    # each worker thread an event loop of its own (`_ensure_event_loop`) that nobody closes: at
    # exit its `__del__` closes it after its file descriptors are gone and prints "Exception
    # ignored in BaseEventLoop.__del__ ... Invalid file descriptor: -1" (about one preview in
    # five). Our own executor makes those loops up front and closes them when the program ends.
    worker_loops: list[asyncio.AbstractEventLoop] = []

    def _worker_loop() -> None:
        worker = asyncio.new_event_loop()
        asyncio.set_event_loop(worker)
        worker_loops.append(worker)

    executor = ThreadPoolExecutor(thread_name_prefix="mock-monitor", initializer=_worker_loop)
    loop.set_default_executor(executor)
    # Pulumi walks and formats the whole Python stack on every registration, for the engine's
    # source positions; nothing reads them offline and they cost a third of a large preview.
    # (pulumi >= 3.195; older SDKs collect no stack traces.)
    saved_stack_trace = getattr(runtime_resource, "_get_stack_trace", None)
    if saved_stack_trace is not None:
        runtime_resource._get_stack_trace = runtime_resource.source_pb2.StackTrace
    # Each registration allocates hundreds of container objects (tasks, futures, closures,
    # serialised inputs) and most live until the end: the collector only rescans the growing
    # heap (a third of a 1000-model preview with CPython's default thresholds, a fifth with ten
    # times fewer young collections). No collection while the program runs (a 1000-model
    # preview then peaks 25 MB higher); the cycles it leaves are collected after, as usual.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield loop
    finally:
        if saved_stack_trace is not None:
            runtime_resource._get_stack_trace = saved_stack_trace
        asyncio.set_event_loop(None)
        loop.close()
        executor.shutdown(wait=True)
        for worker in worker_loops:
            worker.close()
        # What the program made moves to the oldest generation as it is, unscanned (a young
        # collection of all of it would cost what was saved): its leftovers wait for the next
        # full collection, which comes once the heap has grown by a quarter again.
        gc.freeze()
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()


async def _resolve(value: Any) -> Any:
    out = pulumi.Output.from_input(value)
    if await out.is_secret():
        return SECRET
    if not await out.is_known():
        return UNKNOWN
    return await out.future()
