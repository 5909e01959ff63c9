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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// list builds a resource list from name/quantity pairs.
func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// node returns a node whose capacity and allocatable are the pairs.
func node(name string, pairs ...string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Capacity: list(pairs...), Allocatable: list(pairs...)}}
}

// pod returns a running pod on nodeName (unbound when empty) with one container requesting the pairs.
func pod(name, nodeName string, pairs ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{},
			Annotations: map[string]string{}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: list(pairs...)}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// run evaluates the invariant named name on s with a fresh history unless s has one.
func run(t *testing.T, name string, o Options, s *State) (int, []Finding) {
	t.Helper()
	if s.History == nil {
		s.History = NewHistory()
	}
	for _, inv := range Invariants(o) {
		if inv.Name == name {
			return inv.Check(s)
		}
	}
	t.Fatalf("no invariant %q", name)
	return 0, nil
}

func TestPodsFitNodes(t *testing.T) {
	succeeded := pod("done", "n1", "cpu", "1")
	succeeded.Status.Phase = corev1.PodSucceeded
	s := &State{
		Now:   t0,
		Nodes: []*corev1.Node{node("n1", "cpu", "4", "memory", "8Gi", "pods", "110", "kubernetes.io/batch-cpu", "1000"), node("n2", "cpu", "4", "pods", "2")},
		Pods: []*corev1.Pod{
			// n1: 2 + 1.5 + 1 = 4.5 cpu > 4; batch-cpu 3000 > 1000 is not a static resource.
			pod("a", "n1", "cpu", "2"), pod("b", "n1", "cpu", "1500m", "kubernetes.io/batch-cpu", "3000"), pod("d", "n1", "cpu", "1"),
			succeeded,
			// n2: 3 pods for 2, within cpu.
			pod("x", "n2"), pod("y", "n2"), pod("z", "n2"),
			pod("pending", "", "cpu", "100"),
		},
		History: NewHistory(),
	}
	s.History.Rebindings = []Rebinding{{Pod: "ns/moved", From: "n1", To: "n2"}}
	checked, got := run(t, "pods-fit-nodes", Options{}, s)
	want := []Finding{
		{Object: "Node n1", Message: "its 3 active pods request 4500m cpu, allocatable 4"},
		{Object: "Node n2", Message: "its 3 active pods request 3 pods, allocatable 2"},
		{Object: "Pod ns/moved", Message: "bound to node n1, then to n2"},
	}
	if diff := cmp.Diff(want, got); diff != "" || checked != 2 {
		t.Errorf("checked %d (want 2), findings (-want,+got):\n%s", checked, diff)
	}
}

func TestBatchCapacityAtBind(t *testing.T) {
	c := New(Options{})
	batch := func(milli string) *corev1.Node { return node("n1", "cpu", "8", "kubernetes.io/batch-cpu", milli) }
	// n1 offered 4 batch cores from t0, 2 from t0+10s.
	c.ObserveNode(batch("4000"), t0)
	c.ObserveNode(batch("2000"), t0.Add(10*time.Second))
	// old was there before the checker: not checked at bind.
	c.ObservePod(pod("old", "n1", "kubernetes.io/batch-cpu", "1000"), t0, true)
	// p1 bound at t0+20s asks 3 cores: with old, 4 of the most offered in the minute before, 4 (at t0).
	c.ObservePod(pod("p1", "n1", "kubernetes.io/batch-cpu", "3000"), t0.Add(20*time.Second), false)
	// p2 bound at t0+90s asks 2: the minute before saw only 2 offered, and old and p1 hold 4.
	c.ObservePod(pod("p2", "n1", "kubernetes.io/batch-cpu", "2000"), t0.Add(90*time.Second), false)
	// An LS pod requesting no batch resources is not checked.
	c.ObservePod(pod("ls", "n1", "cpu", "1"), t0.Add(90*time.Second), false)
	s := &State{Now: t0.Add(95 * time.Second), Pods: []*corev1.Pod{
		pod("old", "n1", "kubernetes.io/batch-cpu", "1000"), pod("p1", "n1", "kubernetes.io/batch-cpu", "3000"),
		pod("p2", "n1", "kubernetes.io/batch-cpu", "2000"), pod("ls", "n1", "cpu", "1"),
	}}
	c.Evaluate(s)
	want := []Violation{{Invariant: "batch-capacity-at-bind", Object: "Pod ns/p2",
		Message:   "bound to node n1 with 6000 kubernetes.io/batch-cpu requested there, the node offering at most 2000 in the 1m0s before",
		FirstSeen: s.Now, Since: s.Now}}
	r := c.Report()
	if diff := cmp.Diff(want, r.Violations()); diff != "" {
		t.Errorf("violations (-want,+got):\n%s", diff)
	}
	if got := r.Results[1].Checks; got != 2 {
		t.Errorf("bindings checked = %d, want 2 (p1, p2)", got)
	}
	// Each binding is checked once.
	s.Now = s.Now.Add(time.Second)
	if v := c.Evaluate(s); len(v) != 0 {
		t.Errorf("second evaluation found %v", v)
	}
}

// sloConfig returns the SLO ConfigMap with colocation-config value data.
func sloConfig(data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configuration.ConfigNamespace, Name: configuration.SLOCtrlConfigMap},
		Data: map[string]string{configuration.ColocationConfigKey: data}}
}

func TestBatchFollowsFormula(t *testing.T) {
	// A node of 10 cores and 20Gi using 2 cores and 4Gi, 1 core and 2Gi of them the system's, no pods. With the
	// default reclaim percents (60 cpu, 65 memory) and the usage policy:
	//   batch-cpu    = 10 − 10 × 40% − 1 − 0 = 5 cores = 5000
	//   batch-memory = 20Gi − 20Gi × 35% − 2Gi − 0 = 11Gi
	nm := &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: slov1alpha1.NodeMetricStatus{
		UpdateTime: &metav1.Time{Time: t0.Add(-10 * time.Second)},
		NodeMetric: &slov1alpha1.NodeMetricInfo{
			NodeUsage:   slov1alpha1.ResourceMap{ResourceList: list("cpu", "2", "memory", "4Gi")},
			SystemUsage: slov1alpha1.ResourceMap{ResourceList: list("cpu", "1", "memory", "2Gi")},
		},
	}}
	offering := func(batchCPU string) *corev1.Node {
		n := node("n1", "cpu", "10", "memory", "20Gi", "kubernetes.io/batch-cpu", batchCPU, "kubernetes.io/batch-memory", "11Gi")
		n.Annotations = map[string]string{extension.AnnotationColocationExplanation: `{"updateTime":"` + t0.Add(-time.Minute).Format(time.RFC3339) + `"}`}
		return n
	}
	tests := map[string]struct {
		node   *corev1.Node
		config string
		want   []Finding
	}{
		"the formula's value":   {node: offering("5000"), config: `{"enable": true}`},
		"less than the formula": {node: offering("4500"), config: `{"enable": true}`},
		"more, within resourceDiffThreshold and updateTimeThresholdSeconds": {
			// 5400 − 5000 = 400 ≤ 10% of 5400, and the last update was a minute ago (< 300s): left in place.
			node: offering("5400"), config: `{"enable": true}`},
		"more, beyond resourceDiffThreshold": {
			// 7000 − 5000 = 2000 > 10% of 7000.
			node: offering("7000"), config: `{"enable": true}`,
			want: []Finding{{Object: "Node n1", Message: "offers 7000 kubernetes.io/batch-cpu, the formula gives 5000 (koord-manager's update rule: DiffExceeded)"}},
		},
		"colocation off: nothing may be offered": {
			node: offering("5000"), config: `{"enable": false}`,
			want: []Finding{
				{Object: "Node n1", Message: "offers 5000 kubernetes.io/batch-cpu, the formula gives 0 (koord-manager's update rule: ResourceRemoved)"},
				{Object: "Node n1", Message: "offers 11Gi kubernetes.io/batch-memory, the formula gives 0 (koord-manager's update rule: ResourceRemoved)"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &State{Now: t0, Nodes: []*corev1.Node{tc.node}, NodeMetrics: []*slov1alpha1.NodeMetric{nm}, SLOConfig: sloConfig(tc.config)}
			_, got := run(t, "batch-follows-formula", Options{}, s)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGangsAllOrNothing(t *testing.T) {
	c := New(Options{})
	member := func(name, gang string) *corev1.Pod {
		p := pod(name, "n1")
		p.Annotations[extension.AnnotationGangName] = gang
		p.Annotations[extension.AnnotationGangMinNum] = "3"
		p.Annotations[extension.AnnotationGangWaitTime] = "30s"
		return p
	}
	// Gang "half": 2 of 3 members bound at t0; gang "whole": 3 bound.
	half := []*corev1.Pod{member("h1", "half"), member("h2", "half")}
	whole := []*corev1.Pod{member("w1", "whole"), member("w2", "whole"), member("w3", "whole")}
	pending := member("h3", "half")
	pending.Spec.NodeName = ""
	for _, p := range append(half, whole...) {
		c.ObservePod(p, t0, false)
	}
	pods := append(append(append([]*corev1.Pod{}, half...), whole...), pending)
	if v := c.Evaluate(&State{Now: t0.Add(20 * time.Second), Pods: pods}); len(v) != 0 {
		t.Fatalf("within the waiting time: %v", v)
	}
	got := c.Evaluate(&State{Now: t0.Add(40 * time.Second), Pods: pods})
	want := []Violation{{Invariant: "gangs-all-or-nothing", Object: "Gang ns/half",
		Message:   "2 of its minimum 3 members bound, the first 40s ago, past its waiting time 30s",
		FirstSeen: t0.Add(40 * time.Second), Since: t0.Add(40 * time.Second)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want,+got):\n%s", diff)
	}
}

func TestQuotasWithinRuntime(t *testing.T) {
	quota := func(name, runtime string, used corev1.ResourceList) *schedsigsv1alpha1.ElasticQuota {
		return &schedsigsv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Annotations: map[string]string{extension.AnnotationRuntime: runtime}}, Status: schedsigsv1alpha1.ElasticQuotaStatus{Used: used}}
	}
	s := &State{Now: t0, Quotas: []*schedsigsv1alpha1.ElasticQuota{
		quota("over", `{"cpu":"4","memory":"8Gi"}`, list("cpu", "5", "memory", "8Gi")),
		quota("within", `{"cpu":"4"}`, list("cpu", "4")),
		quota("broken", `{cpu}`, nil),
	}}
	_, got := run(t, "quotas-within-runtime", Options{QuotaRevokeDelay: 2 * time.Minute}, s)
	want := []Finding{
		{Object: "ElasticQuota ns/over", Message: "uses 5 cpu, its runtime is 4"},
		{Object: "ElasticQuota ns/broken", Message: "runtime annotation does not parse: invalid character 'c' looking for beginning of object key string"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want,+got):\n%s", diff)
	}
	if _, got := run(t, "quotas-within-runtime", Options{}, s); got != nil {
		t.Errorf("without the revoke controller: %v", got)
	}
	// A quota over its runtime is a violation after twice the delay (a new leader counts it afresh) and 30s.
	for _, inv := range Invariants(Options{QuotaRevokeDelay: 2 * time.Minute}) {
		if inv.Name == "quotas-within-runtime" && inv.Settle != 270*time.Second {
			t.Errorf("settle = %v, want 4m30s", inv.Settle)
		}
	}
}

func TestLSPodsNotEvicted(t *testing.T) {
	c := New(Options{})
	classed := func(name string, qos extension.QoSClass, enabled bool) *corev1.Pod {
		p := pod(name, "n1")
		p.Labels[extension.LabelPodQoS] = string(qos)
		if enabled {
			p.Labels[extension.LabelPodEvictEnabled] = "true"
		}
		c.ObservePod(p, t0, true)
		return p
	}
	for _, p := range []*corev1.Pod{classed("web", extension.QoSLS, false), classed("batch", extension.QoSBE, false), classed("opted-in", extension.QoSLS, true)} {
		c.ObserveEvent(&corev1.Event{Reason: evictor.EventReasonEvicted, Message: "evict Pod:ns/" + p.Name,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: p.Name, UID: p.UID}, LastTimestamp: metav1.NewTime(t0)})
	}
	job := func(name, pod string, scheduled bool) *schedv1alpha1.PodMigrationJob {
		j := &schedv1alpha1.PodMigrationJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedv1alpha1.PodMigrationJobSpec{
			PodRef: &corev1.ObjectReference{Namespace: "ns", Name: pod, UID: types.UID("uid-" + pod)}, Mode: schedv1alpha1.PodMigrationJobModeEvictionDirectly}}
		j.Status.Conditions = []schedv1alpha1.PodMigrationJobCondition{{Type: schedv1alpha1.PodMigrationJobConditionEviction, Status: schedv1alpha1.PodMigrationJobConditionStatusTrue}}
		if scheduled {
			j.Spec.Mode = schedv1alpha1.PodMigrationJobModeReservationFirst
			j.Status.Conditions = append(j.Status.Conditions, schedv1alpha1.PodMigrationJobCondition{Type: schedv1alpha1.PodMigrationJobConditionReservationScheduled,
				Status: schedv1alpha1.PodMigrationJobConditionStatusTrue})
		}
		return j
	}
	got := c.Evaluate(&State{Now: t0, Jobs: []*schedv1alpha1.PodMigrationJob{job("direct", "web", false), job("reserved", "web", true), job("be", "batch", false)}})
	var objects []string
	for _, v := range got {
		objects = append(objects, v.Object)
	}
	if diff := cmp.Diff([]string{"Pod ns/web", "PodMigrationJob direct"}, objects); diff != "" {
		t.Errorf("violations (-want,+got):\n%s", diff)
	}
}

func TestMigrationsEnd(t *testing.T) {
	owned := func(name string, job types.UID, phase schedv1alpha1.ReservationPhase) *schedv1alpha1.Reservation {
		return &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{UID: job, Controller: ptr.To(true)}}},
			Status: schedv1alpha1.ReservationStatus{Phase: phase}}
	}
	job := func(name string, created time.Time, phase schedv1alpha1.PodMigrationJobPhase) *schedv1alpha1.PodMigrationJob {
		return &schedv1alpha1.PodMigrationJob{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)},
			Status: schedv1alpha1.PodMigrationJobStatus{Phase: phase}}
	}
	s := &State{Now: t0,
		Jobs: []*schedv1alpha1.PodMigrationJob{
			job("stuck", t0.Add(-6*time.Minute), schedv1alpha1.PodMigrationJobRunning),
			job("young", t0.Add(-time.Minute), schedv1alpha1.PodMigrationJobRunning),
			job("failed-holding", t0.Add(-time.Minute), schedv1alpha1.PodMigrationJobFailed),
			job("succeeded", t0.Add(-time.Minute), schedv1alpha1.PodMigrationJobSucceeded),
		},
		Reservations: []*schedv1alpha1.Reservation{
			owned("failed-holding", "failed-holding", schedv1alpha1.ReservationAvailable),
			owned("succeeded", "succeeded", schedv1alpha1.ReservationSucceeded),
		},
	}
	_, got := run(t, "migrations-end", Options{}, s)
	want := []Finding{
		{Object: "PodMigrationJob stuck", Message: `not ended 6m0s after its creation, its ttl 5m0s (phase "Running", )`},
		{Object: "PodMigrationJob failed-holding", Message: `Failed, its Reservation failed-holding still holds resources (phase "Available")`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want,+got):\n%s", diff)
	}
}

func TestReservationsServeOwners(t *testing.T) {
	r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "uid-r"}, Spec: schedv1alpha1.ReservationSpec{
		Owners: []schedv1alpha1.ReservationOwner{{Controller: &schedv1alpha1.ReservationControllerReference{
			OwnerReference: metav1.OwnerReference{Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: ptr.To(true)}, Namespace: "ns"}}}}}
	allocated := func(name string, controller types.UID) *corev1.Pod {
		p := pod(name, "n1")
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "x", UID: controller, Controller: ptr.To(true)}}
		p.Annotations[extension.AnnotationReservationAllocated] = `{"name":"r","uid":"uid-r"}`
		return p
	}
	s := &State{Now: t0, Reservations: []*schedv1alpha1.Reservation{r},
		Pods: []*corev1.Pod{allocated("owner", "uid-web"), allocated("stranger", "uid-other")}}
	checked, got := run(t, "reservations-serve-owners", Options{}, s)
	want := []Finding{{Object: "Pod ns/stranger", Message: "allocated from Reservation r, whose owners it does not match"}}
	if diff := cmp.Diff(want, got); diff != "" || checked != 2 {
		t.Errorf("checked %d (want 2), findings (-want,+got):\n%s", checked, diff)
	}
}

// TestSettle: a finding becomes a violation once it lasted its invariant's settle time, is counted once while
// it lasts, and again if it comes back after it was gone.
func TestSettle(t *testing.T) {
	c := New(Options{Settle: 5 * time.Second})
	over := &State{Nodes: []*corev1.Node{node("n1", "cpu", "1", "pods", "10")}, Pods: []*corev1.Pod{pod("a", "n1", "cpu", "2")}}
	fine := &State{Nodes: []*corev1.Node{node("n1", "cpu", "4", "pods", "10")}, Pods: []*corev1.Pod{pod("a", "n1", "cpu", "2")}}
	at := func(s *State, d time.Duration) int {
		cp := *s
		cp.Now = t0.Add(d)
		return len(c.Evaluate(&cp))
	}
	steps := []struct {
		s    *State
		d    time.Duration
		want int
	}{{over, 0, 0}, {over, 3 * time.Second, 0}, {over, 6 * time.Second, 1}, {over, 7 * time.Second, 0}, {fine, 8 * time.Second, 0},
		{over, 9 * time.Second, 0}, {over, 15 * time.Second, 1}}
	for i, st := range steps {
		if got := at(st.s, st.d); got != st.want {
			t.Errorf("step %d at +%v: %d new violations, want %d", i, st.d, got, st.want)
		}
	}
	if got := len(c.Report().Results[0].Violations); got != 2 {
		t.Errorf("pods-fit-nodes violations = %d, want 2", got)
	}
	// Once: no settle time.
	once := New(Options{Settle: 5 * time.Second, Once: true})
	cp := *over
	cp.Now = t0
	if got := len(once.Evaluate(&cp)); got != 1 {
		t.Errorf("once: %d violations, want 1", got)
	}
}
