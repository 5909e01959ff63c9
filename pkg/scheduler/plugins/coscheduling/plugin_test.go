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
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
)

func TestNewFactoryRejectsBadArgs(t *testing.T) {
	tests := map[string]struct {
		args    func(*configv1.CoschedulingArgs)
		wantErr string
	}{
		"preemption":   {args: func(a *configv1.CoschedulingArgs) { a.EnablePreemption = ptr.To(true) }, wantErr: "pluginConfig[Coscheduling].args.enablePreemption"},
		"zero timeout": {args: func(a *configv1.CoschedulingArgs) { a.DefaultTimeout = &metav1.Duration{} }, wantErr: "pluginConfig[Coscheduling].args.defaultTimeout"},
		"bad policy":   {args: func(a *configv1.CoschedulingArgs) { a.DefaultMatchPolicy = ptr.To("all") }, wantErr: "pluginConfig[Coscheduling].args.defaultMatchPolicy"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			kube := kubefake.NewClientset()
			fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(kube, 0)))
			if err != nil {
				t.Fatalf("create framework: %v", err)
			}
			koord := fake.NewSimpleClientset()
			_, err = NewFactory(crdinformers.NewForClient(koord))(ctx, argsWith(t, tc.args), fh)
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
			pod:  plainPod("x"),
			want: fwk.NewStatus(fwk.Skip),
		},
		"too few members": {
			pods: []*corev1.Pod{gangPod("a", "train", "3", g+"total-number", "4"), gangPod("b", "train", "3", g+"total-number", "4")},
			pod:  gangPod("a", "train", "3", g+"total-number", "4"),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train" has 2 of 4 members (min 3)`),
		},
		"enough members": {
			pods: []*corev1.Pod{gangPod("a", "train", "2"), gangPod("b", "train", "2")},
			pod:  gangPod("a", "train", "2"),
		},
		"malformed pod annotation": {
			pods: []*corev1.Pod{gangPod("a", "train", "1"), gangPod("b", "train", "1", g+"waiting-time", "30")},
			pod:  gangPod("b", "train", "1", g+"waiting-time", "30"),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train": the pod's gang annotations are invalid: annotation "gang.scheduling.koordinator.sh/waiting-time": time: missing unit in duration "30"`),
		},
		"no PodGroup and no minimum": {
			pods: []*corev1.Pod{pgPod("a", "train")},
			pod:  pgPod("a", "train"),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train" has no PodGroup and its pods set no gang.scheduling.koordinator.sh/min-available`),
		},
		"PodGroup with enough members": {
			pods: []*corev1.Pod{pgPod("a", "train"), pgPod("b", "train")},
			pgs:  []*v1alpha1.PodGroup{podGroup("train", 2)},
			pod:  pgPod("a", "train"),
		},
		"malformed PodGroup": {
			pods: []*corev1.Pod{pgPod("a", "train")},
			pgs: []*v1alpha1.PodGroup{func() *v1alpha1.PodGroup {
				pg := podGroup("train", 1)
				pg.Annotations = map[string]string{extension.AnnotationGangMode: "strict"}
				return pg
			}()},
			pod:  pgPod("a", "train"),
			want: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, `gang "default/train": PodGroup default/train: annotation "gang.scheduling.koordinator.sh/mode": unsupported value "strict"`),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, argsWith(t, nil), tc.pods, tc.pgs)
			_, got := f.plugin.PreFilter(f.ctx, newCycleState(), tc.pod, nil)
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
	a, b, c := gangPod("a", "train", "3"), gangPod("b", "train", "3"), gangPod("c", "train", "3")
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a, b, c}, nil)

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
}

func TestStrictFailureRejectsTheGang(t *testing.T) {
	a, b, c := gangPod("a", "train", "3"), gangPod("b", "train", "3"), gangPod("c", "train", "3")
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a, b, c}, nil)

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
	f.clock.Step(time.Second)
	eventually(t, func() bool {
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
	a, b := gangPod("a", "train", "3", mode...), gangPod("b", "train", "3", mode...)
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a, b, gangPod("c", "train", "3", mode...)}, nil)

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
	a, b, c := gangPod("a", "train", "3", wait...), gangPod("b", "train", "3", wait...), gangPod("c", "train", "3", wait...)
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a, b, c}, nil)

	ra, rb := f.schedule(a, true), f.schedule(b, true)
	if !ra.status.IsWait() || !rb.status.IsWait() {
		t.Fatalf("Permit(a), Permit(b) = %v, %v, want Wait", ra.status, rb.status)
	}
	// a's wait time passes: the framework rejects it (its timer runs on the wall clock; the plugin's clock is
	// the fake one).
	f.clock.Step(10 * time.Minute)
	f.fh.GetWaitingPod(a.UID).Reject(Name, "rejected due to timeout")
	if s := ra.outcome(t); s.Code() != fwk.Unschedulable {
		t.Errorf("binding of a = %v, want rejected", s)
	}
	if s := rb.outcome(t); s.Code() != fwk.Unschedulable || s.Message() != `gang "default/train" timed out` {
		t.Errorf("binding of b = %v, want rejected by the timeout", s)
	}
	for _, name := range []string{"a", "b"} {
		eventually(t, func() bool {
			pod, err := f.kube.CoreV1().Pods("default").Get(f.ctx, name, metav1.GetOptions{})
			return err == nil && extension.IsGangTimeout(pod)
		})
	}
	rc := f.schedule(c, true)
	if want := `gang "default/train" timed out after 10m0s with 2 of 3 members waiting in schedule cycle 1; the next cycle starts in 1s`; rc.status.Message() != want {
		t.Errorf("attempt of c = %v, want %q", rc.status, want)
	}
	if c, _ := f.kube.CoreV1().Pods("default").Get(f.ctx, "c", metav1.GetOptions{}); extension.IsGangTimeout(c) {
		t.Errorf("c, which never waited, was marked")
	}
}

func TestGangGroupBindsTogether(t *testing.T) {
	g := extension.AnnotationGangGroups
	w := gangPod("w", "workers", "1", g, `["default/ps"]`)
	p := gangPod("p", "ps", "1", g, `["default/workers"]`)
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{w, p}, nil)

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
	a, b := pgPod("a", "train"), pgPod("b", "train")
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a, b}, []*v1alpha1.PodGroup{podGroup("train", 2)})
	eventually(t, func() bool {
		pg, err := f.koord.SchedulingSigsV1alpha1().PodGroups("default").Get(f.ctx, "train", metav1.GetOptions{})
		return err == nil && pg.Status.Phase == v1alpha1.PodGroupPreScheduling
	})
	ra := f.schedule(a, true)
	f.schedule(b, true)
	if s := ra.outcome(t); s != nil {
		t.Fatalf("binding of a = %v", s)
	}
	eventually(t, func() bool {
		pg, err := f.koord.SchedulingSigsV1alpha1().PodGroups("default").Get(f.ctx, "train", metav1.GetOptions{})
		return err == nil && pg.Status.Phase == v1alpha1.PodGroupScheduled && pg.Status.Scheduled == 2
	})
}

func TestNewMemberActivatesTheGang(t *testing.T) {
	a := gangPod("a", "train", "2")
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a}, nil)
	if r := f.schedule(a, true); r.status.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("attempt of a = %v, want rejected for want of members", r.status)
	}
	if _, err := f.kube.CoreV1().Pods("default").Create(f.ctx, gangPod("b", "train", "2"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create b: %v", err)
	}
	eventually(t, func() bool {
		return sets.New(f.activator.list()...).Equal(sets.New("default/a", "default/b"))
	})
}

func TestSignPod(t *testing.T) {
	p := &Plugin{}
	fragments, status := p.SignPod(context.Background(), gangPod("a", "train", "2"))
	if len(fragments) != 0 || !status.IsSuccess() {
		t.Errorf("SignPod() = %v, %v, want no fragments and Success", fragments, status)
	}
}

// TestRejectBeforeTheFrameworkWaits rejects a member between its Permit and the moment the framework adds
// it to its waiting pods: the rejection is tried again until the framework has it.
func TestRejectBeforeTheFrameworkWaits(t *testing.T) {
	a, b := gangPod("a", "train", "3"), gangPod("b", "train", "3")
	f := newFixture(t, argsWith(t, nil), []*corev1.Pod{a, b, gangPod("c", "train", "3")}, nil)

	state := newCycleState()
	if _, s, _ := f.fh.RunPreFilterPlugins(f.ctx, state, a); !s.IsSuccess() {
		t.Fatalf("PreFilter(a) = %v", s)
	}
	waitTime, s := f.fh.RunPermitPlugins(f.ctx, state, a, "node-1")
	if !s.IsWait() {
		t.Fatalf("Permit(a) = %v, want Wait", s)
	}
	// b fails before the framework holds a.
	f.schedule(b, false)
	f.fh.AddWaitingPod(a, waitTime)
	done := make(chan *fwk.Status, 1)
	go func() { done <- f.fh.WaitOnPermit(f.ctx, a) }()
	f.clock.Step(rejectRetryDelay)
	select {
	case s := <-done:
		if s.Code() != fwk.Unschedulable {
			t.Errorf("WaitOnPermit(a) = %v, want rejected", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("a still waits")
	}
}
