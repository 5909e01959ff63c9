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

package reservation

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Pre-allocation (spec.preAllocation) lets a Reservation be placed on resources that running pods use: those
// pods, the pre-allocatable ones, become owners that allocate the Reservation, so that what they leave when
// they end stays reserved for the Reservation's next owners. kube-scheduler's NodeResourcesFit counts the
// running pods' requests as used, so the reserve pod of such a Reservation requests nothing and this file
// checks the template's requests against the node: free + what the chosen pods request − what other
// reservations hold.

// preAllocation is what PreFilter learnt about the reserve pod of a pre-allocating Reservation.
type preAllocation struct {
	// resv is the Reservation as the candidates' reservation affinities see it.
	resv     *cache.Info
	multiple bool
	// required is the pre-allocation-required label: the Reservation must take at least one pod.
	required bool
	// preferFree is preAllocationConfig.preferNoPreAllocatedPods: free resources first when they suffice.
	preferFree bool
	// candidates are the pre-allocatable pods of each node, in the order they are tried.
	candidates map[string][]candidate
}

// candidate is a pre-allocatable pod.
type candidate struct {
	pod      *corev1.Pod
	requests quantity.Amounts
	// priority is the Cluster mode's priority annotation.
	priority int64
}

// newPreAllocation builds the pre-allocation of the reserve pod's Reservation, or the status that makes the
// reserve pod unschedulable: a Reservation that is gone, not Restricted, in a mode the plugin is not
// configured for, or that requires pre-allocation when no pod is pre-allocatable.
func (p *Plugin) newPreAllocation(logger klog.Logger, pod *corev1.Pod) (*preAllocation, quantity.Amounts, *fwk.Status) {
	name := pod.Labels[extension.LabelReservationName]
	r, err := p.reservationLister.Get(name)
	if err != nil || string(r.UID) != pod.Labels[extension.LabelReservationUID] {
		return nil, nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("reservation %q of the reserve pod is not found", name))
	}
	if r.Spec.AllocatePolicy != schedv1alpha1.ReservationAllocatePolicyRestricted {
		return nil, nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("reservation %q: spec.preAllocation needs spec.allocatePolicy Restricted, not %q", name, r.Spec.AllocatePolicy))
	}
	mode := schedv1alpha1.ReservationPreAllocationModeDefault
	var multiple bool
	if pol := r.Spec.PreAllocationPolicy; pol != nil {
		mode = cmp.Or(pol.Mode, mode)
		multiple = pol.EnableMultiple
	}
	cfg := ptr.Deref(p.args.PreAllocationConfig, config.PreAllocationConfig{})
	if mode == schedv1alpha1.ReservationPreAllocationModeCluster && !cfg.EnableClusterMode {
		return nil, nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("reservation %q: preAllocationPolicy.mode Cluster needs the Reservation plugin's preAllocationConfig.enableClusterMode", name))
	}
	owners, err := cache.NewOwners(r.Spec.Owners)
	if err != nil {
		return nil, nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("reservation %q: %v", name, err))
	}
	pa := &preAllocation{
		resv:       &cache.Info{UID: r.UID, Name: r.Name, Labels: r.Labels, Owners: owners, Taints: r.Spec.Taints},
		multiple:   multiple,
		required:   r.Labels[extension.LabelPreAllocationRequired] == "true" || (r.Spec.Template != nil && r.Spec.Template.Labels[extension.LabelPreAllocationRequired] == "true"),
		preferFree: cfg.PreferNoPreAllocatedPods,
		candidates: map[string][]candidate{},
	}
	requests := templateRequests(p.cache, r)
	if err := p.listCandidates(logger, pa, mode, cfg, requests); err != nil {
		return nil, nil, fwk.AsStatus(err)
	}
	if pa.required && len(pa.candidates) == 0 {
		return nil, nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("reservation %q requires pre-allocation (%s) and no running pod is pre-allocatable to it", name, extension.LabelPreAllocationRequired))
	}
	return pa, requests, nil
}

// listCandidates fills pa.candidates: the bound, live pods that no reservation allocates yet, that are not
// reserve pods, that request some of what the Reservation reserves and whose reservation affinity (if any)
// admits it; in Default mode the Reservation's owners, in Cluster mode the pods labelled clusterLabelKey=true.
// Cluster-mode candidates are ordered by their priority annotation (higher first), then UID; Default-mode ones
// by how much of the Reservation they would fill, then namespace and name.
func (p *Plugin) listCandidates(logger klog.Logger, pa *preAllocation, mode schedv1alpha1.ReservationPreAllocationMode, cfg config.PreAllocationConfig, requests quantity.Amounts) error {
	cluster := mode == schedv1alpha1.ReservationPreAllocationModeCluster
	sel := labels.Everything()
	if cluster {
		sel = labels.SelectorFromSet(labels.Set{cmp.Or(cfg.ClusterLabelKey, extension.LabelPodPreAllocatable): "true"})
	}
	pods, err := p.pods.List(sel)
	if err != nil {
		return fmt.Errorf("list pre-allocatable pods: %w", err)
	}
	priorityKey := cmp.Or(cfg.ClusterPriorityAnnotationKey, extension.AnnotationPodPreAllocatablePriority)
	for _, pod := range pods {
		if pod.Spec.NodeName == "" || extension.IsReservePod(pod) || pod.DeletionTimestamp != nil ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || p.allocatesAnother(pod, pa.resv.UID) {
			continue
		}
		if !cluster && !pa.resv.Owners.Match(pod) {
			continue
		}
		a, err := newAffinity(pod)
		if err != nil {
			logger.V(4).Info("Skipped a pre-allocatable pod with a malformed reservation affinity", "pod", klog.KObj(pod), "err", err)
			continue
		}
		if !a.selects(pa.resv) || !a.tolerates(logger, pa.resv) {
			continue
		}
		c := candidate{pod: pod, requests: p.cache.PodRequests(pod)}
		if !c.overlaps(requests) {
			continue
		}
		if cluster {
			c.priority, _ = strconv.ParseInt(pod.Annotations[priorityKey], 10, 64)
		}
		pa.candidates[pod.Spec.NodeName] = append(pa.candidates[pod.Spec.NodeName], c)
	}
	for _, cs := range pa.candidates {
		slices.SortFunc(cs, func(a, b candidate) int {
			if cluster {
				return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.pod.UID, b.pod.UID))
			}
			return cmp.Or(cmp.Compare(b.fill(requests), a.fill(requests)),
				cmp.Compare(a.pod.Namespace, b.pod.Namespace), cmp.Compare(a.pod.Name, b.pod.Name))
		})
	}
	return nil
}

// allocatesAnother reports whether pod allocates a reservation other than uid, by its reservation-allocated
// annotation or in the cache. A pod already annotated for uid (an earlier cycle's PreBind that failed half-way)
// is still the Reservation's to take.
func (p *Plugin) allocatesAnother(pod *corev1.Pod, uid types.UID) bool {
	if pod.Annotations[extension.AnnotationReservationAllocated] != "" {
		if a, err := extension.GetReservationAllocated(pod.Annotations); err != nil || a == nil || a.UID != uid {
			return true
		}
	}
	other, ok := p.cache.AllocationOf(pod.UID)
	return ok && other != uid
}

// overlaps reports whether the pod requests some of the resources in requests.
func (c candidate) overlaps(requests quantity.Amounts) bool {
	for name, v := range c.requests {
		if _, ok := requests[name]; ok && v > 0 {
			return true
		}
	}
	return false
}

// fill is how much of the Reservation's requests the pod would allocate, 0..100, averaged over its resources:
// the score of the pod as the Reservation's owner, as the plugin scores owners (most allocated first).
func (c candidate) fill(requests quantity.Amounts) int64 {
	if len(requests) == 0 {
		return 0
	}
	var sum int64
	for name, total := range requests {
		if total > 0 {
			sum += min(c.requests[name], total) * fwk.MaxScore / total
		}
	}
	return sum / int64(len(requests))
}

// choice is what a node offers a pre-allocating Reservation: the pods it takes (none: it is placed on free
// resources), or why it cannot be placed there.
type choice struct {
	taken  []candidate
	reason string
}

// preAllocate picks the pods the Reservation takes on the node. The Reservation fits when, for every resource it
// reserves, its request is at most the node's free amount plus what the taken pods request minus what the
// other reservations on the node hold; with the Restricted policy the taken pods together must fit in it.
// One pod (the default): the one that fills the Reservation most, among those with which it fits. Several
// (enableMultiple): pods in candidate order, skipping any that would overfill it, until it fits. Without
// pre-allocation required, a node with no such pods still takes the Reservation on free resources, and with
// preferFree free resources are used first.
func (s *preFilterState) preAllocate(ni fwk.NodeInfo, resvs []*cache.Info) choice {
	pa := s.pre
	if !pa.required && pa.preferFree && s.nodeMisfit(ni, resvs, nil) == "" {
		return choice{}
	}
	var reasons []string
	cands := pa.candidates[ni.Node().Name]
	if pa.multiple {
		acc := quantity.Amounts{}
		var taken []candidate
		for _, c := range cands {
			trial := acc.Clone()
			trial.Add(c.requests)
			if r := s.overfills(trial, c); r != "" {
				reasons = append(reasons, r)
				continue
			}
			acc, taken = trial, append(taken, c)
			if s.nodeMisfit(ni, resvs, acc) == "" {
				return choice{taken: taken}
			}
		}
		if len(taken) > 0 {
			reasons = append(reasons, s.nodeMisfit(ni, resvs, acc))
		}
	} else {
		var best *candidate
		for i, c := range cands {
			if r := s.overfills(c.requests, c); r != "" {
				reasons = append(reasons, r)
				continue
			}
			if r := s.nodeMisfit(ni, resvs, c.requests); r != "" {
				reasons = append(reasons, r)
				continue
			}
			if best == nil || c.fill(s.requests) > best.fill(s.requests) {
				best = &cands[i]
			}
		}
		if best != nil {
			return choice{taken: []candidate{*best}}
		}
	}
	if pa.required {
		if len(cands) == 0 {
			return choice{reason: fmt.Sprintf("no pod on the node is pre-allocatable to reservation %q, which requires pre-allocation", pa.resv.Name)}
		}
		return choice{reason: strings.Join(reasons, "; ")}
	}
	if r := s.nodeMisfit(ni, resvs, nil); r != "" {
		return choice{reason: strings.Join(append(reasons, r), "; ")}
	}
	return choice{}
}

// overfills returns why pods requesting taken (the last of them c) do not fit in the Restricted Reservation,
// or "" when they do.
func (s *preFilterState) overfills(taken quantity.Amounts, c candidate) string {
	for _, name := range s.names {
		if v, ok := taken[name]; ok && v > s.requests[name] {
			return fmt.Sprintf("pod %s: %s %s would be above the reservation's %s", klog.KObj(c.pod), name, quantity.Format(name, v), quantity.Format(name, s.requests[name]))
		}
	}
	return ""
}

// nodeMisfit returns why the Reservation does not fit on the node when it takes pods requesting taken, or ""
// when it fits.
func (s *preFilterState) nodeMisfit(ni fwk.NodeInfo, resvs []*cache.Info, taken quantity.Amounts) string {
	for _, name := range s.names {
		var held int64
		for _, r := range resvs {
			held += r.Held[name]
		}
		f := free(ni, name)
		if req := s.requests[name]; req > f+taken[name]-held {
			msg := fmt.Sprintf("node %s: %s free", name, quantity.Format(name, max(f, 0)))
			if held > 0 {
				msg += fmt.Sprintf(", %s held by %s", quantity.Format(name, held), holders(resvs, nil, name))
			}
			if taken[name] > 0 {
				msg += fmt.Sprintf(", %s from pre-allocated pods", quantity.Format(name, taken[name]))
			}
			return msg + fmt.Sprintf(", reservation requests %s", quantity.Format(name, req))
		}
	}
	return ""
}

// filterPreAllocation is Filter for the reserve pod of a pre-allocating Reservation.
func (s *preFilterState) filterPreAllocation(ni fwk.NodeInfo) *fwk.Status {
	if c := s.preAllocate(ni, s.snap.OnNode(ni.Node().Name)); c.reason != "" {
		return fwk.NewStatus(fwk.Unschedulable, c.reason)
	}
	return nil
}

// scorePreAllocation is Score for the reserve pod of a pre-allocating Reservation, as Koordinator scores it:
// with one pod, how much of the Reservation the taken pod fills (0 when it takes none); with several, 100 for
// a node where it takes none and 100/(1+n) where it takes n.
func (s *preFilterState) scorePreAllocation(ni fwk.NodeInfo) int64 {
	c := s.preAllocate(ni, s.snap.OnNode(ni.Node().Name))
	if s.pre.multiple {
		return fwk.MaxScore / int64(1+len(c.taken))
	}
	if len(c.taken) == 0 {
		return 0
	}
	return c.taken[0].fill(s.requests)
}
