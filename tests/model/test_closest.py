"""The one "did you mean" of every message: a cloud's name suggests its provider, a case slip the
same word, else the nearest spelling."""

import pytest

from components.model.errors import closest, did_you_mean

PROVIDERS = ("gke", "eks", "aks", "existing")


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("aws", "eks"),  # by spelling alone: 'aks'
        ("AWS", "eks"),
        ("amazon", "eks"),
        ("gcp", "gke"),
        ("google", "gke"),
        ("azure", "aks"),
        ("GKE", "gke"),
        ("exsting", "existing"),
        ("openshift", None),
    ],
)
def test_a_provider_is_suggested_for_a_clouds_name(given: str, meant: str | None) -> None:
    assert closest(given, PROVIDERS) == meant


def test_a_cloud_name_suggests_nothing_where_its_provider_is_no_choice() -> None:
    assert closest("aws", ("NoSchedule", "NoExecute")) is None
    assert did_you_mean("aws", ("pools", "cluster")) == ""


def test_the_hint_and_its_cutoff() -> None:
    assert did_you_mean("toleration", ("tolerations", "taints")) == " (did you mean 'tolerations'?)"
    assert did_you_mean("on_demand", ("ondemand", "spot")) == " (did you mean 'ondemand'?)"
    assert did_you_mean("tols", ("tolerations",), cutoff=0.75) == ""
