"""What `destroy` (or an `up` that drops them) deletes of CRDs, namespaces and Helm releases, on a
fake cluster: a CRD or namespace the stack made goes only while what it holds is its own; one that
holds objects of others stays, and destroy says which and how many; a CRD the stack did not make
is never deleted; upstream objects applied whole are marked as ours by a transform."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any, Optional

import pulumi
import pytest

from components.kube.hooks import drop_crd, drop_namespace, keep_release_crds
from components.kube.provider import ClusterHooks, mark_child
from components.model.deploy.helm_records import decode_release
from components.model.deploy.ownership import FIELD_MANAGER_ANNOTATION, Ownership
from tests.conftest import helm_secret

OURS = "gpu-inference/p/s"
CRD_NAME = "gateways.gateway.networking.k8s.io"


def crd(manager: Optional[str] = OURS) -> dict:
    annotations = {FIELD_MANAGER_ANNOTATION: manager} if manager else {}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME, "annotations": annotations},
        "spec": {
            "group": "gateway.networking.k8s.io",
            "names": {"kind": "Gateway"},
            "versions": [{"name": "v1beta1", "served": True}, {"name": "v1", "storage": True}],
        },
    }


def obj(kind: str, name: str, ns: Optional[str] = "default", **meta: Any) -> dict:
    return {"kind": kind, "metadata": {"name": name, "namespace": ns, **meta}}


class Cluster:
    def __init__(self, live: dict, listed: dict, secrets: Optional[list] = None) -> None:
        self.live, self.listed, self.secret_list = live, listed, secrets or []
        self.deleted: list[tuple[str, str]] = []
        self.replaced: list[tuple[str, str, dict]] = []

    def get(self, api_version, kind, name, namespace):
        return self.live.get((kind, name))

    def objects(self, api_version, kind, namespace=None):
        return self.listed.get((api_version, kind), [])

    def namespaced(self, namespace):
        return self.listed.get(("namespace", namespace), [])

    def delete(self, api_version, kind, name, namespace):
        self.deleted.append((kind, name))
        self.live.pop((kind, name), None)

    def secrets(self, namespace, selector):
        return self.secret_list

    def replace_secret_data(self, namespace, name, data):
        self.replaced.append((namespace, name, data))


GATEWAYS = ("gateway.networking.k8s.io/v1", "Gateway")


def test_a_crd_this_stack_made_goes_when_only_its_own_objects_remain():
    ours = obj(
        "Gateway", "kserve-ingress-gateway", "kserve", annotations={FIELD_MANAGER_ANNOTATION: OURS}
    )
    going = obj("Gateway", "old", deletionTimestamp="2026-11-27T00:00:00Z")
    made_from = obj("Gateway", "child", ownerReferences=[{"kind": "X"}])
    cluster = Cluster(
        {("CustomResourceDefinition", CRD_NAME): crd()}, {GATEWAYS: [ours, going, made_from]}
    )
    assert drop_crd(cluster, crd()) is None
    assert cluster.deleted == [("CustomResourceDefinition", CRD_NAME)]


def test_a_crd_holding_someone_elses_objects_stays_and_destroy_says_so():
    theirs = [obj("Gateway", f"gw-{n}", "team-a") for n in range(7)]
    cluster = Cluster({("CustomResourceDefinition", CRD_NAME): crd()}, {GATEWAYS: theirs})
    assert drop_crd(cluster, crd()) == (
        f"kept CustomResourceDefinition {CRD_NAME}: it holds 7 objects this stack did not make "
        "(Gateway team-a/gw-0, Gateway team-a/gw-1, Gateway team-a/gw-2, Gateway team-a/gw-3, "
        "Gateway team-a/gw-4 and 2 more); delete them first, then `kubectl delete` it by hand "
        "if it should go"
    )
    assert cluster.deleted == []


def test_a_crd_this_stack_did_not_make_is_never_deleted():
    cluster = Cluster({("CustomResourceDefinition", CRD_NAME): crd(None)}, {GATEWAYS: []})
    assert drop_crd(cluster, crd()) == (
        f"kept CustomResourceDefinition {CRD_NAME}: it is not this stack's (was not made by "
        "gpu-inference)"
    )
    assert cluster.deleted == []
    # Gone already: nothing to do.
    assert drop_crd(Cluster({}, {}), crd()) is None


def namespace(manager: Optional[str] = OURS) -> dict:
    annotations = {FIELD_MANAGER_ANNOTATION: manager} if manager else {}
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "kserve", "annotations": annotations},
    }


def test_a_namespace_goes_with_what_the_cluster_and_our_controllers_left_in_it():
    left = [
        obj("ServiceAccount", "default", "kserve"),
        obj("ConfigMap", "kube-root-ca.crt", "kserve"),
        obj("Event", "x.1", "kserve"),
        obj("Lease", "kserve-controller-manager", "kserve"),
        obj("Pod", "p", "kserve", ownerReferences=[{"kind": "ReplicaSet"}]),
        obj("ServiceAccount", "model-reader", "kserve", annotations={FIELD_MANAGER_ANNOTATION: OURS}),
        # cert-manager's Secret of a Certificate our chart made and took away.
        {**obj("Secret", "kserve-webhook-server-cert", "kserve", annotations={"cert-manager.io/certificate-name": "serving-cert"}), "type": "kubernetes.io/tls"},
    ]  # fmt: skip
    cluster = Cluster({("Namespace", "kserve"): namespace()}, {("namespace", "kserve"): left})
    assert drop_namespace(cluster, namespace()) is None
    assert cluster.deleted == [("Namespace", "kserve")]


def test_a_namespace_holding_someone_elses_objects_stays():
    held = [
        obj("ConfigMap", "their-settings", "kserve"),
        # A Certificate of theirs keeps its Secret theirs too.
        {**obj("Certificate", "theirs", "kserve"), "apiVersion": "cert-manager.io/v1"},
        {**obj("Secret", "theirs-tls", "kserve", annotations={"cert-manager.io/certificate-name": "theirs"}), "type": "kubernetes.io/tls"},
    ]  # fmt: skip
    cluster = Cluster({("Namespace", "kserve"): namespace()}, {("namespace", "kserve"): held})
    assert drop_namespace(cluster, namespace()) == (
        "kept Namespace kserve: it holds 3 objects this stack did not make (Certificate "
        "kserve/theirs, ConfigMap kserve/their-settings, Secret kserve/theirs-tls); delete them "
        "first, then `kubectl delete` it by hand if it should go"
    )
    assert cluster.deleted == []
    other_stack = Cluster({("Namespace", "kserve"): namespace("gpu-inference/p/other")}, {})
    assert drop_namespace(other_stack, namespace()) == (
        "kept Namespace kserve: it is not this stack's (belongs to another stack (p/other))"
    )


MANIFEST = """---
# Source: karpenter-crd/templates/karpenter.sh_nodepools.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: nodepools.karpenter.sh
spec:
  group: karpenter.sh
  names: {kind: NodePool}
  versions: [{name: v1, served: true, storage: true}]
---
# Source: karpenter-crd/templates/karpenter.sh_nodeclaims.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: nodeclaims.karpenter.sh
spec:
  group: karpenter.sh
  names: {kind: NodeClaim}
  versions: [{name: v1, served: true, storage: true}]
"""
MARKER = "gpu-inference/p/s/gi-karpenter-crd"


def release_record(marker: Optional[str]) -> dict:
    secret = helm_secret("karpenter-crd", 1, "deployed", "karpenter-crd", marker, "1.14.1")
    body = dict(decode_release(secret["data"]["release"]))
    body["manifest"] = MANIFEST
    helm = base64.b64encode(gzip.compress(json.dumps(body).encode()))
    secret["data"]["release"] = base64.b64encode(helm).decode()
    return secret


def release_inputs() -> dict:
    return {
        "name": "karpenter-crd",
        "namespace": "kube-system",
        "values": {"global": {"gpuInferenceResource": MARKER}},
    }


def crd_of(name: str, kind: str) -> dict:
    return {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "karpenter.sh",
            "names": {"kind": kind},
            "versions": [{"name": "v1", "storage": True}],
        },
    }


def test_a_releases_crds_holding_others_objects_are_kept_by_helms_own_policy():
    live = {
        ("CustomResourceDefinition", "nodepools.karpenter.sh"): crd_of(
            "nodepools.karpenter.sh", "NodePool"
        ),
        ("CustomResourceDefinition", "nodeclaims.karpenter.sh"): crd_of(
            "nodeclaims.karpenter.sh", "NodeClaim"
        ),
    }
    theirs = [obj("NodePool", "team-gpu", None)]
    claims = [obj("NodeClaim", "c1", None, ownerReferences=[{"kind": "NodePool"}])]
    cluster = Cluster(
        live,
        {("karpenter.sh/v1", "NodePool"): theirs, ("karpenter.sh/v1", "NodeClaim"): claims},
        [release_record(MARKER)],
    )
    said = keep_release_crds(cluster, release_inputs())
    assert said == [
        "kept CustomResourceDefinition nodepools.karpenter.sh: it holds 1 object this stack did "
        "not make (NodePool team-gpu); delete it first, then `kubectl delete` it by hand if it "
        "should go"
    ]
    ((namespace, secret, data),) = cluster.replaced
    assert (namespace, secret) == ("kube-system", "sh.helm.release.v1.karpenter-crd.v1")
    manifest = decode_release(data["release"])["manifest"]
    # Only the CRD that holds others' objects is kept; Helm uninstalls the rest as usual.
    assert manifest == MANIFEST.replace(
        "metadata:\n  name: nodepools.karpenter.sh\n",
        "metadata:\n  name: nodepools.karpenter.sh\n  annotations:\n    helm.sh/resource-policy: keep\n",
    ).replace(
        "  names: {kind: NodePool}\n  versions: [{name: v1, served: true, storage: true}]",
        "  names:\n    kind: NodePool\n  versions:\n  - name: v1\n    served: true\n    storage: true",
    )


def test_a_release_whose_crds_hold_nothing_else_or_that_is_not_ours_is_left_alone():
    live = {
        ("CustomResourceDefinition", "nodepools.karpenter.sh"): crd_of(
            "nodepools.karpenter.sh", "NodePool"
        )
    }
    empty = Cluster(live, {}, [release_record(MARKER)])
    assert keep_release_crds(empty, release_inputs()) == [] and empty.replaced == []
    theirs = Cluster(
        live,
        {("karpenter.sh/v1", "NodePool"): [obj("NodePool", "x", None)]},
        [release_record(None)],
    )
    assert keep_release_crds(theirs, release_inputs()) == [] and theirs.replaced == []


class Hooks(ClusterHooks):
    """The provider's hooks without a provider (their names are what the transform binds)."""

    def __init__(self) -> None:
        super().__init__("k8s", pulumi.Output.from_input(None))


def child(kind: str, api: str = "apiextensions.k8s.io/v1") -> pulumi.ResourceTransformArgs:
    props = {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "labels": {"a": "b"}}}
    typ = f"kubernetes:{'core/v1' if api == 'v1' else api}:{kind}"
    return pulumi.ResourceTransformArgs(True, typ, "lws:x", props, pulumi.ResourceOptions())


def names(binding: Any) -> dict:
    return {
        k: [h.name for h in getattr(binding, k) or []]
        for k in ("before_create", "after_delete")
        if getattr(binding, k)
    }


def test_an_upstream_object_applied_whole_is_marked_refused_and_kept_as_its_kind_needs(run):
    # Hooks are registered with the engine: the checks run inside a program.
    run(lambda: marking_checks(Hooks()))


def marking_checks(hooks: Hooks) -> None:
    owns = Ownership("ways", False, "addons.kserve.llm.gatewayApiCrds")
    out = mark_child(child("CustomResourceDefinition"), OURS, hooks, owns)
    assert out is not None
    assert out.props["metadata"] == {
        "name": "x",
        "labels": {"a": "b"},
        "annotations": {FIELD_MANAGER_ANNOTATION: OURS},
    }
    assert out.opts.retain_on_delete is True
    assert names(out.opts.hooks) == {
        "before_create": ["k8s-refuse-foreign-addons-kserve-llm-gatewayapicrds"],
        "after_delete": ["k8s-drop-crd"],
    }
    ns = mark_child(child("Namespace", "v1"), OURS, hooks, owns)
    assert ns is not None and ns.opts.retain_on_delete is True
    assert names(ns.opts.hooks)["after_delete"] == ["k8s-drop-namespace"]
    deployment = mark_child(child("Deployment", "apps/v1"), OURS, hooks, owns)
    assert deployment is not None and not deployment.opts.retain_on_delete
    assert names(deployment.opts.hooks) == {
        "before_create": ["k8s-refuse-foreign-addons-kserve-llm-gatewayapicrds"]
    }
    # Adopted on purpose: marked, never refused, never deleted.
    adopted = mark_child(
        child("CustomResourceDefinition"), OURS, hooks, Ownership("ways", True, "s")
    )
    assert (
        adopted is not None
        and adopted.opts.retain_on_delete is True
        and not names(adopted.opts.hooks)
    )
    # Without the provider's hooks (a plain provider): CRDs and namespaces are never deleted.
    plain = mark_child(child("CustomResourceDefinition"), OURS, None, owns)
    assert plain is not None and plain.opts.retain_on_delete is True and not names(plain.opts.hooks)
    # Components (the ConfigFile itself, a Chart) and other packages are left as they are.
    assert (
        mark_child(
            pulumi.ResourceTransformArgs(
                False, "kubernetes:yaml/v2:ConfigFile", "f", {}, pulumi.ResourceOptions()
            ),
            OURS,
            hooks,
        )
        is None
    )


class Terminating(Cluster):
    """A cluster where a deleted object stays, being deleted, for `polls` more reads."""

    def __init__(self, live: dict, listed: dict, polls: int) -> None:
        super().__init__(live, listed)
        self.polls = polls

    def get(self, api_version, kind, name, namespace):
        found = self.live.get((kind, name))
        if found is None and (kind, name) in self.deleted and self.polls > 0:
            self.polls -= 1
            return {
                **found_before(kind, name),
                "metadata": {"name": name, "deletionTimestamp": "t"},
            }
        return found


def found_before(kind: str, name: str) -> dict:
    return {"kind": kind, "metadata": {"name": name}}


class Clock:
    """time.sleep and time.monotonic, advancing only when slept."""

    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s

    def monotonic(self) -> float:
        return self.now


def test_destroy_ends_once_a_deleted_namespace_is_gone_so_the_next_up_can_make_it(monkeypatch):
    import components.kube.hooks as hooks

    clock = Clock()
    monkeypatch.setattr(hooks, "time", clock)
    cluster = Terminating({("Namespace", "kserve"): namespace()}, {}, polls=3)
    assert drop_namespace(cluster, namespace()) is None
    assert cluster.deleted == [("Namespace", "kserve")]
    assert clock.slept == [0.5, 1.0, 2.0]  # polled until gone


def test_a_namespace_still_terminating_after_ten_minutes_is_reported(monkeypatch):
    import components.kube.hooks as hooks

    clock = Clock()
    monkeypatch.setattr(hooks, "time", clock)
    cluster = Terminating({("Namespace", "kserve"): namespace()}, {}, polls=10**6)
    assert drop_namespace(cluster, namespace()) == (
        "Namespace kserve is still being deleted after 600 s (its finalizers have not finished): "
        "nothing can be made in it or in its place until it is gone; see what holds it with "
        "`kubectl get namespace kserve -o yaml`"
    )
    assert 600 <= clock.now < 610
    # A CRD the same.
    crds = Terminating({("CustomResourceDefinition", CRD_NAME): crd()}, {GATEWAYS: []}, 10**6)
    assert drop_crd(crds, crd()).startswith(
        f"CustomResourceDefinition {CRD_NAME} is still being deleted after 600 s"
    )


def test_a_create_waits_for_an_object_of_its_name_being_deleted(monkeypatch):
    import components.kube.hooks as hooks
    from components.kube.hooks import AdoptionRefused, refuse_foreign

    clock = Clock()
    monkeypatch.setattr(hooks, "time", clock)
    going = {
        ("Namespace", "kserve"): {
            **namespace("someone"),
            "metadata": {"name": "kserve", "deletionTimestamp": "t"},
        }
    }

    class Going(Cluster):
        def get(self, api_version, kind, name, namespace):
            if clock.now >= 3:  # gone after 3 s
                return None
            return self.live.get((kind, name))

    refuse_foreign(Going(going, {}), namespace())  # made once the old one is gone
    assert clock.now >= 3
    with pytest.raises(
        AdoptionRefused, match=r"^Namespace kserve is still being deleted after 600 s"
    ):
        refuse_foreign(Cluster(going, {}), namespace())
