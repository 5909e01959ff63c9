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

package demo

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/sim"
)

// fakeSim returns a fixed snapshot.
type fakeSim struct{ snap sim.Snapshot }

func (f *fakeSim) Snapshot() sim.Snapshot { return f.snap }

// midPod makes p a koord-mid pod, as the mid profile does.
func midPod(p *corev1.Pod) *corev1.Pod {
	p.Labels[extension.LabelPodPriorityClass] = string(extension.PriorityMid)
	return p
}

// testPod returns a pod of the scenario in phase, BE when be, terminating when deleting.
func testPod(name string, be bool, phase corev1.PodPhase, deleting bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace, Labels: map[string]string{}},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if be {
		p.Labels[extension.LabelPodQoS] = string(extension.QoSBE)
	} else {
		p.Labels[extension.LabelPodQoS] = string(extension.QoSLS)
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

func TestSample(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n0"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			extension.BatchCPU: resource.MustParse("12500"), extension.MidCPU: resource.MustParse("3250"),
		}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
	} {
		if err := nodes.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{
		testPod("ls-running", false, corev1.PodRunning, false),
		testPod("be-running", true, corev1.PodRunning, false),
		testPod("be-running-2", true, corev1.PodRunning, false),
		testPod("be-evicted", true, corev1.PodRunning, true),
		testPod("be-pending", true, corev1.PodPending, false),
		testPod("be-done", true, corev1.PodSucceeded, false),
		midPod(testPod("mid-running", false, corev1.PodRunning, false)),
		midPod(testPod("mid-pending", false, corev1.PodPending, false)),
		midPod(testPod("mid-pending-2", false, corev1.PodPending, false)),
		midPod(testPod("mid-done", false, corev1.PodSucceeded, false)),
	} {
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	migrations := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, j := range []*schedv1alpha1.PodMigrationJob{
		testMigration("running", DefaultNamespace, schedv1alpha1.PodMigrationJobRunning),
		testMigration("succeeded", DefaultNamespace, schedv1alpha1.PodMigrationJobSucceeded),
		testMigration("failed", DefaultNamespace, schedv1alpha1.PodMigrationJobFailed),
		testMigration("aborted", DefaultNamespace, schedv1alpha1.PodMigrationJobAborted),
		testMigration("elsewhere", "other", schedv1alpha1.PodMigrationJobSucceeded),
	} {
		if err := migrations.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	s := &Scenario{Namespace: DefaultNamespace}
	fs := &fakeSim{snap: sim.Snapshot{
		Time: start.Add(90 * time.Minute),
		Nodes: []sim.NodeSnapshot{
			{Name: "n0", CPUCapacity: 32, Last: sim.Moment{NodeCPU: 10, LSCPU: 6, MidCPU: 1.5, BECPU: 2.4, BEDemandCPU: 3}},
			{Name: "n1", CPUCapacity: 32, Last: sim.Moment{NodeCPU: 8, LSCPU: 6.4}},
		},
		Total: sim.Counters{SuppressedMoments: 300, Evictions: 3, LSThresholdBreaches: 7},
	}}
	r := &runner{
		s: s, env: Env{Sim: fs}, start: start,
		nodes: corelisters.NewNodeLister(nodes), pods: corelisters.NewPodLister(pods),
		migrations: schedlisters.NewPodMigrationJobLister(migrations), migrationPhases: map[types.UID]schedv1alpha1.PodMigrationJobPhase{},
		migrationFailures: map[types.UID]string{},
		// n2 is not simulated.
		nodeNames: []string{"n0", "n1", "n2"},
		lastTotal: sim.Counters{SuppressedMoments: 100, Evictions: 1, LSThresholdBreaches: 7},
	}
	want := Sample{
		Elapsed: 90 * time.Minute, SimTime: start.Add(90 * time.Minute), Nodes: 2, CPUCapacity: 64,
		NodeCPU: 18, LSCPU: 12.4, MidUsedCPU: 1.5, BECPU: 2.4, BEDemandCPU: 3, BatchCPU: []float64{12.5, math.NaN(), math.NaN()},
		MidCPU:     []float64{3.25, math.NaN(), math.NaN()},
		NodeUtil:   []float64{31.25, 25, math.NaN()},
		Migrations: 4, MigrationsSucceeded: 1, MigrationsFailed: 2,
		FailedMigrations: []string{"aborted: Aborted, Timeout: why aborted", "failed: Failed, Timeout: why failed"},
		LSRunning:        1, BERunning: 2, BEPending: 1, BECompleted: 1, MidRunning: 1, MidPending: 2, MidCompleted: 1,
		Suppressed: 200, Evictions: 2, LSBreaches: 0,
	}
	got := r.sample()
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool {
		return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-9
	})); diff != "" {
		t.Errorf("sample (-want,+got):\n%s", diff)
	}
	// The next sample counts from this one.
	if got := r.sample(); got.Suppressed != 0 || got.Evictions != 0 {
		t.Errorf("a second sample without new events counted %d suppressed moments and %d evictions", got.Suppressed, got.Evictions)
	}
	// A job the descheduler deletes after its TTL still counts, in its last phase seen; the running one ends.
	for _, name := range []string{"succeeded", "failed"} {
		if err := migrations.Delete(testMigration(name, DefaultNamespace, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrations.Update(testMigration("running", DefaultNamespace, schedv1alpha1.PodMigrationJobSucceeded)); err != nil {
		t.Fatal(err)
	}
	got = r.sample()
	if diff := cmp.Diff([]int{4, 2, 2}, []int{got.Migrations, got.MigrationsSucceeded, got.MigrationsFailed}); diff != "" {
		t.Errorf("migrations, succeeded, failed after deletions (-want,+got):\n%s", diff)
	}
}

// testMigration returns a PodMigrationJob, UID its name, of a pod in namespace.
func testMigration(name, namespace string, phase schedv1alpha1.PodMigrationJobPhase) *schedv1alpha1.PodMigrationJob {
	return &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec:       schedv1alpha1.PodMigrationJobSpec{PodRef: &corev1.ObjectReference{Namespace: namespace, Name: "pod-" + name}},
		Status:     schedv1alpha1.PodMigrationJobStatus{Phase: phase, Reason: "Timeout", Message: "why " + name},
	}
}

// TestReplicaSet: a service is a ReplicaSet whose selector picks its pods, named <service>-<i> by the runner,
// and whose template is the service pod without a node.
func TestReplicaSet(t *testing.T) {
	s, err := Load([]byte(validScenario))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, env: Env{Speed: 60}}
	rs := r.replicaSet(&s.Services[0], `{"cpu":{"type":"constant","value":"1"}}`)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	pod := r.servicePod(&s.Services[0], "web-0", "")
	got := []any{rs.Name, rs.Namespace, *rs.Spec.Replicas, selector.Matches(labels.Set(pod.Labels)),
		selector.Matches(labels.Set(rs.Spec.Template.Labels)), rs.Spec.Template.Spec.NodeName,
		rs.Spec.Template.Annotations[sim.AnnotationUsage], rs.Spec.Template.Labels[extension.LabelPodQoS]}
	want := []any{"web", s.Namespace, int32(s.Services[0].Replicas), true, true, "", `{"cpu":{"type":"constant","value":"1"}}`, "LS"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReplicaSet (-want,+got):\n%s", diff)
	}
	other := r.servicePod(&Service{Name: "web-canary", Requests: s.Services[0].Requests}, "web-canary-0", "")
	if selector.Matches(labels.Set(other.Labels)) {
		t.Errorf("the ReplicaSet of web selects the pods of service web-canary")
	}
}

func TestPods(t *testing.T) {
	s, err := Load([]byte(validScenario))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, env: Env{Speed: 60}}
	svc := r.servicePod(&s.Services[0], "web-0", `{"cpu":{"type":"constant","value":"1"}}`)
	job := r.jobPod(&s.Jobs[0], "batch-1", "batch-1-0", "")
	midService, midJob := s.Services[0], s.Jobs[0]
	midService.Tier, midJob.Tier = TierMid, TierMid
	type view struct {
		Labels      map[string]string
		Annotations map[string]string
		Priority    string
		Scheduler   string
		Requests    corev1.ResourceList
		Restart     corev1.RestartPolicy
	}
	viewOf := func(p *corev1.Pod) view {
		return view{p.Labels, p.Annotations, p.Spec.PriorityClassName, p.Spec.SchedulerName, p.Spec.Containers[0].Resources.Requests, p.Spec.RestartPolicy}
	}
	tests := map[string]struct {
		tc   *corev1.Pod
		want view
	}{
		"service pod: LS, koord-prod": {
			tc: svc,
			want: view{
				Labels:      map[string]string{LabelScenario: "small", LabelWorkload: "web", extension.LabelPodQoS: "LS"},
				Annotations: map[string]string{sim.AnnotationUsage: `{"cpu":{"type":"constant","value":"1"}}`},
				Priority:    "koord-prod", Scheduler: "koord-scheduler",
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			},
		},
		"job pod: koord-batch, for the profile, plain requests": {
			tc: job,
			want: view{
				Labels: map[string]string{LabelScenario: "small", LabelWorkload: "batch", LabelRun: "batch-1", LabelBatch: "true"},
				// A run duration of 1h at 60 times real speed.
				Annotations: map[string]string{cluster.AnnotationPodCompleteDelay: "1m0s"},
				Priority:    "koord-batch", Scheduler: "koord-scheduler", Restart: corev1.RestartPolicyNever,
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			},
		},
		"mid service pod: LS, koord-mid, for the mid profile": {
			tc: r.servicePod(&midService, "web-0", ""),
			want: view{
				Labels:   map[string]string{LabelScenario: "small", LabelWorkload: "web", extension.LabelPodQoS: "LS", LabelMid: "true"},
				Priority: "koord-mid", Scheduler: "koord-scheduler",
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			},
		},
		"mid job pod: koord-mid, for the mid profile": {
			tc: r.jobPod(&midJob, "batch-1", "batch-1-0", ""),
			want: view{
				Labels:      map[string]string{LabelScenario: "small", LabelWorkload: "batch", LabelRun: "batch-1", LabelMid: "true"},
				Annotations: map[string]string{cluster.AnnotationPodCompleteDelay: "1m0s"},
				Priority:    "koord-mid", Scheduler: "koord-scheduler", Restart: corev1.RestartPolicyNever,
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, viewOf(tc.tc)); diff != "" {
				t.Errorf("pod (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestBatchJob: a job's arrival is a Job of Count completions, Parallelism at a time, whose evicted pods do not
// count against its backoff limit, with the job pod as template.
func TestBatchJob(t *testing.T) {
	s, err := Load([]byte(validScenario))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, env: Env{Speed: 60}}
	j := r.batchJob(&s.Jobs[0], "batch-1", "")
	got := []any{j.Name, j.Namespace, *j.Spec.Completions, *j.Spec.Parallelism, j.Spec.PodFailurePolicy.Rules[0].Action,
		j.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Type, j.Spec.Template.Labels[LabelBatch], j.Spec.Template.Namespace,
		j.Spec.Template.Spec.RestartPolicy}
	want := []any{"batch-1", s.Namespace, int32(12), int32(6), batchv1.PodFailurePolicyActionIgnore, corev1.DisruptionTarget, "true", "",
		corev1.RestartPolicyNever}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Job (-want,+got):\n%s", diff)
	}
}
