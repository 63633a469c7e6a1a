"""The Karpenter controller add-on: its two releases' exact inputs, their order, and the refusals."""

import pytest

from components.model.deploy import versions
from components.model.errors import InputError
from components.serving.karpenter_install import (
    KarpenterInstall,
    KarpenterInstallArgs,
    karpenter_values,
)
from tests.conftest import marked, owned, values_of

RELEASE = "kubernetes:helm.sh/v3:Release"
ROLE = "arn:aws:iam::123456789012:role/inference-karpenter"


def releases(g):
    return {r.inputs["name"]: r for r in g.of_type(RELEASE)}


def test_crd_chart_then_controller_chart_exact_inputs(run):
    """karpenter-crd owns the CRDs; the controller chart skips its crds/ directory and waits for
    it. Both are the OCI charts at the pinned version (no repositoryOpts), in kube-system."""
    g = run(
        lambda: KarpenterInstall(
            "karpenter",
            KarpenterInstallArgs(cluster_name="inference", role_arn=ROLE, interruption_queue="q1"),
        )
    )
    rel = releases(g)
    assert set(rel) == {"karpenter-crd", "karpenter"}
    assert versions.KARPENTER_VERSION == "1.15.0"  # MaxK8sVersion 1.37: the clusters run 1.36, 1.37
    crd, controller = rel["karpenter-crd"], rel["karpenter"]
    assert crd.inputs == {
        "name": "karpenter-crd",
        "chart": "oci://public.ecr.aws/karpenter/karpenter-crd",
        "version": "1.15.0",
        "namespace": "kube-system",
        "createNamespace": False,
        "values": marked({}, "karpenter-crd"),
        "atomic": True,
        "timeout": 900,
        "compat": "true",
    }
    assert controller.inputs == {
        "name": "karpenter",
        "chart": "oci://public.ecr.aws/karpenter/karpenter",
        "version": "1.15.0",
        "namespace": "kube-system",
        "createNamespace": False,
        "skipCrds": True,
        "values": marked(
            {
                "settings": {"clusterName": "inference", "interruptionQueue": "q1"},
                "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": ROLE}},
            },
            "karpenter-controller",
        ),
        "atomic": True,
        "timeout": 900,
        "compat": "true",
    }
    assert g.depends_on(controller, crd)
    assert not g.depends_on(crd, controller)


def test_pod_identity_other_namespace_version_and_local_charts(run, tmp_path):
    for chart in ("karpenter-crd", "karpenter"):
        (tmp_path / chart).mkdir()
        (tmp_path / chart / "Chart.yaml").write_text(f"name: {chart}\n")
    g = run(
        lambda: KarpenterInstall(
            "k",
            KarpenterInstallArgs(
                cluster_name="c",
                pod_identity=True,
                namespace="karpenter",
                crd_chart=str(tmp_path / "karpenter-crd"),
                controller_chart=str(tmp_path / "karpenter"),
            ),
        )
    )
    rel = releases(g)
    # A local chart: the path, no repository, no version.
    assert rel["karpenter-crd"].inputs["chart"] == str(tmp_path / "karpenter-crd")
    assert "version" not in rel["karpenter"].inputs
    # The stack makes the namespace (destroy deletes it), not Helm; Pod Identity: no role
    # annotation.
    (ns,) = g.of_type("kubernetes:core/v1:Namespace")
    assert ns.inputs["metadata"] == owned({"name": "karpenter"})
    assert g.depends_on(rel["karpenter-crd"], ns)
    assert rel["karpenter-crd"].inputs["createNamespace"] is False
    assert rel["karpenter"].inputs["createNamespace"] is False
    assert rel["karpenter"].inputs["namespace"] == "karpenter"
    assert values_of(rel["karpenter"]) == {"settings": {"clusterName": "c"}}
    g = run(
        lambda: KarpenterInstall(
            "k", KarpenterInstallArgs(cluster_name="c", pod_identity=True, version="1.13.0")
        )
    )
    assert {r.inputs["version"] for r in g.of_type(RELEASE)} == {"1.13.0"}


def test_pinned_to_system_pools_and_node_groups_off_karpenter_nodes():
    """Each node-affinity term keeps the chart's `karpenter.sh/nodepool DoesNotExist` (a values
    list replaces the chart's list); podAntiAffinity is left to the chart (maps merge)."""
    values = karpenter_values(
        KarpenterInstallArgs(
            cluster_name="c",
            pod_identity=True,
            system_pools=["system", "cpu"],
            node_groups=["core-ng"],
            node_overlay=True,
        )
    )
    assert values == {
        "settings": {"clusterName": "c", "featureGates": {"nodeOverlay": True}},
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
                                    "values": ["cpu", "system"],
                                },
                            ]
                        },
                        {
                            "matchExpressions": [
                                {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"},
                                {
                                    "key": "eks.amazonaws.com/nodegroup",
                                    "operator": "In",
                                    "values": ["core-ng"],
                                },
                            ]
                        },
                    ]
                }
            }
        },
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            dict(role_arn=ROLE, cluster_name=None),
            "KarpenterInstall('k').args.cluster_name: the cluster name is missing: the chart "
            "refuses to install without settings.clusterName (allowed: the EKS cluster's name)",
        ),
        (
            dict(),
            "KarpenterInstall('k').args.role_arn: no IAM role for the controller, which needs AWS "
            "credentials to launch instances (allowed: the controller's IAM role ARN (IRSA), or "
            "EKS Pod Identity with an association for ServiceAccount 'karpenter' in the release "
            "namespace)",
        ),
        (
            dict(role_arn=ROLE, pod_identity=True),
            "KarpenterInstall('k').args.role_arn: an IAM role ARN (IRSA) is given beside EKS Pod "
            "Identity: two sources of credentials for one ServiceAccount (allowed: one of them: "
            "the role ARN, or Pod Identity with the role on its association)",
        ),
        (
            dict(role_arn="arn:aws:iam::1:role/x"),
            "KarpenterInstall('k').args.role_arn: 'arn:aws:iam::1:role/x' is not an IAM role ARN "
            "(allowed: arn:aws:iam::123456789012:role/NAME)",
        ),
        (
            dict(role_arn=ROLE, version="v1.15.0"),
            "KarpenterInstall('k').args.version: chart version 'v1.15.0' is not a Karpenter "
            "chart version (Karpenter's chart versions have no leading 'v') (allowed: e.g. "
            "1.15.0)",
        ),
        (
            dict(role_arn=ROLE, version="0.37.7"),
            "KarpenterInstall('k').args.version: chart version '0.37.7' predates Karpenter 1.0, "
            "which first serves the karpenter.sh/v1 NodePool and karpenter.k8s.aws/v1 "
            "EC2NodeClass the pools use (allowed: 1.0.0 or later (pinned: 1.15.0))",
        ),
        (
            dict(role_arn=ROLE, interruption_queue="https://sqs.us-east-1.amazonaws.com/1/q"),
            "KarpenterInstall('k').args.interruption_queue: "
            "'https://sqs.us-east-1.amazonaws.com/1/q' is not an SQS queue name (allowed: 1 to 80 "
            "letters, digits, '-' or '_' (the queue's name, not its URL or ARN))",
        ),
        (
            dict(role_arn=ROLE, interruption_queue="q" * 81),
            f"KarpenterInstall('k').args.interruption_queue: '{'q' * 81}' is not an SQS queue "
            "name (allowed: 1 to 80 letters, digits, '-' or '_' (the queue's name, not its URL "
            "or ARN))",
        ),
        (
            dict(role_arn=ROLE, node_groups=[]),
            "KarpenterInstall('k').args.node_groups: node_groups is [], not a non-empty list of "
            "names (allowed: a list of names)",
        ),
        (
            dict(role_arn=ROLE, system_pools=["cpu", "cpu"]),
            "KarpenterInstall('k').args.system_pools[1]: 'cpu' is listed twice (allowed: each "
            "name once)",
        ),
    ],
)
def test_refusals_name_the_argument(run, args, message):
    kwargs = {"cluster_name": "c", **args}
    with pytest.raises(InputError) as e:
        run(lambda: KarpenterInstall("k", KarpenterInstallArgs(**kwargs)))
    assert str(e.value) == message


def test_refused_before_anything_is_registered(run):
    registered = []

    def program():
        try:
            KarpenterInstall("k", KarpenterInstallArgs(cluster_name="c"))
        except InputError:
            registered.append("refused")

    g = run(program)
    assert registered == ["refused"]
    assert [r for r in g.resources if r.type != "pulumi:pulumi:Stack"] == []


def test_a_node_group_name_must_be_a_label_value(run):
    with pytest.raises(InputError) as e:
        run(
            lambda: KarpenterInstall(
                "k", KarpenterInstallArgs(cluster_name="c", role_arn=ROLE, node_groups=["a b"])
            )
        )
    assert str(e.value) == (
        "KarpenterInstall('k').args.node_groups[0]: 'a b' is not a valid label value (allowed: "
        "empty, or at most 63 "
        "characters: alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric)"
    )
