"""An existing GKE cluster is looked up without `pulumi_gcp.container`: the invoke reaches the
engine exactly as `gcp.container.get_cluster_output` sends it, and what we read of its result
(endpoint, CA, project) is what the SDK's typed result gives."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest

from components.platform.cluster_access import ClusterAccessArgs, found_gke_cluster
from tests.sdk_requests import sent


def invokes(program: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    return [r["invoke"] for r in sent(program, monkeypatch) if "invoke" in r]


@pytest.mark.parametrize(
    "where",
    [
        {"location": "us-central1", "project": "proj-1"},
        {"location": "us-central1-a"},
        {},
    ],
)
def test_the_lookup_is_the_sdk_functions(
    where: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    read: dict[str, list[Any]] = {"sdk": [], "ours": []}

    def sdk() -> None:
        found = gcp.container.get_cluster_output(name="inference", **where)
        pulumi.Output.all(
            found.endpoint,
            found.master_auths.apply(lambda a: a[0].cluster_ca_certificate),
            found.project,
        ).apply(read["sdk"].extend)

    def ours() -> None:
        found = found_gke_cluster(ClusterAccessArgs(provider="gke", name="inference", **where))
        found.apply(
            lambda c: read["ours"].extend(
                [c["endpoint"], c["masterAuths"][0]["clusterCaCertificate"], c["project"]]
            )
        )

    theirs = invokes(sdk, monkeypatch)
    mine = invokes(ours, monkeypatch)
    assert [r["tok"] for r in mine] == ["gcp:container/getCluster:getCluster"]
    assert mine == theirs
    assert read["ours"] == read["sdk"] == ["203.0.113.10", "ZmFrZS1jYQ==", "fake-project"]
