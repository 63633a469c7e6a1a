"""The core objects we register without `pulumi_kubernetes.core.v1` reach the engine exactly as
the SDK's own classes send them: every field of every register (and read) request equal, for
every kind we make, with and without its optional inputs and under the options we give."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.kube import objects
from tests.sdk_requests import sent


def _options() -> pulumi.ResourceOptions:
    """A parent component, a provider, a dependency and the options the platform gives."""
    provider = k8s.Provider("k8s")
    parent = pulumi.ComponentResource("test:index:Parent", "parent", None)
    other = pulumi.ComponentResource("test:index:Other", "other", None)
    return pulumi.ResourceOptions(
        parent=parent,
        provider=provider,
        depends_on=[other],
        retain_on_delete=True,
        aliases=[pulumi.Alias(name="before")],
    )


META = {"name": "x", "namespace": "ns", "labels": {"a": "b"}, "annotations": {"k": "v"}}

# (what is made, through the SDK class, through ours)
CASES: list[
    tuple[str, Callable[[pulumi.ResourceOptions], Any], Callable[[pulumi.ResourceOptions], Any]]
] = [
    (
        "namespace",
        lambda o: k8s.core.v1.Namespace("ns", metadata={"name": "ns"}, opts=o),
        lambda o: objects.CoreObject(objects.NAMESPACE, "ns", metadata={"name": "ns"}, opts=o),
    ),
    (
        "service account with secrets",
        lambda o: k8s.core.v1.ServiceAccount("sa", metadata=META, secrets=[{"name": "s"}], opts=o),
        lambda o: objects.CoreObject(
            objects.SERVICE_ACCOUNT, "sa", metadata=META, secrets=[{"name": "s"}], opts=o
        ),
    ),
    (
        "service account",
        lambda o: k8s.core.v1.ServiceAccount("sa", metadata=META, secrets=None, opts=o),
        lambda o: objects.CoreObject(objects.SERVICE_ACCOUNT, "sa", metadata=META, opts=o),
    ),
    (
        "secret",
        lambda o: k8s.core.v1.Secret(
            "s", metadata=META, type="Opaque", string_data={"KEY": "v"}, opts=o
        ),
        lambda o: objects.CoreObject(
            objects.SECRET, "s", metadata=META, type="Opaque", stringData={"KEY": "v"}, opts=o
        ),
    ),
    (
        "secret given as a secret",
        lambda o: k8s.core.v1.Secret(
            "s", metadata=META, string_data=pulumi.Output.secret({"KEY": "v"}), opts=o
        ),
        lambda o: objects.CoreObject(
            objects.SECRET,
            "s",
            metadata=META,
            stringData=pulumi.Output.secret({"KEY": "v"}),
            opts=o,
        ),
    ),
    (
        "config map patch",
        lambda o: k8s.core.v1.ConfigMapPatch("cm", metadata=META, data={"f": "enabled"}, opts=o),
        lambda o: objects.CoreObject(
            objects.CONFIG_MAP_PATCH, "cm", metadata=META, data={"f": "enabled"}, opts=o
        ),
    ),
    (
        "node patch",
        lambda o: k8s.core.v1.NodePatch(
            "n",
            metadata={"name": "n1"},
            spec={"taints": [{"key": "k", "effect": "NoSchedule"}]},
            opts=o,
        ),
        lambda o: objects.CoreObject(
            objects.NODE_PATCH,
            "n",
            metadata={"name": "n1"},
            spec={"taints": [{"key": "k", "effect": "NoSchedule"}]},
            opts=o,
        ),
    ),
    (
        "node read",
        lambda o: k8s.core.v1.Node.get("live", "n1", opts=o),
        lambda o: objects.read_node("live", "n1", opts=o),
    ),
]


@pytest.mark.parametrize(("what", "sdk", "ours"), CASES, ids=[c[0] for c in CASES])
def test_each_request_is_the_sdk_classes(
    what: str,
    sdk: Callable[[pulumi.ResourceOptions], Any],
    ours: Callable[[pulumi.ResourceOptions], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    theirs = sent(lambda: sdk(_options()), monkeypatch)
    mine = sent(lambda: ours(_options()), monkeypatch)
    assert mine == theirs
    assert any(
        r.get("version") == objects.plugin_version("pulumi_kubernetes")
        for r in mine + [r.get("read", {}) for r in mine]
    )


def test_an_input_the_kind_has_not_is_refused() -> None:
    with pytest.raises(TypeError, match="kubernetes:core/v1:Namespace has no input data"):
        objects.CoreObject(objects.NAMESPACE, "ns", data={})
