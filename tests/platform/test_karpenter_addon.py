"""`addons.karpenter` in the stack config: the controller's releases come before the Karpenter pools'
custom resources and after the node-group pools it is pinned to; every refusal names the key."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform
from tests.config_bases import EKS, GKE, NS
from tests.conftest import values_of

RELEASE = "kubernetes:helm.sh/v3:Release"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEOVERLAY = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
ROLE = "arn:aws:iam::123456789012:role/prod-karpenter"
L4 = {
    "name": "l4",
    "karpenter": {"gpuNames": ["l4"], "maxGpus": 1, "nodeRole": "KarpenterNodeRole-prod"},
    "maxNodes": 2,
}


def stack(addon: dict[str, Any] | None, *pools: dict[str, Any]) -> dict[str, Any]:
    """The EKS base with a Karpenter pool `l4` (placed first: it must still come after the
    controller) and `addons.karpenter: addon`."""
    config = copy.deepcopy(EKS)
    config[f"{NS}:pools"] = [copy.deepcopy(p) for p in (pools or (L4,))] + config[f"{NS}:pools"]
    config[f"{NS}:pools"][-1]["minNodes"] = 1  # cpu: a node for the controller
    if addon is not None:
        config[f"{NS}:addons"]["karpenter"] = addon
    return config


def releases(g):
    return {r.inputs["name"]: r for r in g.of_type(RELEASE)}


def test_pool_resources_wait_for_the_controller_which_waits_for_its_pool(run):
    spec = load_spec(stack({"enabled": True, "roleArn": ROLE, "systemPools": ["cpu"]}))
    built = []
    g = run(lambda: built.append(InferencePlatform("gi", spec)))
    rel = releases(g)
    crd, controller = rel["karpenter-crd"], rel["karpenter"]
    node_pool, node_class = g.one(NODEPOOL, "l4"), g.one(NODECLASS, "l4-nodeclass")
    for cr in (node_pool, node_class):
        assert g.depends_on(cr, controller)
        assert g.depends_on(cr, crd)
    assert g.depends_on(controller, crd)
    # The controller runs on the cpu node group: it waits for it, not for the GPU pools.
    assert g.depends_on(controller, g.one("aws:eks/nodeGroup:NodeGroup", "cpu"))
    assert not g.depends_on(controller, g.one("aws:eks/nodeGroup:NodeGroup", "g5"))
    assert values_of(controller) == {
        "settings": {"clusterName": "prod"},
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": ROLE}},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"},
                                {
                                    "key": "gpu-inference.dev/pool",
                                    "operator": "In",
                                    "values": ["cpu"],
                                },
                            ]
                        }
                    ]
                }
            }
        },
    }
    # The pools keep their config order (the placements output follows it).
    assert list(built[0].pools) == list(built[0].placements) == ["l4", "g5", "cpu"]


def test_off_by_default_and_then_the_pools_wait_for_nothing(run):
    spec = load_spec(stack(None))
    assert spec.addons.karpenter.enabled is False
    g = run(lambda: InferencePlatform("gi", spec))
    assert not {"karpenter", "karpenter-crd"} & set(releases(g))
    node_pool = g.one(NODEPOOL, "l4")
    assert not any(g.depends_on(node_pool, r) for r in g.of_type(RELEASE))


def test_time_sliced_karpenter_pool_turns_the_node_overlay_gate_on(run):
    """Karpenter reads NodeOverlays only with its alpha NodeOverlay feature gate
    (charts/karpenter/values.yaml v1.14.1: `featureGates.nodeOverlay: false`)."""
    shared = {**L4, "gpuSharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 4}}
    spec = load_spec(stack({"enabled": True, "podIdentity": True}, shared))
    g = run(lambda: InferencePlatform("gi", spec))
    controller = releases(g)["karpenter"]
    assert values_of(controller) == {
        "settings": {"clusterName": "prod", "featureGates": {"nodeOverlay": True}}
    }
    overlays = g.of_type(NODEOVERLAY)
    assert overlays
    assert all(g.depends_on(o, controller) for o in overlays)


AUTO = {"name": "auto", "karpenter": {"autoMode": True, "gpuNames": ["l4"]}, "maxNodes": 2}
K = f"{NS}:addons.karpenter"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            stack({"roleArn": ROLE}),
            f"{K}.roleArn: roleArn is set but the add-on is not enabled (allowed: leave it out, "
            "or enabled: true)",
        ),
        (
            stack({"enabled": True}),
            f"{K}.roleArn: no IAM role for the controller, which needs AWS credentials to launch "
            "instances (allowed: the controller's IAM role ARN (IRSA), or EKS Pod Identity with "
            "an association for ServiceAccount 'karpenter' in the release namespace)",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "version": "v1.15.0"}),
            f"{K}.version: chart version 'v1.15.0' is not a Karpenter chart version (Karpenter's "
            "chart versions have no leading 'v') (allowed: e.g. 1.15.0)",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "interruptionQueue": "a.b"}),
            f"{K}.interruptionQueue: 'a.b' is not an SQS queue name (allowed: 1 to 80 letters, "
            "digits, '-' or '_' (the queue's name, not its URL or ARN))",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "systemPools": ["g5"]}),
            f"{K}.systemPools[0]: pool 'g5' is tainted nvidia.com/gpu:NoSchedule, which the "
            "controller does not tolerate (the chart's tolerations: CriticalAddonsOnly only) "
            "(allowed: cpu)",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "systemPools": ["cpu", "l4"]}),
            f"{K}.systemPools[1]: pool 'l4' is a Karpenter pool: the controller must not run on "
            "nodes it manages (it could remove its own node) (allowed: cpu)",
        ),
        (
            {
                **stack({"enabled": True, "podIdentity": True, "systemPools": ["cpu"]}),
                f"{NS}:pools": [L4, {"name": "cpu", "instanceTypes": ["m6i.large"], "maxNodes": 3}],
            },
            f"{K}.systemPools[0]: pool 'cpu' can be at 0 nodes (minNodes 0): the controller's pods "
            "would wait for a node, and Karpenter launches none for itself (allowed: a pool with "
            "minNodes >= 1 (set pools[1].minNodes), or leave systemPools out (the chart keeps the "
            "controller off Karpenter's nodes))",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "systemPools": ["system"]}),
            f"{K}.systemPools[0]: pool 'system' does not exist (allowed: cpu)",
        ),
        (
            stack({"enabled": True, "podIdentity": True}, AUTO),
            f"{K}.enabled: pools[0].karpenter.autoMode says the cluster runs EKS Auto Mode, "
            "whose managed Karpenter provisions the nodes; this chart would install a second "
            "controller and replace the nodepools / nodeclaims CRDs Auto Mode shares (allowed: "
            "leave the add-on out on Auto Mode)",
        ),
        (
            {**copy.deepcopy(GKE), f"{NS}:addons": {"karpenter": {"enabled": True}}},
            f"{K}.enabled: the Karpenter controller (Karpenter's AWS provider) launches EC2 "
            "instances for EKS; this cluster's provider is 'gke' (allowed: enabled: true only "
            "with cluster.provider eks)",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "namespace": "Karpenter"}),
            f"{K}.namespace: 'Karpenter' has uppercase letters; a DNS-1123 label is lowercase "
            "(allowed: at most 63 characters: lowercase letters, digits and '-', starting and "
            "ending with a letter or digit (DNS-1123 label))",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "nodeGroups": []}),
            f"{K}.nodeGroups: the list is empty; at least 1 item required (allowed: a list of at "
            "least 1)",
        ),
        (
            stack({"enabled": True, "podIdentity": True, "rolearn": ROLE}),
            f"{K}.rolearn: unknown key 'rolearn' (did you mean 'roleArn'?) (allowed: enabled, "
            "version, namespace, roleArn, podIdentity, interruptionQueue, systemPools, "
            "nodeGroups, chart, adopt)",
        ),
    ],
)
def test_refusals_name_the_stack_key(config, message):
    with pytest.raises(InputError) as e:
        load_spec(config)
    assert str(e.value) == message


def test_a_karpenter_pool_is_not_required():
    """The controller may serve NodePools defined outside this stack."""
    config = copy.deepcopy(EKS)
    config[f"{NS}:addons"]["karpenter"] = {
        "enabled": True,
        "podIdentity": True,
        "nodeGroups": ["system"],
    }
    assert load_spec(config).addons.karpenter.enabled is True


def test_refused_when_no_pool_can_host_the_controller():
    """Karpenter launches no node for its own controller: a stack whose only untainted node
    group can be at zero, and that names none of the cluster's node groups, leaves it Pending."""
    config = stack({"enabled": True, "podIdentity": True})
    config[f"{NS}:pools"][-1]["minNodes"] = 0
    with pytest.raises(InputError) as e:
        load_spec(config)
    assert str(e.value).startswith(
        f"{K}.nodeGroups: the Karpenter controller needs a node to run on before Karpenter can "
        "launch any, and none is known"
    )
    # An untainted pool of the stack with a node up is where the chart puts it.
    assert load_spec(stack({"enabled": True, "podIdentity": True})).addons.karpenter.enabled
    config[f"{NS}:addons"]["karpenter"]["nodeGroups"] = ["system"]
    assert load_spec(config).addons.karpenter.node_groups == ["system"]


def test_example_stack_installs_the_controller_before_its_node_pools(tmp_path):
    """stacks/Pulumi.eks-karpenter.yaml, previewed as `gpu-inference preview eks-karpenter`: the
    two releases, and every NodePool / EC2NodeClass depends on both (the preview's dependsOn)."""
    from components.preview.preview import preview
    from tests.conftest import ROOT

    result = preview("eks-karpenter", out_dir=tmp_path, project_dir=ROOT)
    assert result.placement.errors == 0
    entries = {f"{e['type']}::{e['name']}": e for e in result.entries}
    crd = f"{RELEASE}::gpu-inference-karpenter-crd"
    controller = f"{RELEASE}::gpu-inference-karpenter-controller"
    assert values_of(entries[controller], "eks-karpenter") == {
        "settings": {"clusterName": "inference", "interruptionQueue": "inference"},
        "serviceAccount": {
            "annotations": {
                "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/inference-karpenter"
            }
        },
        # On the cluster's own node group `system`, never on a node Karpenter launched.
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"},
                                {
                                    "key": "eks.amazonaws.com/nodegroup",
                                    "operator": "In",
                                    "values": ["system"],
                                },
                            ]
                        }
                    ]
                }
            }
        },
    }
    assert entries[controller]["inputs"]["skipCrds"] is True
    assert crd in entries[controller]["dependsOn"]
    crs = [e for e in result.entries if e["type"] in (NODEPOOL, NODECLASS)]
    assert {e["name"] for e in crs} == {"l4-a10g", "l4-a10g-nodeclass", "h100", "h100-nodeclass"}
    for e in crs:
        # On the CR or the pool component it is a child of: the SDK registers a component only
        # after its dependsOn resolved, and a child only after its parent (pulumi
        # runtime/resource.py prepare_resource awaits both).
        waits: set[str] = set()
        node: dict[str, Any] | None = e
        while node is not None:
            waits |= set(node.get("dependsOn") or ())
            node = entries.get(node.get("parent") or "")
        assert {crd, controller} <= waits, e["name"]


def test_local_charts_both_or_refused_beside_a_version(run, tmp_path):
    charts = {}
    for chart in ("karpenter-crd", "karpenter"):
        (tmp_path / chart).mkdir()
        (tmp_path / chart / "Chart.yaml").write_text(f"name: {chart}\n")
        charts[chart] = str(tmp_path / chart)
    local = {"crd": charts["karpenter-crd"], "controller": charts["karpenter"]}
    spec = load_spec(stack({"enabled": True, "podIdentity": True, "chart": local}))
    rel = releases(run(lambda: InferencePlatform("gi", spec)))
    assert rel["karpenter-crd"].inputs["chart"] == charts["karpenter-crd"]
    assert rel["karpenter"].inputs["chart"] == charts["karpenter"]
    assert "version" not in rel["karpenter"].inputs
    with pytest.raises(InputError) as e:
        load_spec(
            stack({"enabled": True, "podIdentity": True, "chart": local, "version": "1.14.1"})
        )
    assert str(e.value) == (
        f"{K}.version: version '1.14.1' picks a chart from the repository, and a local chart is "
        "given too; a local chart carries its own version (allowed: chart or version, not both)"
    )
    with pytest.raises(InputError) as e:
        load_spec(
            stack({"enabled": True, "podIdentity": True, "chart": {"crd": charts["karpenter"]}})
        )
    assert str(e.value) == (
        f"{K}.chart.controller: required key is missing (allowed: local charts are given "
        "together: crd, controller)"
    )


def test_a_system_pool_tainted_critical_addons_only_is_fine(run):
    """The chart tolerates `CriticalAddonsOnly` (any effect), the usual system-pool taint; any
    other NoSchedule / NoExecute taint is refused."""
    system = {
        "name": "system",
        "instanceTypes": ["m6i.large"],
        "minNodes": 2,
        "maxNodes": 3,
        "taints": [{"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}],
    }
    addon = {"enabled": True, "podIdentity": True, "systemPools": ["system"]}
    spec = load_spec(stack(addon, L4, system))
    g = run(lambda: InferencePlatform("gi", spec))
    terms = releases(g)["karpenter"].inputs["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][1]["values"] == ["system"]
    system["taints"].append({"key": "dedicated", "value": "infra", "effect": "NoExecute"})
    with pytest.raises(InputError) as e:
        load_spec(stack(addon, L4, system))
    assert str(e.value) == (
        f"{K}.systemPools[0]: pool 'system' is tainted dedicated:NoExecute, which the controller "
        "does not tolerate (the chart's tolerations: CriticalAddonsOnly only) (allowed: cpu)"
    )
