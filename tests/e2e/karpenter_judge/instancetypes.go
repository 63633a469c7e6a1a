package main

import (
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// instanceTypeInput is one instance type as the cloud provider would hand it to the scheduler: an
// EC2 instance type (aws/karpenter-provider-aws v1.15.0 pkg/providers/instancetype/types.go
// NewInstanceType; provider_aws.go) or an Azure VM size (Azure/karpenter-provider-azure v1.14.2
// pkg/providers/instancetype/instancetype.go NewInstanceType; provider_azure.go, build tag azure).
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
