//go:build azure

package main

// The Azure half of the judge (`go build -tags azure`): Karpenter on Azure's label registrations
// and its VM sizes' requirements and offerings, as Azure/karpenter-provider-azure v1.14.2 builds
// them. Line numbers are that tag's. What a VM size's name says (family, series, version, GPU
// name and maker, whether AKS counts it a GPU size) the judge works out itself with the
// provider's own code (skewer's name parse, pkg/utils and its supported-gpus.yaml); the numbers
// the SKU API gives (vCPUs, memory, GPUs) and the overhead come in the request, from our catalog.

import (
	"fmt"

	"github.com/Azure/karpenter-provider-azure/pkg/apis/v1beta1" // its init registers the labels
	"github.com/Azure/karpenter-provider-azure/pkg/utils"
	"github.com/Azure/skewer"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// providerModule: the cloud provider module whose registrations this build links.
const providerModule = "github.com/Azure/karpenter-provider-azure"

// The cluster's region and the cluster label value: one of each, as in one AKS cluster.
const (
	azureRegion  = "eastus2"
	azureCluster = "mc_rg_aks_eastus2"
)

// setupProvider: pkg/apis/v1beta1/labels.go init (:29-49) has run at link time: the restricted
// domain karpenter.azure.com, AzureWellKnownLabels, and WellKnownValuesForRequirements (capacity
// types on-demand and spot only, ...). The Azure operator adds nothing the scheduler reads.
func setupProvider() {}

// azureInputLabels: the labels the request gives (the SKU API's numbers, the node class's image
// family, the architecture); every other label the judge computes.
var azureInputLabels = map[string]bool{
	corev1.LabelArchStable:   true,
	corev1.LabelOSStable:     true,
	v1beta1.LabelSKUCPU:      true,
	v1beta1.LabelSKUMemory:   true,
	v1beta1.AKSLabelCPU:      true,
	v1beta1.AKSLabelMemory:   true,
	v1beta1.LabelSKUGPUCount: true,
	v1beta1.AKSLabelOSSKU:    true,
}

func buildInstanceType(in instanceTypeInput) (*cloudprovider.InstanceType, error) {
	if in.Name == "" {
		return nil, fmt.Errorf("instance type without a name")
	}
	if len(in.Capacity) == 0 || len(in.Offerings) == 0 {
		return nil, fmt.Errorf("instance type %s: needs capacity and offerings", in.Name)
	}
	if len(in.Requirements) != 0 {
		return nil, fmt.Errorf("instance type %s: the Azure judge computes every requirement itself", in.Name)
	}
	for key := range in.Labels {
		if !azureInputLabels[key] {
			return nil, fmt.Errorf("instance type %s: label %s is computed by the judge, not given", in.Name, key)
		}
	}
	for _, key := range []string{corev1.LabelArchStable, v1beta1.LabelSKUCPU, v1beta1.LabelSKUMemory, v1beta1.LabelSKUGPUCount, v1beta1.AKSLabelOSSKU} {
		if in.Labels[key] == "" {
			return nil, fmt.Errorf("instance type %s: label %s is required", in.Name, key)
		}
	}
	if in.Labels[v1beta1.AKSLabelCPU] != in.Labels[v1beta1.LabelSKUCPU] || in.Labels[v1beta1.AKSLabelMemory] != in.Labels[v1beta1.LabelSKUMemory] {
		return nil, fmt.Errorf("instance type %s: the kubernetes.azure.com sku-cpu / sku-memory labels are the karpenter.azure.com ones (instancetype.go:174-177)", in.Name)
	}
	size := in.Name
	if len(size) > len("Standard_") && size[:len("Standard_")] == "Standard_" {
		size = size[len("Standard_"):]
	}
	name := in.Name
	sku := &skewer.SKU{Name: &name, Size: &size}
	vmsize, err := sku.GetVMSize() // instancetypes.go:171
	if err != nil {
		return nil, fmt.Errorf("instance type %s: skewer cannot parse the size: %w", in.Name, err)
	}

	offerings, err := azureOfferings(in)
	if err != nil {
		return nil, err
	}
	var zones, capacityTypes, scopes, ultra []string
	for _, o := range offerings.Available() {
		zones = append(zones, o.Requirements.Get(corev1.LabelTopologyZone).Any())
		capacityTypes = append(capacityTypes, o.Requirements.Get(karpv1.CapacityTypeLabelKey).Any())
		scopes = append(scopes, o.Requirements.Get(v1beta1.LabelPlacementScope).Any())
		ultra = append(ultra, o.Requirements.Get(v1beta1.LabelUltraSSD).Values()...)
	}
	// instancetype.go computeRequirements :151-202 (the SKU API's capabilities we do not model:
	// premium storage and accelerated networking true, no ephemeral OS disk, no Hyper-V label).
	gpuCount := in.Labels[v1beta1.LabelSKUGPUCount]
	if !utils.IsGPUSKU(in.Name) { // gpuTotalCount :299-308
		gpuCount = "0"
	}
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, in.Name),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, in.Labels[corev1.LabelArchStable]),
		scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, string(corev1.Linux)),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...),
		scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, azureRegion),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityTypes...),
		scheduling.NewRequirement(v1beta1.LabelPlacementScope, corev1.NodeSelectorOpIn, scopes...),
		scheduling.NewRequirement(v1beta1.LabelUltraSSD, corev1.NodeSelectorOpIn, ultra...),
		scheduling.NewRequirement(v1beta1.LabelSKUCPU, corev1.NodeSelectorOpIn, in.Labels[v1beta1.LabelSKUCPU]),
		scheduling.NewRequirement(v1beta1.LabelSKUMemory, corev1.NodeSelectorOpIn, in.Labels[v1beta1.LabelSKUMemory]),
		scheduling.NewRequirement(v1beta1.AKSLabelCPU, corev1.NodeSelectorOpIn, in.Labels[v1beta1.LabelSKUCPU]),
		scheduling.NewRequirement(v1beta1.AKSLabelMemory, corev1.NodeSelectorOpIn, in.Labels[v1beta1.LabelSKUMemory]),
		scheduling.NewRequirement(v1beta1.LabelSKUGPUCount, corev1.NodeSelectorOpIn, gpuCount),
		scheduling.NewRequirement(v1beta1.LabelSKUGPUManufacturer, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUGPUName, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.AKSLabelCluster, corev1.NodeSelectorOpIn, azureCluster),
		scheduling.NewRequirement(v1beta1.AKSLabelMode, corev1.NodeSelectorOpIn, v1beta1.ModeSystem, v1beta1.ModeUser),
		scheduling.NewRequirement(v1beta1.AKSLabelScaleSetPriority, corev1.NodeSelectorOpIn, v1beta1.ScaleSetPriorityRegular, v1beta1.ScaleSetPrioritySpot),
		scheduling.NewRequirement(v1beta1.AKSLabelPriority, corev1.NodeSelectorOpIn, v1beta1.PriorityRegular, v1beta1.PrioritySpot),
		scheduling.NewRequirement(v1beta1.AKSLabelOSSKU, corev1.NodeSelectorOpIn, in.Labels[v1beta1.AKSLabelOSSKU]),
		scheduling.NewRequirement(v1beta1.AKSLabelFIPSEnabled, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUName, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUFamily, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUSeries, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUVersion, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUStorageEphemeralOSMaxSize, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(v1beta1.LabelSKUStoragePremiumCapable, corev1.NodeSelectorOpIn, "true"),
		scheduling.NewRequirement(v1beta1.LabelSKUAcceleratedNetworking, corev1.NodeSelectorOpIn, "true"),
		scheduling.NewRequirement(v1beta1.LabelSKUHyperVGeneration, corev1.NodeSelectorOpDoesNotExist),
	)
	reqs[v1beta1.LabelSKUName].Insert(sku.GetName()) // :205
	reqs[v1beta1.LabelSKUFamily].Insert(vmsize.Family)
	reqs[v1beta1.LabelSKUSeries].Insert(vmsize.Series)
	// setRequirementsGPU :238-251
	switch utils.GetGPUManufacturer(sku.GetName()) {
	case v1beta1.ManufacturerNvidia:
		reqs[v1beta1.LabelSKUGPUManufacturer].Insert(v1beta1.ManufacturerNvidia)
		if vmsize.AcceleratorType != nil {
			reqs[v1beta1.LabelSKUGPUName].Insert(*vmsize.AcceleratorType)
		}
	case v1beta1.ManufacturerAMD:
		reqs[v1beta1.LabelSKUGPUManufacturer].Insert(v1beta1.ManufacturerAMD)
		if vmsize.AcceleratorType != nil {
			reqs[v1beta1.LabelSKUGPUName].Insert(*vmsize.AcceleratorType)
		}
	}
	if version := utils.ExtractVersionFromVMSize(vmsize); version != "" { // setRequirementsVersion :254-260
		reqs[v1beta1.LabelSKUVersion].Insert(version)
	}

	// computeCapacity :269-278: nvidia.com/gpu only on the sizes AKS installs an NVIDIA driver for.
	capacity := in.Capacity.DeepCopy()
	if !utils.IsNvidiaEnabledSKU(in.Name) {
		capacity["nvidia.com/gpu"] = resource.MustParse("0")
	}
	return &cloudprovider.InstanceType{
		Name:         in.Name,
		Requirements: reqs,
		Offerings:    offerings,
		Capacity:     capacity,
		Overhead: &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      in.Overhead.KubeReserved,
			SystemReserved:    in.Overhead.SystemReserved,
			EvictionThreshold: in.Overhead.EvictionThreshold,
		},
	}, nil
}

// azureOfferings: instancetypes.go createOfferings :246-306 for each offering of the request (its
// capacity type and zone): on-demand on regular VMs, spot on spot VMs, both with the zone's
// placement scope and ultra SSD "false" (no ultra SSD capability in our catalog).
func azureOfferings(in instanceTypeInput) (cloudprovider.Offerings, error) {
	var out cloudprovider.Offerings
	for _, o := range in.Offerings {
		if o.Zone == "" {
			return nil, fmt.Errorf("instance type %s: offering without a zone", in.Name)
		}
		if o.ReservationID != "" || o.ReservationCapacity != 0 || o.ZoneID != "" || o.Interruptible {
			return nil, fmt.Errorf("instance type %s: an Azure offering has no reservation or zone ID", in.Name)
		}
		var scaleSetPriority, priority string
		switch o.CapacityType {
		case karpv1.CapacityTypeOnDemand:
			scaleSetPriority, priority = v1beta1.ScaleSetPriorityRegular, v1beta1.PriorityRegular
		case karpv1.CapacityTypeSpot:
			scaleSetPriority, priority = v1beta1.ScaleSetPrioritySpot, v1beta1.PrioritySpot
		default:
			return nil, fmt.Errorf("instance type %s: capacityType %q is not on-demand or spot (Karpenter on Azure offers no other)", in.Name, o.CapacityType)
		}
		scope := v1beta1.PlacementScopeZonal // zones.PlacementScopeForZone: a zone is zonal
		out = append(out, &cloudprovider.Offering{
			Requirements: scheduling.NewRequirements(
				scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, o.CapacityType),
				scheduling.NewRequirement(v1beta1.AKSLabelScaleSetPriority, corev1.NodeSelectorOpIn, scaleSetPriority),
				scheduling.NewRequirement(v1beta1.AKSLabelPriority, corev1.NodeSelectorOpIn, priority),
				scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, o.Zone),
				scheduling.NewRequirement(v1beta1.LabelPlacementScope, corev1.NodeSelectorOpIn, scope),
				scheduling.NewRequirement(v1beta1.LabelUltraSSD, corev1.NodeSelectorOpIn, "false"),
			),
			Price:     o.Price,
			Available: o.Available == nil || *o.Available,
		})
	}
	return out, nil
}
