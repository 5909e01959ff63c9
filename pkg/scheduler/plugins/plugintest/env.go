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

// Package plugintest is the harness the unit tests of Koord's scheduler plugins share, after upstream
// kube-scheduler's framework/plugins/testing: an Env of fake clientsets (Kubernetes and Koord objects) with
// their informers, a fake clock and an event recorder; plugins built on a framework handle over it, alone
// (Plugin) or registered at their extension points in a real framework (Framework); args defaulted and
// converted from their v1 form as kube-scheduler does it (Args, DecodeArgs); and small helpers for statuses,
// node infos and waiting. Object builders are in pkg/util/testing.
package plugintest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	testingclock "k8s.io/utils/clock/testing"

	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	koordscheme "github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// Env is the world a plugin runs in during a unit test. Its context ends with the test.
type Env struct {
	Ctx    context.Context
	Logger klog.Logger
	// Clock is a fake clock at utiltesting.Now; pass it to the plugin's WithClock.
	Clock *testingclock.FakeClock
	// Kube and Koord are the fake clientsets, holding the objects the Env was made with. Writes through Koord
	// get increasing resourceVersions, as on an apiserver.
	Kube  *kubefake.Clientset
	Koord *koordfake.Clientset
	// KubeInformers is the framework handle's informer factory; CRDs the shared Koord informers to pass to
	// the plugin's factory.
	KubeInformers informers.SharedInformerFactory
	CRDs          *crdinformers.Shared
	// Events records the events the plugin emits through the framework handle; it holds 1000 events, and
	// blocks the emitter when full.
	Events *events.FakeRecorder

	frameworkOpts []frameworkruntime.Option
	// synced are the HasSynced of the plugins built so far.
	synced []func() bool
}

// Option configures an Env.
type Option func(*envConfig)

type envConfig struct {
	objects         []runtime.Object
	snapshot        *schedcache.Snapshot
	schedulingQueue bool
	frameworkOpts   []frameworkruntime.Option
}

// WithObjects puts objects in the fake clientsets: Koord's kinds in Koord, the others in Kube.
func WithObjects(objs ...runtime.Object) Option {
	return func(c *envConfig) { c.objects = append(c.objects, objs...) }
}

// WithObjectsOf puts a list of objects of one type in the fake clientsets, as WithObjects does.
func WithObjectsOf[T runtime.Object](objs []T) Option {
	return func(c *envConfig) {
		for _, o := range objs {
			c.objects = append(c.objects, o)
		}
	}
}

// WithSnapshot gives the framework a snapshot of the pods (those bound to a node count on it) and nodes, as
// its shared and mutable snapshot lister.
func WithSnapshot(pods []*corev1.Pod, nodes []*corev1.Node) Option {
	return func(c *envConfig) { c.snapshot = schedcache.NewSnapshot(pods, nodes) }
}

// WithSchedulingQueue gives the framework kube-scheduler's scheduling queue as its pod nominator, which
// preemption needs.
func WithSchedulingQueue() Option {
	return func(c *envConfig) { c.schedulingQueue = true }
}

// WithFrameworkOptions adds options to the framework the plugins are built on.
func WithFrameworkOptions(opts ...frameworkruntime.Option) Option {
	return func(c *envConfig) { c.frameworkOpts = append(c.frameworkOpts, opts...) }
}

// New returns an Env; nothing is started until a plugin is built.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var c envConfig
	for _, opt := range opts {
		opt(&c)
	}
	logger, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	var kubeObjs, koordObjs []runtime.Object
	for _, obj := range c.objects {
		if _, _, err := koordscheme.Scheme.ObjectKinds(obj); err == nil {
			koordObjs = append(koordObjs, obj)
		} else {
			kubeObjs = append(kubeObjs, obj)
		}
	}
	e := &Env{
		Ctx:    ctx,
		Logger: logger,
		Clock:  testingclock.NewFakeClock(utiltesting.Now),
		Kube:   kubefake.NewClientset(kubeObjs...),
		Koord:  koordfake.NewSimpleClientset(koordObjs...),
		Events: events.NewFakeRecorder(1000),
	}
	versionWrites(e.Koord)
	e.KubeInformers = informers.NewSharedInformerFactory(e.Kube, 0)
	e.CRDs = crdinformers.NewForClient(e.Koord)
	e.frameworkOpts = []frameworkruntime.Option{
		frameworkruntime.WithInformerFactory(e.KubeInformers),
		frameworkruntime.WithClientSet(e.Kube),
		frameworkruntime.WithEventRecorder(e.Events),
		frameworkruntime.WithLogger(logger),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
	}
	if c.snapshot != nil {
		e.frameworkOpts = append(e.frameworkOpts, frameworkruntime.WithSnapshotSharedLister(c.snapshot), frameworkruntime.WithMutableSnapshotLister(c.snapshot))
	}
	if c.schedulingQueue {
		e.frameworkOpts = append(e.frameworkOpts, frameworkruntime.WithPodNominator(internalqueue.NewSchedulingQueue(nil, e.KubeInformers)))
	}
	e.frameworkOpts = append(e.frameworkOpts, c.frameworkOpts...)
	return e
}

// Handle returns a framework handle over the Env with no plugins in it, to build plugins on.
func (e *Env) Handle(t testing.TB) framework.Framework {
	t.Helper()
	fh, err := frameworkruntime.NewFramework(e.Ctx, nil, nil, e.frameworkOpts...)
	if err != nil {
		t.Fatalf("create framework: %v", err)
	}
	return fh
}

// Plugin builds a plugin of type P with factory and args on Handle, then starts the informers (Start).
func Plugin[P fwk.Plugin](t testing.TB, e *Env, factory frameworkruntime.PluginFactory, args runtime.Object) P {
	t.Helper()
	pl, err := factory(e.Ctx, args, e.Handle(t))
	if err != nil {
		t.Fatalf("create plugin: %v", err)
	}
	p, ok := pl.(P)
	if !ok {
		t.Fatalf("the factory built a %T, want a %T", pl, *new(P))
	}
	e.track(pl)
	e.Start(t)
	return p
}

// Capture wraps factory so that a framework builds the plugin with args, whatever its own configuration
// says, and stores the plugin in into.
func Capture[P fwk.Plugin](e *Env, factory frameworkruntime.PluginFactory, args runtime.Object, into *P) frameworkruntime.PluginFactory {
	return func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := factory(ctx, args, h)
		if err != nil {
			return nil, err
		}
		p, ok := pl.(P)
		if !ok {
			return nil, fmt.Errorf("the factory built a %T, want a %T", pl, *new(P))
		}
		*into = p
		e.track(pl)
		return pl, nil
	}
}

// Framework builds a framework named profile with the registered plugins over the Env (register plugins under
// test with Capture), then starts the informers (Start).
func (e *Env) Framework(t testing.TB, profile string, registered ...tf.RegisterPluginFunc) framework.Framework {
	t.Helper()
	schedmetrics.Register() // A framework with a profile name records metrics.
	fh, err := tf.NewFramework(e.Ctx, registered, profile, e.frameworkOpts...)
	if err != nil {
		t.Fatalf("create framework: %v", err)
	}
	e.Start(t)
	return fh
}

// Start starts the Kubernetes informers, as kube-scheduler does once it has built its plugins, and waits
// until they have synced and every plugin built so far that reports HasSynced has seen what they listed.
func (e *Env) Start(t testing.TB) {
	t.Helper()
	e.KubeInformers.Start(e.Ctx.Done())
	e.KubeInformers.WaitForCacheSync(e.Ctx.Done())
	for _, synced := range e.synced {
		Eventually(t, synced)
	}
}

func (e *Env) track(pl fwk.Plugin) {
	if s, ok := pl.(interface{ HasSynced() bool }); ok {
		e.synced = append(e.synced, s.HasSynced)
	}
}

// Eventually polls cond every 10ms for up to 10s and fails the test when it never holds.
func Eventually(t testing.TB, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("condition did not hold: %v", err)
	}
}
