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

package check

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	sigslisters "github.com/koord-dev/koord/pkg/client/listers/schedulingsigs/v1alpha1"
	slolisters "github.com/koord-dev/koord/pkg/client/listers/slo/v1alpha1"
)

// Watch feeds a Checker from a cluster through informers, and builds the State it evaluates.
type Watch struct {
	checker *Checker
	clock   clock.PassiveClock
	// sloNamespace and sloName locate the SLO ConfigMap.
	sloNamespace, sloName string

	core  informers.SharedInformerFactory
	koord koordinformers.SharedInformerFactory
	slo   informers.SharedInformerFactory
	// stop stops the informers; Stop closes it.
	stop     chan struct{}
	stopOnce sync.Once

	nodes        corelisters.NodeLister
	pods         corelisters.PodLister
	configMaps   corelisters.ConfigMapLister
	nodeMetrics  slolisters.NodeMetricLister
	reservations schedlisters.ReservationLister
	jobs         schedlisters.PodMigrationJobLister
	quotas       sigslisters.ElasticQuotaLister
	podGroups    sigslisters.PodGroupLister
}

// NewWatch returns a Watch of the cluster kube and koord reach, feeding checker. The clock stamps what it
// sees; nil is the real clock.
func NewWatch(checker *Checker, kube kubernetes.Interface, koord versioned.Interface, c clock.PassiveClock) (*Watch, error) {
	if c == nil {
		c = clock.RealClock{}
	}
	w := &Watch{
		checker: checker, clock: c,
		sloNamespace: configuration.ConfigNamespace, sloName: configuration.SLOCtrlConfigMap,
		stop:  make(chan struct{}),
		core:  informers.NewSharedInformerFactory(kube, 0),
		koord: koordinformers.NewSharedInformerFactory(koord, 0),
		slo:   informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(configuration.ConfigNamespace)),
	}
	// Asking for a lister registers its informer with the factory.
	w.nodes = w.core.Core().V1().Nodes().Lister()
	w.pods = w.core.Core().V1().Pods().Lister()
	w.configMaps = w.slo.Core().V1().ConfigMaps().Lister()
	w.nodeMetrics = w.koord.Slo().V1alpha1().NodeMetrics().Lister()
	w.reservations = w.koord.Scheduling().V1alpha1().Reservations().Lister()
	w.jobs = w.koord.Scheduling().V1alpha1().PodMigrationJobs().Lister()
	w.quotas = w.koord.SchedulingSigs().V1alpha1().ElasticQuotas().Lister()
	w.podGroups = w.koord.SchedulingSigs().V1alpha1().PodGroups().Lister()

	handlers := []struct {
		informer toolscache.SharedIndexInformer
		handler  toolscache.ResourceEventHandler
	}{
		{w.core.Core().V1().Pods().Informer(), toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				if p, ok := obj.(*corev1.Pod); ok {
					checker.ObservePod(p, w.clock.Now(), initial)
				}
			},
			UpdateFunc: func(_, obj any) {
				if p, ok := obj.(*corev1.Pod); ok {
					checker.ObservePod(p, w.clock.Now(), false)
				}
			},
			DeleteFunc: func(obj any) {
				if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if p, ok := obj.(*corev1.Pod); ok {
					checker.ForgetPod(p.UID, w.clock.Now())
				}
			},
		}},
		{w.core.Core().V1().Nodes().Informer(), toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if n, ok := obj.(*corev1.Node); ok {
					checker.ObserveNode(n, w.clock.Now())
				}
			},
			UpdateFunc: func(_, obj any) {
				if n, ok := obj.(*corev1.Node); ok {
					checker.ObserveNode(n, w.clock.Now())
				}
			},
			DeleteFunc: func(obj any) {
				if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if n, ok := obj.(*corev1.Node); ok {
					checker.ForgetNode(n.Name)
				}
			},
		}},
		{w.core.Core().V1().Events().Informer(), toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if e, ok := obj.(*corev1.Event); ok {
					checker.ObserveEvent(e)
				}
			},
			UpdateFunc: func(_, obj any) {
				if e, ok := obj.(*corev1.Event); ok {
					checker.ObserveEvent(e)
				}
			},
		}},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
	}
	return w, nil
}

// Start starts the informers, which run until Stop, and waits until their caches are synced or ctx ends.
func (w *Watch) Start(ctx context.Context) error {
	for _, f := range []interface {
		Start(<-chan struct{})
	}{w.core, w.koord, w.slo} {
		f.Start(w.stop)
	}
	for name, synced := range map[string]func() bool{
		"core":  func() bool { return allSynced(w.core.WaitForCacheSync(ctx.Done())) },
		"koord": func() bool { return allSynced(w.koord.WaitForCacheSync(ctx.Done())) },
		"slo":   func() bool { return allSynced(w.slo.WaitForCacheSync(ctx.Done())) },
	} {
		if !synced() {
			return fmt.Errorf("the %s informers did not sync: %w", name, context.Cause(ctx))
		}
	}
	return nil
}

// Stop stops the informers and waits for them.
func (w *Watch) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.core.Shutdown()
	w.koord.Shutdown()
	w.slo.Shutdown()
}

// allSynced reports whether every informer of a factory synced.
func allSynced[K comparable](m map[K]bool) bool {
	for _, ok := range m {
		if !ok {
			return false
		}
	}
	return true
}

// State returns the cluster state the caches hold now.
func (w *Watch) State() (*State, error) {
	s := &State{Now: w.clock.Now()}
	var err error
	if s.Nodes, err = w.nodes.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if s.Pods, err = w.pods.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	if s.NodeMetrics, err = w.nodeMetrics.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list NodeMetrics: %w", err)
	}
	if s.Reservations, err = w.reservations.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list Reservations: %w", err)
	}
	if s.Jobs, err = w.jobs.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list PodMigrationJobs: %w", err)
	}
	if s.Quotas, err = w.quotas.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list ElasticQuotas: %w", err)
	}
	if s.PodGroups, err = w.podGroups.List(labels.Everything()); err != nil {
		return nil, fmt.Errorf("list PodGroups: %w", err)
	}
	if cm, err := w.configMaps.ConfigMaps(w.sloNamespace).Get(w.sloName); err == nil {
		s.SLOConfig = cm
	}
	return s, nil
}

// Run evaluates the invariants every interval until ctx ends, and once more at the end; onViolation is called
// with each violation as it is found (nil: none).
func (w *Watch) Run(ctx context.Context, interval time.Duration, onViolation func(Violation)) error {
	evaluate := func() error {
		s, err := w.State()
		if err != nil {
			return err
		}
		for _, v := range w.checker.Evaluate(s) {
			klog.FromContext(ctx).V(2).Info("Invariant violated", "invariant", v.Invariant, "object", v.Object, "message", v.Message)
			if onViolation != nil {
				onViolation(v)
			}
		}
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := evaluate(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return evaluate()
		case <-t.C:
		}
	}
}
