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

package explain

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordlet/podcgroups"
)

// Explainer reads what the explanations need from a cluster.
type Explainer struct {
	// Kube and Koord are the clients of the cluster.
	Kube  kubernetes.Interface
	Koord versioned.Interface
	// Clock is what ages are computed against; the real clock when nil.
	Clock clock.PassiveClock
	// KoordletPort is the port of koordlet's metrics endpoint on the nodes, through which Pod reads a running
	// pod's cgroup settings (the apiserver's node proxy); 0 skips them.
	KoordletPort int
}

func (e *Explainer) now() time.Time {
	if e.Clock != nil {
		return e.Clock.Now()
	}
	return clock.RealClock{}.Now()
}

// PodExplanation is `koordctl explain pod`: the pod's class and what happened to it.
type PodExplanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Phase is the pod's phase; "Terminating" while it is being deleted.
	Phase string `json:"phase"`
	// Node is the node the pod is bound to; "" while it waits.
	Node string `json:"node,omitempty"`
	// SchedulerName is the scheduler, and so the profile, the pod asked for.
	SchedulerName string `json:"schedulerName"`
	// QoSClass is Koordinator's QoS class (koordinator.sh/qosClass, or derived from the Kubernetes QoS class)
	// and KubeQoSClass the Kubernetes one.
	QoSClass     string `json:"qosClass"`
	KubeQoSClass string `json:"kubeQoSClass"`
	// PriorityClass is the Koordinator priority band the pod's priority falls in (koord-prod, koord-mid,
	// koord-batch, koord-free; "" outside them) and Priority the value.
	PriorityClass string `json:"priorityClass,omitempty"`
	Priority      *int32 `json:"priority,omitempty"`
	// Profiles are the ClusterColocationProfiles koord-manager applied to the pod when it was created.
	Profiles []string `json:"profiles,omitempty"`
	// ReclaimedResources are the batch and mid resources the pod's containers request and limit, summed.
	ReclaimedResources *ReclaimedResources `json:"reclaimedResources,omitempty"`
	// Scheduling is why the pod waits for a node; nil once it has one.
	Scheduling *SchedulingStory `json:"scheduling,omitempty"`
	// Placement is what koord-scheduler gave the pod besides a node: a Reservation, CPUs, devices.
	Placement *Placement `json:"placement,omitempty"`
	// Cgroups are the running pod's cgroup settings as the koordlet of its node reads them: what koordlet and
	// kubelet applied. CgroupsUnavailable says why they are missing for a running pod.
	Cgroups            *podcgroups.Pod `json:"cgroups,omitempty"`
	CgroupsUnavailable string          `json:"cgroupsUnavailable,omitempty"`
	// Quota is the ElasticQuota the pod is charged to, when the cluster has quotas.
	Quota *QuotaSummary `json:"quota,omitempty"`
	// Gang is the gang the pod is a member of.
	Gang *GangExplanation `json:"gang,omitempty"`
	// Disruptions are the evictions, preemptions and migrations the pod's events record.
	Disruptions []Event `json:"disruptions,omitempty"`
	// Events are the pod's latest events, newest last.
	Events []Event `json:"events,omitempty"`
	// Suggestions are what would let the pod run, derived from the above.
	Suggestions []string `json:"suggestions,omitempty"`
	// Warnings are annotations or objects that could not be read.
	Warnings []string `json:"warnings,omitempty"`

	now time.Time
}

// ReclaimedResources are a pod's batch and mid resources.
type ReclaimedResources struct {
	Requests corev1.ResourceList `json:"requests,omitempty"`
	Limits   corev1.ResourceList `json:"limits,omitempty"`
}

// SchedulingStory is why a pod has no node yet.
type SchedulingStory struct {
	// Reason and Message are the PodScheduled condition's; Since its last transition.
	Reason  string       `json:"reason,omitempty"`
	Message string       `json:"message,omitempty"`
	Since   *metav1.Time `json:"since,omitempty"`
	// Attempts is how many FailedScheduling events the scheduler recorded.
	Attempts int32 `json:"attempts,omitempty"`
	// Failure is the message taken apart, by plugin.
	Failure *SchedulingFailure `json:"failure,omitempty"`
	// NominatedNode is the node preemption made room on, when it did.
	NominatedNode string `json:"nominatedNode,omitempty"`
}

// Placement is what the scheduler allocated to a bound pod besides its node.
type Placement struct {
	// Reservation is the Reservation the pod was allocated from.
	Reservation string `json:"reservation,omitempty"`
	// CPUSet and NUMANodes are the CPUs and NUMA nodes NodeNUMAResource bound the pod to.
	CPUSet    string  `json:"cpuset,omitempty"`
	NUMANodes []int32 `json:"numaNodes,omitempty"`
	// Devices are the devices DeviceShare allocated, as "type minor: resources".
	Devices []string `json:"devices,omitempty"`
}

// Event is one event of an object.
type Event struct {
	Type     string      `json:"type"`
	Reason   string      `json:"reason"`
	Message  string      `json:"message"`
	Count    int32       `json:"count,omitempty"`
	Last     metav1.Time `json:"last"`
	Reporter string      `json:"reporter,omitempty"`
}

// disruptionReason matches the reasons of events that record a pod being evicted, preempted or migrated:
// koordlet's evictPodSuccess, the descheduler's migration events, kube-scheduler's Preempted, koord-scheduler's
// quota revocation.
var disruptionReason = regexp.MustCompile(`(?i)evict|preempt|migrat|revok|suppress`)

// maxEvents bounds the events an explanation lists.
const maxEvents = 10

// Pod explains the pod namespace/name.
func (e *Explainer) Pod(ctx context.Context, namespace, name string) (*PodExplanation, error) {
	pod, err := e.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	x := &PodExplanation{
		Namespace: pod.Namespace, Name: pod.Name, Phase: string(pod.Status.Phase), Node: pod.Spec.NodeName,
		SchedulerName: pod.Spec.SchedulerName, QoSClass: string(extension.GetPodQoSClassWithDefault(pod)),
		KubeQoSClass: string(extension.GetKubeQoSClass(pod)), Priority: pod.Spec.Priority, now: e.now(),
	}
	if pod.DeletionTimestamp != nil {
		x.Phase = "Terminating"
	}
	if pod.Spec.Priority != nil {
		if pc := extension.GetPriorityClassByValue(*pod.Spec.Priority); pc != extension.PriorityNone {
			x.PriorityClass = string(pc)
		}
	}
	if v := pod.Annotations[extension.AnnotationColocationProfiles]; v != "" {
		x.Profiles = strings.Split(v, ",")
	}
	x.ReclaimedResources = reclaimedResources(pod)
	events, err := e.events(ctx, namespace, "Pod", pod.UID)
	if err != nil {
		x.Warnings = append(x.Warnings, err.Error())
	}
	for _, ev := range events {
		if disruptionReason.MatchString(ev.Reason) {
			x.Disruptions = append(x.Disruptions, ev)
		}
	}
	x.Events = events[max(0, len(events)-maxEvents):]

	if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodPending {
		x.Scheduling = schedulingStory(pod, events)
		if f := x.Scheduling.Failure; f != nil {
			x.Suggestions = append(x.Suggestions, f.Suggestions()...)
		}
		if x.Scheduling.Reason == "" {
			x.Suggestions = append(x.Suggestions, fmt.Sprintf("no scheduler has tried the pod yet: is a scheduler named %q running (koord-scheduler's profiles are named by schedulerName)?", pod.Spec.SchedulerName))
		}
	} else {
		x.Placement, x.Warnings = placement(pod, x.Warnings)
		if pod.Status.Phase == corev1.PodRunning && e.KoordletPort > 0 {
			x.Cgroups, x.CgroupsUnavailable = e.cgroupsOf(ctx, pod)
		}
	}

	if q, err := e.quotaOf(ctx, pod); err != nil {
		x.Warnings = append(x.Warnings, err.Error())
	} else {
		x.Quota = q
	}
	if gang := extension.GetGangName(pod); gang != "" {
		g, err := e.Gang(ctx, pod.Namespace, gang)
		if err != nil {
			x.Warnings = append(x.Warnings, err.Error())
		} else {
			x.Gang = g
			if x.Scheduling != nil && g.Waiting() > 0 {
				x.Suggestions = append(x.Suggestions, fmt.Sprintf("gang %s needs %d more member pods: it has %d of min %d, and no member is scheduled before it has min", g.Name, g.Waiting(), g.Members, g.MinMember))
			}
		}
	}
	return x, nil
}

// reclaimedResources sums the batch and mid resources of the pod's containers; nil when it has none.
func reclaimedResources(pod *corev1.Pod) *ReclaimedResources {
	names := []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory, extension.MidCPU, extension.MidMemory}
	r := &ReclaimedResources{}
	add := func(dst *corev1.ResourceList, src corev1.ResourceList) {
		for _, n := range names {
			q, ok := src[n]
			if !ok {
				continue
			}
			if *dst == nil {
				*dst = corev1.ResourceList{}
			}
			sum := (*dst)[n]
			sum.Add(q)
			(*dst)[n] = sum
		}
	}
	for _, c := range pod.Spec.Containers {
		add(&r.Requests, c.Resources.Requests)
		add(&r.Limits, c.Resources.Limits)
	}
	if r.Requests == nil && r.Limits == nil {
		return nil
	}
	return r
}

// schedulingStory reads the PodScheduled condition and the FailedScheduling events.
func schedulingStory(pod *corev1.Pod, events []Event) *SchedulingStory {
	s := &SchedulingStory{NominatedNode: pod.Status.NominatedNodeName}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			s.Reason, s.Message = c.Reason, c.Message
			if !c.LastTransitionTime.IsZero() {
				s.Since = c.LastTransitionTime.DeepCopy()
			}
		}
	}
	var last string
	for _, ev := range events {
		if ev.Reason == "FailedScheduling" {
			s.Attempts += max(ev.Count, 1)
			last = ev.Message
		}
	}
	if s.Message == "" {
		s.Message = last
	}
	if s.Message != "" {
		f := ParseSchedulingFailure(s.Message)
		s.Failure = &f
	}
	return s
}

// placement reads the annotations koord-scheduler writes on a bound pod.
func placement(pod *corev1.Pod, warnings []string) (*Placement, []string) {
	p := &Placement{}
	if a, err := extension.GetReservationAllocated(pod.Annotations); err != nil {
		warnings = append(warnings, err.Error())
	} else if a != nil {
		p.Reservation = a.Name
	}
	if s, err := extension.GetResourceStatus(pod.Annotations); err != nil {
		warnings = append(warnings, err.Error())
	} else if s != nil {
		p.CPUSet = s.CPUSet
		for _, n := range s.NUMANodeResources {
			p.NUMANodes = append(p.NUMANodes, n.Node)
		}
	}
	if d, err := extension.GetDeviceAllocations(pod.Annotations); err != nil {
		warnings = append(warnings, err.Error())
	} else {
		for typ, allocs := range d {
			for _, a := range allocs {
				p.Devices = append(p.Devices, fmt.Sprintf("%s %s: %s", typ, allocationID(a), formatResources(a.Resources)))
			}
		}
		sort.Strings(p.Devices)
	}
	if p.Reservation == "" && p.CPUSet == "" && len(p.NUMANodes) == 0 && len(p.Devices) == 0 {
		return nil, warnings
	}
	return p, warnings
}

// events lists the events of the object with uid, oldest first.
func (e *Explainer) events(ctx context.Context, namespace, kind string, uid any) ([]Event, error) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.uid": fmt.Sprint(uid)}.AsSelector().String()
	list, err := e.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("events of %s %s/%v are not readable: %w", kind, namespace, uid, err)
		}
		return nil, fmt.Errorf("list events: %w", err)
	}
	out := make([]Event, 0, len(list.Items))
	for _, ev := range list.Items {
		last := ev.LastTimestamp
		if last.IsZero() {
			last = metav1.NewTime(ev.EventTime.Time)
		}
		if last.IsZero() {
			last = ev.CreationTimestamp
		}
		count := ev.Count
		if ev.Series != nil {
			count = ev.Series.Count
		}
		reporter := ev.Source.Component
		if reporter == "" {
			reporter = ev.ReportingController
		}
		out = append(out, Event{Type: ev.Type, Reason: ev.Reason, Message: ev.Message, Count: count, Last: last, Reporter: reporter})
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Last.Compare(b.Last.Time) })
	return out, nil
}

func (x *PodExplanation) printTable(p *printer) {
	p.section(fmt.Sprintf("Pod %s/%s", x.Namespace, x.Name))
	prio := ""
	if x.Priority != nil {
		prio = strconv.Itoa(int(*x.Priority))
		if x.PriorityClass != "" {
			prio = fmt.Sprintf("%s (%s)", prio, x.PriorityClass)
		}
	}
	p.fields("phase", x.Phase, "node", x.Node, "scheduler", x.SchedulerName,
		"qos class", fmt.Sprintf("%s (Kubernetes %s)", x.QoSClass, x.KubeQoSClass), "priority", prio,
		"profiles", strings.Join(x.Profiles, ", "))
	if r := x.ReclaimedResources; r != nil {
		p.section("Batch and mid resources")
		p.fields("requests", formatResources(r.Requests), "limits", formatResources(r.Limits))
		if len(x.Profiles) > 0 {
			p.printf("  (translated from cpu and memory by ClusterColocationProfile %s)\n", strings.Join(x.Profiles, ", "))
		}
	}
	if s := x.Scheduling; s != nil {
		p.section("Scheduling")
		since := ""
		if s.Since != nil {
			since = age(x.now, s.Since.Time) + " ago"
		}
		attempts := ""
		if s.Attempts > 0 {
			attempts = strconv.Itoa(int(s.Attempts))
		}
		p.fields("state", s.Reason, "since", since, "attempts", attempts, "nominated node", s.NominatedNode)
		if f := s.Failure; f != nil {
			switch {
			case f.Unparsed != "":
				p.fields("message", f.Unparsed)
			case f.PreFilter != nil:
				p.printf("  Rejected before any node was tried (all %d nodes):\n", f.Nodes)
				p.table([]string{"plugin", "reason"}, [][]string{{orUnknown(f.PreFilter.Plugin), f.PreFilter.Reason}})
			default:
				p.printf("  0 of %d nodes fit:\n", f.Nodes)
				rows := make([][]string, 0, len(f.Rejections))
				for _, r := range f.Rejections {
					rows = append(rows, []string{orUnknown(r.Plugin), strconv.Itoa(r.Nodes), r.Reason})
				}
				p.table([]string{"plugin", "nodes", "reason"}, rows)
			}
			if f.Preemption != "" {
				p.fields("preemption", f.Preemption)
			}
		}
	}
	if pl := x.Placement; pl != nil {
		p.section("Placement")
		numa := ""
		for i, n := range pl.NUMANodes {
			if i > 0 {
				numa += ","
			}
			numa += strconv.Itoa(int(n))
		}
		p.fields("reservation", pl.Reservation, "cpuset", pl.CPUSet, "numa nodes", numa, "devices", strings.Join(pl.Devices, "; "))
	}
	switch {
	case x.Cgroups != nil:
		p.section(fmt.Sprintf("Cgroups (cgroup %s, as the node's koordlet reads them)", x.Cgroups.CgroupVersion))
		printCgroups(p, x.Cgroups)
	case x.CgroupsUnavailable != "":
		p.section("Cgroups")
		p.printf("  not read: %s\n", x.CgroupsUnavailable)
	}
	if q := x.Quota; q != nil {
		p.section("Quota " + q.Name)
		q.printFields(p)
	}
	if g := x.Gang; g != nil {
		p.section("Gang " + g.Name)
		g.printSummary(p)
	}
	if len(x.Disruptions) > 0 {
		p.section("Evictions, preemptions and migrations")
		printEvents(p, x.now, x.Disruptions)
	}
	if len(x.Suggestions) > 0 {
		p.section("What would help")
		p.bullets(x.Suggestions)
	}
	if len(x.Events) > 0 {
		p.section("Events")
		printEvents(p, x.now, x.Events)
	}
	if len(x.Warnings) > 0 {
		p.section("Warnings")
		p.bullets(x.Warnings)
	}
}

func printEvents(p *printer, now time.Time, events []Event) {
	rows := make([][]string, 0, len(events))
	for _, ev := range events {
		count := ""
		if ev.Count > 1 {
			count = fmt.Sprintf(" (x%d)", ev.Count)
		}
		rows = append(rows, []string{age(now, ev.Last.Time), ev.Type, ev.Reason + count, ev.Reporter, ev.Message})
	}
	p.table([]string{"age", "type", "reason", "from", "message"}, rows)
}

func orUnknown(plugin string) string {
	if plugin == "" {
		return "-"
	}
	return plugin
}
