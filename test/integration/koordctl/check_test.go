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

// Package koordctl tests koordctl's commands that read a cluster against a real apiserver.
package koordctl

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/check"
	"github.com/koord-dev/koord/test/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env)
}

// fixture creates objects and deletes them when the test ends.
type fixture struct {
	t  *testing.T
	ns string
}

func newFixture(t *testing.T, ns string) *fixture {
	f := &fixture{t: t, ns: ns}
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	return f
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.t.Context(), obj); err != nil {
		f.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	f.t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), obj, client.GracePeriodSeconds(0))
	})
}

func (f *fixture) node(name, cpu string, extra corev1.ResourceList) {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	f.create(n)
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}
	for k, v := range extra {
		n.Status.Capacity[k] = v
	}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	if err := env.Client.Status().Update(f.t.Context(), n); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) pod(name, node string, requests corev1.ResourceList, mutate ...func(*corev1.Pod)) *corev1.Pod {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause",
			Resources: corev1.ResourceRequirements{Requests: requests}}}},
	}
	for _, m := range mutate {
		m(p)
	}
	f.create(p)
	return p
}

func clients(t *testing.T) (kubernetes.Interface, versioned.Interface) {
	return kubernetes.NewForConfigOrDie(env.Config), versioned.NewForConfigOrDie(env.Config)
}

// violations returns "invariant object" of each violation.
func violations(r check.Report) []string {
	var out []string
	for _, v := range r.Violations() {
		out = append(out, v.Invariant+" "+v.Object)
	}
	slices.Sort(out)
	return out
}

// TestCheckOnce: koordctl check without --watch reports every invariant broken in the cluster as it is: a node
// whose pods request more cpu than it has, and a pod allocated from a Reservation it is not an owner of.
func TestCheckOnce(t *testing.T) {
	f := newFixture(t, "check-once")
	f.node("check-once-full", "2", nil)
	f.node("check-once-fine", "8", nil)
	cpu := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	f.pod("a", "check-once-full", cpu("1500m"))
	f.pod("b", "check-once-full", cpu("1"))
	f.pod("c", "check-once-fine", cpu("1"))
	r := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Name: "check-once-r"}, Spec: schedv1alpha1.ReservationSpec{
		Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}},
		Owners:   []schedv1alpha1.ReservationOwner{{Object: &corev1.ObjectReference{Kind: "Pod", Namespace: f.ns, Name: "owner"}}},
		TTL:      &metav1.Duration{Duration: time.Hour},
	}}
	f.create(r)
	f.pod("stranger", "check-once-fine", cpu("100m"), func(p *corev1.Pod) {
		p.Annotations = map[string]string{extension.AnnotationReservationAllocated: `{"name":"check-once-r","uid":"` + string(r.UID) + `"}`}
	})
	kube, koord := clients(t)
	report, err := check.Run(t.Context(), check.NewFlags(), kube, koord, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pods-fit-nodes Node check-once-full", "reservations-serve-owners Pod check-once/stranger"}
	if diff := cmp.Diff(want, violations(report)); diff != "" {
		t.Errorf("violations (-want,+got):\n%s", diff)
	}
}

// TestCheckWatch: a watch sees a BE pod bound to a node that offers fewer batch cores than it requests, which a
// single look at the cluster cannot tell from a node whose batch capacity fell afterwards.
func TestCheckWatch(t *testing.T) {
	f := newFixture(t, "check-watch")
	f.node("check-watch-n", "8", corev1.ResourceList{extension.BatchCPU: resource.MustParse("2000")})
	kube, koord := clients(t)
	checker := check.New(check.Options{})
	w, err := check.NewWatch(checker, kube, koord, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The watch has listed the node: bind a pod asking 3 batch cores.
	f.pod("greedy", "check-watch-n", corev1.ResourceList{extension.BatchCPU: resource.MustParse("3000")},
		func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) })
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if err := w.Run(ctx, 200*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	report := checker.Report()
	if diff := cmp.Diff([]string{"batch-capacity-at-bind Pod check-watch/greedy"}, violations(report)); diff != "" {
		t.Errorf("violations (-want,+got):\n%s", diff)
	}
}
