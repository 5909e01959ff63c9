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
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
)

// now is the time of the fake clock tests start with.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// argsWith returns the internal args a configuration with the v1 args that edit leaves produces.
func argsWith(t testing.TB, edit func(*configv1.ReservationArgs)) *config.ReservationArgs {
	t.Helper()
	in := &configv1.ReservationArgs{}
	if edit != nil {
		edit(in)
	}
	scheme.Scheme.Default(in)
	out := &config.ReservationArgs{}
	if err := scheme.Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("convert args: %v", err)
	}
	return out
}

// fixture is a plugin built on a framework handle with fake clientsets; its controller is not started, tests
// call reconcile themselves.
type fixture struct {
	ctx    context.Context
	plugin *Plugin
	clock  *testingclock.FakeClock
	kube   *kubefake.Clientset
	koord  *fake.Clientset
}

// newFixture builds the plugin over the reservations, nodes and pods and waits until it has seen them.
func newFixture(t testing.TB, args *config.ReservationArgs, resvs []*schedv1alpha1.Reservation, nodes []*corev1.Node, pods []*corev1.Pod) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	if args == nil {
		args = argsWith(t, nil)
	}
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	kube := kubefake.NewClientset(objs...)
	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithInformerFactory(kubeInformers),
		frameworkruntime.WithClientSet(kube),
		frameworkruntime.WithSnapshotSharedLister(schedcache.NewSnapshot(pods, nodes)))
	if err != nil {
		t.Fatalf("create framework: %v", err)
	}
	var koordObjs []runtime.Object
	for _, r := range resvs {
		koordObjs = append(koordObjs, r)
	}
	koord := fake.NewSimpleClientset(koordObjs...)
	clk := testingclock.NewFakeClock(now)
	p, err := newPlugin(ctx, args, fh, crdinformers.NewForClient(koord), options{clock: clk})
	if err != nil {
		t.Fatalf("create plugin: %v", err)
	}
	kubeInformers.Start(ctx.Done())
	eventually(t, func() bool { return p.podsSynced() && p.nodesSynced() })
	return &fixture{ctx: ctx, plugin: p, clock: clk, kube: kube, koord: koord}
}

// rl builds a resource list from "name=quantity" pairs.
func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// node is a node with the allocatable resources.
func node(name string, allocatable corev1.ResourceList) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: allocatable, Capacity: allocatable}}
}

// pod is a pending pod in namespace default with the labels, requesting requests.
func pod(name string, labels map[string]string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "c",
			Resources: corev1.ResourceRequirements{Requests: requests},
		}}},
	}
}

// on returns pod bound to node.
func on(p *corev1.Pod, node string) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.NodeName = node
	return p
}

// byLabel is an owner entry selecting pods with label app=value.
func byLabel(value string) schedv1alpha1.ReservationOwner {
	return schedv1alpha1.ReservationOwner{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}}}
}

// reservation is a Reservation (UID = name) created at now, reserving requests for the owners; node "" leaves
// it Pending, else it is Available there with allocatable = requests.
func reservation(name, node string, requests corev1.ResourceList, owners ...schedv1alpha1.ReservationOwner) *schedv1alpha1.Reservation {
	r := &schedv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(now), ResourceVersion: "1"},
		Spec: schedv1alpha1.ReservationSpec{
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name:      "c",
				Resources: corev1.ResourceRequirements{Requests: requests},
			}}}},
			Owners: owners,
			TTL:    &metav1.Duration{Duration: 24 * time.Hour},
		},
		Status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationPending},
	}
	if node != "" {
		r.Status.Phase = schedv1alpha1.ReservationAvailable
		r.Status.NodeName = node
		r.Status.Allocatable = requests
	}
	return r
}

// edited returns r after edit.
func edited(r *schedv1alpha1.Reservation, edit func(*schedv1alpha1.Reservation)) *schedv1alpha1.Reservation {
	edit(r)
	return r
}

// multiUse makes r allocatable by several owners.
func multiUse(r *schedv1alpha1.Reservation) { r.Spec.AllocateOnce = ptr.To(false) }

// nodeInfo is the NodeInfo of node with the pods on it.
func nodeInfo(n *corev1.Node, pods ...*corev1.Pod) fwk.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(n)
	return ni
}

// status is a comparable summary of a framework status.
type status struct {
	Code    fwk.Code
	Reasons []string
}

func summarize(s *fwk.Status) status {
	if s == nil {
		return status{Code: fwk.Success}
	}
	return status{Code: s.Code(), Reasons: s.Reasons()}
}

// eventually polls cond every 10ms for up to 10s and fails the test when it never holds.
func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("condition did not hold: %v", err)
	}
}

// cycle runs PreFilter for pod and returns the cycle state, the result and the status.
func (f *fixture) cycle(pod *corev1.Pod) (fwk.CycleState, *fwk.PreFilterResult, *fwk.Status) {
	cs := framework.NewCycleState()
	res, s := f.plugin.PreFilter(f.ctx, cs, pod, nil)
	return cs, res, s
}
