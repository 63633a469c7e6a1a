"""Data safety through the real engine on the rig: no `up`, config change or `destroy` deletes what
the stack did not make or still keeps.

One scenario each (issue #28):
1. `addons.kserve.enabled` toggled with the LLM add-on on: namespace `kserve` is one resource
   whatever the switch, so it is never deleted and made again;
2. a `karpenter` release installed before by plain Helm (its records written as Helm writes
   them): refused, never cleared, upgraded or uninstalled; used as the cluster's own; adopted on
   purpose, then left installed by destroy;
3. Gateway API CRDs already installed, with someone else's Gateway: refused, then used as the
   cluster's own; destroy leaves the CRDs and the Gateway;
4. LeaderWorkerSet already installed, with a LeaderWorkerSet: the same;
5. a taint taken out of a pool's config: it leaves the nodes, the site's taint stays;
6. a pool renamed: its nodes keep their patch (one resource per node), labels move to the new
   name, the site's labels and taints stay.
Each asserts that nothing that is not ours is lost and that everything ours converges
(`pulumi preview --expect-no-changes`). Charts are our test charts (tests/e2e/charts), manifests
the upstream CRDs of ../shared/crds (and one small CRD of ours for llm-d's).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Optional

import pytest
import rig
import yaml
from stack import CHARTS, CRDS, require_shared, write_project, write_stack_config

pytestmark = [pytest.mark.e2e, pytest.mark.tier("Pulumi half")]

STACK = "e2e"
MARKER = str(CHARTS / "marker")
SITE_TAINT = {"key": "site.example/maintenance", "value": "planned", "effect": "PreferNoSchedule"}
SITE_LABELS = {"site.example/rack": "r1"}
NODES = ("gpu-node-01", "gpu-node-02")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GATEWAY_CRDS = ("gatewayclasses.gateway.networking.k8s.io", "gateways.gateway.networking.k8s.io")
LWS_CRD = "leaderworkersets.leaderworkerset.x-k8s.io"
REFUSED = "this stack will not take it over"


@contextlib.contextmanager
def control_plane(crds: tuple[str, ...] = ()) -> Iterator[rig.ControlPlane]:
    """A control plane with two GPU nodes and one CPU node carrying the site's label and taint,
    and the shared CRD files whose names start with one of `crds`."""
    require_shared()
    with rig.ControlPlane(extended_resource_toleration=False) as cp:
        chosen = [p for p in sorted(CRDS.glob("*.yaml")) if p.name.startswith(crds)] if crds else []
        if chosen:
            cp.apply_crd_files(chosen)
        for name in (*NODES, "cpu-node-01"):
            gpus = 4 if name in NODES else 0
            cp.create_node(name, labels=SITE_LABELS, taints=[SITE_TAINT], gpus=gpus)
        yield cp


def base_config(cp: rig.ControlPlane) -> dict[str, Any]:
    return {
        "cluster": {
            "provider": "existing",
            "name": "lab",
            "kubeconfig": str(cp.kubeconfig),
            "context": "rig",
            "extendedResourceToleration": False,
        },
        "pools": [
            {
                "name": "rtx",
                "nodes": list(NODES),
                "gpusPerNode": 4,
                "accelerator": "nvidia-rtx-a6000",
                "taints": [
                    {"key": "myTaint2", "value": "true", "effect": "NoSchedule"},
                    {"key": "team", "value": "ml", "effect": "NoSchedule"},
                ],
            },
            {"name": "cpu", "nodes": ["cpu-node-01"]},
        ],
        "knative": {"mode": "none"},
        "addons": {
            "kserve": {"enabled": False},
            "seldon": {"enabled": False},
            "certManager": {"enabled": False},
            "nvidiaDevicePlugin": {"enabled": False},
        },
    }


def manifests(d: Path) -> dict[str, str]:
    """Local copies of the LLM install's manifests: the upstream CRDs of ../shared/crds (Gateway
    API, InferencePool, LeaderWorkerSet with its namespace) and a small llm-d CRD of ours."""
    d.mkdir(parents=True, exist_ok=True)

    def joined(name: str, *docs: str) -> str:
        path = d / name
        path.write_text("\n---\n".join(docs))
        return str(path)

    llmd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "inferenceobjectives.llm-d.ai"},
        "spec": {
            "group": "llm-d.ai",
            "names": {"kind": "InferenceObjective", "plural": "inferenceobjectives"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    lws_ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lws-system"}}
    return {
        "gatewayApi": joined(
            "gateway-api.yaml", *((CRDS / f"gateway.networking.k8s.io_{k}.yaml").read_text() for k in ("gatewayclasses", "gateways"))
        ),
        "inferenceExtension": joined(
            "gie.yaml", (CRDS / "inference.networking.k8s.io_inferencepools.yaml").read_text()
        ),
        "llmdCrds": joined("llmd.yaml", yaml.safe_dump(llmd)),
        "lws": joined(
            "lws.yaml", yaml.safe_dump(lws_ns), (CRDS / f"leaderworkerset.x-k8s.io_{LWS_CRD.split('.')[0]}.yaml").read_text()
        ),
    }  # fmt: skip


def llm_config(cp: rig.ControlPlane, d: Path, kserve: bool, **llm: Any) -> dict[str, Any]:
    """The base stack with KServe's LLM add-on from our test charts and local manifests."""
    config = base_config(cp)
    config["addons"]["certManager"] = {"enabled": True, "chart": MARKER}
    # With KServe off its chart keys must go too (the config refuses a chart of an add-on off).
    charts = {"chart": {"crd": MARKER, "controller": MARKER, "runtimes": MARKER}} if kserve else {}
    config["addons"]["kserve"] = {
        "enabled": kserve,
        "defaultDeploymentMode": "Standard",
        **charts,
        "llm": {
            "enabled": True,
            "chart": {
                "envoyGateway": MARKER,
                "envoyGatewayCrds": str(CHARTS / "envoy-gateway-crds"),
                "aiGatewayCrds": MARKER,
                "aiGateway": MARKER,
                "llmisvcCrd": MARKER,
                "llmisvcResources": MARKER,
                "runtimeConfigs": MARKER,
            },
            "manifest": manifests(d / "manifests"),
            **llm,
        },
    }
    return config


class Run:
    """The stack `STACK` of a project running the repository's stack program on the rig."""

    def __init__(self, cp: rig.ControlPlane, tmp: Path, config: Mapping[str, Any]) -> None:
        self.cp = cp
        self.project = write_project(tmp / "project", STACK, config)
        self.pulumi = rig.Pulumi(tmp, kubeconfig=cp.kubeconfig)
        self.pulumi.run("stack", "init", STACK, cwd=self.project)

    def configure(self, config: Mapping[str, Any]) -> None:
        write_stack_config(self.project, STACK, config)

    def up(self, check: bool = True) -> Any:
        return self.pulumi.run(
            "up", "--yes", "--skip-preview", cwd=self.project, timeout=1500, check=check
        )

    def converged(self) -> None:
        self.pulumi.run("preview", "--expect-no-changes", cwd=self.project, timeout=900)

    def destroy(self) -> Any:
        return self.pulumi.run(
            "destroy", "--yes", "--skip-preview", "--run-program", cwd=self.project, timeout=1500
        )


def uid(cp: rig.ControlPlane, path: str) -> Optional[str]:
    found = cp.get(path)
    if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
        return None
    return str(found["metadata"]["uid"])


def create(cp: rig.ControlPlane, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    """`kubectl create` as someone else: field manager `kubectl-create`."""
    made: dict[str, Any] = cp.request("POST", f"{path}?fieldManager=kubectl-create", obj)
    return made


def namespace(cp: rig.ControlPlane, name: str) -> None:
    create(
        cp,
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )


def theirs_config_map(cp: rig.ControlPlane, ns: str, name: str = "their-settings") -> str:
    made = create(
        cp,
        f"/api/v1/namespaces/{ns}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}},
    )
    return str(made["metadata"]["uid"])


def output(result: Any) -> str:
    """What the CLI said, whitespace folded (the engine wraps long diagnostics)."""
    return " ".join(f"{result.stdout}\n{result.stderr}".split())


# ----------------------------------------------------------------------------------- scenario 1


def test_toggling_kserve_beside_the_llm_add_on_never_deletes_namespace_kserve(
    pulumi_install, tmp_path
):
    with control_plane(("serving.kserve.io_llm", "mlops")) as cp:
        run = Run(cp, tmp_path, llm_config(cp, tmp_path, kserve=True))
        run.up()
        run.converged()
        kserve = "/api/v1/namespaces/kserve"
        first = uid(cp, kserve)
        assert first is not None
        # Someone's ConfigMap in it: the namespace must never be deleted under it.
        theirs = theirs_config_map(cp, "kserve")
        for enabled in (False, True):
            run.configure(llm_config(cp, tmp_path, kserve=enabled))
            run.up()
            run.converged()
            assert uid(cp, kserve) == first, f"namespace kserve made again (kserve {enabled})"
            assert uid(cp, "/api/v1/namespaces/kserve/configmaps/their-settings") == theirs
            releases = {s["metadata"]["labels"]["name"] for s in helm_records(cp)}
            assert ("kserve" in releases) is enabled and "kserve-llmisvc-resources" in releases
        # Destroy removes what the stack made; the namespace holding their ConfigMap stays.
        out = output(run.destroy())
        assert "kept Namespace kserve: it holds 1 object this stack did not make" in out, out
        assert uid(cp, "/api/v1/namespaces/kserve/configmaps/their-settings") == theirs
        assert helm_records(cp) == []


def helm_records(cp: rig.ControlPlane, ns: Optional[str] = None) -> list[dict[str, Any]]:
    where = f"/api/v1/namespaces/{ns}/secrets" if ns else "/api/v1/secrets"
    return list(cp.get(f"{where}?labelSelector=owner%3Dhelm")["items"])


# ----------------------------------------------------------------------------------- scenario 2

KARPENTER_PROGRAM = """import pulumi

from components.kube.provider import KubeProvider
from components.serving.karpenter_install import KarpenterInstall, KarpenterInstallArgs

cfg = pulumi.Config()
provider = KubeProvider("k8s", kubeconfig=cfg.require("kubeconfig"), context="rig")
if cfg.get_bool("enabled") is not False:
    KarpenterInstall(
        "gi-karpenter",
        KarpenterInstallArgs(
            cluster_name="lab",
            role_arn="arn:aws:iam::123456789012:role/karpenter",
            crd_chart=cfg.require("chart"),
            controller_chart=cfg.require("chart"),
            adopt=cfg.get_bool("adopt"),
        ),
        opts=pulumi.ResourceOptions(provider=provider),
    )
"""


def plain_helm_release(cp: rig.ControlPlane, release: str, chart: str) -> None:
    """A release as `helm install` leaves it: its object (with Helm's ownership metadata) and its
    record Secret (Helm's encoding: gzip, base64), no gpu-inference marker."""
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{release}-installed",
            "namespace": "kube-system",
            "labels": {"app.kubernetes.io/managed-by": "Helm"},
            "annotations": {
                "meta.helm.sh/release-name": release,
                "meta.helm.sh/release-namespace": "kube-system",
            },
        },
        "data": {"chart": chart, "installedBy": "plain helm"},
    }
    create(cp, "/api/v1/namespaces/kube-system/configmaps", obj)
    manifest = f"---\n# Source: {chart}/templates/configmap.yaml\n" + yaml.safe_dump(
        {k: v for k, v in obj.items()}
    )
    body = {
        "name": release,
        "namespace": "kube-system",
        "version": 1,
        "info": {"status": "deployed", "description": "Install complete"},
        "chart": {"metadata": {"name": chart, "version": "1.5.0", "apiVersion": "v2"}},
        "config": {"settings": {"clusterName": "theirs"}},
        "manifest": manifest,
    }
    data = base64.b64encode(gzip.compress(json.dumps(body).encode())).decode()
    create(
        cp,
        "/api/v1/namespaces/kube-system/secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "helm.sh/release.v1",
            "metadata": {
                "name": f"sh.helm.release.v1.{release}.v1",
                "labels": {"owner": "helm", "name": release, "status": "deployed", "version": "1"},
            },
            "data": {"release": base64.b64encode(data.encode()).decode()},
        },
    )


def karpenter_state(cp: rig.ControlPlane) -> dict[str, Any]:
    """The two releases' records (name -> data) and objects (name -> data)."""
    records = {s["metadata"]["name"]: s["data"]["release"] for s in helm_records(cp, "kube-system")}
    objects = {
        n: (cp.get(f"/api/v1/namespaces/kube-system/configmaps/{n}") or {}).get("data")
        for n in ("karpenter-installed", "karpenter-crd-installed")
    }
    return {"records": records, "objects": objects}


def test_a_plain_helm_karpenter_is_never_taken_over_unless_adopted_and_never_uninstalled(
    pulumi_install, tmp_path
):
    with control_plane() as cp:
        plain_helm_release(cp, "karpenter-crd", "karpenter-crd")
        plain_helm_release(cp, "karpenter", "karpenter")
        before = karpenter_state(cp)
        project = rig.Pulumi.write_project(
            tmp_path / "karpenter", "gpu-inference", KARPENTER_PROGRAM
        )
        pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig)
        pulumi.run("stack", "init", STACK, cwd=project)

        def config(**values: Any) -> None:
            for key, value in {"kubeconfig": str(cp.kubeconfig), "chart": MARKER, **values}.items():
                pulumi.run(
                    "config",
                    "set",
                    key,
                    str(value).lower() if isinstance(value, bool) else str(value),
                    cwd=project,
                )

        config()
        refused = pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=900, check=False)
        out = output(refused)
        assert refused.returncode != 0
        # The CRDs' release first (the controller's waits for it): refused, naming the ways out.
        assert (
            "Helm release kube-system/karpenter-crd already exists and was installed by Helm or "
            "another tool (chart karpenter-crd 1.5.0, revision 1 deployed; no gpu-inference "
            f"marker): {REFUSED}. Use the cluster's own: leave KarpenterInstall('gi-karpenter') "
            "out; or adopt it on purpose: KarpenterInstall('gi-karpenter') with `adopt=True` "
            "(this stack then keeps it up to date, and destroy leaves it in place)"
        ) in out, out
        assert karpenter_state(cp) == before, "refused: nothing of theirs touched"

        # The cluster's own: no install, the stack converges, their release as it was.
        config(enabled=False)
        pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=900)
        pulumi.run("preview", "--expect-no-changes", cwd=project, timeout=600)
        assert karpenter_state(cp) == before

        # Adopted on purpose: their records kept aside, the releases ours, converged.
        config(enabled=True, adopt=True)
        pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=900)
        pulumi.run("preview", "--expect-no-changes", cwd=project, timeout=600)
        aside = cp.get(
            "/api/v1/namespaces/kube-system/secrets?labelSelector=owner%3Dgpu-inference-adopted"
        )["items"]
        assert sorted(s["metadata"]["name"] for s in aside) == [
            "gpu-inference-adopted.sh.helm.release.v1.karpenter-crd.v1",
            "gpu-inference-adopted.sh.helm.release.v1.karpenter.v1",
        ]
        assert {s["data"]["release"] for s in aside} == set(before["records"].values())
        adopted = karpenter_state(cp)
        assert set(adopted["records"]) == {
            "sh.helm.release.v1.karpenter-crd.v1",
            "sh.helm.release.v1.karpenter.v1",
        }
        assert all(o and o["chart"] == "marker" for o in adopted["objects"].values())

        # Destroy leaves an adopted release installed: records and objects stay.
        pulumi.run("destroy", "--yes", "--skip-preview", "--run-program", cwd=project, timeout=900)
        assert karpenter_state(cp) == adopted


# ------------------------------------------------------------------------------- scenarios 3, 4


def test_gateway_api_crds_already_installed_with_someone_elses_gateway(pulumi_install, tmp_path):
    with control_plane(("gateway.networking.k8s.io", "serving.kserve.io_llm", "mlops")) as cp:
        namespace(cp, "team-a")
        create(
            cp,
            "/apis/gateway.networking.k8s.io/v1/gatewayclasses",
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "theirs"},
                "spec": {"controllerName": "example.com/gateway"},
            },
        )
        gateway = create(
            cp,
            "/apis/gateway.networking.k8s.io/v1/namespaces/team-a/gateways",
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "theirs"},
                "spec": {
                    "gatewayClassName": "theirs",
                    "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
                },
            },
        )
        crds_before = {n: uid(cp, f"{CRD_PATH}/{n}") for n in GATEWAY_CRDS}
        run = Run(cp, tmp_path, llm_config(cp, tmp_path, kserve=False))
        refused = run.up(check=False)
        out = output(refused)
        assert refused.returncode != 0
        assert (
            REFUSED in out and "gateway.networking.k8s.io already exists and was made by" in out
        ), out
        assert (
            "Use the cluster's own: set `gpu-inference:addons.kserve.llm.gatewayApiCrds: false`; "
            "or adopt it on purpose: set `gpu-inference:addons.kserve.llm.adopt: true`"
        ) in out, out
        # The cluster's own, as KServe's install script does when the CRDs are there.
        run.configure(llm_config(cp, tmp_path, kserve=False, gatewayApiCrds=False))
        run.up()
        run.converged()
        run.destroy()
        assert {n: uid(cp, f"{CRD_PATH}/{n}") for n in GATEWAY_CRDS} == crds_before
        path = "/apis/gateway.networking.k8s.io/v1/namespaces/team-a/gateways/theirs"
        assert uid(cp, path) == gateway["metadata"]["uid"]
        assert uid(cp, "/apis/gateway.networking.k8s.io/v1/gatewayclasses/theirs") is not None


def test_leader_worker_set_already_installed_with_a_leader_worker_set(pulumi_install, tmp_path):
    with control_plane(("leaderworkerset", "serving.kserve.io_llm", "mlops")) as cp:
        namespace(cp, "lws-system")
        namespace(cp, "team-a")
        lws = create(
            cp,
            "/apis/leaderworkerset.x-k8s.io/v1/namespaces/team-a/leaderworkersets",
            {
                "apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet",
                "metadata": {"name": "theirs"},
                "spec": {
                    "replicas": 1,
                    "leaderWorkerTemplate": {
                        "size": 2,
                        "workerTemplate": {
                            "spec": {"containers": [{"name": "w", "image": "busybox"}]}
                        },
                    },
                },
            },
        )
        run = Run(cp, tmp_path, llm_config(cp, tmp_path, kserve=False))
        refused = run.up(check=False)
        out = output(refused)
        assert refused.returncode != 0 and REFUSED in out, out
        assert "set `gpu-inference:addons.kserve.llm.leaderWorkerSet: false`" in out, out
        run.configure(llm_config(cp, tmp_path, kserve=False, leaderWorkerSet=False))
        run.up()
        run.converged()
        run.destroy()
        assert uid(cp, f"{CRD_PATH}/{LWS_CRD}") is not None
        assert uid(cp, "/api/v1/namespaces/lws-system") is not None
        path = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/team-a/leaderworkersets/theirs"
        assert uid(cp, path) == lws["metadata"]["uid"]


# ------------------------------------------------------------------------------- scenarios 5, 6


def node_view(cp: rig.ControlPlane, name: str) -> dict[str, Any]:
    node = cp.get(f"/api/v1/nodes/{name}")
    meta = node["metadata"]
    return {
        "labels": dict(meta.get("labels") or {}),
        "annotations": dict(meta.get("annotations") or {}),
        "taints": list(node["spec"].get("taints") or []),
    }


def test_a_taint_taken_out_of_the_config_leaves_the_nodes(pulumi_install, tmp_path):
    with control_plane() as cp:
        found = {n: node_view(cp, n) for n in NODES}
        config = base_config(cp)
        run = Run(cp, tmp_path, config)
        run.up()
        for n in NODES:
            keys = [t["key"] for t in node_view(cp, n)["taints"]]
            assert keys == [SITE_TAINT["key"], "myTaint2", "team"], keys
        config["pools"][0]["taints"] = config["pools"][0]["taints"][:1]
        run.configure(config)
        run.up()
        run.converged()
        for n in NODES:
            assert node_view(cp, n)["taints"] == [
                SITE_TAINT,
                {"key": "myTaint2", "value": "true", "effect": "NoSchedule"},
            ], n
        # No taint at all: the node keeps its own.
        del config["pools"][0]["taints"]
        run.configure(config)
        run.up()
        run.converged()
        for n in NODES:
            taints = node_view(cp, n)["taints"]
            assert SITE_TAINT in taints and not {"myTaint2", "team"} & {t["key"] for t in taints}
        run.destroy()
        assert {n: node_view(cp, n) for n in NODES} == found


def test_a_renamed_pool_keeps_its_node_patches_and_the_nodes_keep_the_sites_marks(
    pulumi_install, tmp_path
):
    with control_plane() as cp:
        found = {n: node_view(cp, n) for n in NODES}
        config = base_config(cp)
        run = Run(cp, tmp_path, config)
        run.up()
        taints = {n: node_view(cp, n)["taints"] for n in NODES}
        config["pools"][0]["name"] = "a6000"
        run.configure(config)
        up = run.up()
        # One patch per node, moved with the pool: updated, never made again nor deleted.
        assert "NodePatch" not in "".join(
            line for line in up.stdout.splitlines() if "deleted" in line
        )
        run.converged()
        for n in NODES:
            view = node_view(cp, n)
            assert view["labels"]["gpu-inference.dev/pool"] == "a6000"
            assert view["labels"]["site.example/rack"] == "r1"
            assert view["taints"] == taints[n]
        state = json.loads(run.pulumi.run("stack", "export", cwd=run.project).stdout)
        patches = [
            r
            for r in state["deployment"]["resources"]
            if r["type"] == "kubernetes:core/v1:NodePatch"
        ]
        assert sorted(r["urn"].rsplit("::", 1)[-1] for r in patches) == [
            "node-cpu-node-01",
            "node-gpu-node-01",
            "node-gpu-node-02",
        ]
        run.destroy()
        assert {n: node_view(cp, n) for n in NODES} == found
