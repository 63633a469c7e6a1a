"""Model namespaces: PSA labels, a ServiceAccount bound to a cloud identity, secrets kept secret."""

import pytest

from components.model.errors import InputError
from components.serving.model_namespace import (
    ModelNamespace,
    ModelNamespaceArgs,
    validate_model_namespace_args,
    workload_identity_member,
)
from tests.conftest import owned

GSA = "model-reader@my-proj.iam.gserviceaccount.com"
ROLE = "arn:aws:iam::123456789012:role/model-reader"


def test_gke_workload_identity(run):
    g = run(lambda: ModelNamespace("models", ModelNamespaceArgs("models", gcp_service_account=GSA)))
    ns = g.one("kubernetes:core/v1:Namespace")
    assert ns.inputs["metadata"] == owned(
        {
            "name": "models",
            "labels": {
                "pod-security.kubernetes.io/enforce": "baseline",
                "pod-security.kubernetes.io/warn": "baseline",
                "pod-security.kubernetes.io/audit": "baseline",
            },
        }
    )
    sa = g.one("kubernetes:core/v1:ServiceAccount")
    assert sa.inputs["metadata"] == owned(
        {
            "name": "model-reader",
            "namespace": "models",
            "annotations": {"iam.gke.io/gcp-service-account": GSA},
        }
    )
    member = g.one("gcp:serviceaccount/iAMMember:IAMMember")
    assert member.inputs == {
        "serviceAccountId": f"projects/my-proj/serviceAccounts/{GSA}",
        "role": "roles/iam.workloadIdentityUser",
        "member": "serviceAccount:my-proj.svc.id.goog[models/model-reader]",
    }
    assert not g.of_type("kubernetes:core/v1:Secret")


def test_gke_member_in_the_clusters_pool(run):
    args = ModelNamespaceArgs(
        "models", gcp_service_account=GSA, workload_pool="cluster-proj.svc.id.goog"
    )
    member = run(lambda: ModelNamespace("models", args)).one(
        "gcp:serviceaccount/iAMMember:IAMMember"
    )
    assert member.inputs["serviceAccountId"] == f"projects/my-proj/serviceAccounts/{GSA}"
    assert member.inputs["member"] == "serviceAccount:cluster-proj.svc.id.goog[models/model-reader]"


def test_eks_irsa_restricted(run):
    args = ModelNamespaceArgs("llm", pod_security="restricted", aws_role_arn=ROLE)
    g = run(lambda: ModelNamespace("llm", args))
    assert (
        g.one("kubernetes:core/v1:Namespace").inputs["metadata"]["labels"][
            "pod-security.kubernetes.io/enforce"
        ]
        == "restricted"
    )
    sa = g.one("kubernetes:core/v1:ServiceAccount")
    assert (
        sa.inputs["metadata"]["annotations"]
        == owned({"annotations": {"eks.amazonaws.com/role-arn": ROLE}})["annotations"]
    )
    assert not g.of_type("gcp:serviceaccount/iAMMember:IAMMember")


def test_static_credentials_stay_secret(run):
    canary = "CANARY-d41d8cd98f00"
    args = ModelNamespaceArgs(
        "models",
        static_credentials={"AWS_SECRET_ACCESS_KEY": canary},
        static_credentials_secret=True,
        secret_annotations={"serving.kserve.io/s3-endpoint": "s3.amazonaws.com"},
    )
    g = run(lambda: ModelNamespace("models", args))
    secret = g.one("kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == {"AWS_SECRET_ACCESS_KEY": "[secret]"}
    sa = g.one("kubernetes:core/v1:ServiceAccount")
    assert sa.inputs["secrets"] == [{"name": "model-reader-storage"}]
    assert canary not in repr(g.as_graph())


def test_identity_and_keys_are_exclusive():
    assert workload_identity_member(GSA, "ns", "sa") == "serviceAccount:my-proj.svc.id.goog[ns/sa]"


@pytest.mark.parametrize(
    ("args", "path", "piece"),
    [
        (ModelNamespaceArgs("Models"), "namespace", "DNS-1123"),
        (ModelNamespaceArgs("m", pod_security="strict"), "podSecurity", "baseline, restricted"),
        (
            ModelNamespaceArgs("m", gcp_service_account=GSA, aws_role_arn=ROLE),
            "workloadIdentity.awsRoleArn",
            "one cloud identity",
        ),
        (
            ModelNamespaceArgs("m", gcp_service_account="me@gmail.com"),
            "workloadIdentity.gcpServiceAccount",
            "iam.gserviceaccount.com",
        ),
        (
            ModelNamespaceArgs("m", aws_role_arn="role/x"),
            "workloadIdentity.awsRoleArn",
            "arn:aws:iam::",
        ),
        (
            ModelNamespaceArgs("m", static_credentials={"K": "v"}),
            "staticCredentials",
            "--secret",
        ),
        (
            # KServe's storage initializer reads one kind of credential from a Secret.
            ModelNamespaceArgs(
                "m",
                static_credentials={"HF_TOKEN": "t", "https-host": "h"},
                static_credentials_secret=True,
            ),
            "staticCredentials",
            "(the first: 'https-host') and ignores 'HF_TOKEN'",
        ),
    ],
)
def test_bad_args(args, path, piece):
    with pytest.raises(InputError) as e:
        validate_model_namespace_args(args)
    assert e.value.path == path
    assert piece in str(e.value)


def test_bad_args_register_nothing(run):
    def program():
        ModelNamespace("m", ModelNamespaceArgs("m", pod_security="none"))

    with pytest.raises(InputError, match=r"ModelNamespace\('m'\)\.podSecurity"):
        run(program)
