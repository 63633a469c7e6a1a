"""AksGpuAgentPool under Pulumi mocks: the exact AgentPool inputs (held to pulumi-azure-native's
typed Args: keyword names and input shapes), the labels, taints and autoscaler tags, the placement
it hands out (spot included), and the errors for bad arguments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.check.readers.aks import tag_labels
from components.model.errors import InputError
from components.model.scheduling import Taint
from components.pools.aks import (
    AksGpuAgentPool,
    AksGpuAgentPoolArgs,
    agent_pool_inputs,
    default_agent_pool_name,
    tag_key,
    validate_aks_pool_args,
)
from components.preview import mockrun
from components.preview.mockrun import run_program

AGENT_POOL = "azure-native:containerservice:AgentPool"
CA = "k8s.io_cluster-autoscaler_node-template_"
SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
SPOT = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}


def args(**kw) -> AksGpuAgentPoolArgs:
    base = dict(
        resource_group_name="rg-inference",
        cluster_name="inference",
        vm_size="Standard_NC24ads_A100_v4",
    )
    base.update(kw)
    return AksGpuAgentPoolArgs(**base)


@pytest.fixture(scope="module")
def world():
    pools: dict[str, AksGpuAgentPool] = {}
    options: dict[str, tuple[list[str], bool, list[str]]] = {}
    original = mockrun.Recorder.RegisterResource

    def spy(self, request):
        options[request.name] = (
            list(request.ignoreChanges),
            bool(request.deleteBeforeReplace),
            list(request.replaceOnChanges),
        )
        return original(self, request)

    def program():
        pools["a100"] = AksGpuAgentPool("a100", args(max_nodes=4, max_pods=30, os_disk_size_gb=256))
        pools["t4"] = AksGpuAgentPool(
            "t4-spot",
            args(
                vm_size="Standard_NC8as_T4_v3",
                spot=True,
                spot_eviction_policy="Deallocate",
                min_nodes=1,
                max_nodes=3,
                labels={"team": "ml"},
                gpu_driver="None",
                kubernetes_version="1.33",
                availability_zones=["1", "2"],
            ),
        )

    mockrun.Recorder.RegisterResource = spy  # type: ignore[method-assign]
    try:
        g = run_program(program)
    finally:
        mockrun.Recorder.RegisterResource = original  # type: ignore[method-assign]
    return g, pools, options


def test_on_demand_agent_pool_inputs(world):
    g, _, options = world
    pool = g.one(AGENT_POOL, "a100")
    assert pool.inputs == {
        "resourceGroupName": "rg-inference",
        "resourceName": "inference",
        "agentPoolName": "a100",
        "mode": "User",
        "osType": "Linux",
        "type": "VirtualMachineScaleSets",
        "vmSize": "Standard_NC24ads_A100_v4",
        "enableAutoScaling": True,
        "minCount": 0,
        "maxCount": 4,
        "count": 0,
        "maxPods": 30,
        "nodeLabels": {"gpu-inference.dev/pool": "a100"},
        "nodeTaints": ["sku=gpu:NoSchedule"],
        "gpuProfile": {"driver": "Install"},
        "osDiskSizeGB": 256,
        "tags": {
            f"{CA}label_gpu-inference.dev_pool": "a100",
            f"{CA}label_kubernetes.azure.com_agentpool": "a100",
            f"{CA}label_agentpool": "a100",
            f"{CA}label_kubernetes.azure.com_mode": "user",
            f"{CA}label_kubernetes.azure.com_role": "agent",
            f"{CA}label_kubernetes.azure.com_os-sku": "Ubuntu",
            f"{CA}label_kubernetes.io_os": "linux",
            f"{CA}label_kubernetes.io_arch": "amd64",
            f"{CA}label_node.kubernetes.io_instance-type": "Standard_NC24ads_A100_v4",
            f"{CA}label_kubernetes.azure.com_accelerator": "nvidia",
            f"{CA}label_accelerator": "nvidia",
            f"{CA}taint_sku": "gpu:NoSchedule",
        },
    }
    # The autoscaler owns the node count; a replacement deletes the old pool first (its name is
    # fixed, and azure-native refuses to create over an existing one); what AKS takes at create
    # only replaces the pool (spot-node-pool.md, concepts-storage.md, azure-cli#16775).
    assert options["a100"] == (
        ["count"],
        True,
        [
            "scaleSetPriority",
            "scaleSetEvictionPolicy",
            "spotMaxPrice",
            "osDiskType",
            "osDiskSizeGB",
            "gpuProfile.driver",
        ],
    )


def test_spot_agent_pool_declares_what_aks_adds(world):
    g, _, _ = world
    pool = g.one(AGENT_POOL, "t4-spot").inputs
    assert pool["agentPoolName"] == "t4spot"
    assert pool["scaleSetPriority"] == "Spot"
    assert pool["scaleSetEvictionPolicy"] == "Deallocate"
    assert pool["spotMaxPrice"] == -1
    assert pool["nodeLabels"] == {
        "gpu-inference.dev/pool": "t4-spot",
        "team": "ml",
        "kubernetes.azure.com/scalesetpriority": "spot",
    }
    assert pool["nodeTaints"] == [
        "sku=gpu:NoSchedule",
        "kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
    ]
    assert pool["gpuProfile"] == {"driver": "None"}
    assert pool["orchestratorVersion"] == "1.33"
    assert pool["availabilityZones"] == ["1", "2"]
    assert pool["tags"][f"{CA}taint_kubernetes.azure.com_scalesetpriority"] == "spot:NoSchedule"
    assert (pool["minCount"], pool["maxCount"], pool["count"]) == (1, 3, 1)


def test_placements(world):
    _, pools, _ = world
    assert pools["a100"].placement.to_pod_spec() == {
        "nodeSelector": {"gpu-inference.dev/pool": "a100"},
        "tolerations": [SKU],
    }
    assert pools["t4"].placement.to_pod_spec() == {
        "nodeSelector": {"gpu-inference.dev/pool": "t4-spot"},
        "tolerations": [SKU, SPOT],
    }
    assert pools["a100"].facts.custom_gpu_taint  # the device plugin must tolerate sku=gpu
    assert pools["t4"].builtin_device_plugin and not pools["a100"].builtin_device_plugin
    assert (pools["a100"].gpus_per_node, pools["a100"].facts.gpu_model) == (1, "A100")
    assert pools["a100"].facts.extended_resource_toleration  # AKS always runs it (AKS FAQ)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {
            "spot": True,
            "spot_max_price": 0.5,
            "os_disk_type": "Ephemeral",
            "os_disk_size_gb": 64,
            "os_sku": "AzureLinux",
        },
        {"time_slicing_replicas": 4, "vnet_subnet_id": "/subscriptions/s/x"},
    ],
)
def test_inputs_are_the_sdks_keyword_arguments(kw):
    """Every keyword is one the AgentPool resource takes (`resource_name_` is the cluster: the
    resource's own first argument is its Pulumi name), the same as AgentPoolArgs' once renamed,
    and every nested dict is one of its typed inputs'."""
    import inspect

    from pulumi_azure_native import containerservice

    a = args(**kw)
    inputs = agent_pool_inputs(validate_aks_pool_args("p", a), a)
    accepted = inspect.signature(containerservice.AgentPool._internal_init).parameters
    assert set(inputs) <= set(accepted)
    renamed = {("resource_name" if k == "resource_name_" else k): v for k, v in inputs.items()}
    containerservice.AgentPoolArgs(**renamed)
    containerservice.GPUProfileArgs(**inputs["gpu_profile"])


def test_time_slicing_tags_the_shared_gpus():
    plan = validate_aks_pool_args("a100", args(time_slicing_replicas=4))
    assert plan.facts.gpus_per_node == 4
    assert plan.node_labels["nvidia.com/device-plugin.config"] == "time-sliced-4"
    assert plan.tags[f"{CA}resources_nvidia.com_gpu"] == "4"


@pytest.mark.parametrize(
    "name,expected",
    [
        ("a100", "a100"),
        ("t4-spot", "t4spot"),
        ("gpu-a100-on-demand", "gpua100ondem"),
        ("8gpu", "p8gpu"),
    ],
)
def test_default_agent_pool_names(name, expected):
    assert default_agent_pool_name(name) == expected


@given(
    st.from_regex(
        r"[a-z0-9]([-a-z0-9_.]{0,20}[a-z0-9])?(/[a-z0-9]([-a-z0-9_.]{0,20}[a-z0-9])?)?",
        fullmatch=True,
    )
)
def test_tag_keys_decode_as_cluster_autoscaler_reads_them(key):
    labels, _ = tag_labels({f"{CA}label_{tag_key(key)}": "v"})
    assert labels == {key: "v"}


@pytest.mark.parametrize(
    "kw,path,problem",
    [
        (
            {"vm_size": "Standard_NC6s_v3"},
            "args.vm_size",
            "Standard_NC6s_v3 has NVIDIA GPUs, but its series is retired",
        ),
        (
            {"gpus_per_node": 4},
            "args.gpus_per_node",
            "Standard_NC24ads_A100_v4 has 1 GPU(s), not 4",
        ),
        (
            {"spot_max_price": 1.0},
            "args.spot_max_price",
            "spot_max_price is given but the pool is not spot",
        ),
        (
            {"spot": True, "spot_max_price": 0},
            "args.spot_max_price",
            "spot max price 0 is not a price",
        ),
        ({"gpu_driver": "Skip"}, "args.gpu_driver", "'Skip' is not a valid value"),
        (
            {"os_disk_size_gb": 4096},
            "args.os_disk_size_gb",
            "4096 is out of range",
        ),
        ({"max_pods": 5}, "args.max_pods", "5 is out of range"),
        (
            {"availability_zones": "1"},
            "args.availability_zones",
            "expected a list, got '1'",
        ),
        (
            {"agent_pool_name": "GPU"},
            "args.agent_pool_name",
            "agent pool name 'GPU' is not an AKS node pool name",
        ),
        (
            {"taints": [Taint("sku", "gpu", "PreferNoSchedule")]},
            "args.taints",
            "a GPU pool without a NoSchedule or NoExecute taint",
        ),
        (
            {"taints": [Taint("a", "1", "NoSchedule"), Taint("a", "2", "NoExecute")]},
            "args.taints[1]",
            "taint key 'a' is used twice",
        ),
        (
            {"labels": {"kubernetes.azure.com/mode": "system"}},
            "args.labels.kubernetes.azure.com/mode",
            "label kubernetes.azure.com/mode='system' uses the prefix 'kubernetes.azure.com'",
        ),
        ({"max_nodes": 1001}, "args.max_nodes", "1001 is out of range"),
        ({"resource_group_name": ""}, "args.resource_group_name", "resource group '' is not given"),
    ],
)
def test_bad_arguments(kw, path, problem):
    with pytest.raises(InputError) as e:
        validate_aks_pool_args("a100", args(**kw))
    assert e.value.path == path
    assert e.value.problem.startswith(problem)


# -- What AKS refuses at create, and what it cannot change after --------------------------------


def _ephemeral_cases():
    """Every catalog size with a known temp disk (MicrosoftDocs/azure-compute-docs size pages, no
    cache disk listed): an ephemeral OS disk of the temp disk's size is taken, one GiB more is
    refused (concepts-storage.md "Ephemeral OS disk"), within AKS's 30..2048 GiB."""
    from components.model.nodes.azure_vms import AZURE_GPU_VMS

    for vm in AZURE_GPU_VMS.values():
        if vm.temp_disk_gib is not None and vm.temp_disk_gib < 2048:
            yield pytest.param(vm.name, vm.temp_disk_gib, id=vm.name)


@pytest.mark.parametrize("vm_size,temp", list(_ephemeral_cases()))
def test_an_ephemeral_os_disk_must_fit_the_temp_disk(vm_size, temp):
    ok = args(vm_size=vm_size, os_disk_type="Ephemeral", os_disk_size_gb=max(temp, 30))
    validate_aks_pool_args("p", ok)
    with pytest.raises(InputError) as e:
        validate_aks_pool_args(
            "p", args(vm_size=vm_size, os_disk_type="Ephemeral", os_disk_size_gb=temp + 1)
        )
    assert e.value.path == "args.os_disk_size_gb"
    # a managed OS disk of that size is fine
    validate_aks_pool_args(
        "p", args(vm_size=vm_size, os_disk_type="Managed", os_disk_size_gb=temp + 1)
    )


def test_the_a100_ephemeral_disk_error():
    with pytest.raises(InputError) as e:
        validate_aks_pool_args("p", args(os_disk_type="Ephemeral", os_disk_size_gb=256))
    assert str(e.value) == (
        "args.os_disk_size_gb: an ephemeral OS disk of 256 GiB does not fit "
        "Standard_NC24ads_A100_v4's 64 GiB temp disk; AKS refuses it at create (allowed: "
        "os_disk_size_gb at most 64, or os_disk_type Managed)"
    )


@pytest.mark.parametrize(
    "price,taken",
    [
        # spot-node-pool.md Limitations: -1 or a positive value with up to five decimal places
        (-1, True),
        (0.98765, True),
        (0.00001, True),
        (2, True),
        (1.5, True),
        (0.987654, False),
        (0.000001, False),
    ],
)
def test_spot_max_price_has_at_most_five_decimals(price, taken):
    a = args(spot=True, spot_max_price=price)
    if taken:
        assert agent_pool_inputs(validate_aks_pool_args("p", a), a)["spot_max_price"] == price
        return
    with pytest.raises(InputError) as e:
        validate_aks_pool_args("p", a)
    assert e.value.path == "args.spot_max_price"
    assert e.value.problem == (
        f"spot max price {price!r} has more than 5 decimals, which AKS refuses"
    )


def test_replaced_fields_are_agent_pool_properties():
    """Each `replace_on_changes` path names a property of pulumi-azure-native 3.29.0's AgentPool
    (its `pulumi.getter` names), and `gpuProfile.driver` one of GPUProfile's."""
    from pulumi import _types
    from pulumi_azure_native import containerservice

    from components.pools.aks import REPLACE_ON_CHANGES

    def names(cls):
        return {
            getattr(v.fget, _types._PULUMI_NAME, None)
            for v in vars(cls).values()
            if isinstance(v, property)
        }

    top = {p.split(".")[0] for p in REPLACE_ON_CHANGES}
    assert top <= names(containerservice.AgentPool)
    assert "driver" in names(containerservice.outputs.GPUProfileResponse)


def test_extended_resource_toleration_false_is_refused():
    """AKS FAQ (faq.yml): the admission controllers, ExtendedResourceToleration among them,
    cannot be changed."""
    with pytest.raises(InputError) as e:
        validate_aks_pool_args("p", args(extended_resource_toleration=False))
    assert e.value.path == "args.extended_resource_toleration"
    assert "AKS runs the ExtendedResourceToleration admission plugin" in e.value.problem
