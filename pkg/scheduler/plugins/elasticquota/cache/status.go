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

package cache

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Status is what the manager knows of one quota, for its ElasticQuota object.
type Status struct {
	// Name and Namespace name the quota's object; Namespace is empty for built-in quotas without one.
	Name, Namespace string
	// Parent, IsParent and TreeID are the quota's place in the tree, as its labels give them.
	Parent   string
	IsParent bool
	TreeID   string
	// Min, Max and Guaranteed are the quota's spec and guaranteed annotation.
	Min, Max, Guaranteed quantity.Amounts
	// Used are the requests of the quota's assigned pods (its descendants' included), Request the requests
	// of all its pods (for a parent: its children's requests capped by their max), Runtime its runtime
	// quota, NonPreemptibleUsed the used of its non-preemptible pods.
	Used, Request, Runtime, NonPreemptibleUsed quantity.Amounts
}

// Statuses returns the status of every quota, sorted by name.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refresh()
	out := make([]Status, 0, len(m.quotas))
	for _, name := range slices.Sorted(maps.Keys(m.quotas)) {
		n := m.quotas[name]
		out = append(out, Status{
			Name:               n.Name,
			Namespace:          n.Namespace,
			Parent:             n.Parent,
			IsParent:           n.IsParent,
			TreeID:             n.TreeID,
			Min:                n.Min.Clone(),
			Max:                n.Max.Clone(),
			Guaranteed:         n.Guaranteed.Clone(),
			Used:               n.used.Clone(),
			Request:            n.request.Clone(),
			Runtime:            n.runtime.Clone(),
			NonPreemptibleUsed: n.nonPreemptibleUsed.Clone(),
		})
	}
	return out
}

// OverUse is a quota whose assigned pods use more than its runtime quota.
type OverUse struct {
	// Quota is the quota's name.
	Quota string
	// Used and Limit are its used resources and its runtime quota (or max), on the resources its max names.
	Used, Limit quantity.Amounts
}

// OverUsed returns the quotas that take pods (leaves and the default quota; not the system quota) whose
// used resources exceed their limit in some resource their max names, sorted by name.
func (m *Manager) OverUsed() []OverUse {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refresh()
	var out []OverUse
	for _, name := range slices.Sorted(maps.Keys(m.quotas)) {
		n := m.quotas[name]
		if name == extension.SystemQuotaName || len(n.children) > 0 || (!n.inTree && !isBuiltin(name)) {
			continue
		}
		limit := m.limitOf(n)
		if !fits(n.used, limit) {
			out = append(out, OverUse{Quota: name, Used: mask(n.used, limit), Limit: limit})
		}
	}
	return out
}

// RevokeVictims returns the pods quota should give back to get its used resources within its limit: walking
// its assigned preemptible pods from the least important (lowest priority, then newest), it takes pods until
// what is left fits, then walks the taken pods back from the most important and returns those that do not
// fit again. Pods already being deleted count as given back. It returns none when the quota is within its
// limit (or will be once its terminating pods are gone) or unknown.
func (m *Manager) RevokeVictims(quota string) []*corev1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refresh()
	n, ok := m.quotas[quota]
	if !ok {
		return nil
	}
	limit := m.limitOf(n)
	used := mask(n.used, limit)
	if fits(used, limit) {
		return nil
	}
	var candidates []*podEntry
	for uid := range n.pods {
		e := m.pods[uid]
		switch {
		case !e.assigned():
		case !e.nonPreemptible:
			candidates = append(candidates, e)
		}
	}
	if fits(used, limit) {
		return nil
	}
	slices.SortFunc(candidates, func(a, b *podEntry) int {
		return cmp.Or(
			cmp.Compare(corev1helpers.PodPriority(a.pod), corev1helpers.PodPriority(b.pod)),
			b.pod.CreationTimestamp.Compare(a.pod.CreationTimestamp.Time),
			cmp.Compare(a.pod.Namespace, b.pod.Namespace),
			cmp.Compare(a.pod.Name, b.pod.Name),
		)
	})
	var taken []*podEntry
	for _, e := range candidates {
		if fits(used, limit) {
			break
		}
		used.Sub(e.request)
		taken = append(taken, e)
	}
	var victims []*corev1.Pod
	for i := len(taken) - 1; i >= 0; i-- {
		e := taken[i]
		used.Add(e.request)
		if fits(used, limit) {
			continue
		}
		used.Sub(e.request)
		victims = append(victims, e.pod)
	}
	return victims
}

// fits reports whether used is within limit on every resource limit names.
func fits(used, limit quantity.Amounts) bool {
	for name, l := range limit {
		if used[name] > l {
			return false
		}
	}
	return true
}

// mask returns v on the resources of limit.
func mask(v, limit quantity.Amounts) quantity.Amounts {
	out := make(quantity.Amounts, len(limit))
	for name := range limit {
		out[name] = v[name]
	}
	return out
}
