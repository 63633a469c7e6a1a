package main

import (
	"fmt"
	"sort"
	"strconv"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// instanceTypeInput is one EC2 instance type as the AWS provider would hand it to the scheduler
// (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go NewInstanceType).
type instanceTypeInput struct {
	Name     string              `json:"name"`
	Capacity corev1.ResourceList `json:"capacity"`
	Overhead struct {
		KubeReserved      corev1.ResourceList `json:"kubeReserved,omitempty"`
		SystemReserved    corev1.ResourceList `json:"systemReserved,omitempty"`
		EvictionThreshold corev1.ResourceList `json:"evictionThreshold,omitempty"`
	} `json:"overhead"`
	// Labels: single-valued labels of the instance type (each becomes an `In [value]` requirement).
	Labels map[string]string `json:"labels,omitempty"`
	// Requirements: further requirements, for multi-valued keys or explicit DoesNotExist.
	Requirements []corev1.NodeSelectorRequirement `json:"requirements,omitempty"`
	Offerings    []offeringInput                  `json:"offerings"`
}

type offeringInput struct {
	CapacityType        string  `json:"capacityType"`
	Zone                string  `json:"zone"`
	ZoneID              string  `json:"zoneID,omitempty"`
	Price               float64 `json:"price"`
	Available           *bool   `json:"available,omitempty"` // default true
	ReservationID       string  `json:"reservationID,omitempty"`
	ReservationType     string  `json:"reservationType,omitempty"` // default "default"
	Interruptible       bool    `json:"interruptible,omitempty"`
	ReservationCapacity int     `json:"reservationCapacity,omitempty"`
}

// absentMeansDoesNotExist: the AWS labels computeRequirements starts as DoesNotExist and fills in
// only when the instance type has the attribute (aws v1.14.1 pkg/providers/instancetype/types.go
// :193-215, filled at :247-305). An input that leaves one out describes an instance without it.
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

func uniqSorted(values []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

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

// buildOfferings shapes each offering's requirements as the AWS resolvers do: on-demand and spot in
// pkg/providers/instancetype/offering/base_resolver.go:127-139, reserved in
// reserved_capacity_resolver.go:90-103 (a reserved offering is available only with capacity left).
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
			available = available && o.ReservationCapacity != 0
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

func checkOperator(r corev1.NodeSelectorRequirement) error {
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		return nil
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) != 0 {
			return fmt.Errorf("requirement %s %s takes no values", r.Key, r.Operator)
		}
		return nil
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return fmt.Errorf("requirement %s %s takes one value", r.Key, r.Operator)
		}
		if _, err := strconv.Atoi(r.Values[0]); err != nil {
			return fmt.Errorf("requirement %s %s: %q is not an integer", r.Key, r.Operator, r.Values[0])
		}
		return nil
	}
	return fmt.Errorf("requirement %s: operator %q is not supported", r.Key, r.Operator)
}
