"""A namespace for models with secure defaults: Pod Security Admission labels, and one
ServiceAccount that reaches model storage through the cloud's workload identity, not keys.

- GKE Workload Identity: the ServiceAccount is annotated `iam.gke.io/gcp-service-account` and the
  Google service account grants `roles/iam.workloadIdentityUser` to
  `serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]`.
- EKS IRSA: the ServiceAccount is annotated `eks.amazonaws.com/role-arn`; the role's trust policy
  (the cluster's OIDC provider) is the caller's, since the role usually exists already.
- Static credentials, only where a user insists: the values must be Pulumi secrets; they go into a
  Kubernetes Secret referenced by the ServiceAccount (KServe's storage initializer reads it from
  there) and stay secret in the state and the preview.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.objects import SECRET, SERVICE_ACCOUNT, CoreObject
from ..kube.provider import create_opts, make_namespaces, owned
from ..kube.sdks import cloud_sdk
from ..model.deploy.identity import GSA_EMAIL, validate_workload_identity
from ..model.deploy.ownership import SYSTEM_NAMESPACES, NamespacePlan, install_ownership
from ..model.errors import InputError, show
from ..model.inputs import stack
from ..model.scheduling import validate_dns1123_label

POD_SECURITY_LEVELS = ("privileged", "baseline", "restricted")

KSERVE_CREDENTIAL_KEYS = (
    "AWS_SECRET_ACCESS_KEY",
    "gcloud-application-credentials.json",
    "AZ_CLIENT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_ACCESS_TOKEN",
    "AZURE_STORAGE_ACCESS_KEY",
    "https-host",
    "HDFS_NAMENODE",
    "HF_TOKEN",
)
"""The keys by which KServe's storage initializer tells a credentials Secret's kind, in the order
it tries them: one Secret gives the first kind it holds, and nothing of the others (kserve
v0.20.0 pkg/credentials/service_account_credentials.go `mountSecretCredential`, an if / else-if
chain; the S3 key is `s3SecretAccessKeyName` of the default `inferenceservice-config`,
config/configmap/inferenceservice.yaml; `HF_TOKEN` becomes the initializer's `HF_TOKEN` env by
secretKeyRef, pkg/credentials/hf/hf_secret.go, which huggingface_hub's `snapshot_download` reads
for an `hf://` model, python/storage/kserve_storage/kserve_storage.py `_download_hf`)."""


def credential_conflict(keys: object) -> Optional[InputError]:
    """The error for static credentials of two kinds KServe reads from one Secret (it would use
    the first and silently drop the other), or None."""
    kinds = [k for k in KSERVE_CREDENTIAL_KEYS if k in (keys or {})]  # type: ignore[operator]
    if len(kinds) < 2:
        return None
    return InputError(
        f"{' and '.join(repr(k) for k in kinds)} are credentials of different kinds; KServe's "
        f"storage initializer reads one kind from a Secret (the first: {kinds[0]!r}) and "
        f"ignores {', '.join(repr(k) for k in kinds[1:])}",
        "the keys of one kind of storage (e.g. AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY, or "
        "HF_TOKEN alone)",
        "staticCredentials",
    )


@dataclass
class ModelNamespaceArgs:
    """Inputs of a `ModelNamespace`; every default is here."""

    namespace: str = field(metadata=stack(hidden=True))
    """The Kubernetes namespace the models run in."""
    pod_security: Optional[str] = field(
        default="baseline", metadata=stack(choices=POD_SECURITY_LEVELS)
    )
    """Pod Security Admission level enforced on the model namespaces (`privileged` | `baseline` |
    `restricted`)."""
    service_account: Optional[str] = field(default="model-reader", metadata=stack(syntax="dns1123"))
    """Name of the ServiceAccount workloads run as, bound to the cloud identity
    (`cluster.workloadIdentity`)."""
    gcp_service_account: Optional[str] = field(
        default=None, metadata=stack(source="cluster.workloadIdentity.gcpServiceAccount")
    )
    """GKE Workload Identity: the Google service account email the ServiceAccount acts as."""
    aws_role_arn: Optional[str] = field(
        default=None, metadata=stack(source="cluster.workloadIdentity.awsRoleArn")
    )
    """EKS IRSA: the IAM role ARN the ServiceAccount assumes."""
    workload_pool: Optional[pulumi.Input[str]] = field(default=None, metadata=stack(hidden=True))
    """GKE: the cluster's Workload Identity pool, `CLUSTER_PROJECT.svc.id.goog` (the binding's
    member is in the cluster's project, not the service account's); default: the service
    account's project's pool, right only when both are in one project."""
    static_credentials: Optional[Mapping[str, str]] = field(
        default=None,
        metadata=stack(
            doc="Keys for model storage in a Secret (e.g. `AWS_ACCESS_KEY_ID`; key names of "
            "letters, digits, `-`, `_` or `.`), only where a workload identity is impossible. "
            "Every value MUST be a Pulumi secret (`pulumi config set --secret --path "
            "'gpu-inference:namespaces.staticCredentials.AWS_SECRET_ACCESS_KEY'`), else an "
            "error: a plain value would be stored unencrypted in the stack file and the state."
        ),
    )
    """Keys for model storage (e.g. AWS_ACCESS_KEY_ID): Pulumi secrets only; prefer an identity."""
    static_credentials_secret: Optional[bool] = field(default=None, metadata=stack(hidden=True))
    """Set by the caller to assert the static credentials are Pulumi secrets (config `secure:`)."""
    secret_annotations: Optional[Mapping[str, str]] = field(default=None)
    """Annotations for the credentials Secret (e.g. `serving.kserve.io/s3-endpoint`)."""
    adopt: Optional[bool] = False
    """Take over a model namespace (and its ServiceAccount, credentials Secret) that already
    exists and is not this stack's: this stack then keeps it up to date, and `destroy` leaves it in
    place. Off (the default), such a namespace is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespace (a platform makes each namespace of a stack once, so that
    no config change moves one to another resource)."""


def validate_model_namespace_args(args: ModelNamespaceArgs) -> None:
    """Every input checked before anything is registered."""
    try:
        validate_dns1123_label(args.namespace)
    except InputError as e:
        raise e.at("namespace") from None
    if args.namespace in SYSTEM_NAMESPACES:
        raise InputError(
            f"namespace {args.namespace!r} is one every cluster has: the stack makes (and "
            "`destroy` deletes) its model namespaces",
            f"a namespace of the models' own (not {', '.join(sorted(SYSTEM_NAMESPACES))})",
            "namespace",
        )
    try:
        validate_dns1123_label(args.service_account or "", max_length=63)
    except InputError as e:
        raise e.at("serviceAccount") from None
    if (args.pod_security or "baseline") not in POD_SECURITY_LEVELS:
        raise InputError(
            f"pod security level {show(args.pod_security)} is not known",
            ", ".join(POD_SECURITY_LEVELS),
            "podSecurity",
        )
    try:
        validate_workload_identity(args.gcp_service_account, args.aws_role_arn)
    except InputError as e:
        raise e.at("workloadIdentity") from None
    conflict = credential_conflict(args.static_credentials)
    if conflict is not None:
        raise conflict
    if args.static_credentials and not args.static_credentials_secret:
        raise InputError(
            "static credentials are given in plain text; they would be stored unencrypted",
            "a workload identity (no keys), or each value set with `pulumi config set --secret`",
            "staticCredentials",
        )


def namespace_labels(level: str) -> dict[str, str]:
    """Pod Security Admission: enforce `level`, and warn/audit at the same level."""
    return {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/warn": level,
        "pod-security.kubernetes.io/audit": level,
    }


def namespaces(name: str, args: ModelNamespaceArgs) -> dict[str, NamespacePlan]:
    """The namespace, with its Pod Security Admission labels."""
    level = args.pod_security or "baseline"
    return {args.namespace: NamespacePlan(f"{name}-ns", namespace_labels(level))}


def service_account_annotations(args: ModelNamespaceArgs) -> dict[str, str]:
    if args.gcp_service_account:
        return {"iam.gke.io/gcp-service-account": args.gcp_service_account}
    if args.aws_role_arn:
        return {"eks.amazonaws.com/role-arn": args.aws_role_arn}
    return {}


def gsa_project(gcp_service_account: str) -> str:
    """The project a Google service account belongs to (from its email)."""
    m = GSA_EMAIL.fullmatch(gcp_service_account)
    if m is None:
        raise InputError(f"{show(gcp_service_account)} is not a Google service account email")
    return m.group("project")


def workload_identity_member(
    gcp_service_account: str, namespace: str, ksa: str, workload_pool: Optional[str] = None
) -> str:
    """The IAM member GKE Workload Identity maps a Kubernetes ServiceAccount to: in the
    cluster's workload pool (`CLUSTER_PROJECT.svc.id.goog`)."""
    pool = workload_pool or f"{gsa_project(gcp_service_account)}.svc.id.goog"
    return f"serviceAccount:{pool}[{namespace}/{ksa}]"


class ModelNamespace(pulumi.ComponentResource):
    """A namespace for models: PSA labels, and a ServiceAccount bound to a cloud identity."""

    def __init__(
        self, name: str, args: ModelNamespaceArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            validate_model_namespace_args(args)
        except InputError as e:
            raise e.at(f"ModelNamespace({name!r})") from None
        super().__init__("gpu-inference:index:ModelNamespace", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        ksa = args.service_account or "model-reader"
        self.namespace_name = args.namespace
        self.service_account_name = ksa

        ownership = install_ownership(f"ModelNamespace({name!r})", args.adopt, use_own=None)
        ns = make_namespaces(namespaces(name, args), self, args.namespaces_made, ownership)[
            args.namespace
        ]
        secret_refs: list[dict[str, Any]] = []
        if args.static_credentials:
            secret_name = f"{ksa}-storage"
            CoreObject(
                SECRET,
                f"{name}-storage",
                metadata=owned(
                    {
                        "name": secret_name,
                        "namespace": args.namespace,
                        "annotations": dict(args.secret_annotations or {}),
                    }
                ),
                type="Opaque",
                stringData=pulumi.Output.secret(dict(args.static_credentials)),
                opts=create_opts(self, ns, ownership),
            )
            secret_refs.append({"name": secret_name})
        sa = CoreObject(
            SERVICE_ACCOUNT,
            f"{name}-sa",
            metadata=owned(
                {
                    "name": ksa,
                    "namespace": args.namespace,
                    "annotations": service_account_annotations(args),
                }
            ),
            secrets=secret_refs or None,
            opts=create_opts(self, ns, ownership),
        )
        if args.gcp_service_account:
            gcp = cloud_sdk("pulumi_gcp")  # only GKE stacks pay for this import

            gsa = args.gcp_service_account
            gcp.serviceaccount.IAMMember(
                f"{name}-wi",
                service_account_id=f"projects/{gsa_project(gsa)}/serviceAccounts/{gsa}",
                role="roles/iam.workloadIdentityUser",
                member=pulumi.Output.from_input(args.workload_pool).apply(
                    lambda pool: workload_identity_member(gsa, args.namespace, ksa, pool)
                ),
                opts=child,
            )
        self.ready = sa
        self.register_outputs({"namespace": args.namespace, "serviceAccount": ksa})
