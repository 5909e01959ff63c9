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

package elasticquota

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
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
)

// now is the time of the fake clock tests start with.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// argsWith returns the internal args a configuration with the v1 args that edit leaves produces.
func argsWith(t testing.TB, edit func(*configv1.ElasticQuotaArgs)) *config.ElasticQuotaArgs {
	t.Helper()
	in := &configv1.ElasticQuotaArgs{}
	if edit != nil {
		edit(in)
	}
	scheme.Scheme.Default(in)
	out := &config.ElasticQuotaArgs{}
	if err := scheme.Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("convert args: %v", err)
	}
	return out
}

// fixture is a plugin built by its factory on a framework handle with fake clientsets.
type fixture struct {
	ctx    context.Context
	plugin *Plugin
	clock  *testingclock.FakeClock
	kube   *kubefake.Clientset
	koord  *fake.Clientset
	events *events.FakeRecorder
}

// newFixture builds the plugin with args over the quotas, nodes and pods, and waits until its manager has
// seen them.
func newFixture(t testing.TB, args *config.ElasticQuotaArgs, quotas []*schedv1alpha1.ElasticQuota, nodes []*corev1.Node, pods []*corev1.Pod) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	kube := kubefake.NewClientset(objs...)
	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	recorder := events.NewFakeRecorder(100)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(kubeInformers), frameworkruntime.WithClientSet(kube), frameworkruntime.WithEventRecorder(recorder))
	if err != nil {
		t.Fatalf("create framework: %v", err)
	}
	var koordObjs []runtime.Object
	for _, q := range quotas {
		koordObjs = append(koordObjs, q)
	}
	koord := fake.NewSimpleClientset(koordObjs...)
	clk := testingclock.NewFakeClock(now)
	pl, err := NewFactory(crdinformers.NewForClient(koord), WithClock(clk), WithFeatures(plfeature.Features{}))(ctx, args, fh)
	if err != nil {
		t.Fatalf("create plugin: %v", err)
	}
	kubeInformers.Start(ctx.Done())
	p := pl.(*Plugin)
	eventually(t, func() bool { return p.podsSynced() && p.nodesSynced() })
	return &fixture{ctx: ctx, plugin: p, clock: clk, kube: kube, koord: koord, events: recorder}
}

// rl builds a resource list from "name=quantity" pairs.
func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func node(name string, allocatable corev1.ResourceList) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: allocatable, Capacity: allocatable}}
}

// quota is an ElasticQuota in namespace quotas; parent "" means the root.
func quota(name, parent string, minList, maxList corev1.ResourceList) *schedv1alpha1.ElasticQuota {
	q := &schedv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "quotas", Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec:       schedv1alpha1.ElasticQuotaSpec{Min: minList, Max: maxList},
	}
	if parent != "" {
		q.Labels[extension.LabelQuotaParent] = parent
	}
	return q
}

// pod is a pod of quota q requesting requests, with priority prio; node "" leaves it pending.
func pod(name, q string, prio int32, node string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{extension.LabelQuotaName: q}, CreationTimestamp: metav1.Time{Time: now}},
		Spec: corev1.PodSpec{NodeName: node, Priority: ptr.To(prio), Containers: []corev1.Container{{
			Name:      "c",
			Resources: corev1.ResourceRequirements{Requests: requests},
		}}},
	}
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

// preemptionVictim wraps a pod as a preemption victim.
func preemptionVictim(pi fwk.PodInfo) preemption.Victim {
	return preemption.NewPodVictim(pi, nil, nil)
}
