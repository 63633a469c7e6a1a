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
