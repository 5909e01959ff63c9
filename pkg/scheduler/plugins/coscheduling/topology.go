/*
Copyright 2026 The Koord Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package coscheduling

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/topology"
)

// planningKey marks the CycleState of a placement's dry run, in which the plugin's own PreFilter does nothing.
const planningKey fwk.StateKey = Name + "/planning"

// planning is the value under planningKey.
type planning struct{}

// Clone returns the state itself: it holds nothing.
func (s *planning) Clone() fwk.StateData { return s }

// topologyStatusInterval is how often the leader writes the ClusterNetworkTopology's status.
const topologyStatusInterval = 10 * time.Second

// networkTopology is network-topology-aware gang placement (CoschedulingArgs.awareNetworkTopology): the first
// member of a gang with a network topology spec tried in a schedule cycle plans where every pending member of
// the gang group goes, in the fewest and tightest domains of the ClusterNetworkTopology "default" that hold
// them all (see topology.Tree.Place); each member's PreFilter then restricts it to its planned node.
type networkTopology struct {
	// framework runs the PreFilter plugins of the dry run; the handle kube-scheduler gives plugins is one.
	framework framework.Framework
	lister    schedlisters.ClusterNetworkTopologyLister
	client    versioned.Interface

	mu sync.Mutex
	// plans are the planned nodes of the members of each gang, for the schedule cycle they were planned in.
	plans map[cache.ID]*gangPlan
}

// A plan lasts until the gang fails a schedule cycle (or times out), so that members tried in a later cycle of
// the same attempt (a NonStrict gang, or a member tried again) keep their nodes. A member without a plan (one
// that came later, or whose planned node failed it) is planned with the other pending members inside the
// must-gather domain of the members already placed.

// gangPlan is where a gang's members go, until the gang fails a schedule cycle.
type gangPlan struct {
	nodes map[types.UID]string
}

// plannedNode returns the planned node of pod, a member of gang.
func (t *networkTopology) plannedNode(gang cache.ID, pod types.UID) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	plan := t.plans[gang]
	if plan == nil {
		return "", false
	}
	node, ok := plan.nodes[pod]
	return node, ok
}

// record adds the planned nodes of members of a gang group.
func (t *networkTopology) record(group cache.Group, nodes map[types.UID]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for uid, node := range nodes {
		id := group.GangOf[uid]
		plan := t.plans[id]
		if plan == nil {
			plan = &gangPlan{nodes: map[types.UID]string{}}
			t.plans[id] = plan
		}
		plan.nodes[uid] = node
	}
}

// forget drops the plan of gang.
func (t *networkTopology) forget(gang cache.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.plans, gang)
}

// preFilter restricts pod, a member of the constraining gang v with a network topology spec, to its planned
// node, planning the gang group first when the pod has no plan in the gang's cycle.
func (p *Plugin) topologyPreFilter(ctx context.Context, pod *corev1.Pod, v *cache.View) (*fwk.PreFilterResult, *fwk.Status) {
	if node, ok := p.topology.plannedNode(v.ID, pod.UID); ok {
		return &fwk.PreFilterResult{NodeNames: sets.New(node)}, nil
	}
	group, ok := p.cache.GroupOf(pod)
	if !ok {
		return nil, nil
	}
	nodes, status := p.planTopology(ctx, pod, v.Spec.NetworkTopology, group)
	if !status.IsSuccess() {
		return nil, status
	}
	p.topology.record(group, nodes)
	return &fwk.PreFilterResult{NodeNames: sets.New(nodes[pod.UID])}, nil
}

// planTopology places every pending member of group, trigger first among equals, by the gang's spec.
func (p *Plugin) planTopology(ctx context.Context, trigger *corev1.Pod, spec *extension.NetworkTopologySpec, group cache.Group) (map[types.UID]string, *fwk.Status) {
	logger := klog.FromContext(ctx)
	cnt, err := p.topology.lister.Get(schedv1alpha1.DefaultClusterNetworkTopologyName)
	if apierrors.IsNotFound(err) {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("the gang asks for network-topology placement and there is no ClusterNetworkTopology %q", schedv1alpha1.DefaultClusterNetworkTopologyName))
	}
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("get ClusterNetworkTopology: %w", err))
	}
	nodeInfos, err := p.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("list nodes: %w", err))
	}
	nodes := make([]*corev1.Node, 0, len(nodeInfos))
	for _, ni := range nodeInfos {
		nodes = append(nodes, ni.Node())
	}
	tree, err := topology.Build(cnt.Spec.NetworkTopologySpec, nodes)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("ClusterNetworkTopology %q: %v", cnt.Name, err))
	}
	members := membersWith(group.Pending, trigger)
	if err := sortByIndex(members); err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	req, err := tree.RequestOf(len(members), spec)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}

	// The dry run's state: the trigger's, from every PreFilter plugin but this one.
	state := framework.NewCycleState()
	state.Write(planningKey, &planning{})
	result, status, _ := p.topology.framework.RunPreFilterPlugins(ctx, state, trigger)
	if !status.IsSuccess() {
		return nil, status
	}
	var within sets.Set[string]
	if d := p.placedDomain(tree, req, group); d != nil {
		within = sets.New(d.NodeNames()...)
	}
	var candidates []fwk.NodeInfo
	for _, ni := range nodeInfos {
		name := ni.Node().Name
		if (result.AllNodes() || result.NodeNames.Has(name)) && tree.Node(name) != nil && (within == nil || within.Has(name)) {
			candidates = append(candidates, ni)
		}
	}
	selector := trigger.Annotations[extension.AnnotationNetworkTopologySelector]
	inputs := make([]topology.NodeInput, len(candidates))
	p.handle.Parallelizer().Until(ctx, len(candidates), func(i int) {
		inputs[i] = p.offer(ctx, state, trigger, members, candidates[i], selector)
	}, Name)
	offers := make(map[string]topology.NodeInput, len(candidates))
	for i, ni := range candidates {
		offers[ni.Node().Name] = inputs[i]
	}
	placement, err := tree.Place(offers, req)
	if err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	planned := make(map[types.UID]string, len(members))
	next := 0
	for _, node := range placement.Order {
		for range placement.Counts[node] {
			if next < len(members) {
				planned[members[next].UID] = node
				next++
			}
		}
	}
	logger.V(2).Info("Planned a gang by network topology", "pod", klog.KObj(trigger), "domain", string(placement.Domain.Layer)+"/"+placement.Domain.Name, "members", len(members), "nodes", placement.Counts)
	return planned, nil
}

// placedDomain returns the must-gather domain of the group's members already placed (waiting in Permit or
// bound), so that members planned later join them; nil when none is placed or the gang need not gather.
func (p *Plugin) placedDomain(tree *topology.Tree, req topology.Request, group cache.Group) *topology.Domain {
	if req.MustGather == "" {
		return nil
	}
	nodes := slices.Clone(group.BoundNodes)
	for _, uid := range group.Waiting {
		if wp := p.handle.GetWaitingPod(uid); wp != nil {
			nodes = append(nodes, wp.GetPod().Spec.NodeName)
		}
	}
	for _, n := range nodes {
		if d := tree.Ancestor(n, req.MustGather); d != nil {
			return d
		}
	}
	return nil
}

// offer counts how many of members fit on ni one after another (as the trigger, with the dry run's state),
// and the pods on it that share the trigger's network-topology-selector.
func (p *Plugin) offer(ctx context.Context, state fwk.CycleState, trigger *corev1.Pod, members []*corev1.Pod, ni fwk.NodeInfo, selector string) topology.NodeInput {
	var in topology.NodeInput
	if selector != "" {
		for _, pi := range ni.GetPods() {
			if pi.GetPod().Annotations[extension.AnnotationNetworkTopologySelector] == selector {
				in.Existing++
			}
		}
	}
	node := ni.Snapshot()
	st := state.Clone()
	for i, m := range members {
		if !p.topology.framework.RunFilterPluginsWithNominatedPods(ctx, st, m, node).IsSuccess() {
			break
		}
		in.Offer++
		if i == len(members)-1 {
			break
		}
		assumed := m.DeepCopy()
		assumed.Spec.NodeName = node.Node().Name
		pi, err := framework.NewPodInfo(assumed)
		if err != nil {
			break
		}
		node.AddPodInfo(pi)
		if !p.topology.framework.RunPreFilterExtensionAddPod(ctx, st, trigger, pi, node).IsSuccess() {
			break
		}
	}
	return in
}

// sortByIndex orders members by their network-topology-index, those without one last, then by name.
func sortByIndex(members []*corev1.Pod) error {
	index := make(map[types.UID]int, len(members))
	var errs []error
	for _, m := range members {
		i, err := extension.GetNetworkTopologyIndex(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s/%s: %w", m.Namespace, m.Name, err))
		}
		index[m.UID] = i
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	slices.SortStableFunc(members, func(a, b *corev1.Pod) int {
		ia, ib := index[a.UID], index[b.UID]
		switch {
		case ia >= 0 && ib < 0:
			return -1
		case ia < 0 && ib >= 0:
			return 1
		}
		return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return nil
}

// runTopologyStatus writes the domains of the ClusterNetworkTopology "default" into its status every
// topologyStatusInterval, when they changed, until ctx ends.
func (p *Plugin) runTopologyStatus(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("network-topology")
	ctx = klog.NewContext(ctx, logger)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := p.writeTopologyStatus(ctx); err != nil {
			utilruntime.HandleErrorWithLogger(logger, err, "Could not write the status of the ClusterNetworkTopology")
		}
	}, topologyStatusInterval)
}

// writeTopologyStatus writes the status of the ClusterNetworkTopology "default" once.
func (p *Plugin) writeTopologyStatus(ctx context.Context) error {
	cnt, err := p.topology.lister.Get(schedv1alpha1.DefaultClusterNetworkTopologyName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	nodes, err := p.handle.SharedInformerFactory().Core().V1().Nodes().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	tree, err := topology.Build(cnt.Spec.NetworkTopologySpec, nodes)
	if err != nil {
		return fmt.Errorf("ClusterNetworkTopology %q: %w", cnt.Name, err)
	}
	status := tree.Status()
	if equality.Semantic.DeepEqual(cnt.Status, status) {
		return nil
	}
	updated := cnt.DeepCopy()
	updated.Status = status
	if _, err := p.topology.client.SchedulingV1alpha1().ClusterNetworkTopologies().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("update status: %w", err)
	}
	p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerNetworkTopology).Inc()
	klog.FromContext(ctx).V(2).Info("Updated the ClusterNetworkTopology status", "domains", len(status.DetailStatus), "skippedNodes", len(tree.Skipped))
	return nil
}
