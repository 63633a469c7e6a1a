// Command karpenter_judge asks Karpenter's own provisioning scheduler (sigs.k8s.io/karpenter
// pkg/controllers/provisioning/scheduling, at the version its provider pins)
// whether it would launch a NodeClaim for a pending pod, from which NodePool, with which instance
// types. It is the Karpenter half of gpu-inference's e2e judges (tests/e2e/karpenter_judge.py
// builds and runs it); it reads one JSON request on stdin and writes one JSON answer on stdout.
//
// Two builds of this one source, each with its own module file and so its own minimal version
// selection: the default one (go.mod: aws/karpenter-provider-aws v1.15.0 on sigs.k8s.io/karpenter
// v1.15.0) links the AWS provider's API package and builds EC2 instance types as it does
// (provider_aws.go); `-tags azure -modfile=go.azure.mod` (Azure/karpenter-provider-azure v1.14.2,
// AKS node auto-provisioning, on the core it pins, v1.14.0) links Karpenter on Azure's and builds
// VM sizes as it does (provider_azure.go). A binary holds one provider's label registrations, as a
// controller does; core_v1_14.go and core_v1_15.go hold what the two cores' APIs differ in.
//
// Request: {"instanceTypes": [...], "nodeClassInstanceTypes": {"<EC2NodeClass>": [...]},
// "nodePools": [karpenter.sh/v1 NodePool objects], "pods": [{"name", "spec": PodSpec}],
// "daemonSets": [apps/v1 DaemonSet objects], "perNodePool": false, "options": ["--flag=value", ...]},
// or {"cases": [request, ...]}.
// Answer: {"modules": {...}, "results": [{"pod", "scheduled", "nodePool", "instanceTypes",
// "capacityTypes", "error"}], "nodePools": [...]} (or {"modules", "cases": [answer, ...]}).
// Each pod is judged alone, in its own scheduling round with no existing nodes.
//
// DaemonSets are read as the provisioner reads the cluster's (provisioner.go getDaemonSetPods:
// daemonset.PodForDaemonSet, the template's required node affinity kept) and handed to the
// scheduler, which adds their overhead per NodePool and instance type (scheduler.go
// buildDaemonOverheadGroups).
//
// Not simulated: existing or in-flight nodes (so limits count from zero usage), volumes and their topology, DRA allocation (pods with ResourceClaims get Karpenter's
// "not yet supported" error, its default), NodeOverlay, static NodePools, capacity buffers,
// admission plugins (a pod is judged exactly as given: add ExtendedResourceToleration's
// tolerations yourself), and the cloud's own launch-time filtering after the NodeClaim.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	karpopts "sigs.k8s.io/karpenter/pkg/operator/options"
)

type caseInput struct {
	Name                   string                         `json:"name,omitempty"`
	InstanceTypes          []instanceTypeInput            `json:"instanceTypes"`
	NodeClassInstanceTypes map[string][]instanceTypeInput `json:"nodeClassInstanceTypes,omitempty"`
	NodePools              []karpv1.NodePool              `json:"nodePools"`
	Pods                   []podInput                     `json:"pods"`
	DaemonSets             []appsv1.DaemonSet             `json:"daemonSets,omitempty"`
	PerNodePool            bool                           `json:"perNodePool,omitempty"`
	Options                []string                       `json:"options,omitempty"`
}

type request struct {
	caseInput
	Cases []caseInput `json:"cases,omitempty"`
}

type caseOutput struct {
	Name      string           `json:"name,omitempty"`
	NodePools []nodePoolStatus `json:"nodePools"`
	Results   []podResult      `json:"results"`
}

type answer struct {
	Modules map[string]string `json:"modules"`
	*caseOutput
	Cases []caseOutput `json:"cases,omitempty"`
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("karpenter", flag.ContinueOnError) }

// modules: the versions linked into this binary, so an answer names what produced it.
func modules() map[string]string {
	out := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, dep := range info.Deps {
		switch dep.Path {
		case "sigs.k8s.io/karpenter", providerModule, "k8s.io/api", "github.com/Azure/skewer":
			v := dep.Version
			if dep.Replace != nil {
				v = dep.Replace.Version
			}
			out[dep.Path] = v
		}
	}
	out["go"] = info.GoVersion
	return out
}

// instanceTypesFor: the AWS cloud provider lists instance types per EC2NodeClass
// (aws v1.15.0 pkg/cloudprovider/cloudprovider.go:235-252); a node class the request does not
// name gets the request's default list.
func instanceTypesFor(c caseInput, pools []*karpv1.NodePool) (map[string][]*cloudprovider.InstanceType, error) {
	out := map[string][]*cloudprovider.InstanceType{}
	for _, np := range pools {
		list := c.InstanceTypes
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
			if specific, ok := c.NodeClassInstanceTypes[ref.Name]; ok {
				list = specific
			}
		}
		seen := map[string]bool{}
		for _, in := range list {
			if seen[in.Name] {
				return nil, fmt.Errorf("instance type %s listed twice for NodePool %s", in.Name, np.Name)
			}
			seen[in.Name] = true
			it, err := buildInstanceType(in)
			if err != nil {
				return nil, err
			}
			out[np.Name] = append(out[np.Name], it)
		}
	}
	return out, nil
}

func runCase(ctx context.Context, c caseInput) (caseOutput, error) {
	out := caseOutput{Name: c.Name, Results: []podResult{}}
	opts, err := controllerOptions(c.Options)
	if err != nil {
		return out, err
	}
	ctx = karpopts.ToContext(ctx, opts)
	if len(c.NodePools) == 0 {
		return out, fmt.Errorf("no nodePools")
	}
	names := map[string]bool{}
	var pools []*karpv1.NodePool
	for i := range c.NodePools {
		np := c.NodePools[i].DeepCopy()
		if np.Name == "" || names[np.Name] {
			return out, fmt.Errorf("NodePool %d: missing or repeated metadata.name %q", i, np.Name)
		}
		if np.Spec.Template.Spec.NodeClassRef == nil {
			return out, fmt.Errorf("NodePool %s: spec.template.spec.nodeClassRef is required", np.Name)
		}
		names[np.Name] = true
		pools = append(pools, np)
	}
	// Fresh instance types per round: the scheduler caches allocatable and reserves offerings on them.
	fresh := func() (map[string][]*cloudprovider.InstanceType, error) { return instanceTypesFor(c, pools) }
	its, err := fresh()
	if err != nil {
		return out, err
	}
	out.NodePools = describePools(ctx, pools, its)
	for _, p := range c.Pods {
		groups := [][]*karpv1.NodePool{pools}
		if c.PerNodePool {
			groups = nil
			for _, np := range pools {
				groups = append(groups, []*karpv1.NodePool{np})
			}
		}
		for _, group := range groups {
			its, err := fresh()
			if err != nil {
				return out, err
			}
			r, err := judge(ctx, opts, group, its, daemonSetPods(c.DaemonSets), p)
			if err != nil {
				return out, fmt.Errorf("pod %s: %w", p.Name, err)
			}
			if c.PerNodePool {
				r.OnlyNodePool = group[0].Name
			}
			out.Results = append(out.Results, r)
		}
	}
	return out, nil
}

func decode(data []byte) (request, error) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("reading the request: %w", err)
	}
	if dec.More() {
		return req, fmt.Errorf("reading the request: more than one JSON value")
	}
	single := len(req.caseInput.NodePools) > 0 || len(req.caseInput.Pods) > 0 || len(req.caseInput.InstanceTypes) > 0
	if single == (len(req.Cases) > 0) {
		return req, fmt.Errorf("the request holds either one case (nodePools, pods, instanceTypes) or \"cases\"")
	}
	return req, nil
}

func run(stdin io.Reader, stdout io.Writer, verbose bool) error {
	if verbose {
		crlog.SetLogger(funcr.New(func(prefix, args string) {
			fmt.Fprintln(os.Stderr, prefix, args)
		}, funcr.Options{Verbosity: 1}))
	} else {
		crlog.SetLogger(logr.Discard())
	}
	setupProvider()

	data, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	req, err := decode(data)
	if err != nil {
		return err
	}
	ctx := injection.WithControllerName(context.Background(), "provisioner")
	ans := answer{Modules: modules()}
	if len(req.Cases) == 0 {
		out, err := runCase(ctx, req.caseInput)
		if err != nil {
			return err
		}
		ans.caseOutput = &out
	} else {
		for i, c := range req.Cases {
			out, err := runCase(ctx, c)
			if err != nil {
				return fmt.Errorf("case %d (%s): %w", i, c.Name, err)
			}
			ans.Cases = append(ans.Cases, out)
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	return enc.Encode(ans)
}

func main() {
	verbose := flag.Bool("v", false, "write Karpenter's logs to stderr")
	version := flag.Bool("version", false, "print the linked module versions and exit")
	flag.Parse()
	// No environment variable may change a controller default (options.go AddFlags reads them).
	os.Clearenv()
	if *version {
		_ = json.NewEncoder(os.Stdout).Encode(modules())
		return
	}
	if err := run(os.Stdin, os.Stdout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter_judge:", err)
		os.Exit(1)
	}
}
