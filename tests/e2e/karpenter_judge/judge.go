package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/awslabs/operatorpkg/status"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	scheduler "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	karpopts "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
)

// The line numbers below are sigs.k8s.io/karpenter v1.15.0 (the version aws/karpenter-provider-aws
// v1.15.0 pins, the AWS build's): pkg/controllers/provisioning/provisioner.go unless named. The
// Azure build links v1.14.0 (go.azure.mod); where the two differ in what is called here,
// core_v1_14.go and core_v1_15.go hold the difference.

type podInput struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Spec      corev1.PodSpec    `json:"spec"`
}

type podResult struct {
	Pod           string   `json:"pod"`
	OnlyNodePool  string   `json:"onlyNodePool,omitempty"` // set when each pool is judged alone
	Scheduled     bool     `json:"scheduled"`
	NodePool      string   `json:"nodePool,omitempty"`
	InstanceTypes []string `json:"instanceTypes"`
	CapacityTypes []string `json:"capacityTypes"`
	Error         string   `json:"error,omitempty"`
}

type nodePoolStatus struct {
	Name          string   `json:"name"`
	Considered    bool     `json:"considered"`
	Reason        string   `json:"reason,omitempty"`
	InstanceTypes []string `json:"instanceTypes"` // what the cloud provider hands the scheduler for it
}

// judgeCloudProvider hands the scheduler the instance types of the input; nothing else of the
// cloud provider interface is reached by a scheduling simulation without existing nodes.
type judgeCloudProvider struct {
	byPool map[string][]*cloudprovider.InstanceType
}

var errNotSimulated = errors.New("not part of the scheduling simulation")

func (c *judgeCloudProvider) Create(context.Context, *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	return nil, errNotSimulated
}
func (c *judgeCloudProvider) Delete(context.Context, *karpv1.NodeClaim) error { return errNotSimulated }
func (c *judgeCloudProvider) Get(context.Context, string) (*karpv1.NodeClaim, error) {
	return nil, errNotSimulated
}
func (c *judgeCloudProvider) List(context.Context) ([]*karpv1.NodeClaim, error) { return nil, nil }
func (c *judgeCloudProvider) GetInstanceTypes(_ context.Context, np *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return c.byPool[np.Name], nil
}
func (c *judgeCloudProvider) IsDrifted(context.Context, *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	return "", nil
}

// Reboot: core v1.15.0 pkg/cloudprovider/types.go:136-142 added it to the interface (the Azure
// build's core, v1.14.0, lacks it; an extra method is harmless there).
func (c *judgeCloudProvider) Reboot(context.Context, *karpv1.NodeClaim, string) error {
	return errNotSimulated
}
func (c *judgeCloudProvider) RepairPolicies() []cloudprovider.RepairPolicy { return nil }
func (c *judgeCloudProvider) Name() string                                 { return "karpenter-judge" }
func (c *judgeCloudProvider) GetSupportedNodeClasses() []status.Object     { return nil }

// controllerOptions: the controller's own flag defaults (options.go AddFlags), plus any flags the
// case gives. main clears the environment first, so no env var changes a default.
func controllerOptions(args []string) (*karpopts.Options, error) {
	o := &karpopts.Options{}
	fs := &karpopts.FlagSet{FlagSet: newFlagSet()}
	o.AddFlags(fs)
	if err := o.Parse(fs, args...); err != nil {
		return nil, err
	}
	if !o.IgnoreDRARequests {
		return nil, fmt.Errorf("--ignore-dra-requests=false needs DRA device simulation, which the judge does not build")
	}
	if o.FeatureGates.NodeOverlay || o.FeatureGates.StaticCapacity || o.FeatureGates.CapacityBuffer {
		return nil, fmt.Errorf("the NodeOverlay, StaticCapacity and CapacityBuffer feature gates are not simulated")
	}
	return o, nil
}

func newPod(in podInput) (*corev1.Pod, error) {
	if in.Name == "" {
		return nil, fmt.Errorf("pod without a name")
	}
	ns := in.Namespace
	if ns == "" {
		ns = "default"
	}
	if len(in.Spec.Containers) == 0 {
		return nil, fmt.Errorf("pod %s: no containers", in.Name)
	}
	// A pending pod the scheduler marked unschedulable: what the provisioner picks up
	// (pkg/utils/pod IsProvisionable).
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: ns, Labels: in.Labels, UID: uuid.NewUUID()},
		Spec:       *in.Spec.DeepCopy(),
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			}},
		},
	}, nil
}

// daemonSetPods: the pods the provisioner derives from the cluster's DaemonSets (getDaemonSetPods
// :534-556 with no DaemonSet pod in the cluster yet): daemonset.PodForDaemonSet (limits merged into
// absent requests), and the template's required node affinity kept as the DaemonSet controller
// keeps it.
func daemonSetPods(sets []appsv1.DaemonSet) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range sets {
		d := sets[i].DeepCopy()
		if d.Namespace == "" {
			d.Namespace = "default"
		}
		pod := daemonset.PodForDaemonSet(d)
		if a := d.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			if pod.Spec.Affinity == nil {
				pod.Spec.Affinity = &corev1.Affinity{}
			}
			if pod.Spec.Affinity.NodeAffinity == nil {
				pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
			}
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		out = append(out, pod)
	}
	return out
}

// judge runs one provisioning round for one pod against the given NodePools, the way
// Provisioner.Schedule (:368-476) and Provisioner.NewScheduler (:271-366) do with no existing nodes,
// the given DaemonSets' pods, no volumes and no DRA allocator.
func judge(ctx context.Context, opts *karpopts.Options, pools []*karpv1.NodePool, its map[string][]*cloudprovider.InstanceType, daemons []*corev1.Pod, in podInput) (podResult, error) {
	res := podResult{Pod: in.Name, InstanceTypes: []string{}, CapacityTypes: []string{}}
	pod, err := newPod(in)
	if err != nil {
		return res, err
	}
	clk := clock.RealClock{}
	kube := fakeclient.NewFakeClient()
	cp := &judgeCloudProvider{byPool: its}
	cluster := state.NewCluster(clk, kube, cp)
	recorder := events.NewRecorder(&record.FakeRecorder{})

	// GetPendingPods (:202-231): a pod that fails validation is ignored, with this error.
	prov := newProvisioner(kube, recorder, cp, cluster, clk)
	if err := prov.Validate(ctx, pod); err != nil {
		res.Error = fmt.Sprintf("ignoring pod, %s", err)
		return res, nil
	}

	// NewScheduler (:282-299): static, not Ready and deleting pools are left out; the rest are
	// ordered by weight (then name). A pool whose RuntimeValidate fails is not Ready
	// (pkg/controllers/nodepool/validation/controller.go:65).
	var considered []*karpv1.NodePool
	for _, np := range pools {
		if nodepoolutils.IsStatic(np) || np.RuntimeValidate(ctx) != nil || !np.DeletionTimestamp.IsZero() {
			continue
		}
		considered = append(considered, np)
	}
	if len(considered) == 0 {
		// Schedule (:421-430): ErrNodePoolsNotFound marks every pod with this error.
		res.Error = "no dynamic nodepools found"
		return res, nil
	}
	nodepoolutils.OrderByWeight(considered)
	// :301-320: a pool with no instance types is skipped.
	resolved := map[string][]*cloudprovider.InstanceType{}
	for _, np := range considered {
		if got, _ := cp.GetInstanceTypes(ctx, np); len(got) > 0 {
			resolved[np.Name] = got
		}
	}

	// Schedule (:406-413): the options the provisioner passes to the scheduler.
	schedOpts := []scheduler.Options{
		scheduler.DisableReservedCapacityFallback,
		scheduler.NumConcurrentReconciles(int(math.Ceil(float64(opts.CPURequests) / 1000.0))),
		scheduler.MinValuesPolicy(opts.MinValuesPolicy),
	}
	if opts.PreferencePolicy == karpopts.PreferencePolicyIgnore {
		schedOpts = append(schedOpts, scheduler.IgnorePreferences)
	}
	pods := []*corev1.Pod{pod}
	injectDefaultSpread(ctx, kube, pods) // NewScheduler (:330-336)
	topology, err := scheduler.NewTopology(ctx, kube, cluster, nil, considered, resolved, pods, schedOpts...)
	if err != nil {
		return res, fmt.Errorf("tracking topology counts, %w", err)
	}
	// No volume requirements and no DRA allocator (nil when IGNORE_DRA_REQUESTS, :350-362).
	s := scheduler.NewScheduler(ctx, kube, considered, cluster, nil, topology, resolved, daemons, recorder, clk, nil, nil, schedOpts...)

	solveCtx, cancel := context.WithTimeout(ctx, time.Minute) // Schedule (:432-434)
	defer cancel()
	results, err := s.Solve(solveCtx, pods)
	if err != nil {
		return res, fmt.Errorf("solve: %w", err)
	}
	results = results.TruncateInstanceTypes(ctx, scheduler.MaxInstanceTypes) // :441
	// Solve keys errors by the pod it was given, but places a deep copy (scheduling/scheduler.go:505,510):
	// match by UID.
	for p, perr := range results.PodErrors {
		if p.UID == pod.UID {
			res.Error = perr.Error()
			return res, nil
		}
	}
	for _, nc := range results.NewNodeClaims {
		for _, p := range nc.Pods {
			if p.UID != pod.UID {
				continue
			}
			// Create (:488): the NodeClaim object Karpenter would create for it.
			claim := nc.ToNodeClaim()
			res.Scheduled = true
			res.NodePool = nc.NodePoolName
			for _, r := range claim.Spec.Requirements {
				switch r.Key {
				case corev1.LabelInstanceTypeStable:
					res.InstanceTypes = sortedCopy(r.Values)
				case karpv1.CapacityTypeLabelKey:
					res.CapacityTypes = sortedCopy(r.Values)
				}
			}
			return res, nil
		}
	}
	return res, fmt.Errorf("the scheduler returned neither an error nor a NodeClaim for pod %s", in.Name)
}

func sortedCopy(values []string) []string {
	out := append([]string{}, values...)
	sort.Strings(out)
	return out
}

// describePools says, per input pool, whether the provisioner would consider it and which
// instance types the cloud provider hands it.
func describePools(ctx context.Context, pools []*karpv1.NodePool, its map[string][]*cloudprovider.InstanceType) []nodePoolStatus {
	var out []nodePoolStatus
	for _, np := range pools {
		st := nodePoolStatus{Name: np.Name, Considered: true, InstanceTypes: []string{}}
		for _, it := range its[np.Name] {
			st.InstanceTypes = append(st.InstanceTypes, it.Name)
		}
		sort.Strings(st.InstanceTypes)
		switch {
		case nodepoolutils.IsStatic(np):
			st.Considered, st.Reason = false, "static NodePool (spec.replicas): not provisioned by the scheduler"
		case !np.DeletionTimestamp.IsZero():
			st.Considered, st.Reason = false, "being deleted"
		default:
			if err := np.RuntimeValidate(ctx); err != nil {
				st.Considered, st.Reason = false, "not Ready: validation failed: "+err.Error()
			} else if len(st.InstanceTypes) == 0 {
				st.Considered, st.Reason = false, "no instance types resolved"
			}
		}
		out = append(out, st)
	}
	return out
}
