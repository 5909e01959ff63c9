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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Admission is what the admission of one pod to its quota depends on, copied out of the Manager for one
// scheduling cycle: the limit and used resources of the pod's quota and, when parents are checked, of its
// ancestors, and the quota's min and non-preemptible used resources. Preemption's what-if adds and removes
// pods through Charge.
type Admission struct {
	// Quota is the pod's quota.
	Quota string
	// Levels are the quota, then its ancestors when they are checked, up to the root's child.
	Levels []Level
	// Min and NonPreemptibleUsed are the quota's, for non-preemptible pods.
	Min, NonPreemptibleUsed quantity.Amounts
	// LimitName names the limit in messages: "runtime" or "max".
	LimitName string
}

// Level is one quota checked for a pod.
type Level struct {
	// Name is the quota's name.
	Name string
	// Limit is the quota's runtime (or max), on the resources its max names.
	Limit quantity.Amounts
	// Used are the requests of the quota's assigned pods, its descendants' included.
	Used quantity.Amounts
}

// Charge is a pod as the quotas see it.
type Charge struct {
	// Quota is the pod's quota; Chain is the quota and its ancestors.
	Quota string
	Chain []string
	// Request is what the pod requests.
	Request quantity.Amounts
	// NonPreemptible is set for pods labelled quota.scheduling.koordinator.sh/preemptible=false.
	NonPreemptible bool
}

// Clone returns a deep copy of a.
func (a *Admission) Clone() *Admission {
	c := &Admission{Quota: a.Quota, Min: a.Min, NonPreemptibleUsed: a.NonPreemptibleUsed.Clone(), LimitName: a.LimitName, Levels: make([]Level, len(a.Levels))}
	for i, l := range a.Levels {
		c.Levels[i] = Level{Name: l.Name, Limit: l.Limit, Used: l.Used.Clone()}
	}
	return c
}

// Add counts the pod of c as assigned (add true) or no longer (add false) in the quotas of a it belongs to.
func (a *Admission) Add(c Charge, add bool) {
	op := quantity.Amounts.Add
	if !add {
		op = quantity.Amounts.Sub
	}
	for i := range a.Levels {
		if slices.Contains(c.Chain, a.Levels[i].Name) {
			op(a.Levels[i].Used, c.Request)
		}
	}
	if c.NonPreemptible && c.Quota == a.Quota {
		op(a.NonPreemptibleUsed, c.Request)
	}
}

// Check returns why a pod requesting request may not be admitted, one reason per quota and resource over
// its limit, e.g. `quota "team-a" cpu: used 30 + request 4 > runtime 32`; none when it may. Only resources
// the pod requests and the quota's max names are checked. Non-preemptible pods must also fit the quota's min.
func (a *Admission) Check(request quantity.Amounts, nonPreemptible bool) []string {
	if a.fits(request, nonPreemptible) {
		return nil
	}
	var reasons []string
	for _, l := range a.Levels {
		for _, name := range l.Limit.Names() {
			r := request[name]
			if r <= 0 {
				continue
			}
			if used, limit := l.Used[name], l.Limit[name]; quantity.Add(used, r) > limit {
				reasons = append(reasons, fmt.Sprintf("quota %q %s: used %s + request %s > %s %s", l.Name, name, quantity.Format(name, used), quantity.Format(name, r), a.LimitName, quantity.Format(name, limit)))
			}
		}
	}
	if nonPreemptible && len(a.Levels) > 0 {
		for _, name := range a.Levels[0].Limit.Names() {
			r := request[name]
			if r <= 0 {
				continue
			}
			if used, limit := a.NonPreemptibleUsed[name], a.Min[name]; quantity.Add(used, r) > limit {
				reasons = append(reasons, fmt.Sprintf("quota %q %s: non-preemptible used %s + request %s > min %s", a.Quota, name, quantity.Format(name, used), quantity.Format(name, r), quantity.Format(name, limit)))
			}
		}
	}
	return reasons
}

// fits is Check without the reasons, and without allocating.
func (a *Admission) fits(request quantity.Amounts, nonPreemptible bool) bool {
	for _, l := range a.Levels {
		for name, limit := range l.Limit {
			if r := request[name]; r > 0 && quantity.Add(l.Used[name], r) > limit {
				return false
			}
		}
	}
	if nonPreemptible && len(a.Levels) > 0 {
		for name := range a.Levels[0].Limit {
			if r := request[name]; r > 0 && quantity.Add(a.NonPreemptibleUsed[name], r) > a.Min[name] {
				return false
			}
		}
	}
	return true
}

// NotAdmittableError says why a quota takes no pods at all.
type NotAdmittableError struct {
	// Quota is the quota.
	Quota string
	// Reason says why.
	Reason string
}

// Error says which quota takes no pods and why.
func (e *NotAdmittableError) Error() string {
	return fmt.Sprintf("quota %q %s", e.Quota, e.Reason)
}

// Admission returns the admission state of quota, with its ancestors when checkParents is set. It fails
// with a *NotAdmittableError for a parent quota (only leaves take pods) and for a quota outside the tree.
func (m *Manager) Admission(quota string, checkParents bool) (*Admission, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refresh()
	n, ok := m.quotas[quota]
	switch {
	case !ok:
		return nil, &NotAdmittableError{Quota: quota, Reason: "does not exist"}
	case n.IsParent || len(n.children) > 0:
		return nil, &NotAdmittableError{Quota: quota, Reason: "is a parent quota: only quotas without children take pods"}
	case !n.inTree && !isBuiltin(quota):
		return nil, &NotAdmittableError{Quota: quota, Reason: fmt.Sprintf("is not in the quota tree: its parent %q does not exist or its parents form a cycle", n.Parent)}
	}
	a := &Admission{Quota: quota, Min: n.Min, NonPreemptibleUsed: n.nonPreemptibleUsed.Clone(), LimitName: "runtime"}
	if !m.opts.EnableRuntimeQuota {
		a.LimitName = "max"
	}
	for p := n; p != nil; p = p.parent {
		a.Levels = append(a.Levels, Level{Name: p.Name, Limit: m.limitOf(p), Used: p.used.Clone()})
		if !checkParents {
			break
		}
	}
	return a, nil
}

// limitOf is what n's pods may use: its runtime quota (or max), on the resources its max names. The caller
// holds m.mu and has refreshed.
func (m *Manager) limitOf(n *node) quantity.Amounts {
	l := make(quantity.Amounts, len(n.Max))
	for name, maxValue := range n.Max {
		if m.opts.EnableRuntimeQuota {
			l[name] = n.runtime[name]
		} else {
			l[name] = maxValue
		}
	}
	return l
}

// ChargeOf returns pod as the quotas see it: its quota with the quota's ancestors, and its request. A pod the
// manager knows is looked up, others are resolved.
func (m *Manager) ChargeOf(pod *corev1.Pod) Charge {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c Charge
	if e, ok := m.pods[pod.UID]; ok {
		c = Charge{Quota: e.quota, Request: e.request, NonPreemptible: e.nonPreemptible}
	} else {
		c = Charge{Quota: m.resolve(pod), Request: PodRequest(pod), NonPreemptible: extension.IsPodNonPreemptible(pod)}
	}
	for p := m.quotas[c.Quota]; p != nil; p = p.parent {
		c.Chain = append(c.Chain, p.Name)
	}
	return c
}
