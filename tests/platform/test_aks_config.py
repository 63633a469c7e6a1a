"""AKS stack config: the ExtendedResourceToleration admission plugin is on (AKS FAQ, faq.yml
@61a5e579, "What Kubernetes admission controllers does AKS support?": it is in the list, which
cannot be changed), so `omitGpuToleration` is taken and the pools' facts say so."""

from __future__ import annotations

from config_bases import mutated

from components.platform.load import load_spec


def test_aks_resolves_extended_resource_toleration_on():
    assert load_spec(mutated("aks", {})).cluster.extended_resource_toleration is True


def test_omit_gpu_toleration_is_taken_on_aks():
    spec = load_spec(mutated("aks", {"inferenceServices[1].predictor.omitGpuToleration": True}))
    assert spec.inference_services[1].predictor.omit_gpu_toleration is True
    assert spec.cluster.extended_resource_toleration is True
