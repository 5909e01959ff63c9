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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// sortKey is what Less orders entities by, field after field.
type sortKey struct {
	// priority and subPriority: higher first.
	priority, subPriority int32
	// time is the gang's queue time for gang members, else the time the entity was queued: earlier first.
	time time.Time
	// namespace and name are the gang's, else the pod's: they keep a gang's pods together when times tie.
	namespace, name string
}

// podInfoGetter is the part of kube-scheduler's QueuedPodInfo Less needs.
type podInfoGetter interface {
	GetPodInfo() fwk.PodInfo
}

// Less orders the scheduling queue: by priority (higher first), then by Koordinator's sub-priority label
// (higher first), then by the gang's queue time (the PodGroup's or the first member's creation time), or the
// queue time of a pod in no gang (earlier first), then by the gang's (or pod's) namespace and name. It is a
// lexicographic order on a key of each entity, hence a strict weak order, and it keeps the members of a gang
// next to each other.
func (p *Plugin) Less(a, b fwk.QueuedEntityInfo) bool {
	ka, kb := p.sortKeyOf(a), p.sortKeyOf(b)
	if ka.priority != kb.priority {
		return ka.priority > kb.priority
	}
	if ka.subPriority != kb.subPriority {
		return ka.subPriority > kb.subPriority
	}
	if !ka.time.Equal(kb.time) {
		return ka.time.Before(kb.time)
	}
	if c := strings.Compare(ka.namespace, kb.namespace); c != 0 {
		return c < 0
	}
	return ka.name < kb.name
}

// sortKeyOf returns the sort key of e.
func (p *Plugin) sortKeyOf(e fwk.QueuedEntityInfo) sortKey {
	k := sortKey{priority: e.GetPriority(), time: e.GetTimestamp()}
	g, ok := e.(podInfoGetter)
	if !ok {
		return k
	}
	pod := g.GetPodInfo().GetPod()
	// A malformed sub-priority counts as none; the pod's webhook rejects it.
	k.subPriority, _ = extension.GetPodSubPriority(pod.Labels)
	k.namespace, k.name = pod.Namespace, pod.Name
	if id, ok := cache.IDOf(pod); ok {
		k.namespace, k.name = id.Namespace, id.Name
		k.time = gangTime(p.cache, id, pod)
	}
	return k
}

// gangTime returns the queue time of gang id, or the creation time of pod while the cache does not know the
// gang.
func gangTime(c *cache.Cache, id cache.ID, pod *corev1.Pod) time.Time {
	if t, ok := c.QueueTime(id); ok {
		return t
	}
	return pod.CreationTimestamp.Time
}
