"""How the platform reaches the cluster: a Kubernetes provider for GKE, EKS, AKS or an existing
cluster.

GKE, EKS and AKS: the provider's kubeconfig is built from the cluster's endpoint and CA with the
cloud's exec auth plugin (`gke-gcloud-auth-plugin`, `aws eks get-token`, `kubelogin get-token
--login azurecli`), so no token is ever stored in the state. `existing`: the user's kubeconfig
file and context. For a first try on GKE, `create: true` makes a small regional cluster with
Workload Identity, a release channel and a CPU system pool; on AKS, a cluster with Microsoft
Entra ID (its admin groups), Azure CNI Overlay with Cilium, OIDC and workload identity, a CPU
system pool, and node auto-provisioning when the stack has `nap` pools.

AKS: the endpoint and CA come from the cluster's user credentials (`listClusterUserCredential`,
format `exec`: for an Entra ID cluster they hold no secret); only the server and CA are kept, and
the user is `kubelogin get-token --login azurecli --server-id 6dae42f8-4368-4678-94ff-3960e28e3630`
(the AKS Microsoft Entra server application: "Use kubelogin", MicrosoftDocs/azure-aks-docs
`articles/aks/kubelogin-authentication.md` @fb060abe). A cluster with only local accounts (no
Entra ID) is reached with provider `existing` and a kubeconfig instead.
"""

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import yaml

from ..kube.objects import plugin_version
from ..kube.provider import KubeProvider
from ..kube.sdks import CLOUD_SDKS, cloud_sdk, require_sdk
from ..model.errors import InputError
from ..model.inputs import stack

PROVIDERS = ("gke", "eks", "aks", "existing")
AKS_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
"""The AKS Microsoft Entra server application ID that cluster tokens are issued for."""
RELEASE_CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")


@dataclass
class ClusterAccessArgs:
    """Where the cluster is; every default here."""

    provider: str = field(metadata=stack(choices=PROVIDERS))
    """`gke` | `eks` | `aks` | `existing` (any cluster a kubeconfig reaches: on-prem, kind,
    ...)."""
    name: str = field(metadata=stack(value=None, default="required on gke, eks and aks"))
    """The cluster's name: on GKE, EKS and AKS the cluster to use (or, `create`, to make); on EKS
    1-100 letters, digits, `-` or `_`, starting with a letter or digit (AWS's rule; it is also part
    of the autoscaler's tag key). existing: a label only."""
    location: Optional[str] = None
    """GKE, required: the cluster's region (`us-central1`) or zone (`us-central1-a`). AKS, with
    `create` only: the Azure region (`eastus2`)."""
    resource_group: Optional[str] = None
    """AKS, required: the resource group of the cluster (it must exist; `create` makes the cluster
    in it)."""
    admin_group_object_ids: Optional[Sequence[str]] = field(
        default=None, metadata=stack(min_items=1)
    )
    """AKS, with `create`: Microsoft Entra group object IDs whose members administer the cluster
    (its local accounts are disabled: this is how `kubelogin` reaches it)."""
    system_vm_size: Optional[str] = "Standard_D4s_v5"
    """AKS `create`: VM size of the one-node CPU system pool."""
    kubernetes_version: Optional[str] = None
    """AKS `create`: the Kubernetes version (`1.33`); default AKS's."""
    node_auto_provisioning: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """AKS `create`: turn on node auto-provisioning (`nodeProvisioningProfile.mode: Auto`): true
    when the stack has `nap` pools."""
    project: Optional[str] = None
    """GKE: project id; default: the provider's (the `gcp:project` config)."""
    region: Optional[str] = None
    """EKS: region; default: the provider's (the `aws:region` config)."""
    create: Optional[bool] = field(
        default=False, metadata=stack(value=None, default="resolved: false on gke and aks")
    )
    """GKE and AKS: create the cluster in `location`. GKE: Workload Identity, `release_channel`, a
    one-node CPU system pool of `system_machine_type`, no deletion protection so that `pulumi
    destroy` removes it; not with `autopilot` (only Standard clusters are made). AKS: in
    `resource_group`, Entra ID with `admin_group_object_ids`, Azure CNI Overlay with Cilium,
    OIDC and workload identity, a one-node system pool of `system_vm_size`."""
    release_channel: Optional[str] = field(
        default="REGULAR",
        metadata=stack(choices=RELEASE_CHANNELS, value=None, default="`REGULAR` with `create`"),
    )
    """GKE, only with `create: true` (an existing cluster keeps its own): its release channel."""
    system_machine_type: Optional[str] = "e2-standard-4"
    """GKE `create`: machine type of the one-node CPU system pool."""
    kubeconfig: Optional[str] = None
    """existing: kubeconfig path or contents; default: the ambient one (`$KUBECONFIG`, else
    `~/.kube/config`)."""
    context: Optional[str] = None
    """existing: kubeconfig context; default: its current context."""


def exec_kubeconfig(name: str, endpoint: str, ca_data: str, user_exec: dict[str, Any]) -> str:
    """A kubeconfig that authenticates with an exec plugin: no credential is written into it."""
    server = endpoint if endpoint.startswith("https://") else f"https://{endpoint}"
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": name, "cluster": {"server": server, "certificate-authority-data": ca_data}}
            ],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [{"name": name, "user": {"exec": user_exec}}],
        },
        sort_keys=True,
    )


def gke_exec() -> dict[str, Any]:
    return {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "gke-gcloud-auth-plugin",
        "installHint": "Install gke-gcloud-auth-plugin: gcloud components install "
        "gke-gcloud-auth-plugin",
        "provideClusterInfo": True,
    }


def eks_exec(cluster: str, region: Optional[str]) -> dict[str, Any]:
    args = ["eks", "get-token", "--cluster-name", cluster, "--output", "json"]
    if region:
        args += ["--region", region]
    return {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws", "args": args}


GKE_GET_CLUSTER = "gcp:container/getCluster:getCluster"


def found_gke_cluster(args: ClusterAccessArgs) -> pulumi.Output[dict[str, Any]]:
    """`gcp.container.get_cluster_output(name, location, project)`: the same invoke, its result
    read by the provider's camelCase names. Not through `pulumi_gcp.container`, whose import
    loads every cluster type of GKE, Attached, AWS and Azure (0.15-0.25 s of every preview and
    `up` of a GKE stack). tests/platform/test_gke_get_cluster.py holds the request equal to the
    SDK function's."""
    return pulumi.runtime.invoke_output(
        GKE_GET_CLUSTER,
        {
            "location": args.location,
            "name": args.name,
            "project": args.project,
            "skipNodePoolRefresh": None,
        },
        opts=pulumi.InvokeOutputOptions(
            version=plugin_version("pulumi_gcp"), plugin_download_url=None
        ),
    )


class ClusterAccess(pulumi.ComponentResource):
    """The Kubernetes provider every in-cluster resource of the platform uses.

    Attributes: `provider` (a `KubeProvider`: server-side apply, upsert, hooks on its cluster), `cluster_name` (Output[str], for node pools), `cluster`
    (the created GKE cluster or None), `subnet_ids` (EKS: the cluster's subnets).
    """

    def __init__(
        self, name: str, args: ClusterAccessArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:  # a stack for a cloud whose SDK is missing stops here, naming the extra
            if args.provider in CLOUD_SDKS:
                require_sdk(CLOUD_SDKS[args.provider][0])
        except InputError as missing:
            raise missing.at(f"ClusterAccess({name!r}).args.provider") from None
        super().__init__("gpu-inference:index:ClusterAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.cluster: Optional[pulumi.Resource] = None
        self.cluster_name: pulumi.Output[str] = pulumi.Output.from_input(args.name)
        self.subnet_ids: Optional[pulumi.Output[list[str]]] = None
        self.workload_pool: Optional[pulumi.Output[str]] = None
        """GKE: the cluster's Workload Identity pool (`CLUSTER_PROJECT.svc.id.goog`; "" if not
        known)."""
        kubeconfig: Optional[pulumi.Output[str]]
        if args.provider == "gke":
            kubeconfig = self._gke(name, args, child)
        elif args.provider == "eks":
            kubeconfig = self._eks(args, child)
        elif args.provider == "aks":
            kubeconfig = self._aks(name, args, child)
        else:
            kubeconfig = pulumi.Output.from_input(args.kubeconfig) if args.kubeconfig else None
        provider_opts = pulumi.ResourceOptions(
            parent=self, depends_on=[self.cluster] if self.cluster else None
        )
        self.provider = KubeProvider(
            f"{name}-k8s",
            kubeconfig=kubeconfig,
            context=args.context if args.provider == "existing" else None,
            opts=provider_opts,
        )
        self.register_outputs({"clusterName": self.cluster_name})

    def _gke(
        self, name: str, args: ClusterAccessArgs, child: pulumi.ResourceOptions
    ) -> pulumi.Output[str]:
        if args.create:
            gcp = cloud_sdk("pulumi_gcp")  # only stacks that make a GKE cluster import it

            project = args.project or gcp.config.project
            cluster = gcp.container.Cluster(
                f"{name}-cluster",
                name=args.name,
                location=args.location,
                project=args.project,
                # The default pool is replaced by the system pool below (and by the GPU pools).
                remove_default_node_pool=True,
                initial_node_count=1,
                release_channel={"channel": args.release_channel or "REGULAR"},
                workload_identity_config={"workload_pool": f"{project}.svc.id.goog"},
                # A first-try cluster: `pulumi destroy` must be able to remove it.
                deletion_protection=False,
                opts=child,
            )
            gcp.container.NodePool(
                f"{name}-system",
                cluster=cluster.name,
                location=args.location,
                project=args.project,
                node_count=1,
                node_config={
                    "machine_type": args.system_machine_type or "e2-standard-4",
                    "workload_metadata_config": {"mode": "GKE_METADATA"},
                    "shielded_instance_config": {
                        "enable_secure_boot": True,
                        "enable_integrity_monitoring": True,
                    },
                    "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
                },
                management={"auto_repair": True, "auto_upgrade": True},
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.cluster = cluster
            self.cluster_name = cluster.name
            self.workload_pool = cluster.workload_identity_config.apply(
                lambda c: (c.workload_pool or "") if c else ""
            )
            endpoint = cluster.endpoint
            ca = cluster.master_auth.apply(lambda a: a.cluster_ca_certificate or "")
        else:
            found = found_gke_cluster(args)
            endpoint = found.apply(lambda c: c.get("endpoint") or "")
            ca = found.apply(
                lambda c: (c.get("masterAuths") or [{}])[0].get("clusterCaCertificate") or ""
            )
            # Workload Identity members live in the cluster's project's pool.
            self.workload_pool = found.apply(
                lambda c: f"{c['project']}.svc.id.goog" if c.get("project") else ""
            )
        return pulumi.Output.all(endpoint, ca).apply(
            lambda v: exec_kubeconfig(args.name, str(v[0]), str(v[1]), gke_exec())
        )

    def _eks(self, args: ClusterAccessArgs, child: pulumi.ResourceOptions) -> pulumi.Output[str]:
        aws = cloud_sdk("pulumi_aws")  # only EKS stacks import the AWS SDK

        found = aws.eks.get_cluster_output(name=args.name, region=args.region)
        self.subnet_ids = found.vpc_config.apply(lambda v: list(v.subnet_ids))
        ca = found.certificate_authorities.apply(lambda c: c[0].data if c else "")
        return pulumi.Output.all(found.endpoint, ca).apply(
            lambda v: exec_kubeconfig(
                args.name, str(v[0]), str(v[1]), eks_exec(args.name, args.region)
            )
        )

    def _aks(
        self, name: str, args: ClusterAccessArgs, child: pulumi.ResourceOptions
    ) -> pulumi.Output[str]:
        containerservice = cloud_sdk("pulumi_azure_native.containerservice")  # AKS stacks only

        depends = None
        if args.create:
            cluster = containerservice.ManagedCluster(
                f"{name}-cluster", **aks_cluster_inputs(args), opts=child
            )
            self.cluster = cluster
            self.cluster_name = cluster.name
            depends = pulumi.InvokeOutputOptions(depends_on=[cluster])
        found = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=args.resource_group,
            resource_name=self.cluster_name,
            format="exec",
            opts=depends,
        )
        return pulumi.Output.all(self.cluster_name, found.kubeconfigs).apply(
            lambda v: aks_kubeconfig(str(v[0]), v[1])
        )


def aks_cluster_inputs(args: ClusterAccessArgs) -> dict[str, Any]:
    """`containerservice.ManagedCluster` keyword arguments of a `create: true` AKS cluster: Entra
    ID only (local accounts off), Azure CNI Overlay with Cilium (what node auto-provisioning
    recommends: `node-auto-provisioning-networking.md`), OIDC issuer and workload identity, one
    system node (the GPU pools are AgentPool resources of their own: a managed cluster takes no
    new agent pool once made, pulumi/pulumi-azure-native#579)."""
    inputs: dict[str, Any] = {
        "resource_group_name": args.resource_group,
        "resource_name_": args.name,
        "location": args.location,
        "dns_prefix": args.name,
        "identity": {"type": "SystemAssigned"},
        "aad_profile": {
            "managed": True,
            "admin_group_object_ids": list(args.admin_group_object_ids or ()),
        },
        "disable_local_accounts": True,
        "enable_rbac": True,
        "agent_pool_profiles": [
            {
                "name": "system",
                "mode": "System",
                "count": 1,
                "vm_size": args.system_vm_size or "Standard_D4s_v5",
                "os_type": "Linux",
                "type": "VirtualMachineScaleSets",
            }
        ],
        "network_profile": {
            "network_plugin": "azure",
            "network_plugin_mode": "overlay",
            "network_dataplane": "cilium",
        },
        "oidc_issuer_profile": {"enabled": True},
        "security_profile": {"workload_identity": {"enabled": True}},
    }
    if args.kubernetes_version:
        inputs["kubernetes_version"] = args.kubernetes_version
    if args.node_auto_provisioning:
        inputs["node_provisioning_profile"] = {"mode": "Auto"}
    return inputs


def aks_exec() -> dict[str, Any]:
    return {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "kubelogin",
        "args": ["get-token", "--login", "azurecli", "--server-id", AKS_SERVER_ID],
        "installHint": "Install kubelogin: az aks install-cli",
    }


def aks_kubeconfig(name: str, kubeconfigs: Any) -> str:
    """An exec kubeconfig from the first of the cluster's user credentials: its server and CA
    only (whatever user it carries is dropped)."""
    server, ca = "", ""
    for credential in kubeconfigs or []:
        value = credential.get("value") if isinstance(credential, dict) else credential.value
        found = yaml.safe_load(base64.b64decode(value or "")) or {}
        for c in found.get("clusters", []):
            server = c["cluster"].get("server", "")
            ca = c["cluster"].get("certificate-authority-data", "")
            break
        break
    return exec_kubeconfig(name, server, ca, aks_exec())
