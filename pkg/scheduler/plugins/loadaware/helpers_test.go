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

package loadaware

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
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
)

// now is the time of the fake clock tests start with.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// argsWith returns the internal args a configuration with the v1 args that edit leaves produces: edited,
// defaulted, converted.
func argsWith(t testing.TB, edit func(*configv1.LoadAwareSchedulingArgs)) *config.LoadAwareSchedulingArgs {
	t.Helper()
	in := &configv1.LoadAwareSchedulingArgs{}
	if edit != nil {
		edit(in)
	}
	scheme.Scheme.Default(in)
	out := &config.LoadAwareSchedulingArgs{}
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
}

// newFixture builds the plugin with args, the NodeMetrics and the pods, and waits until the assign cache has
// seen the pods.
func newFixture(t testing.TB, args *config.LoadAwareSchedulingArgs, nodeMetrics []*slov1alpha1.NodeMetric, pods []*corev1.Pod) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	objs := make([]runtime.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p)
	}
	kube := kubefake.NewClientset(objs...)
	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(kubeInformers))
	if err != nil {
		t.Fatalf("create framework: %v", err)
	}
	koordObjs := make([]runtime.Object, 0, len(nodeMetrics))
	for _, nm := range nodeMetrics {
		koordObjs = append(koordObjs, nm)
	}
	clk := testingclock.NewFakeClock(now)
	pl, err := NewFactory(crdinformers.NewForClient(fake.NewSimpleClientset(koordObjs...)), WithClock(clk))(ctx, args, fh)
	if err != nil {
		t.Fatalf("create plugin: %v", err)
	}
	kubeInformers.Start(ctx.Done())
	p := pl.(*Plugin)
	eventually(t, p.podsSynced)
	return &fixture{ctx: ctx, plugin: p, clock: clk, kube: kube}
}

// nodeInfo wraps node for Filter and Score.
func nodeInfo(node *corev1.Node) fwk.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(node)
	return ni
}

// filter runs Filter for pod on node in a fresh cycle.
func (f *fixture) filter(pod *corev1.Pod, node *corev1.Node) *fwk.Status {
	return f.plugin.Filter(f.ctx, framework.NewCycleState(), pod, nodeInfo(node))
}

// score runs Score for pod on node in a fresh cycle.
func (f *fixture) score(t testing.TB, pod *corev1.Pod, node *corev1.Node) int64 {
	t.Helper()
	s, status := f.plugin.Score(f.ctx, framework.NewCycleState(), pod, nodeInfo(node))
	if !status.IsSuccess() {
		t.Fatalf("Score(%s) = %v", node.Name, status)
	}
	return s
}

// reserve runs Reserve for pod on node.
func (f *fixture) reserve(t testing.TB, pod *corev1.Pod, node string) {
	t.Helper()
	if status := f.plugin.Reserve(f.ctx, framework.NewCycleState(), pod, node); !status.IsSuccess() {
		t.Fatalf("Reserve = %v", status)
	}
}

// rl builds a resource list from "name=quantity" pairs.
func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// node is a node with 10 cpus and 10Gi of memory, as allocatable.
func node(name string) *st.NodeWrapper {
	return st.MakeNode().Name(name).Capacity(map[corev1.ResourceName]string{corev1.ResourceCPU: "10", corev1.ResourceMemory: "10Gi"})
}

// metric is a NodeMetric of node reporting usage, updated age before now.
func metric(node string, age time.Duration, usage corev1.ResourceList) *slov1alpha1.NodeMetric {
	return &slov1alpha1.NodeMetric{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Status: slov1alpha1.NodeMetricStatus{
			UpdateTime: &metav1.Time{Time: now.Add(-age)},
			NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: slov1alpha1.ResourceMap{ResourceList: usage}},
		},
	}
}

// withPods adds reported pod usages to nm.
func withPods(nm *slov1alpha1.NodeMetric, pods ...slov1alpha1.PodMetricInfo) *slov1alpha1.NodeMetric {
	nm.Status.PodsMetric = append(nm.Status.PodsMetric, pods...)
	return nm
}

// podUsage is a pod's reported usage in a NodeMetric.
func podUsage(name string, prio extension.PriorityClass, usage corev1.ResourceList) slov1alpha1.PodMetricInfo {
	return slov1alpha1.PodMetricInfo{Namespace: "default", Name: name, Priority: string(prio), PodUsage: slov1alpha1.ResourceMap{ResourceList: usage}}
}

// pod is a pod in namespace default requesting requests.
func pod(name string, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "c",
			Resources: corev1.ResourceRequirements{Requests: requests},
		}}},
	}
}

// prodPod is a koord-prod pod.
func prodPod(name string, requests corev1.ResourceList) *corev1.Pod {
	p := pod(name, requests)
	p.Spec.Priority = ptr.To(extension.PriorityProdValueDefault)
	return p
}

// batchPod is a koord-batch BE pod requesting batch resources.
func batchPod(name string, requests corev1.ResourceList) *corev1.Pod {
	p := pod(name, requests)
	p.Spec.Priority = ptr.To(extension.PriorityBatchValueDefault)
	p.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSBE)}
	return p
}

// bound returns pod bound to node at the given time.
func bound(p *corev1.Pod, node string, at time.Time) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.NodeName = node
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: at},
	})
	return p
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
