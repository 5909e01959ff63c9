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

package framework

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// EvictPlugin carries out the evictions of a profile (MigrationController: a PodMigrationJob per pod).
type EvictPlugin interface {
	frameworktypes.Plugin
	// Evict starts moving a pod off its node; it returns an error saying why when it does not.
	Evict(ctx context.Context, pod *corev1.Pod, opts evictions.EvictOptions) error
}

// evictor is a profile's frameworktypes.Evictor: its Filter plugins decide, its Evict plugin evicts, within the
// configuration's per-round limits (maxNoOfPodsToEvictPerNode, ...PerNamespace, ...Total).
type evictor struct {
	profile string
	filters []frameworktypes.EvictorPlugin
	evict   EvictPlugin
	limits  *roundLimits
}

var _ frameworktypes.Evictor = &evictor{}

// Filter tells whether every Filter plugin lets the pod be evicted.
func (e *evictor) Filter(pod *corev1.Pod) bool {
	for _, f := range e.filters {
		if !f.Filter(pod) {
			return false
		}
	}
	return true
}

// PreEvictionFilter tells whether every Filter plugin lets the pod be evicted now.
func (e *evictor) PreEvictionFilter(pod *corev1.Pod) bool {
	for _, f := range e.filters {
		if !f.PreEvictionFilter(pod) {
			return false
		}
	}
	return true
}

// Evict hands the pod to the Evict plugin unless a per-round limit is reached.
func (e *evictor) Evict(ctx context.Context, pod *corev1.Pod, opts evictions.EvictOptions) error {
	if e.evict == nil {
		return fmt.Errorf("profile %s has no evict plugin", e.profile)
	}
	if err := e.limits.take(pod); err != nil {
		return err
	}
	opts.ProfileName = e.profile
	if err := e.evict.Evict(ctx, pod, opts); err != nil {
		e.limits.giveBack(pod)
		return err
	}
	return nil
}

// roundLimits counts the evictions of one round against the configuration's limits; shared by the profiles.
type roundLimits struct {
	mu                    sync.Mutex
	perNode, perNamespace *uint
	total                 *uint
	nodes, namespaces     map[string]uint
	all                   uint
}

func newRoundLimits(c *config.DeschedulerConfiguration) *roundLimits {
	return &roundLimits{perNode: c.MaxNoOfPodsToEvictPerNode, perNamespace: c.MaxNoOfPodsToEvictPerNamespace, total: c.MaxNoOfPodsToEvictTotal}
}

func (l *roundLimits) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes, l.namespaces, l.all = map[string]uint{}, map[string]uint{}, 0
}

func (l *roundLimits) take(pod *corev1.Pod) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nodes == nil {
		l.nodes, l.namespaces = map[string]uint{}, map[string]uint{}
	}
	switch {
	case l.total != nil && l.all >= *l.total:
		return fmt.Errorf("maxNoOfPodsToEvictTotal (%d) reached this round", *l.total)
	case l.perNode != nil && l.nodes[pod.Spec.NodeName] >= *l.perNode:
		return fmt.Errorf("maxNoOfPodsToEvictPerNode (%d) reached this round for node %s", *l.perNode, pod.Spec.NodeName)
	case l.perNamespace != nil && l.namespaces[pod.Namespace] >= *l.perNamespace:
		return fmt.Errorf("maxNoOfPodsToEvictPerNamespace (%d) reached this round for namespace %s", *l.perNamespace, pod.Namespace)
	}
	l.all++
	l.nodes[pod.Spec.NodeName]++
	l.namespaces[pod.Namespace]++
	return nil
}

func (l *roundLimits) giveBack(pod *corev1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all--
	l.nodes[pod.Spec.NodeName]--
	l.namespaces[pod.Namespace]--
}
