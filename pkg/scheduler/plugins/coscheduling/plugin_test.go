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
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestNewFactoryRejectsBadArgs(t *testing.T) {
	tests := map[string]struct {
		args    func(*configv1.CoschedulingArgs)
		wantErr string
	}{
		"zero timeout": {args: func(a *configv1.CoschedulingArgs) { a.DefaultTimeout = &metav1.Duration{} }, wantErr: "pluginConfig[Coscheduling].args.defaultTimeout"},
		"bad policy":   {args: func(a *configv1.CoschedulingArgs) { a.DefaultMatchPolicy = ptr.To("all") }, wantErr: "pluginConfig[Coscheduling].args.defaultMatchPolicy"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := plugintest.New(t)
			_, err := NewFactory(env.CRDs)(env.Ctx, plugintest.Args[config.CoschedulingArgs](t, tc.args), env.Handle(t))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("NewFactory() error = %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

func TestPreFilter(t *testing.T) {
	g := extension.GangDomainPrefix
	tests := map[string]struct {
		pods []*corev1.Pod
		pgs  []*v1alpha1.PodGroup
		pod  *corev1.Pod
		want *fwk.Status
	}{
		"a pod in no gang is skipped": {
			pod:  utiltesting.MakePod("x").Obj(),
			want: fwk.NewStatus(fwk.Skip),
		},
		"too few members": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"total-number", "4").Obj(), utiltesting.MakePod("b").Gang("train", "3").Annotations(g+"total-number", "4").Obj()},
			pod:  utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"total-number", "4").Obj(),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train" has 2 of 4 members (min 3)`),
		},
		"enough members": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").Gang("train", "2").Obj(), utiltesting.MakePod("b").Gang("train", "2").Obj()},
			pod:  utiltesting.MakePod("a").Gang("train", "2").Obj(),
		},
		"malformed pod annotation": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").Gang("train", "1").Obj(), utiltesting.MakePod("b").Gang("train", "1").Annotations(g+"waiting-time", "30").Obj()},
			pod:  utiltesting.MakePod("b").Gang("train", "1").Annotations(g+"waiting-time", "30").Obj(),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train": the pod's gang annotations are invalid: annotation "gang.scheduling.koordinator.sh/waiting-time": time: missing unit in duration "30"`),
		},
		"no PodGroup and no minimum": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").PodGroup("train").Obj()},
			pod:  utiltesting.MakePod("a").PodGroup("train").Obj(),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train" has no PodGroup and its pods set no gang.scheduling.koordinator.sh/min-available`),
		},
		"PodGroup with enough members": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").PodGroup("train").Obj(), utiltesting.MakePod("b").PodGroup("train").Obj()},
			pgs:  []*v1alpha1.PodGroup{utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()},
			pod:  utiltesting.MakePod("a").PodGroup("train").Obj(),
		},
		"malformed PodGroup": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").PodGroup("train").Obj()},
			pgs: []*v1alpha1.PodGroup{func() *v1alpha1.PodGroup {
				pg := utiltesting.MakePodGroup("train", 1).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
				pg.Annotations = map[string]string{extension.AnnotationGangMode: "strict"}
				return pg
			}()},
			pod:  utiltesting.MakePod("a").PodGroup("train").Obj(),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train": PodGroup default/train: annotation "gang.scheduling.koordinator.sh/mode": unsupported value "strict"`),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), tc.pods, tc.pgs)
			_, got := f.plugin.PreFilter(f.Ctx, newCycleState(), tc.pod, nil)
			if diff := cmp.Diff(tc.want.Code(), got.Code()); diff != "" {
				t.Errorf("PreFilter() code (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.Message(), got.Message()); diff != "" {
				t.Errorf("PreFilter() message (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestStrictGangBindsTogether(t *testing.T) {
	for name, prioritySort := range map[string]bool{"the plugin's queue sort": false, "PrioritySort, as Koordinator's profile": true} {
		t.Run(name, func(t *testing.T) { testStrictGangBindsTogether(t, prioritySort) })
	}
}

func testStrictGangBindsTogether(t *testing.T, prioritySort bool) {
	a, b, c := utiltesting.MakePod("a").Gang("train", "3").Obj(), utiltesting.MakePod("b").Gang("train", "3").Obj(), utiltesting.MakePod("c").Gang("train", "3").Obj()
	f := newFixtureSorted(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a, b, c}, nil, prioritySort)

	ra := f.schedule(a, true)
	if diff := cmp.Diff(fwk.Wait, ra.status.Code()); diff != "" {
		t.Fatalf("Permit(a) code (-want,+got):\n%s", diff)
	}
	if !strings.Contains(ra.status.Message(), "gang default/train has 1 of 3 members waiting") {
		t.Errorf("Permit(a) message = %q", ra.status.Message())
	}
	if diff := cmp.Diff(sets.New("default/b", "default/c"), sets.New(f.activator.list()...)); diff != "" {
		t.Errorf("activated pods (-want,+got):\n%s", diff)
	}
	rb := f.schedule(b, true)
	if !rb.status.IsWait() {
		t.Fatalf("Permit(b) = %v, want Wait", rb.status)
	}
	rc := f.schedule(c, true)
	if !rc.status.IsSuccess() {
		t.Fatalf("Permit(c) = %v, want Success", rc.status)
	}
	for name, r := range map[string]attempt{"a": ra, "b": rb, "c": rc} {
		if s := r.outcome(t); s != nil {
			t.Errorf("binding of %s = %v, want bound", name, s)
		}
	}
	v, _ := f.plugin.cache.View(gangID("train"))
	if v.Bound != 3 || !v.OnceSatisfied {
		t.Errorf("gang after binding: %+v, want 3 bound, satisfied once", v)
	}
	// PreBind annotated every member with the group bound together, as Koordinator's Coscheduling does.
	for _, name := range []string{"a", "b", "c"} {
		got, err := f.Kube.CoreV1().Pods("default").Get(f.Ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"default/train", "3"}
		if diff := cmp.Diff(want, []string{got.Annotations[extension.AnnotationBindGangGroupID], got.Annotations[extension.AnnotationBindGangMemberCount]}); diff != "" {
			t.Errorf("annotations of %s (-want,+got):\n%s", name, diff)
		}
	}
}

func TestStrictFailureRejectsTheGang(t *testing.T) {
	a, b, c := utiltesting.MakePod("a").Gang("train", "3").Obj(), utiltesting.MakePod("b").Gang("train", "3").Obj(), utiltesting.MakePod("c").Gang("train", "3").Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a, b, c}, nil)

	ra := f.schedule(a, true)
	if !ra.status.IsWait() {
		t.Fatalf("Permit(a) = %v, want Wait", ra.status)
	}
	f.activator.reset()
	// b does not fit: PostFilter rejects a, which gives back its node.
	if rb := f.schedule(b, false); rb.status.Code() != fwk.Unschedulable {
		t.Fatalf("attempt of b = %v, want Unschedulable", rb.status)
	}
	s := ra.outcome(t)
	if s.Code() != fwk.Unschedulable || s.Message() != `gang "default/train": member default/b could not be placed` {
		t.Errorf("binding of a = %v, want rejected by the gang", s)
	}
	// c comes in the failed cycle, and so does b again.
	rc := f.schedule(c, true)
	if want := `gang "default/train" failed in schedule cycle 1: member default/b failed: it could not be placed; the next cycle starts in 1s`; rc.status.Message() != want {
		t.Errorf("attempt of c = %v, want %q", rc.status, want)
	}
	if rb := f.schedule(b, true); rb.status.IsSuccess() || rb.status.IsWait() {
		t.Errorf("attempt of b in the failed cycle = %v, want rejected", rb.status)
	}
	// After the gang's backoff its members are moved to the front of the queue, and the next cycle starts.
	if len(f.activator.list()) != 0 {
		t.Errorf("pods activated before the backoff: %v", f.activator.list())
	}
	f.Clock.Step(time.Second)
	plugintest.Eventually(t, func() bool {
		return sets.New(f.activator.list()...).Equal(sets.New("default/a", "default/b", "default/c"))
	})
	if rb := f.schedule(b, true); !rb.status.IsWait() {
		t.Errorf("retry of b = %v, want Wait", rb.status)
	}
	// b again in cycle 2 waits for a and c to be tried.
	if rb := f.schedule(b, true); !strings.Contains(rb.status.Message(), "the pod was tried in schedule cycle 2") {
		t.Errorf("second try of b in cycle 2 = %v", rb.status)
	}
}

func TestNonStrictFailureKeepsWaiting(t *testing.T) {
	mode := []string{extension.AnnotationGangMode, string(extension.GangModeNonStrict)}
	a, b := utiltesting.MakePod("a").Gang("train", "3").Annotations(mode...).Obj(), utiltesting.MakePod("b").Gang("train", "3").Annotations(mode...).Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a, b, utiltesting.MakePod("c").Gang("train", "3").Annotations(mode...).Obj()}, nil)

	ra := f.schedule(a, true)
	if !ra.status.IsWait() {
		t.Fatalf("Permit(a) = %v, want Wait", ra.status)
	}
	f.schedule(b, false)
	if !f.waiting(a) {
		t.Errorf("a no longer waits after b failed in a NonStrict gang")
	}
	// b is not kept out of the cycle either.
	if rb := f.schedule(b, true); !rb.status.IsWait() {
		t.Errorf("retry of b = %v, want Wait", rb.status)
	}
}

func TestTimeoutReleasesAndMarksTheGang(t *testing.T) {
	wait := []string{extension.AnnotationGangWaitTime, "10m"}
	a, b, c := utiltesting.MakePod("a").Gang("train", "3").Annotations(wait...).Obj(), utiltesting.MakePod("b").Gang("train", "3").Annotations(wait...).Obj(), utiltesting.MakePod("c").Gang("train", "3").Annotations(wait...).Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a, b, c}, nil)

	ra, rb := f.schedule(a, true), f.schedule(b, true)
	if !ra.status.IsWait() || !rb.status.IsWait() {
		t.Fatalf("Permit(a), Permit(b) = %v, %v, want Wait", ra.status, rb.status)
	}
	// a's wait time passes: the framework rejects it (its timer runs on the wall clock; the plugin's clock is
	// the fake one).
	f.Clock.Step(10 * time.Minute)
	f.fh.GetWaitingPod(a.UID).Reject(Name, "rejected due to timeout")
	if s := ra.outcome(t); s.Code() != fwk.Unschedulable {
		t.Errorf("binding of a = %v, want rejected", s)
	}
	if s := rb.outcome(t); s.Code() != fwk.Unschedulable || s.Message() != `gang "default/train" timed out` {
		t.Errorf("binding of b = %v, want rejected by the timeout", s)
	}
	for _, name := range []string{"a", "b"} {
		plugintest.Eventually(t, func() bool {
			pod, err := f.Kube.CoreV1().Pods("default").Get(f.Ctx, name, metav1.GetOptions{})
			return err == nil && extension.IsGangTimeout(pod)
		})
	}
	rc := f.schedule(c, true)
	if want := `gang "default/train" timed out after 10m0s with 2 of 3 members waiting in schedule cycle 1; the next cycle starts in 1s`; rc.status.Message() != want {
		t.Errorf("attempt of c = %v, want %q", rc.status, want)
	}
	if c, _ := f.Kube.CoreV1().Pods("default").Get(f.Ctx, "c", metav1.GetOptions{}); extension.IsGangTimeout(c) {
		t.Errorf("c, which never waited, was marked")
	}
}

func TestGangGroupBindsTogether(t *testing.T) {
	g := extension.AnnotationGangGroups
	w := utiltesting.MakePod("w").Gang("workers", "1").Annotations(g, `["default/ps"]`).Obj()
	p := utiltesting.MakePod("p").Gang("ps", "1").Annotations(g, `["default/workers"]`).Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{w, p}, nil)

	rw := f.schedule(w, true)
	if !rw.status.IsWait() || !strings.Contains(rw.status.Message(), "gang default/ps has 0 of 1 members waiting") {
		t.Fatalf("Permit(w) = %v, want Wait for ps", rw.status)
	}
	if rp := f.schedule(p, true); !rp.status.IsSuccess() {
		t.Fatalf("Permit(p) = %v, want Success", rp.status)
	}
	if s := rw.outcome(t); s != nil {
		t.Errorf("binding of w = %v, want bound", s)
	}
}

func TestPodGroupStatusIsWritten(t *testing.T) {
	a, b := utiltesting.MakePod("a").PodGroup("train").Obj(), utiltesting.MakePod("b").PodGroup("train").Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a, b}, []*v1alpha1.PodGroup{utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()})
	plugintest.Eventually(t, func() bool {
		pg, err := f.Koord.SchedulingSigsV1alpha1().PodGroups("default").Get(f.Ctx, "train", metav1.GetOptions{})
		return err == nil && pg.Status.Phase == v1alpha1.PodGroupPreScheduling
	})
	ra := f.schedule(a, true)
	f.schedule(b, true)
	if s := ra.outcome(t); s != nil {
		t.Fatalf("binding of a = %v", s)
	}
	plugintest.Eventually(t, func() bool {
		pg, err := f.Koord.SchedulingSigsV1alpha1().PodGroups("default").Get(f.Ctx, "train", metav1.GetOptions{})
		return err == nil && pg.Status.Phase == v1alpha1.PodGroupScheduled && pg.Status.Scheduled == 2
	})
}

func TestNewMemberActivatesTheGang(t *testing.T) {
	a := utiltesting.MakePod("a").Gang("train", "2").Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a}, nil)
	if r := f.schedule(a, true); r.status.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("attempt of a = %v, want rejected for want of members", r.status)
	}
	if _, err := f.Kube.CoreV1().Pods("default").Create(f.Ctx, utiltesting.MakePod("b").Gang("train", "2").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create b: %v", err)
	}
	plugintest.Eventually(t, func() bool {
		return sets.New(f.activator.list()...).Equal(sets.New("default/a", "default/b"))
	})
}

func TestSignPod(t *testing.T) {
	p := &Plugin{}
	fragments, status := p.SignPod(context.Background(), utiltesting.MakePod("a").Gang("train", "2").Obj())
	if len(fragments) != 0 || !status.IsSuccess() {
		t.Errorf("SignPod() = %v, %v, want no fragments and Success", fragments, status)
	}
}

// TestRejectBeforeTheFrameworkWaits rejects a member between its Permit and the moment the framework adds
// it to its waiting pods: the rejection is tried again until the framework has it.
func TestRejectBeforeTheFrameworkWaits(t *testing.T) {
	a, b := utiltesting.MakePod("a").Gang("train", "3").Obj(), utiltesting.MakePod("b").Gang("train", "3").Obj()
	f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), []*corev1.Pod{a, b, utiltesting.MakePod("c").Gang("train", "3").Obj()}, nil)

	state := newCycleState()
	if _, s, _ := f.fh.RunPreFilterPlugins(f.Ctx, state, a); !s.IsSuccess() {
		t.Fatalf("PreFilter(a) = %v", s)
	}
	waitTime, s := f.fh.RunPermitPlugins(f.Ctx, state, a, "node-1")
	if !s.IsWait() {
		t.Fatalf("Permit(a) = %v, want Wait", s)
	}
	// b fails before the framework holds a.
	f.schedule(b, false)
	f.fh.AddWaitingPod(a, waitTime)
	done := make(chan *fwk.Status, 1)
	go func() { done <- f.fh.WaitOnPermit(f.Ctx, a) }()
	f.Clock.Step(rejectRetryDelay)
	select {
	case s := <-done:
		if s.Code() != fwk.Unschedulable {
			t.Errorf("WaitOnPermit(a) = %v, want rejected", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("a still waits")
	}
}

// TestPreEnqueue: a gang's pods wait outside the active queue until the gang has its minimum; the pod asking
// counts even before the plugin's informer delivered it; pods in no gang pass.
func TestPreEnqueue(t *testing.T) {
	member := func(name string) *corev1.Pod { return utiltesting.MakePod(name).Gang("train", "3").Obj() }
	tests := map[string]struct {
		pods []*corev1.Pod
		pod  *corev1.Pod
		want *fwk.Status
	}{
		"a pod in no gang": {pod: utiltesting.MakePod("x").Obj()},
		"too few members": {
			pods: []*corev1.Pod{member("a")},
			pod:  member("b"),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train" has 2 of 3 members (min 3)`),
		},
		"the asking pod completes the gang before the informer delivers it": {
			pods: []*corev1.Pod{member("a"), member("b")},
			pod:  member("c"),
		},
		"no PodGroup and no minimum": {
			pods: []*corev1.Pod{utiltesting.MakePod("a").PodGroup("train").Obj()},
			pod:  utiltesting.MakePod("a").PodGroup("train").Obj(),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train" has no PodGroup and its pods set no gang.scheduling.koordinator.sh/min-available`),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](t, nil), tc.pods, nil)
			got := f.plugin.PreEnqueue(f.Ctx, tc.pod)
			if diff := cmp.Diff(tc.want.Code(), got.Code()); diff != "" {
				t.Errorf("PreEnqueue() code (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.Message(), got.Message()); diff != "" {
				t.Errorf("PreEnqueue() message (-want,+got):\n%s", diff)
			}
			if len(tc.pods) > 0 && tc.pod.Name == "c" && f.plugin.cache.Knows(tc.pod) {
				t.Error("PreEnqueue recorded the pod in its gang; only the informer may")
			}
		})
	}
}
