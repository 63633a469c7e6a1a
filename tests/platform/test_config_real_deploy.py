"""Stack config refusals for what a real `pulumi up` would deploy broken (issue 12): one message
with the key path, before any resource is registered."""

import pytest
from config_bases import NS, mutated

from components.model.errors import InputError
from components.platform.load import load_spec

RCLONE = {"name": "rclone", "image": "seldonio/seldon-rclone:2.6.0"}
AGENT = {"name": "agent", "image": "seldonio/seldon-agent:2.6.0"}
MLSERVER = {"name": "mlserver", "image": "seldonio/mlserver:1.6.1"}


@pytest.mark.parametrize(
    ("containers", "missing"),
    [
        ([MLSERVER], "agent and no rclone"),
        ([AGENT, MLSERVER], "rclone"),
        ([RCLONE, MLSERVER], "agent"),
    ],
)
def test_a_server_config_without_seldons_own_containers_is_refused(containers, missing):
    """A ServerConfig is the server pod's whole template (Seldon 2.6.0): without the agent and
    rclone containers no model loads. Refused, pointing at the built-in ServerConfigs."""
    with pytest.raises(InputError) as e:
        load_spec(mutated("gke", {"seldon.serverConfigs[0].containers": containers}))
    assert str(e.value) == (
        f"{NS}:seldon.serverConfigs[0].containers: ServerConfig 'mlserver-llm' has no "
        f"{missing} container: a ServerConfig is the whole server pod, and Seldon's agent and "
        "rclone containers (their env, ports and volume mounts, as in the seldon-core-v2-setup "
        "chart's mlserver ServerConfig) are not made for you (allowed: base: mlserver or triton "
        "(Seldon's pod as its chart makes it, with your containers, capabilities and placement "
        "on top), or base the Server on a built-in ServerConfig (servers[].serverConfig: "
        "mlserver or triton), or give all of agent, rclone and the server container)"
    )


def test_a_server_config_with_seldons_own_containers_passes():
    spec = load_spec(
        mutated("gke", {"seldon.serverConfigs[0].containers": [RCLONE, AGENT, MLSERVER]})
    )
    assert [c.name for c in spec.seldon.server_configs[0].containers] == [
        "rclone",
        "agent",
        "mlserver",
    ]


# -- Workload Identity: the member is in the cluster's pool (issue 12.10) ------------------------

MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"
GSA_ELSEWHERE = "model-reader@storage-proj.iam.gserviceaccount.com"


@pytest.mark.parametrize(
    ("cluster", "pool"),
    [
        # An existing cluster: its project from the look-up (the fake cloud's `fake-project`).
        ({}, "fake-project.svc.id.goog"),
        # A created cluster: the workload pool it is created with.
        ({"create": True, "project": "cluster-proj"}, "cluster-proj.svc.id.goog"),
    ],
)
def test_workload_identity_member_is_in_the_clusters_project(run, cluster, pool):
    """The GSA may live in another project (here `storage-proj`): the binding is on the GSA, in
    its project, but the member is the KSA in the cluster's workload pool."""
    from components.platform.platform import InferencePlatform

    changes = {f"cluster.{k}": v for k, v in cluster.items()}
    changes["cluster.workloadIdentity"] = {"gcpServiceAccount": GSA_ELSEWHERE}
    spec = load_spec(mutated("gke", changes))
    g = run(lambda: InferencePlatform("gi", spec))
    members = g.of_type(MEMBER)
    assert members
    for m in members:
        assert m.inputs["serviceAccountId"] == (
            f"projects/storage-proj/serviceAccounts/{GSA_ELSEWHERE}"
        )
        ns_ksa = m.inputs["member"].split("[", 1)[1]
        assert m.inputs["member"] == f"serviceAccount:{pool}[{ns_ksa}"


# -- GKE_METADATA on an existing cluster without Workload Identity (issue 12.11) -----------------

NODE_POOL = "gcp:container/nodePool:NodePool"


def test_gke_metadata_off_for_a_cluster_without_workload_identity(run):
    from components.platform.platform import InferencePlatform

    spec = load_spec(mutated("gke", {"cluster.gkeMetadata": False}))
    pools = run(lambda: InferencePlatform("gi", spec)).of_type(NODE_POOL)
    assert pools
    assert all("workloadMetadataConfig" not in p.inputs["nodeConfig"] for p in pools)
    on = run(lambda: InferencePlatform("gi", load_spec(mutated("gke", {})))).of_type(NODE_POOL)
    assert all(
        p.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"} for p in on
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"cluster.gkeMetadata": False, "cluster.create": True},
            "gkeMetadata: false, but create: true makes a cluster with Workload Identity, whose "
            "pools use the GKE metadata server (allowed: gkeMetadata: false only with create: "
            "false (an existing cluster without Workload Identity))",
        ),
        (
            {
                "cluster.gkeMetadata": False,
                "cluster.workloadIdentity": {
                    "gcpServiceAccount": "m-reader@p-1.iam.gserviceaccount.com"
                },
            },
            "gkeMetadata: false says the cluster has no Workload Identity, but "
            "workloadIdentity.gcpServiceAccount needs it (pods reach the Google service account "
            "through the GKE metadata server) (allowed: one of them: enable Workload Identity on "
            "the cluster and drop gkeMetadata, or drop workloadIdentity.gcpServiceAccount)",
        ),
    ],
)
def test_gke_metadata_contradictions_name_both_keys(changes, message):
    with pytest.raises(InputError) as e:
        load_spec(mutated("gke", changes))
    assert str(e.value) == f"{NS}:cluster.gkeMetadata: {message}"
