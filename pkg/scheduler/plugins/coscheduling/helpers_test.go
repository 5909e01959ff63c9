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
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/core"
)

// now is the time of the fake clock tests start with.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// argsWith returns the internal args a configuration with the v1 args that edit leaves produces: edited,
// defaulted, converted.
func argsWith(t testing.TB, edit func(*configv1.CoschedulingArgs)) *config.CoschedulingArgs {
	t.Helper()
	in := &configv1.CoschedulingArgs{}
	if edit != nil {
		edit(in)
	}
	scheme.Scheme.Default(in)
	out := &config.CoschedulingArgs{}
	if err := scheme.Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("convert args: %v", err)
	}
	return out
}

// activator records the pods the plugin moves to the front of the queue.
type activator struct {
	mu        sync.Mutex
	activated []string
}

// Activate records pods.
func (a *activator) Activate(_ klog.Logger, pods map[string]*corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key := range pods {
		a.activated = append(a.activated, key)
	}
}

// list returns the pods activated so far.
func (a *activator) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.activated)
}

// reset forgets the pods activated so far.
func (a *activator) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.activated = nil
}

// fixture is the plugin in a real framework with fake clientsets, and a fake clock.
type fixture struct {
	ctx       context.Context
	fh        framework.Framework
	plugin    *Plugin
	clock     *testingclock.FakeClock
	kube      *kubefake.Clientset
	koord     *fake.Clientset
	activator *activator
}

// newFixture builds the framework with the plugin at every extension point it has, with the pods and
// PodGroups in the fake clientsets, and waits until the plugin has seen the pods.
func newFixture(t testing.TB, args *config.CoschedulingArgs, pods []*corev1.Pod, pgs []*v1alpha1.PodGroup) *fixture {
	t.Helper()
	schedmetrics.Register() // A framework with a profile name records metrics.
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	objs := make([]runtime.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p)
	}
	kube := kubefake.NewClientset(objs...)
	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	koordObjs := make([]runtime.Object, 0, len(pgs))
	for _, pg := range pgs {
		koordObjs = append(koordObjs, pg)
	}
	koord := fake.NewSimpleClientset(koordObjs...)
	clk := testingclock.NewFakeClock(now)
	factory := NewFactory(crdinformers.NewForClient(koord), WithClock(clk), withStatusDelay(0))
	var plugin *Plugin
	registerAs := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := factory(ctx, args, h)
		if err == nil {
			plugin = pl.(*Plugin)
		}
		return pl, err
	}
	act := &activator{}
	nodes := []*corev1.Node{st.MakeNode().Name("node-1").Obj()}
	fh, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterPluginAsExtensions(Name, registerAs, "QueueSort", "PreFilter", "PostFilter", "Reserve", "Permit", "PostBind"),
		tf.RegisterBindPlugin("DefaultBinder", func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return &binder{}, nil }),
	}, "koord-scheduler",
		frameworkruntime.WithInformerFactory(kubeInformers),
		frameworkruntime.WithClientSet(kube),
		frameworkruntime.WithPodActivator(act),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithSnapshotSharedLister(schedcache.NewSnapshot(nil, nodes)),
	)
	if err != nil {
		t.Fatalf("create framework: %v", err)
	}
	kubeInformers.Start(ctx.Done())
	kubeInformers.WaitForCacheSync(ctx.Done())
	eventually(t, plugin.podsSynced)
	// Forget what the initial pods activated; tests look at what their own steps activate.
	act.reset()
	return &fixture{ctx: ctx, fh: fh, plugin: plugin, clock: clk, kube: kube, koord: koord, activator: act}
}

// binder is a bind plugin that binds nothing; the tests call PostBind themselves.
type binder struct{}

func (*binder) Name() string { return "DefaultBinder" }

func (*binder) Bind(context.Context, fwk.CycleState, *corev1.Pod, string) *fwk.Status { return nil }

// eventually fails t unless cond holds within a few seconds.
func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("condition not met: %v", err)
	}
}

// attempt is the outcome of one scheduling attempt of a pod.
type attempt struct {
	// status is the outcome of the scheduling cycle: PreFilter (and PostFilter) or Permit.
	status *fwk.Status
	// bound receives the outcome of waiting in Permit, nil when the pod was allowed and bound; it is closed
	// at once when the pod did not wait.
	bound chan *fwk.Status
}

// schedule runs one scheduling attempt of pod as kube-scheduler does: PreFilter; PostFilter when the pod does
// not fit (fits false) or PreFilter rejected it; else Reserve and Permit, and a binding cycle that waits on
// Permit and then unreserves or binds.
func (f *fixture) schedule(pod *corev1.Pod, fits bool) attempt {
	a := attempt{bound: make(chan *fwk.Status, 1)}
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	_, status, _ := f.fh.RunPreFilterPlugins(f.ctx, state, pod)
	if !status.IsSuccess() || !fits {
		if status.IsSuccess() {
			status = fwk.NewStatus(fwk.Unschedulable, "node(s) did not fit")
		}
		if status.IsRejected() {
			f.fh.RunPostFilterPlugins(f.ctx, state, pod, framework.NewDefaultNodeToStatus())
		}
		a.status = status
		close(a.bound)
		return a
	}
	const node = "node-1"
	if s := f.fh.RunReservePluginsReserve(f.ctx, state, pod, node); !s.IsSuccess() {
		a.status = s
		close(a.bound)
		return a
	}
	waitTime, status := f.fh.RunPermitPlugins(f.ctx, state, pod, node)
	a.status = status
	if !status.IsSuccess() && !status.IsWait() {
		f.fh.RunReservePluginsUnreserve(f.ctx, state, pod, node)
		close(a.bound)
		return a
	}
	if status.IsWait() {
		f.fh.AddWaitingPod(pod, waitTime)
	}
	if toActivate, err := state.Read(framework.PodsToActivateKey); err == nil {
		m := toActivate.(*framework.PodsToActivate)
		f.activator.Activate(klog.Background(), m.Map)
	}
	go func() {
		if s := f.fh.WaitOnPermit(f.ctx, pod); !s.IsSuccess() {
			f.fh.RunReservePluginsUnreserve(f.ctx, state, pod, node)
			a.bound <- s
			return
		}
		f.fh.RunPostBindPlugins(f.ctx, state, pod, node)
		a.bound <- nil
	}()
	return a
}

// outcome waits for the binding cycle of a and returns its status: nil when bound.
func (a attempt) outcome(t testing.TB) *fwk.Status {
	t.Helper()
	select {
	case s := <-a.bound:
		return s
	case <-time.After(5 * time.Second):
		t.Fatalf("the pod is still waiting in Permit")
		return nil
	}
}

// waiting reports whether the framework holds pod in Permit.
func (f *fixture) waiting(pod *corev1.Pod) bool { return f.fh.GetWaitingPod(pod.UID) != nil }

// gangPod is a pod in namespace default of the annotation gang gang with minimum minMember and the extra
// annotations (key=value pairs).
func gangPod(name, gang, minMember string, annotations ...string) *corev1.Pod {
	p := plainPod(name)
	p.Annotations = map[string]string{extension.AnnotationGangName: gang, extension.AnnotationGangMinNum: minMember}
	for i := 0; i+1 < len(annotations); i += 2 {
		p.Annotations[annotations[i]] = annotations[i+1]
	}
	return p
}

// pgPod is a pod in namespace default of PodGroup pg.
func pgPod(name, pg string) *corev1.Pod {
	p := plainPod(name)
	p.Labels = map[string]string{v1alpha1.PodGroupLabel: pg}
	return p
}

// plainPod is a pod in namespace default.
func plainPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(now),
	}}
}

// podGroup is a PodGroup in namespace default with minMember and a 30 s timeout.
func podGroup(name string, minMember int32) *v1alpha1.PodGroup {
	return &v1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec:       v1alpha1.PodGroupSpec{MinMember: minMember, ScheduleTimeoutSeconds: ptr.To[int32](30)},
	}
}

// newCycleState returns a cycle state as kube-scheduler starts a cycle with.
func newCycleState() *framework.CycleState {
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	return state
}

// gangID is the ID of gang name in namespace default.
func gangID(name string) core.ID { return core.ID{Namespace: "default", Name: name} }
