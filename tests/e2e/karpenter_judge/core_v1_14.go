//go:build azure

package main

// What differs in the core the Azure build links (go.azure.mod: sigs.k8s.io/karpenter v1.14.0, the
// version Azure/karpenter-provider-azure v1.14.2 pins) from the AWS build's (core_v1_15.go). Line
// numbers are v1.14.0's pkg/controllers/provisioning/provisioner.go.

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
)

// newProvisioner: NewProvisioner (:94-97, no virtual pod cache before v1.14.1) with no device
// allocation controller.
func newProvisioner(kube client.Client, recorder events.Recorder, cp cloudprovider.CloudProvider, cluster *state.Cluster, clk clock.Clock) *provisioning.Provisioner {
	return provisioning.NewProvisioner(kube, recorder, cp, cluster, clk, nil)
}

// injectDefaultSpread: v1.14.0 has no cluster default topology spread (v1.15.0 added it).
func injectDefaultSpread(context.Context, client.Client, []*corev1.Pod) {}
