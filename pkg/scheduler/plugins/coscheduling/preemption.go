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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// Results of gang preemption, the values of the result label of koord_scheduler_gang_preemptions_total.
const (
	preemptionPreempted  = "preempted"
	preemptionIneligible = "ineligible"
	preemptionOngoing    = "ongoing"
	preemptionNotHelpful = "not_helpful"
	preemptionError      = "error"
)

// preempt is job-level (gang) preemption, CoschedulingArgs.enablePreemption: when trigger, a member of a gang
// that constrains it, found no node, it frees room for every pending member of the gang group at once, or
// evicts nothing. As Koordinator's:
//
//   - the trigger's preemption policy decides (Never, in its spec or Koordinator's preemption-policy label,
//     means no preemption); a gang whose members are nominated to nodes where victims of an earlier preemption
//     are still terminating waits for them;
//   - victims are pods of lower priority than the trigger on the nodes where it was Unschedulable (not
//     unresolvable), except the group's own members, pods being deleted, and pods labelled
//     scheduling.koordinator.sh/disable-preemptible=true or quota.scheduling.koordinator.sh/preemptible=false;
//   - members waiting in Permit keep their nodes; each pending member is placed in turn, on the node with the
//     lowest-priority victims (then the fewest, then by name) where it passes Filter with every possible victim
//     gone and the members placed before it added (Koordinator's placement forgets them, and can put more
//     members on a node than fit);
//   - when a member fits nowhere nothing is evicted; otherwise each node gives back the victims it can keep,
//     highest priority first, as long as its members still fit, and the rest are preempted through
//     kube-scheduler's executor (DisruptionTarget condition, deletion, or rejection of a waiting pod, and a
//     Preempted event);
//   - every pending member is nominated to its node, the trigger through the result.
//
// Members are checked with the trigger's PreFilter state, as in Koordinator, since the framework gives
// plugins no way to run PreFilter for another pod; unlike Koordinator, Koord refuses to preempt for a gang
// whose pending members differ from the trigger in requests or placement constraints, rather than evicting
// for the wrong sizes.
func (p *Plugin) preempt(ctx context.Context, state fwk.CycleState, trigger *corev1.Pod, statuses fwk.NodeToStatusReader, group cache.Group) (*fwk.PostFilterResult, *fwk.Status) {
	result, status, outcome := p.tryPreempt(ctx, state, trigger, statuses, group)
	p.metrics.GangPreemptions.WithLabelValues(outcome).Inc()
	klog.FromContext(ctx).V(2).Info("Gang preemption", "pod", klog.KObj(trigger), "result", outcome, "message", status.Message())
	return result, status
}

func (p *Plugin) tryPreempt(ctx context.Context, state fwk.CycleState, trigger *corev1.Pod, statuses fwk.NodeToStatusReader, group cache.Group) (*fwk.PostFilterResult, *fwk.Status, string) {
	logger := klog.FromContext(ctx)
	if preemptionPolicy(trigger) == corev1.PreemptNever {
		return nil, unresolvable("gang preemption: pod %s/%s does not preempt (preemption policy Never)", trigger.Namespace, trigger.Name), preemptionIneligible
	}
	priority := corev1helpers.PodPriority(trigger)
	pending := membersWith(group.Pending, trigger)
	for _, m := range pending {
		if !alike(m, trigger) {
			return nil, unresolvable("gang preemption: member %s/%s asks for other resources or placement than %s/%s, and Koord preempts only for pending members alike",
				m.Namespace, m.Name, trigger.Namespace, trigger.Name), preemptionIneligible
		}
	}
	nodeInfos := p.handle.SnapshotSharedLister().NodeInfos()
	if node, ok := terminatingVictims(nodeInfos, pending, priority); ok {
		return nil, unresolvable("gang preemption: waiting for the victims of an earlier preemption on node %s to terminate", node), preemptionOngoing
	}
	// The members' own nominations would be counted as pods on the nodes they are placed on again.
	for _, m := range pending {
		p.handle.DeleteNominatedPodIfExists(m)
	}

	plans, status := p.candidates(ctx, state, trigger, statuses, group, priority)
	if status != nil {
		return nil, status, preemptionError
	}
	if len(plans) == 0 {
		return nil, unresolvable("gang preemption would not help: no node where the gang's pods do not fit has pods of lower priority than %d to preempt", priority), preemptionNotHelpful
	}

	placed := map[types.UID]*plan{}
	for i, m := range pending {
		target := p.place(ctx, plans, m)
		if target == nil {
			return nil, unresolvable("gang preemption would not help: pending member %s/%s (%d of %d) fits on no node even with every pod of lower priority gone, so nothing was preempted",
				m.Namespace, m.Name, i+1, len(pending)), preemptionNotHelpful
		}
		if status := p.add(ctx, target, trigger, m); status != nil {
			return nil, status, preemptionError
		}
		placed[m.UID] = target
	}

	victims := 0
	for _, pl := range plans {
		if len(pl.members) == 0 {
			continue
		}
		if status := p.selectVictims(ctx, trigger, pl); status != nil {
			return nil, status, preemptionError
		}
		victims += len(pl.victims)
	}
	preemptor := &gangPreemptor{trigger: trigger, pending: pending}
	for _, pl := range plans {
		c := &candidate{node: pl.node.Node().Name, victims: pl.victims}
		for _, v := range pl.victims {
			if _, err := p.executor.PreemptPod(ctx, c, preemptor, v, Name); err != nil {
				return nil, fwk.AsStatus(fmt.Errorf("gang preemption: preempt %s/%s: %w", v.Namespace, v.Name, err)), preemptionError
			}
		}
	}
	p.metrics.GangPreemptionVictims.Add(float64(victims))
	for _, m := range pending {
		if m.UID != trigger.UID {
			p.nominate(ctx, m, placed[m.UID].node.Node().Name)
		}
	}
	node := placed[trigger.UID].node.Node().Name
	logger.V(2).Info("Preempted for a gang", "pod", klog.KObj(trigger), "node", node, "pending", len(pending), "waiting", len(group.Waiting), "victims", victims)
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride}},
		fwk.NewStatus(fwk.Success, fmt.Sprintf("gang preemption: preempted %d pods for %d pending members", victims, len(pending))), preemptionPreempted
}

// plan is a node during the dry run: a copy of its NodeInfo and of the trigger's CycleState, from which the
// possible victims were removed and to which the members placed on it were added.
type plan struct {
	node  fwk.NodeInfo
	state fwk.CycleState
	// possible are the node's possible victims; highest is the highest priority among them.
	possible []fwk.PodInfo
	highest  int32
	// members are the pending members placed on the node (copies with the node's name).
	members []fwk.PodInfo
	// victims are the pods to preempt, once selectVictims has run.
	victims []*corev1.Pod
}

// candidates returns a plan for every node where trigger was Unschedulable and some pod could be preempted,
// ordered as members are placed: lowest highest-priority victim first, then fewest possible victims, then
// by name.
func (p *Plugin) candidates(ctx context.Context, state fwk.CycleState, trigger *corev1.Pod, statuses fwk.NodeToStatusReader, group cache.Group, priority int32) ([]*plan, *fwk.Status) {
	logger := klog.FromContext(ctx)
	all, err := p.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("gang preemption: list nodes: %w", err))
	}
	var plans []*plan
	for _, ni := range all {
		if statuses.Get(ni.Node().Name).Code() != fwk.Unschedulable {
			continue
		}
		pl := &plan{node: ni.Snapshot(), state: state.Clone()}
		for _, pi := range ni.GetPods() {
			v := pi.GetPod()
			if !eligibleVictim(v, priority, group) {
				continue
			}
			if err := pl.node.RemovePod(logger, v); err != nil {
				return nil, fwk.AsStatus(fmt.Errorf("gang preemption: %w", err))
			}
			if s := p.handle.RunPreFilterExtensionRemovePod(ctx, pl.state, trigger, pi, pl.node); !s.IsSuccess() {
				return nil, s
			}
			if len(pl.possible) == 0 || corev1helpers.PodPriority(v) > pl.highest {
				pl.highest = corev1helpers.PodPriority(v)
			}
			pl.possible = append(pl.possible, pi)
		}
		if len(pl.possible) > 0 {
			plans = append(plans, pl)
		}
	}
	slices.SortFunc(plans, func(a, b *plan) int {
		return cmp.Or(cmp.Compare(a.highest, b.highest), cmp.Compare(len(a.possible), len(b.possible)),
			cmp.Compare(a.node.Node().Name, b.node.Node().Name))
	})
	return plans, nil
}

// place returns the first plan on which m passes Filter, nil when there is none.
func (p *Plugin) place(ctx context.Context, plans []*plan, m *corev1.Pod) *plan {
	for _, pl := range plans {
		if p.handle.RunFilterPluginsWithNominatedPods(ctx, pl.state, m, pl.node).IsSuccess() {
			return pl
		}
	}
	return nil
}

// add places member m on pl.
func (p *Plugin) add(ctx context.Context, pl *plan, trigger, m *corev1.Pod) *fwk.Status {
	assumed := m.DeepCopy()
	assumed.Spec.NodeName = pl.node.Node().Name
	pi, err := framework.NewPodInfo(assumed)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("gang preemption: %w", err))
	}
	pl.node.AddPodInfo(pi)
	if s := p.handle.RunPreFilterExtensionAddPod(ctx, pl.state, trigger, pi, pl.node); !s.IsSuccess() {
		return s
	}
	pl.members = append(pl.members, pi)
	return nil
}

// selectVictims gives back to pl's node, highest priority first, every possible victim its members still
// fit beside; the others are pl.victims.
func (p *Plugin) selectVictims(ctx context.Context, trigger *corev1.Pod, pl *plan) *fwk.Status {
	logger := klog.FromContext(ctx)
	possible := slices.Clone(pl.possible)
	slices.SortStableFunc(possible, func(a, b fwk.PodInfo) int {
		return cmp.Or(cmp.Compare(corev1helpers.PodPriority(b.GetPod()), corev1helpers.PodPriority(a.GetPod())),
			cmp.Compare(a.GetPod().Namespace, b.GetPod().Namespace), cmp.Compare(a.GetPod().Name, b.GetPod().Name))
	})
	for _, v := range possible {
		pl.node.AddPodInfo(v)
		if s := p.handle.RunPreFilterExtensionAddPod(ctx, pl.state, trigger, v, pl.node); !s.IsSuccess() {
			return s
		}
		fit, status := p.membersFit(ctx, trigger, pl)
		if status != nil {
			return status
		}
		if fit {
			continue
		}
		if err := pl.node.RemovePod(logger, v.GetPod()); err != nil {
			return fwk.AsStatus(fmt.Errorf("gang preemption: %w", err))
		}
		if s := p.handle.RunPreFilterExtensionRemovePod(ctx, pl.state, trigger, v, pl.node); !s.IsSuccess() {
			return s
		}
		pl.victims = append(pl.victims, v.GetPod())
	}
	return nil
}

// membersFit reports whether every member placed on pl passes Filter there beside the others.
func (p *Plugin) membersFit(ctx context.Context, trigger *corev1.Pod, pl *plan) (bool, *fwk.Status) {
	logger := klog.FromContext(ctx)
	for _, m := range pl.members {
		if err := pl.node.RemovePod(logger, m.GetPod()); err != nil {
			return false, fwk.AsStatus(fmt.Errorf("gang preemption: %w", err))
		}
		if s := p.handle.RunPreFilterExtensionRemovePod(ctx, pl.state, trigger, m, pl.node); !s.IsSuccess() {
			return false, s
		}
		fits := p.handle.RunFilterPluginsWithNominatedPods(ctx, pl.state, m.GetPod(), pl.node).IsSuccess()
		pl.node.AddPodInfo(m)
		if s := p.handle.RunPreFilterExtensionAddPod(ctx, pl.state, trigger, m, pl.node); !s.IsSuccess() {
			return false, s
		}
		if !fits {
			return false, nil
		}
	}
	return true, nil
}

// nominate nominates pod to node, in the scheduler and in its status, so that other pods leave the room
// preemption made for it.
func (p *Plugin) nominate(ctx context.Context, pod *corev1.Pod, node string) {
	logger := klog.FromContext(ctx)
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		logger.Error(err, "Could not nominate a gang member", "pod", klog.KObj(pod), "node", node)
		return
	}
	p.handle.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride})
	if pod.Status.NominatedNodeName == node {
		return
	}
	status := pod.Status.DeepCopy()
	status.NominatedNodeName = node
	if err := util.PatchPodStatus(ctx, p.handle.ClientSet(), pod.Name, pod.Namespace, &pod.Status, status); err != nil {
		logger.Error(err, "Could not write the nominated node of a gang member", "pod", klog.KObj(pod), "node", node)
	}
}

// nominateWaiting nominates the members about to be rejected from Permit to the nodes they were assumed on,
// so that the room preemption left them stays theirs for the gang's next cycle.
func (p *Plugin) nominateWaiting(ctx context.Context, uids []types.UID) {
	for _, uid := range uids {
		if wp := p.handle.GetWaitingPod(uid); wp != nil && wp.GetPod().Spec.NodeName != "" {
			p.nominate(ctx, wp.GetPod(), wp.GetPod().Spec.NodeName)
		}
	}
}

// membersWith returns pending with trigger in place of its informer copy, trigger first.
func membersWith(pending []*corev1.Pod, trigger *corev1.Pod) []*corev1.Pod {
	members := []*corev1.Pod{trigger}
	for _, m := range pending {
		if m.UID != trigger.UID {
			members = append(members, m)
		}
	}
	return members
}

// preemptionPolicy returns pod's preemption policy: Koordinator's label, else its spec, else
// PreemptLowerPriority.
func preemptionPolicy(pod *corev1.Pod) corev1.PreemptionPolicy {
	if v := pod.Labels[extension.LabelPodPreemptionPolicy]; v != "" {
		return corev1.PreemptionPolicy(v)
	}
	if pod.Spec.PreemptionPolicy != nil {
		return *pod.Spec.PreemptionPolicy
	}
	return corev1.PreemptLowerPriority
}

// alike reports whether a and b ask for the same: requests, priority and placement constraints, so that one's
// PreFilter state serves the other.
func alike(a, b *corev1.Pod) bool {
	if corev1helpers.PodPriority(a) != corev1helpers.PodPriority(b) {
		return false
	}
	if !equality.Semantic.DeepEqual(resourcehelper.PodRequests(a, resourcehelper.PodResourcesOptions{}), resourcehelper.PodRequests(b, resourcehelper.PodResourcesOptions{})) {
		return false
	}
	sa, sb := &a.Spec, &b.Spec
	return equality.Semantic.DeepEqual(sa.NodeSelector, sb.NodeSelector) &&
		equality.Semantic.DeepEqual(sa.Affinity, sb.Affinity) &&
		equality.Semantic.DeepEqual(sa.Tolerations, sb.Tolerations) &&
		equality.Semantic.DeepEqual(sa.TopologySpreadConstraints, sb.TopologySpreadConstraints) &&
		sa.NodeName == sb.NodeName
}

// eligibleVictim reports whether v may be preempted for a gang group of the given priority.
func eligibleVictim(v *corev1.Pod, priority int32, group cache.Group) bool {
	return corev1helpers.PodPriority(v) < priority &&
		!group.Members[v.UID] &&
		v.DeletionTimestamp == nil &&
		v.Labels[extension.LabelDisablePreemptible] != "true" &&
		!extension.IsPodNonPreemptible(v)
}

// terminatingVictims returns the node of a pending member's nomination where a pod of lower priority that the
// scheduler preempted is still terminating.
func terminatingVictims(nodeInfos fwk.NodeInfoLister, pending []*corev1.Pod, priority int32) (string, bool) {
	for _, m := range pending {
		node := m.Status.NominatedNodeName
		if node == "" {
			continue
		}
		ni, err := nodeInfos.Get(node)
		if err != nil {
			continue
		}
		for _, pi := range ni.GetPods() {
			v := pi.GetPod()
			if v.DeletionTimestamp != nil && corev1helpers.PodPriority(v) < priority && preemptedByScheduler(v) {
				return node, true
			}
		}
	}
	return "", false
}

// preemptedByScheduler reports whether pod has the DisruptionTarget condition a scheduler's preemption sets.
func preemptedByScheduler(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler {
			return true
		}
	}
	return false
}

// unresolvable is UnschedulableAndUnresolvable with the message: it ends the PostFilter chain, so that no
// per-pod preemption after the plugin evicts for one member of a gang.
func unresolvable(format string, args ...any) *fwk.Status {
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf(format, args...))
}

// gangPreemptor is the gang as kube-scheduler's preemption executor sees it: the trigger names it.
type gangPreemptor struct {
	trigger *corev1.Pod
	pending []*corev1.Pod
}

var _ preemption.ExecutorPreemptor = (*gangPreemptor)(nil)

func (g *gangPreemptor) GetName() string       { return g.trigger.Name }
func (g *gangPreemptor) GetNamespace() string  { return g.trigger.Namespace }
func (g *gangPreemptor) UID() types.UID        { return g.trigger.UID }
func (g *gangPreemptor) SchedulerName() string { return g.trigger.Spec.SchedulerName }
func (g *gangPreemptor) Obj() runtime.Object   { return g.trigger }
func (g *gangPreemptor) Priority() int32       { return corev1helpers.PodPriority(g.trigger) }
func (g *gangPreemptor) Type() string          { return "gang" }
func (g *gangPreemptor) Pods() map[string]*corev1.Pod {
	pods := make(map[string]*corev1.Pod, len(g.pending))
	for _, m := range g.pending {
		pods[m.Name] = m
	}
	return pods
}

// candidate is a node and the pods preempted on it, as kube-scheduler's preemption executor takes them.
type candidate struct {
	node    string
	victims []*corev1.Pod
}

var _ preemption.Candidate = (*candidate)(nil)

func (c *candidate) Victims() *extenderv1.Victims { return &extenderv1.Victims{Pods: c.victims} }
func (c *candidate) Name() string                 { return c.node }
func (c *candidate) NumPodGroupDisruptions() int  { return 0 }
