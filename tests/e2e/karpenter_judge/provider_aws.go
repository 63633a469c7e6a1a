//go:build !azure

package main

// The AWS half of the judge (the default build): the AWS provider's label registrations and its
// instance types' requirements and offerings.

import (
	"fmt"
	"strconv"

	// The AWS provider's API package registers its well-known labels, restricted label domains and
	// the reservation-ID label with Karpenter's core at init (aws v1.15.0 pkg/apis/v1/labels.go:35-78,
	// doc.go:30-40), exactly as in the controller binary.
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// providerModule: the cloud provider module whose registrations this build links.
const providerModule = "github.com/aws/karpenter-provider-aws"

// setupProvider: what the AWS controller does at start beyond its API package's init.
func setupProvider() {
	// The AWS controller normalizes the EBS CSI zone label to the zone label
	// (aws v1.15.0 pkg/operator/operator.go:81-83); the judge does not link that package.
	karpv1.NormalizedLabels["topology.ebs.csi.aws.com/zone"] = corev1.LabelTopologyZone
}

// absentMeansDoesNotExist: the AWS labels computeRequirements starts as DoesNotExist and fills in
// only when the instance type has the attribute (aws v1.15.0 pkg/providers/instancetype/types.go
// :353-375, filled at :407-465). An input that leaves one out describes an instance without it.
var absentMeansDoesNotExist = []string{
	corev1.LabelWindowsBuild,
	awsv1.LabelInstanceCPUManufacturer,
	awsv1.LabelInstanceCPUSustainedClockSpeedMhz,
	awsv1.LabelInstanceEBSBandwidth,
	awsv1.LabelInstanceNetworkBandwidth,
	awsv1.LabelInstanceCategory,
	awsv1.LabelInstanceFamily,
	awsv1.LabelInstanceGeneration,
	awsv1.LabelInstanceLocalNVME,
	awsv1.LabelInstanceSize,
	awsv1.LabelInstanceGPUName,
	awsv1.LabelInstanceGPUManufacturer,
	awsv1.LabelInstanceGPUCount,
	awsv1.LabelInstanceGPUMemory,
	awsv1.LabelInstanceAcceleratorName,
	awsv1.LabelInstanceAcceleratorManufacturer,
	awsv1.LabelInstanceAcceleratorCount,
}

// derivedFromOfferings: keys the judge computes from the offerings, as AWS does (types.go:171-245);
// an input label for them would be a second, conflicting source.
var derivedFromOfferings = map[string]bool{
	karpv1.CapacityTypeLabelKey:                 true,
	corev1.LabelTopologyZone:                    true,
	awsv1.LabelTopologyZoneID:                   true,
	awsv1.LabelCapacityReservationID:            true,
	awsv1.LabelCapacityReservationType:          true,
	awsv1.LabelCapacityReservationInterruptible: true,
}

// requiredLabels: AWS always sets these (types.go:189-190); the judge will not guess them.
var requiredLabels = []string{corev1.LabelArchStable, corev1.LabelOSStable}

func buildInstanceType(in instanceTypeInput) (*cloudprovider.InstanceType, error) {
	if in.Name == "" {
		return nil, fmt.Errorf("instance type without a name")
	}
	if len(in.Capacity) == 0 {
		return nil, fmt.Errorf("instance type %s: no capacity", in.Name)
	}
	if len(in.Offerings) == 0 {
		return nil, fmt.Errorf("instance type %s: no offerings", in.Name)
	}
	for _, key := range requiredLabels {
		if in.Labels[key] == "" {
			return nil, fmt.Errorf("instance type %s: label %s is required (AWS always sets it)", in.Name, key)
		}
	}
	reqs := scheduling.NewRequirements(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, in.Name))
	for key, value := range in.Labels {
		if derivedFromOfferings[key] {
			return nil, fmt.Errorf("instance type %s: label %s comes from the offerings, not from labels", in.Name, key)
		}
		if key == corev1.LabelInstanceTypeStable && value != in.Name {
			return nil, fmt.Errorf("instance type %s: label %s=%s differs from its name", in.Name, key, value)
		}
		reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, value))
	}
	for _, r := range in.Requirements {
		if derivedFromOfferings[r.Key] {
			return nil, fmt.Errorf("instance type %s: requirement on %s comes from the offerings", in.Name, r.Key)
		}
		if err := checkOperator(r); err != nil {
			return nil, fmt.Errorf("instance type %s: %w", in.Name, err)
		}
		reqs.Add(scheduling.NewRequirement(r.Key, r.Operator, r.Values...))
	}

	offerings, err := buildOfferings(in)
	if err != nil {
		return nil, err
	}
	var capacityTypes, zones, zoneIDs, resIDs, resTypes, resInterruptible []string
	for i, o := range in.Offerings {
		capacityTypes = append(capacityTypes, o.CapacityType)
		zones = append(zones, o.Zone)
		zoneIDs = append(zoneIDs, o.ZoneID)
		if o.CapacityType == karpv1.CapacityTypeReserved {
			resIDs = append(resIDs, o.ReservationID)
			resTypes = append(resTypes, offerings[i].Requirements.Get(awsv1.LabelCapacityReservationType).Any())
			resInterruptible = append(resInterruptible, strconv.FormatBool(o.Interruptible))
		}
	}
	// types.go:171-195: the capacity types and zones the instance type is offered in.
	reqs.Add(scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, uniqSorted(capacityTypes)...))
	reqs.Add(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, uniqSorted(zones)...))
	if ids := uniqSorted(zoneIDs); len(ids) > 0 { // types.go:221-230
		reqs.Add(scheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, ids...))
	}
	if len(resIDs) > 0 { // types.go:231-245
		reqs.Add(scheduling.NewRequirement(awsv1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, uniqSorted(resIDs)...))
		reqs.Add(scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpIn, uniqSorted(resTypes)...))
		reqs.Add(scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpIn, uniqSorted(resInterruptible)...))
	} else {
		for _, key := range []string{awsv1.LabelCapacityReservationID, awsv1.LabelCapacityReservationType, awsv1.LabelCapacityReservationInterruptible} {
			reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
		}
	}
	for _, key := range absentMeansDoesNotExist {
		if !reqs.Has(key) {
			reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
		}
	}
	return &cloudprovider.InstanceType{
		Name:         in.Name,
		Requirements: reqs,
		Offerings:    offerings,
		Capacity:     in.Capacity,
		Overhead: &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      in.Overhead.KubeReserved,
			SystemReserved:    in.Overhead.SystemReserved,
			EvictionThreshold: in.Overhead.EvictionThreshold,
		},
	}, nil
}

// buildOfferings shapes each offering's requirements as the AWS resolvers do (aws v1.15.0): on-demand
// and spot in pkg/providers/instancetype/offering/base_resolver.go:127-139, reserved in
// reserved_capacity_resolver.go:91-108. Since v1.15.0 a reserved offering's Available is its health
// alone: a full reservation (reservationCapacity 0) stays available with no capacity, and core
// v1.15.0 tells the two apart (cloudprovider/types.go Offering.Launchable; a pod whose only
// compatible offerings are full reservations is deferred, scheduling/nodeclaim.go:373-397).
func buildOfferings(in instanceTypeInput) (cloudprovider.Offerings, error) {
	var out cloudprovider.Offerings
	for _, o := range in.Offerings {
		if o.Zone == "" {
			return nil, fmt.Errorf("instance type %s: offering without a zone", in.Name)
		}
		available := o.Available == nil || *o.Available
		reqs := scheduling.NewRequirements(
			scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, o.CapacityType),
			scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, o.Zone),
		)
		switch o.CapacityType {
		case karpv1.CapacityTypeOnDemand, karpv1.CapacityTypeSpot:
			if o.ReservationID != "" || o.ReservationCapacity != 0 {
				return nil, fmt.Errorf("instance type %s: a %s offering has no reservation", in.Name, o.CapacityType)
			}
			for _, key := range []string{awsv1.LabelCapacityReservationID, awsv1.LabelCapacityReservationType, awsv1.LabelCapacityReservationInterruptible} {
				reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
			}
		case karpv1.CapacityTypeReserved:
			if o.ReservationID == "" {
				return nil, fmt.Errorf("instance type %s: a reserved offering needs reservationID", in.Name)
			}
			resType := o.ReservationType
			if resType == "" {
				resType = string(awsv1.CapacityReservationTypeDefault)
			}
			reqs.Add(
				scheduling.NewRequirement(awsv1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, o.ReservationID),
				scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpIn, resType),
				scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpIn, strconv.FormatBool(o.Interruptible)),
			)
		default:
			return nil, fmt.Errorf("instance type %s: capacityType %q is not on-demand, spot or reserved", in.Name, o.CapacityType)
		}
		if o.ZoneID != "" {
			reqs.Add(scheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, o.ZoneID))
		}
		out = append(out, &cloudprovider.Offering{
			Requirements:        reqs,
			Price:               o.Price,
			Available:           available,
			ReservationCapacity: o.ReservationCapacity,
		})
	}
	return out, nil
}
