"""Cluster access: exec-plugin kubeconfigs (no stored tokens), the GKE first-try cluster."""

import json

import pytest

from components.platform.cluster_access import ClusterAccess, ClusterAccessArgs

PROVIDER = "pulumi:providers:kubernetes"


def kubeconfig(g):
    return json.loads(g.one(PROVIDER).inputs["kubeconfig"])


def test_existing_gke_cluster_uses_gcloud_plugin(run):
    g = run(lambda: ClusterAccess("c", ClusterAccessArgs("gke", "dev", location="us-central1")))
    cfg = kubeconfig(g)
    assert cfg["clusters"][0]["cluster"] == {
        "server": "https://203.0.113.10",
        "certificate-authority-data": "ZmFrZS1jYQ==",
    }
    assert cfg["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert "token" not in json.dumps(cfg)
    assert not g.of_type("gcp:container/cluster:Cluster")


def test_eks_uses_aws_get_token(run):
    g = run(lambda: ClusterAccess("c", ClusterAccessArgs("eks", "prod", region="us-east-1")))
    user = kubeconfig(g)["users"][0]["user"]["exec"]
    assert user["command"] == "aws"
    assert user["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "prod",
        "--output",
        "json",
        "--region",
        "us-east-1",
    ]
    assert kubeconfig(g)["clusters"][0]["cluster"]["server"] == "https://fake.eks.example"


def test_existing_cluster_by_context(run):
    g = run(lambda: ClusterAccess("c", ClusterAccessArgs("existing", "lab", context="lab-admin")))
    # Upsert: an `up` killed after the API server made an object re-applies it (the field manager
    # annotation keeps it this stack's); server-side apply for the node and ConfigMap patches.
    assert g.one(PROVIDER).inputs == {
        "context": "lab-admin",
        "enableServerSideApply": "true",
        "upsertExistingObjects": "true",
    }


@pytest.fixture(scope="module")
def created():
    from components.preview.mockrun import run_program

    args = ClusterAccessArgs("gke", "dev", location="us-central1", project="proj", create=True)
    return run_program(lambda: ClusterAccess("c", args))


def test_first_try_cluster_has_workload_identity_and_release_channel(created):
    cluster = created.one("gcp:container/cluster:Cluster")
    assert cluster.inputs["workloadIdentityConfig"] == {"workloadPool": "proj.svc.id.goog"}
    assert cluster.inputs["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster.inputs["removeDefaultNodePool"] is True
    assert cluster.inputs["location"] == "us-central1"


def test_first_try_cluster_has_a_cpu_system_pool(created):
    pool = created.one("gcp:container/nodePool:NodePool")
    node = pool.inputs["nodeConfig"]
    assert node["machineType"] == "e2-standard-4"
    assert "guestAccelerators" not in node and "taints" not in node
    assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_provider_waits_for_created_cluster(created):
    provider = created.one(PROVIDER)
    assert created.depends_on(provider, created.one("gcp:container/cluster:Cluster"))


# -- AKS ---------------------------------------------------------------------------------------


def test_existing_aks_cluster_uses_kubelogin_and_keeps_no_credential(run):
    g = run(
        lambda: ClusterAccess(
            "c", ClusterAccessArgs("aks", "inference", resource_group="rg-inference")
        )
    )
    cfg = kubeconfig(g)
    # Server and CA from the cluster's user credentials (the mock's), nothing else of them.
    assert cfg["clusters"][0]["cluster"] == {
        "server": "https://fake-aks.hcp.eastus2.azmk8s.io:443",
        "certificate-authority-data": "ZmFrZS1jYQ==",
    }
    assert cfg["users"][0]["user"]["exec"] == {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "kubelogin",
        "args": [
            "get-token",
            "--login",
            "azurecli",
            "--server-id",
            "6dae42f8-4368-4678-94ff-3960e28e3630",
        ],
        "installHint": "Install kubelogin: az aks install-cli",
    }
    assert not g.of_type("azure-native:containerservice:ManagedCluster")


@pytest.fixture(scope="module")
def created_aks():
    from components.preview.mockrun import run_program

    args = ClusterAccessArgs(
        "aks",
        "inference",
        resource_group="rg-inference",
        location="eastus2",
        create=True,
        admin_group_object_ids=["00000000-0000-0000-0000-000000000001"],
        node_auto_provisioning=True,
        kubernetes_version="1.33",
    )
    return run_program(lambda: ClusterAccess("c", args))


def test_first_try_aks_cluster(created_aks):
    cluster = created_aks.one("azure-native:containerservice:ManagedCluster")
    assert cluster.inputs == {
        "resourceGroupName": "rg-inference",
        "resourceName": "inference",
        "location": "eastus2",
        "dnsPrefix": "inference",
        "kubernetesVersion": "1.33",
        "identity": {"type": "SystemAssigned"},
        "aadProfile": {
            "managed": True,
            "adminGroupObjectIDs": ["00000000-0000-0000-0000-000000000001"],
        },
        "disableLocalAccounts": True,
        "enableRBAC": True,
        "agentPoolProfiles": [
            {
                "name": "system",
                "mode": "System",
                "count": 1,
                "vmSize": "Standard_D4s_v5",
                "osType": "Linux",
                "type": "VirtualMachineScaleSets",
            }
        ],
        "networkProfile": {
            "networkPlugin": "azure",
            "networkPluginMode": "overlay",
            "networkDataplane": "cilium",
        },
        "oidcIssuerProfile": {"enabled": True},
        "securityProfile": {"workloadIdentity": {"enabled": True}},
        "nodeProvisioningProfile": {"mode": "Auto"},
    }


def test_first_try_aks_cluster_inputs_are_the_sdks():
    import inspect

    from pulumi_azure_native import containerservice

    from components.platform.cluster_access import aks_cluster_inputs

    inputs = aks_cluster_inputs(
        ClusterAccessArgs("aks", "c", resource_group="rg", location="x", create=True)
    )
    accepted = inspect.signature(containerservice.ManagedCluster._internal_init).parameters
    assert set(inputs) <= set(accepted)
    containerservice.ManagedClusterAADProfileArgs(**inputs["aad_profile"])
    containerservice.ContainerServiceNetworkProfileArgs(**inputs["network_profile"])
    for pool in inputs["agent_pool_profiles"]:
        containerservice.ManagedClusterAgentPoolProfileArgs(**pool)


def test_provider_waits_for_the_created_aks_cluster(created_aks):
    cluster = created_aks.one("azure-native:containerservice:ManagedCluster")
    assert cluster.urn in created_aks.one(PROVIDER).depends_on
