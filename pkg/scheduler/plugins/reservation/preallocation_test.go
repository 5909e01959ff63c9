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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// preAllocationResult is what one scheduling cycle of a pre-allocating reserve pod on n1 gives.
type preAllocationResult struct {
	PreFilter plugintest.Status
	Filter    plugintest.Status
	Score     int64
	// Taken are the pods Reserve records as the Reservation's allocations.
	Taken []string
	// Assumed are the pods the cache holds as allocating a reservation after Reserve, and not before.
	Assumed []string
}

func TestPreAllocation(t *testing.T) {
	// n1 has 4 cpu; web-0 (2 cpu, priority 1) and web-1 (1 cpu, priority 10) run on it: 1 cpu is free.
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "4", "memory", "8Gi", "pods", "110")).Obj()
	web := func(name, cpu, priority string) *corev1.Pod {
		return utiltesting.MakePod(name).Node("n1").
			Labels(map[string]string{"app": "web", extension.LabelPodPreAllocatable: "true"}).
			Annotation(extension.AnnotationPodPreAllocatablePriority, priority).
			Req(utiltesting.Resources("cpu", cpu, "memory", "1Gi")).Obj()
	}
	running := []*corev1.Pod{web("web-0", "2", "1"), web("web-1", "1", "10")}
	preAllocating := func(cpu string, edits ...func(*schedv1alpha1.Reservation)) *schedv1alpha1.Reservation {
		r := reservation("r", "", utiltesting.Resources("cpu", cpu), byLabel("web"))
		r.Spec.PreAllocation = true
		r.Spec.AllocatePolicy = schedv1alpha1.ReservationAllocatePolicyRestricted
		r.Spec.AllocateOnce = new(false)
		for _, e := range edits {
			e(r)
		}
		return r
	}
	policy := func(r *schedv1alpha1.Reservation) *schedv1alpha1.ReservationPreAllocationPolicy {
		if r.Spec.PreAllocationPolicy == nil {
			r.Spec.PreAllocationPolicy = &schedv1alpha1.ReservationPreAllocationPolicy{}
		}
		return r.Spec.PreAllocationPolicy
	}
	multiple := func(r *schedv1alpha1.Reservation) { policy(r).EnableMultiple = true }
	clusterMode := func(r *schedv1alpha1.Reservation) { policy(r).Mode = schedv1alpha1.ReservationPreAllocationModeCluster }
	required := func(r *schedv1alpha1.Reservation) {
		r.Labels = map[string]string{extension.LabelPreAllocationRequired: "true"}
	}
	ok := plugintest.Status{Code: fwk.Success}
	tests := map[string]struct {
		resvs  []*schedv1alpha1.Reservation
		pods   []*corev1.Pod
		config *config.PreAllocationConfig
		want   preAllocationResult
	}{
		"takes the pod with which it fits: 1 free + web-0's 2": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("3")},
			want:  preAllocationResult{PreFilter: ok, Filter: ok, Score: 66, Taken: []string{"web-0"}, Assumed: []string{"web-0"}},
		},
		"takes a pod even when free resources suffice, the one that fills it most": {
			// web-0's 2 cpu would overfill it; web-1 fills it.
			resvs: []*schedv1alpha1.Reservation{preAllocating("1")},
			want:  preAllocationResult{PreFilter: ok, Filter: ok, Score: 100, Taken: []string{"web-1"}, Assumed: []string{"web-1"}},
		},
		"preferNoPreAllocatedPods: free resources first": {
			resvs:  []*schedv1alpha1.Reservation{preAllocating("1")},
			config: &config.PreAllocationConfig{PreferNoPreAllocatedPods: true},
			want:   preAllocationResult{PreFilter: ok, Filter: ok, Score: 0},
		},
		"one pod is not enough and free resources neither": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("4")},
			want: preAllocationResult{PreFilter: ok, Filter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				"node cpu: 1 free, 2 from pre-allocated pods, reservation requests 4; " +
					"node cpu: 1 free, 1 from pre-allocated pods, reservation requests 4; " +
					"node cpu: 1 free, reservation requests 4",
			}}},
		},
		"several pods, most filling first, until it fits": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("4", multiple)},
			want:  preAllocationResult{PreFilter: ok, Filter: ok, Score: 33, Taken: []string{"web-0", "web-1"}, Assumed: []string{"web-0", "web-1"}},
		},
		"several pods: the first is enough": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("2500m", multiple)},
			want:  preAllocationResult{PreFilter: ok, Filter: ok, Score: 50, Taken: []string{"web-0"}, Assumed: []string{"web-0"}},
		},
		"several pods: a pod that would overfill it is skipped": {
			// web-0 (2) would be above 1500m; web-1 (1) fits and 1 free + 1 ≥ 1500m.
			resvs: []*schedv1alpha1.Reservation{preAllocating("1500m", multiple)},
			want:  preAllocationResult{PreFilter: ok, Filter: ok, Score: 50, Taken: []string{"web-1"}, Assumed: []string{"web-1"}},
		},
		"another reservation's held resources are not free": {
			resvs: []*schedv1alpha1.Reservation{
				preAllocating("3"),
				edited(reservation("r0", "n1", utiltesting.Resources("cpu", "1"), byLabel("db")), multiUse),
			},
			want: preAllocationResult{PreFilter: ok, Filter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				`node cpu: 1 free, 1 held by reservation "r0", 2 from pre-allocated pods, reservation requests 3; ` +
					`node cpu: 1 free, 1 held by reservation "r0", 1 from pre-allocated pods, reservation requests 3; ` +
					`node cpu: 1 free, 1 held by reservation "r0", reservation requests 3`,
			}}},
		},
		"a pod another reservation allocates is not pre-allocatable": {
			resvs: []*schedv1alpha1.Reservation{
				preAllocating("2"),
				edited(reservation("r0", "n1", utiltesting.Resources("cpu", "2"), byLabel("web")), multiUse),
			},
			pods: []*corev1.Pod{allocating(web("web-0", "2", "1"), "r0"), web("web-1", "1", "10")},
			// r0 is fully allocated by web-0; web-1 and the free cpu make 2.
			want: preAllocationResult{PreFilter: ok, Filter: ok, Score: 50, Taken: []string{"web-1"}, Assumed: []string{"web-1"}},
		},
		"a pod already annotated for this reservation (a PreBind that failed half-way) is still its to take": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("3")},
			pods:  []*corev1.Pod{allocating(web("web-0", "2", "1"), "r"), web("web-1", "1", "10")},
			want:  preAllocationResult{PreFilter: ok, Filter: ok, Score: 66, Taken: []string{"web-0"}},
		},
		"a pod whose reservation affinity names another reservation is not pre-allocatable": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("3")},
			pods:  []*corev1.Pod{withAffinityName(web("web-0", "2", "1"), "other"), web("web-1", "1", "10")},
			want: preAllocationResult{PreFilter: ok, Filter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				"node cpu: 1 free, 1 from pre-allocated pods, reservation requests 3; node cpu: 1 free, reservation requests 3",
			}}},
		},
		"pre-allocation required, no owner runs": {
			resvs: []*schedv1alpha1.Reservation{edited(preAllocating("1", required), func(r *schedv1alpha1.Reservation) { r.Spec.Owners[0] = byLabel("db") })},
			want: preAllocationResult{PreFilter: plugintest.Status{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{
				`reservation "r" requires pre-allocation (scheduling.koordinator.sh/pre-allocation-required) and no running pod is pre-allocatable to it`,
			}}},
		},
		"pre-allocation required, free resources do not count": {
			resvs:  []*schedv1alpha1.Reservation{preAllocating("4", required)},
			config: &config.PreAllocationConfig{PreferNoPreAllocatedPods: true},
			want: preAllocationResult{PreFilter: ok, Filter: plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{
				"node cpu: 1 free, 2 from pre-allocated pods, reservation requests 4; node cpu: 1 free, 1 from pre-allocated pods, reservation requests 4",
			}}},
		},
		"Aligned reservations do not pre-allocate": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("1", func(r *schedv1alpha1.Reservation) {
				r.Spec.AllocatePolicy = schedv1alpha1.ReservationAllocatePolicyAligned
			})},
			want: preAllocationResult{PreFilter: plugintest.Status{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{
				`reservation "r": spec.preAllocation needs spec.allocatePolicy Restricted, not "Aligned"`,
			}}},
		},
		"Cluster mode needs enableClusterMode": {
			resvs: []*schedv1alpha1.Reservation{preAllocating("1", clusterMode)},
			want: preAllocationResult{PreFilter: plugintest.Status{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{
				`reservation "r": preAllocationPolicy.mode Cluster needs the Reservation plugin's preAllocationConfig.enableClusterMode`,
			}}},
		},
		"Cluster mode: labelled pods by priority, owners or not": {
			// web-1 (priority 10) first: 1 free + 1 < 3, then web-0: 1 + 3 ≥ 3.
			resvs:  []*schedv1alpha1.Reservation{preAllocating("3", clusterMode, multiple, func(r *schedv1alpha1.Reservation) { r.Spec.Owners[0] = byLabel("db") })},
			config: &config.PreAllocationConfig{EnableClusterMode: true},
			want:   preAllocationResult{PreFilter: ok, Filter: ok, Score: 33, Taken: []string{"web-1", "web-0"}, Assumed: []string{"web-0", "web-1"}},
		},
		"Cluster mode with its own label key": {
			resvs:  []*schedv1alpha1.Reservation{preAllocating("3", clusterMode)},
			config: &config.PreAllocationConfig{EnableClusterMode: true, ClusterLabelKey: "example.com/spare"},
			pods: []*corev1.Pod{
				utiltesting.WrapPod(web("web-0", "2", "1")).Labels(map[string]string{"example.com/spare": "true"}).Obj(),
				web("web-1", "1", "10"),
			},
			want: preAllocationResult{PreFilter: ok, Filter: ok, Score: 66, Taken: []string{"web-0"}, Assumed: []string{"web-0"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := plugintest.Args[config.ReservationArgs, configv1.ReservationArgs](t, nil)
			args.PreAllocationConfig = tc.config
			pods := tc.pods
			if pods == nil {
				pods = running
			}
			f := newFixture(t, args, tc.resvs, []*corev1.Node{n1}, pods)
			reservePod, err := newReservePod(tc.resvs[0])
			if err != nil {
				t.Fatal(err)
			}
			reservePod.UID = "reserve-pod"
			var got preAllocationResult
			cs, _, s := f.cycle(reservePod)
			got.PreFilter = plugintest.Summarize(s)
			if s.IsSuccess() {
				ni := plugintest.NodeInfo(n1, pods...)
				got.Filter = plugintest.Summarize(f.plugin.Filter(f.Ctx, cs, reservePod, ni))
				if got.Filter.Code == fwk.Success {
					if s := f.plugin.PreScore(f.Ctx, cs, reservePod, nil); !s.IsSuccess() {
						t.Fatalf("PreScore = %v", s)
					}
					score, s := f.plugin.Score(f.Ctx, cs, reservePod, ni)
					if !s.IsSuccess() {
						t.Fatalf("Score = %v", s)
					}
					got.Score = score
					before := f.allocating(pods)
					if s := f.plugin.Reserve(f.Ctx, cs, reservePod, "n1"); !s.IsSuccess() {
						t.Fatalf("Reserve = %v", s)
					}
					if rs := getReserveState(cs); rs != nil {
						for _, p := range rs.preAllocated {
							got.Taken = append(got.Taken, p.Name)
						}
					}
					for _, name := range f.allocating(pods) {
						if !slices.Contains(before, name) {
							got.Assumed = append(got.Assumed, name)
						}
					}
					f.plugin.Unreserve(f.Ctx, cs, reservePod, "n1")
					if after := f.allocating(pods); !slices.Equal(after, before) {
						t.Errorf("after Unreserve pods %v allocate reservations; before Reserve %v did", after, before)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cycle (-want,+got):\n%s", diff)
			}
		})
	}
}

// allocating returns the names of the pods that allocate a reservation in the plugin's cache.
func (f *fixture) allocating(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		if f.plugin.cache.Allocates(p.UID) {
			out = append(out, p.Name)
		}
	}
	return out
}

// TestPreAllocationBind runs a pre-allocating Reservation's reserve pod through Reserve, PreBind and Bind: its
// pod requests nothing, the pod it takes is annotated as allocating it, the Reservation gets its template's
// requests as allocatable, and its allocation counts at once.
func TestPreAllocationBind(t *testing.T) {
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "4", "memory", "8Gi", "pods", "110")).Obj()
	web0 := utiltesting.MakePod("web-0").Node("n1").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "3")).Obj()
	r := reservation("r", "", utiltesting.Resources("cpu", "3"), byLabel("web"))
	r.Spec.PreAllocation = true
	r.Spec.AllocatePolicy = schedv1alpha1.ReservationAllocatePolicyRestricted
	r.Spec.AllocateOnce = new(false)
	// A limit without a request reserves the limit, as the apiserver defaults a pod's.
	r.Spec.Template.Spec.Containers[0].Resources.Limits = utiltesting.Resources("memory", "1Gi")

	reservePod, err := newReservePod(r)
	if err != nil {
		t.Fatal(err)
	}
	reservePod.UID = "reserve-pod"
	if got := reservePod.Spec.Containers[0].Resources; len(got.Requests)+len(got.Limits) != 0 {
		t.Errorf("the reserve pod's resources are %v; want none", got)
	}
	if got := reservePod.Annotations[extension.AnnotationReservePodPreAllocation]; got != "true" {
		t.Errorf("annotation %s = %q, want true", extension.AnnotationReservePodPreAllocation, got)
	}
	f := newFixture(t, nil, []*schedv1alpha1.Reservation{r}, []*corev1.Node{n1}, []*corev1.Pod{web0, reservePod})
	cs := f.reserve(t, reservePod, "n1")
	if _, s := f.plugin.PreBindPreFlight(f.Ctx, cs, reservePod, "n1"); !s.IsSuccess() {
		t.Fatalf("PreBindPreFlight = %v", s)
	}
	if s := f.plugin.PreBind(f.Ctx, cs, reservePod, "n1"); !s.IsSuccess() {
		t.Fatalf("PreBind = %v", s)
	}
	got, err := f.Kube.CoreV1().Pods("default").Get(f.Ctx, "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"name":"r","uid":"r"}`, got.Annotations[extension.AnnotationReservationAllocated]); diff != "" {
		t.Errorf("annotation of web-0 (-want,+got):\n%s", diff)
	}
	if s := f.plugin.Bind(f.Ctx, cs, reservePod, "n1"); !s.IsSuccess() {
		t.Fatalf("Bind = %v", s)
	}
	placed, err := f.Koord.SchedulingV1alpha1().Reservations().Get(f.Ctx, "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(utiltesting.Resources("cpu", "3", "memory", "1Gi"), placed.Status.Allocatable); diff != "" {
		t.Errorf("allocatable (-want,+got):\n%s", diff)
	}
	// web-0's assumed allocation counts against the placed Reservation: it holds only the memory.
	if diff := cmp.Diff(resvView{Allocated: "cpu=3", Held: "memory=1Gi", Owners: 1}, f.view("r")); diff != "" {
		t.Errorf("reservation in the cache (-want,+got):\n%s", diff)
	}
}

// TestPreAllocationPreBindPodGone: a taken pod replaced under its name fails the cycle and is not annotated.
func TestPreAllocationPreBindPodGone(t *testing.T) {
	n1 := utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "4")).Obj()
	web0 := utiltesting.MakePod("web-0").Node("n1").Labels(map[string]string{"app": "web"}).Req(utiltesting.Resources("cpu", "3")).Obj()
	f := newFixture(t, nil, nil, []*corev1.Node{n1}, []*corev1.Pod{web0})
	old := utiltesting.WrapPod(web0).UID("old").Obj()
	s := f.plugin.preBindPreAllocation(f.Ctx, &reserveState{uid: "r", name: "r", preAllocated: []*corev1.Pod{old}})
	if diff := cmp.Diff(plugintest.Status{Code: fwk.Unschedulable, Reasons: []string{"pre-allocated pod default/web-0 is gone or ending"}}, plugintest.Summarize(s)); diff != "" {
		t.Errorf("PreBind (-want,+got):\n%s", diff)
	}
	got, err := f.Kube.CoreV1().Pods("default").Get(f.Ctx, "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Annotations[extension.AnnotationReservationAllocated]; a != "" {
		t.Errorf("web-0 was annotated %q", a)
	}
}

func TestPreAllocationHint(t *testing.T) {
	r := reservation("r", "", utiltesting.Resources("cpu", "1"), byLabel("web"))
	r.Spec.PreAllocation = true
	preAllocating, err := newReservePod(r)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := newReservePod(reservation("r2", "", utiltesting.Resources("cpu", "1"), byLabel("web")))
	if err != nil {
		t.Fatal(err)
	}
	pending := utiltesting.MakePod("web-0").Labels(map[string]string{"app": "web"}).Obj()
	bound := utiltesting.WrapPod(pending).Node("n1").Obj()
	relabelled := utiltesting.WrapPod(bound).Labels(map[string]string{extension.LabelPodPreAllocatable: "true"}).Obj()
	statusOnly := utiltesting.WrapPod(bound).Obj()
	statusOnly.Status.Phase = corev1.PodRunning
	tests := map[string]struct {
		pod            *corev1.Pod
		oldObj, newObj *corev1.Pod
		want           fwk.QueueingHint
	}{
		"bound pod added":            {pod: preAllocating, newObj: bound, want: fwk.Queue},
		"pod bound":                  {pod: preAllocating, oldObj: pending, newObj: bound, want: fwk.Queue},
		"bound pod relabelled":       {pod: preAllocating, oldObj: bound, newObj: relabelled, want: fwk.Queue},
		"bound pod's status changed": {pod: preAllocating, oldObj: bound, newObj: statusOnly, want: fwk.QueueSkip},
		"pending pod added":          {pod: preAllocating, newObj: pending, want: fwk.QueueSkip},
		"plain reserve pod":          {pod: plain, oldObj: pending, newObj: bound, want: fwk.QueueSkip},
		"ordinary pod":               {pod: pending, oldObj: pending, newObj: bound, want: fwk.QueueSkip},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var oldObj any
			if tc.oldObj != nil {
				oldObj = tc.oldObj
			}
			got, err := isSchedulableAfterPodChange(klog.Background(), tc.pod, oldObj, tc.newObj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}
