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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

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

// fixture is the plugin in a real framework over a plugintest.Env, with an activator recording what it moves
// to the front of the queue.
type fixture struct {
	*plugintest.Env
	fh        framework.Framework
	plugin    *Plugin
	activator *activator
}

// newFixture builds the framework with the plugin at every extension point it has, with the pods and
// PodGroups in the fake clientsets, and waits until the plugin has seen the pods.
func newFixture(t testing.TB, args *config.CoschedulingArgs, pods []*corev1.Pod, pgs []*v1alpha1.PodGroup) *fixture {
	t.Helper()
	return newFixtureSorted(t, args, pods, pgs, false)
}

// newFixtureSorted is newFixture; with prioritySort, the profile sorts the queue with kube-scheduler's
// PrioritySort, as Koordinator's shipped profile does, instead of the plugin's QueueSort.
func newFixtureSorted(t testing.TB, args *config.CoschedulingArgs, pods []*corev1.Pod, pgs []*v1alpha1.PodGroup, prioritySort bool) *fixture {
	t.Helper()
	act := &activator{}
	env := plugintest.New(t, plugintest.WithObjectsOf(pods), plugintest.WithObjectsOf(pgs),
		plugintest.WithSnapshot(nil, []*corev1.Node{utiltesting.MakeNode("node-1").Obj()}),
		plugintest.WithFrameworkOptions(frameworkruntime.WithPodActivator(act)))
	var plugin *Plugin
	factory := newFactory(env.CRDs, 0, plugins.WithClock(env.Clock))
	points := []string{"QueueSort", "PreEnqueue", "PreFilter", "PostFilter", "Reserve", "Permit", "PreBind", "PostBind"}
	registered := []tf.RegisterPluginFunc{
		tf.RegisterBindPlugin("DefaultBinder", func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return &binder{}, nil }),
	}
	if prioritySort {
		points = points[1:]
		registered = append(registered, tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New))
	}
	registered = append(registered, tf.RegisterPluginAsExtensions(Name, plugintest.Capture(env, factory, args, &plugin), points...))
	fh := env.Framework(t, "koord-scheduler", registered...)
	// Forget what the initial pods activated; tests look at what their own steps activate.
	act.reset()
	return &fixture{Env: env, fh: fh, plugin: plugin, activator: act}
}

// binder is a bind plugin that binds nothing; the tests call PostBind themselves.
type binder struct{}

func (*binder) Name() string { return "DefaultBinder" }

func (*binder) Bind(context.Context, fwk.CycleState, *corev1.Pod, string) *fwk.Status { return nil }

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
	_, status, _ := f.fh.RunPreFilterPlugins(f.Ctx, state, pod)
	if !status.IsSuccess() || !fits {
		if status.IsSuccess() {
			status = fwk.NewStatus(fwk.Unschedulable, "node(s) did not fit")
		}
		if status.IsRejected() {
			f.fh.RunPostFilterPlugins(f.Ctx, state, pod, framework.NewDefaultNodeToStatus())
		}
		a.status = status
		close(a.bound)
		return a
	}
	const node = "node-1"
	if s := f.fh.RunReservePluginsReserve(f.Ctx, state, pod, node); !s.IsSuccess() {
		a.status = s
		close(a.bound)
		return a
	}
	waitTime, status := f.fh.RunPermitPlugins(f.Ctx, state, pod, node)
	a.status = status
	if !status.IsSuccess() && !status.IsWait() {
		f.fh.RunReservePluginsUnreserve(f.Ctx, state, pod, node)
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
		if s := f.fh.WaitOnPermit(f.Ctx, pod); !s.IsSuccess() {
			f.fh.RunReservePluginsUnreserve(f.Ctx, state, pod, node)
			a.bound <- s
			return
		}
		if s := f.fh.RunPreBindPreFlights(f.Ctx, state, pod, node); s.IsSuccess() {
			if s := f.fh.RunPreBindPlugins(f.Ctx, state, pod, node); !s.IsSuccess() {
				f.fh.RunReservePluginsUnreserve(f.Ctx, state, pod, node)
				a.bound <- s
				return
			}
		}
		f.fh.RunPostBindPlugins(f.Ctx, state, pod, node)
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

// newCycleState returns a cycle state as kube-scheduler starts a cycle with.
func newCycleState() *framework.CycleState {
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	return state
}

// gangID is the ID of gang name in namespace default.
func gangID(name string) cache.ID { return cache.ID{Namespace: "default", Name: name} }
