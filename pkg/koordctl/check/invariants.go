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

package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager/controller/noderesource/calculator"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Finding is an object an invariant found wrong in one evaluation.
type Finding struct {
	// Object names it: "Kind namespace/name" or "Kind name".
	Object string
	// Message says what is wrong, with the numbers.
	Message string
}

// Invariant is one property of the cluster.
type Invariant struct {
	// Name is its short name, e.g. pods-fit-nodes.
	Name string
	// Description says it in a sentence.
	Description string
	// Settle is how long a finding must last before it is a violation; 0: at once.
	Settle time.Duration
	// Check returns how many objects it checked in s and what it found wrong.
	Check func(s *State) (checked int, findings []Finding)
}

// Options tune the invariants to the cluster's configuration. The zero value takes the defaults.
type Options struct {
	// Settle is how long a momentary state may last (informers see objects in their own order): 5s when 0.
	Settle time.Duration
	// FormulaSettle is how long a node may offer more than the formula gives before it is a violation: how
	// long koord-manager may take to catch up with a NodeMetric or a restart. 60s when 0.
	FormulaSettle time.Duration
	// BindWindow is how far before a binding the node's batch and mid allocatable may have been what the
	// scheduler saw. 60s when 0.
	BindWindow time.Duration
	// GangDefaultWaitTime is a gang's waiting time when it sets none (CoschedulingArgs.defaultTimeout). 600s
	// when 0.
	GangDefaultWaitTime time.Duration
	// QuotaRevokeDelay is the revoke controller's delayEvictTime; 0 means it does not run
	// (ElasticQuotaArgs.monitorAllQuotas false), and quotas are not checked.
	QuotaRevokeDelay time.Duration
	// JobDefaultTTL is a PodMigrationJob's ttl when it sets none (MigrationControllerArgs.defaultJobTTL). 5m
	// when 0.
	JobDefaultTTL time.Duration
	// UnreportedPodsUsageOnly is koord-manager's --unreported-pods-in-max-usage-request=false.
	UnreportedPodsUsageOnly bool
	// Once is for a single evaluation: every finding is a violation at once (no settle time).
	Once bool
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Settle, 5*time.Second)
	def(&o.FormulaSettle, time.Minute)
	def(&o.BindWindow, time.Minute)
	def(&o.GangDefaultWaitTime, 600*time.Second)
	def(&o.JobDefaultTTL, 5*time.Minute)
	return o
}

// Invariants returns the invariants, in the order they are reported.
func Invariants(o Options) []Invariant {
	o = o.withDefaults()
	invariants := []Invariant{
		{Name: "pods-fit-nodes", Settle: o.Settle, Check: podsFitNodes,
			Description: "the requests of a node's active pods are within its allocatable for every static resource, and no pod is bound twice"},
		{Name: "batch-capacity-at-bind", Check: func(s *State) (int, []Finding) { return batchAtBind(s, o.BindWindow) },
			Description: "a pod requesting batch or mid resources was bound while its node offered enough of them"},
		{Name: "batch-follows-formula", Settle: o.FormulaSettle, Check: func(s *State) (int, []Finding) { return batchFollowsFormula(s, o) },
			Description: "no node offers more batch or mid resources than koord-manager's formula and update rule allow"},
		{Name: "gangs-all-or-nothing", Check: func(s *State) (int, []Finding) { return gangsAllOrNothing(s, o.GangDefaultWaitTime) },
			Description: "no gang has fewer than its minimum members bound past its waiting time"},
		// A quota may stay over its runtime for the revoke controller's delay twice: a koord-scheduler replica that
		// takes the lead counts the delay afresh (it never evicts sooner than the old leader would have); and 30s
		// for the leader election's takeover (lease 15s) and the evicted pods' termination.
		{Name: "quotas-within-runtime", Settle: 2*o.QuotaRevokeDelay + 30*time.Second, Check: func(s *State) (int, []Finding) {
			return quotasWithinRuntime(s, o.QuotaRevokeDelay > 0)
		}, Description: "an ElasticQuota's used is within its runtime once the revoke controller had its delay"},
		{Name: "ls-pods-not-evicted", Check: lsPodsNotEvicted,
			Description: "no LSE, LSR or LS pod is evicted by koordlet (unless eviction-enabled) or by koord-descheduler without a Reservation"},
		{Name: "migrations-end", Settle: 30 * time.Second, Check: func(s *State) (int, []Finding) { return migrationsEnd(s, o.JobDefaultTTL) },
			Description: "every PodMigrationJob ends by its ttl and leaves no Reservation holding resources"},
		{Name: "reservations-serve-owners", Settle: o.Settle, Check: reservationsServeOwners,
			Description: "a pod allocated from a Reservation is one of its owners"},
	}
	if o.Once {
		for i := range invariants {
			invariants[i].Settle = 0
		}
	}
	return invariants
}

// amount formats v of resource name for messages: batch-cpu and mid-cpu as the integers nodes show them
// ("5000"), other resources as quantity.Format does ("500m" cpu, "8Gi" memory).
func amount(name corev1.ResourceName, v int64) string {
	if name == extension.BatchCPU || name == extension.MidCPU {
		return strconv.FormatInt(v, 10)
	}
	return quantity.Format(name, v)
}

// podRequests returns the pod's requests as the scheduler counts them, names normalised, in quantity.Value units.
func podRequests(pod *corev1.Pod) map[corev1.ResourceName]int64 {
	out := map[corev1.ResourceName]int64{}
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		n := extension.NormalizeResourceName(name)
		out[n] += quantity.Value(n, q)
	}
	return out
}

// podsByNode returns the active pods of each node.
func podsByNode(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if isActive(p) {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out
}

// podsFitNodes checks every node's static resources against its active pods' requests, and reports the pods
// seen bound to one node and then another.
func podsFitNodes(s *State) (int, []Finding) {
	var findings []Finding
	byNode := podsByNode(s.Pods)
	for _, node := range s.Nodes {
		sum := map[corev1.ResourceName]int64{corev1.ResourcePods: int64(len(byNode[node.Name]))}
		for _, p := range byNode[node.Name] {
			for name, v := range podRequests(p) {
				sum[name] += v
			}
		}
		for _, name := range sortedNames(sum) {
			if isDynamic(name) || sum[name] == 0 {
				continue
			}
			allocatable := quantity.ValueIn(node.Status.Allocatable, name)
			if sum[name] > allocatable {
				findings = append(findings, Finding{Object: "Node " + node.Name, Message: fmt.Sprintf("its %d active pods request %s %s, allocatable %s",
					len(byNode[node.Name]), amount(name, sum[name]), name, amount(name, allocatable))})
			}
		}
	}
	for _, r := range s.History.Rebindings {
		findings = append(findings, Finding{Object: "Pod " + r.Pod, Message: fmt.Sprintf("bound to node %s, then to %s", r.From, r.To)})
	}
	return len(s.Nodes), findings
}

// batchAtBind checks each binding seen of a pod requesting batch or mid resources: the requests of the pods
// bound to the node until then, the pod included, must be within the most the node offered between window
// before the binding and the binding. Each binding is checked once: it is marked checked in the history.
func batchAtBind(s *State, window time.Duration) (int, []Finding) {
	var findings []Finding
	checked := 0
	for uid, b := range s.History.Bindings {
		if b.Checked || b.Pod == nil {
			continue
		}
		b.Checked = true
		s.History.Bindings[uid] = b
		own := podRequests(b.Pod)
		if !slices.ContainsFunc(sortedNames(own), func(n corev1.ResourceName) bool { return isDynamic(n) && own[n] > 0 }) {
			continue
		}
		checked++
		sum := map[corev1.ResourceName]int64{}
		for other, ob := range s.History.Bindings {
			if ob.Node != b.Node || ob.Pod == nil || ob.At.After(b.At) || (other != uid && !stillActive(s, other)) {
				continue
			}
			for name, v := range podRequests(ob.Pod) {
				if isDynamic(name) {
					sum[name] += v
				}
			}
		}
		offered := maxOffered(s.History.Allocatable[b.Node], b.At.Add(-window), b.At)
		for _, name := range sortedNames(sum) {
			if own[name] > 0 && sum[name] > offered[name] {
				findings = append(findings, Finding{Object: "Pod " + podName(b.Pod), Message: fmt.Sprintf(
					"bound to node %s with %s %s requested there, the node offering at most %s in the %v before",
					b.Node, amount(name, sum[name]), name, amount(name, offered[name]), window)})
			}
		}
	}
	return checked, findings
}

// stillActive reports whether the pod with uid is in s and active.
func stillActive(s *State, uid types.UID) bool {
	for _, p := range s.Pods {
		if p.UID == uid {
			return isActive(p)
		}
	}
	return false
}

// maxOffered returns the most of each dynamic resource the samples show in [from, to]: the samples taken in it,
// and the last one taken before it, which still held at from.
func maxOffered(samples []AllocatableSample, from, to time.Time) map[corev1.ResourceName]int64 {
	out := map[corev1.ResourceName]int64{}
	take := func(a AllocatableSample) {
		for name, v := range a.Resources {
			out[name] = max(out[name], v)
		}
	}
	for i, a := range samples {
		if a.At.After(to) {
			break
		}
		if !a.At.Before(from) || i == len(samples)-1 || samples[i+1].At.After(from) {
			take(a)
		}
	}
	return out
}

// batchFollowsFormula recomputes each node's batch and mid resources with koord-manager's calculator and reports
// a node offering more than the result where koord-manager's update rule would have written the result.
func batchFollowsFormula(s *State, o Options) (int, []Finding) {
	snap, _, err := sloconfig.ParseTolerant(s.SLOConfig)
	if err != nil {
		// koord-manager keeps its last good version, which the checker does not know: nothing to compare with.
		return 0, nil
	}
	metrics := map[string]*slov1alpha1.NodeMetric{}
	for _, nm := range s.NodeMetrics {
		metrics[nm.Name] = nm
	}
	pods := map[string][]*corev1.Pod{}
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" {
			pods[p.Spec.NodeName] = append(pods[p.Spec.NodeName], p)
		}
	}
	var findings []Finding
	for _, node := range s.Nodes {
		strategy, _ := configuration.ColocationStrategyForNode(snap.Colocation, node)
		result := calculator.Calculate(calculator.Input{Node: node, NodeMetric: metrics[node.Name], Pods: pods[node.Name],
			Strategy: &strategy, Now: s.Now, UnreportedPodsUsageOnly: o.UnreportedPodsUsageOnly})
		var lastUpdate time.Time
		if e, err := extension.GetColocationExplanation(node.Annotations); err == nil && e != nil {
			lastUpdate = e.UpdateTime.Time
		}
		for _, e := range calculator.Excesses(node, &result, lastUpdate, &strategy, s.Now) {
			findings = append(findings, Finding{Object: "Node " + node.Name, Message: fmt.Sprintf(
				"offers %s %s, the formula gives %s (koord-manager's update rule: %s)",
				amount(e.Resource, e.Offered), e.Resource, amount(e.Resource, e.Result), e.Reason)})
		}
	}
	return len(s.Nodes), findings
}

// gangKey returns the gang of pod as "namespace/name", or "".
func gangKey(pod *corev1.Pod) string {
	if name := extension.GetGangName(pod); name != "" {
		return pod.Namespace + "/" + name
	}
	return ""
}

// gangsAllOrNothing reports the gangs whose members ever bound are fewer than their minimum, the first of them
// bound longer ago than the gang's waiting time, while members of the gang still exist.
func gangsAllOrNothing(s *State, defaultWait time.Duration) (int, []Finding) {
	type gang struct {
		min  int
		wait time.Duration
	}
	gangs := map[string]*gang{}
	for _, p := range s.Pods {
		key := gangKey(p)
		if key == "" || gangs[key] != nil {
			continue
		}
		g := &gang{wait: defaultWait}
		if n, err := extension.GetGangMinNum(p); err == nil && n > 0 {
			g.min = n
		}
		if d, err := extension.GetGangWaitingTime(p); err == nil && d > 0 {
			g.wait = d
		}
		gangs[key] = g
	}
	for _, pg := range s.PodGroups {
		if g := gangs[pg.Namespace+"/"+pg.Name]; g != nil {
			if g.min == 0 {
				g.min = int(pg.Spec.MinMember)
			}
			if t := pg.Spec.ScheduleTimeoutSeconds; t != nil && *t > 0 {
				g.wait = time.Duration(*t) * time.Second
			}
		}
	}
	var findings []Finding
	checked := 0
	for _, key := range sortedKeys(gangs) {
		g := gangs[key]
		rec := s.History.GangBound[key]
		if g.min <= 1 || rec == nil {
			continue
		}
		checked++
		if len(rec.Members) < g.min && s.Now.Sub(rec.FirstBound) > g.wait {
			findings = append(findings, Finding{Object: "Gang " + key, Message: fmt.Sprintf(
				"%d of its minimum %d members bound, the first %v ago, past its waiting time %v",
				len(rec.Members), g.min, s.Now.Sub(rec.FirstBound).Truncate(time.Second), g.wait)})
		}
	}
	return checked, findings
}

// quotasWithinRuntime reports quotas whose used exceeds their runtime annotation, when the revoke controller
// runs.
func quotasWithinRuntime(s *State, revoking bool) (int, []Finding) {
	if !revoking {
		return 0, nil
	}
	var findings []Finding
	checked := 0
	for _, q := range s.Quotas {
		raw, ok := q.Annotations[extension.AnnotationRuntime]
		if !ok {
			continue
		}
		var runtime corev1.ResourceList
		if err := json.Unmarshal([]byte(raw), &runtime); err != nil {
			findings = append(findings, Finding{Object: "ElasticQuota " + q.Namespace + "/" + q.Name, Message: "runtime annotation does not parse: " + err.Error()})
			continue
		}
		checked++
		for _, name := range sortedListNames(q.Status.Used) {
			r, limited := runtime[name]
			used := q.Status.Used[name]
			if limited && used.Cmp(r) > 0 {
				findings = append(findings, Finding{Object: "ElasticQuota " + q.Namespace + "/" + q.Name, Message: fmt.Sprintf(
					"uses %s %s, its runtime is %s", used.String(), name, r.String())})
			}
		}
	}
	return checked, findings
}

// isLS reports whether class is LSE, LSR or LS.
func isLS(q extension.QoSClass) bool {
	return q == extension.QoSLSE || q == extension.QoSLSR || q == extension.QoSLS
}

// lsPodsNotEvicted reports koordlet's evictions of LS pods not labelled eviction-enabled, and
// PodMigrationJobs that evicted an LS pod without a scheduled Reservation for its replacement.
func lsPodsNotEvicted(s *State) (int, []Finding) {
	var findings []Finding
	for _, e := range s.History.Evictions {
		c, ok := s.History.Pods[e.Pod]
		if ok && isLS(c.QoS) && !c.EvictionEnabled {
			findings = append(findings, Finding{Object: "Pod " + e.Name, Message: fmt.Sprintf("%s pod evicted by koordlet at %s: %s",
				c.QoS, e.At.Format(time.RFC3339), e.Message)})
		}
	}
	checked := s.History.EvictionsSeen
	for _, j := range s.Jobs {
		if j.Spec.PodRef == nil {
			continue
		}
		c, ok := s.History.Pods[j.Spec.PodRef.UID]
		if !ok || !isLS(c.QoS) {
			continue
		}
		checked++
		evicted := jobCondition(j, schedv1alpha1.PodMigrationJobConditionEviction)
		if evicted == nil || (evicted.Status != schedv1alpha1.PodMigrationJobConditionStatusTrue && evicted.Reason != schedv1alpha1.PodMigrationJobReasonEvicting) {
			continue
		}
		scheduled := jobCondition(j, schedv1alpha1.PodMigrationJobConditionReservationScheduled)
		if scheduled == nil || scheduled.Status != schedv1alpha1.PodMigrationJobConditionStatusTrue {
			findings = append(findings, Finding{Object: "PodMigrationJob " + j.Name, Message: fmt.Sprintf(
				"evicted %s pod %s without a Reservation scheduled for its replacement (mode %q)", c.QoS, c.Name, j.Spec.Mode)})
		}
	}
	return checked, findings
}

// jobCondition returns job's condition of type t, or nil.
func jobCondition(job *schedv1alpha1.PodMigrationJob, t schedv1alpha1.PodMigrationJobConditionType) *schedv1alpha1.PodMigrationJobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// jobFinished reports whether job is Succeeded, Failed or Aborted.
func jobFinished(job *schedv1alpha1.PodMigrationJob) bool {
	switch job.Status.Phase {
	case schedv1alpha1.PodMigrationJobSucceeded, schedv1alpha1.PodMigrationJobFailed, schedv1alpha1.PodMigrationJobAborted:
		return true
	}
	return false
}

// holdsResources reports whether a Reservation in phase p holds its node's resources.
func holdsResources(p schedv1alpha1.ReservationPhase) bool {
	return p != schedv1alpha1.ReservationSucceeded && p != schedv1alpha1.ReservationFailed
}

// migrationsEnd reports jobs not finished past their ttl, and finished jobs whose Reservation still holds
// resources.
func migrationsEnd(s *State, defaultTTL time.Duration) (int, []Finding) {
	reservations := map[string]*schedv1alpha1.Reservation{}
	for _, r := range s.Reservations {
		reservations[r.Name] = r
	}
	var findings []Finding
	for _, j := range s.Jobs {
		ttl := defaultTTL
		if j.Spec.TTL != nil && j.Spec.TTL.Duration > 0 {
			ttl = j.Spec.TTL.Duration
		}
		if !jobFinished(j) {
			if age := s.Now.Sub(j.CreationTimestamp.Time); age > ttl && j.DeletionTimestamp == nil && !j.Spec.Paused {
				findings = append(findings, Finding{Object: "PodMigrationJob " + j.Name, Message: fmt.Sprintf(
					"not ended %v after its creation, its ttl %v (phase %q, %s)", age.Truncate(time.Second), ttl, j.Status.Phase, j.Status.Message)})
			}
			continue
		}
		name := string(j.UID)
		if o := j.Spec.ReservationOptions; o != nil && o.ReservationRef != nil {
			name = o.ReservationRef.Name
		}
		r := reservations[name]
		if r == nil || !ownedBy(r, j.UID) {
			continue
		}
		if holdsResources(r.Status.Phase) && r.DeletionTimestamp == nil {
			findings = append(findings, Finding{Object: "PodMigrationJob " + j.Name, Message: fmt.Sprintf(
				"%s, its Reservation %s still holds resources (phase %q)", j.Status.Phase, r.Name, r.Status.Phase)})
		}
	}
	return len(s.Jobs), findings
}

// ownedBy reports whether the owner with uid controls r.
func ownedBy(r *schedv1alpha1.Reservation, uid types.UID) bool {
	for _, o := range r.OwnerReferences {
		if o.UID == uid && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// reservationsServeOwners reports pods allocated from a Reservation they are not an owner of.
func reservationsServeOwners(s *State) (int, []Finding) {
	reservations := map[string]*schedv1alpha1.Reservation{}
	for _, r := range s.Reservations {
		reservations[r.Name] = r
	}
	var findings []Finding
	checked := 0
	for _, p := range s.Pods {
		a, err := extension.GetReservationAllocated(p.Annotations)
		if err != nil || a == nil || extension.IsReservePod(p) {
			continue
		}
		r := reservations[a.Name]
		if r == nil || (a.UID != "" && r.UID != a.UID) {
			continue // gone: nothing left to check against
		}
		checked++
		owners, _ := cache.NewOwners(r.Spec.Owners)
		if !owners.Match(p) {
			findings = append(findings, Finding{Object: "Pod " + podName(p), Message: fmt.Sprintf(
				"allocated from Reservation %s, whose owners it does not match", r.Name)})
		}
	}
	return checked, findings
}

// sortedNames returns the keys of m in order.
func sortedNames(m map[corev1.ResourceName]int64) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(m))
}

// sortedListNames returns the resource names of l in order.
func sortedListNames(l corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(l))
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
