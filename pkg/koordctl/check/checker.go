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
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// allocatableHistory is how long the samples of a node's dynamic allocatable are kept.
const allocatableHistory = 10 * time.Minute

// forgetAfter is how long the history keeps what it knew of a pod or gang after it is gone: long enough for an
// eviction Event to arrive after the pod.
const forgetAfter = 10 * time.Minute

// Violation is an invariant found broken: a finding that lasted its invariant's settle time.
type Violation struct {
	// Invariant is the invariant's name.
	Invariant string `json:"invariant"`
	// Object is the object found wrong.
	Object string `json:"object"`
	// Message is what was wrong when it became a violation.
	Message string `json:"message"`
	// FirstSeen is when the finding was first seen; Since when it became a violation.
	FirstSeen time.Time `json:"firstSeen"`
	Since     time.Time `json:"since"`
}

// Result is what one invariant checked over every evaluation.
type Result struct {
	// Invariant is its name; Description says it.
	Invariant   string `json:"invariant"`
	Description string `json:"description"`
	// Evaluations counts the evaluations; Checks the objects checked over all of them.
	Evaluations int `json:"evaluations"`
	Checks      int `json:"checks"`
	// Open counts the findings of the last evaluation that have not lasted their settle time.
	Open int `json:"open"`
	// Violations are the violations, in the order they were found.
	Violations []Violation `json:"violations"`
}

// Report is the Checker's account.
type Report struct {
	// Results are per invariant, in Invariants order.
	Results []Result `json:"results"`
}

// Violations returns every violation of the report.
func (r Report) Violations() []Violation {
	var out []Violation
	for _, res := range r.Results {
		out = append(out, res.Violations...)
	}
	return out
}

// Checker evaluates the invariants on the cluster state and keeps the history they need. Feed it objects with
// the Observe methods (Watch does it from informers) and call Evaluate; it is safe for concurrent use.
type Checker struct {
	invariants []Invariant

	mu      sync.Mutex
	history *History
	// open are the findings not yet violations, by invariant and object, with when they were first seen.
	open map[findingKey]time.Time
	// reported are the findings already counted as violations, so that one lasting state counts once.
	reported map[findingKey]bool
	results  []Result
}

type findingKey struct {
	invariant, object string
}

// New returns a Checker of the invariants o tunes.
func New(o Options) *Checker {
	c := &Checker{
		invariants: Invariants(o),
		history:    NewHistory(),
		open:       map[findingKey]time.Time{},
		reported:   map[findingKey]bool{},
	}
	for _, inv := range c.invariants {
		c.results = append(c.results, Result{Invariant: inv.Name, Description: inv.Description})
	}
	return c
}

// ObservePod records what the history needs of pod, seen at now. initial is true for pods listed when the
// Checker started: their bindings are older than the Checker, so their capacity at bind is not checked.
func (c *Checker) ObservePod(pod *corev1.Pod, now time.Time, initial bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.history
	h.Pods[pod.UID] = PodClass{
		Seen:            now,
		Name:            podName(pod),
		QoS:             extension.GetPodQoSClassWithDefault(pod),
		EvictionEnabled: pod.Labels[extension.LabelPodEvictEnabled] == "true",
	}
	if pod.Spec.NodeName == "" {
		return
	}
	if b, ok := h.Bindings[pod.UID]; ok {
		if b.Node != pod.Spec.NodeName {
			h.Rebindings = append(h.Rebindings, Rebinding{Pod: podName(pod), From: b.Node, To: pod.Spec.NodeName})
			b.Node = pod.Spec.NodeName
			h.Bindings[pod.UID] = b
		}
		return
	}
	h.Bindings[pod.UID] = Binding{Node: pod.Spec.NodeName, At: now, Pod: pod.DeepCopy(), Checked: initial}
	if key := gangKey(pod); key != "" {
		rec := h.GangBound[key]
		if rec == nil {
			rec = &GangRecord{FirstBound: now, Members: map[types.UID]bool{}}
			h.GangBound[key] = rec
		}
		rec.Members[pod.UID] = true
	}
}

// ForgetPod drops the binding of a pod deleted at now; its class is kept forgetAfter for the Events that come
// after it, and its gang keeps it as a member ever bound.
func (c *Checker) ForgetPod(uid types.UID, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.history.Bindings, uid)
	if pc, ok := c.history.Pods[uid]; ok {
		pc.Deleted = now
		c.history.Pods[uid] = pc
	}
}

// ObserveNode records the node's batch and mid allocatable, seen at now, when it changed, and drops samples
// older than allocatableHistory but the last of them.
func (c *Checker) ObserveNode(node *corev1.Node, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sample := AllocatableSample{At: now, Resources: map[corev1.ResourceName]int64{}}
	for name, q := range node.Status.Allocatable {
		if n := extension.NormalizeResourceName(name); isDynamic(n) {
			sample.Resources[n] = quantity.Value(n, q)
		}
	}
	samples := c.history.Allocatable[node.Name]
	if n := len(samples); n > 0 && maps.Equal(samples[n-1].Resources, sample.Resources) {
		return
	}
	samples = append(samples, sample)
	i := 0
	for i < len(samples)-1 && now.Sub(samples[i+1].At) > allocatableHistory {
		i++
	}
	c.history.Allocatable[node.Name] = samples[i:]
}

// ForgetNode drops the history of a deleted node.
func (c *Checker) ForgetNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.history.Allocatable, name)
}

// ObserveEvent records koordlet's evictions: Events evictPodSuccess on pods. Only those of pods that may not be
// evicted (LS, or not seen) are kept; the others are counted.
func (c *Checker) ObserveEvent(e *corev1.Event) {
	if e.Reason != evictor.EventReasonEvicted || e.InvolvedObject.Kind != "Pod" {
		return
	}
	at := e.LastTimestamp.Time
	if !e.EventTime.IsZero() {
		at = e.EventTime.Time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history.EvictionsSeen++
	if pc, ok := c.history.Pods[e.InvolvedObject.UID]; ok && (!isLS(pc.QoS) || pc.EvictionEnabled) {
		return
	}
	for _, seen := range c.history.Evictions {
		if seen.Pod == e.InvolvedObject.UID && seen.At.Equal(at) {
			return
		}
	}
	c.history.Evictions = append(c.history.Evictions, Eviction{Pod: e.InvolvedObject.UID,
		Name: objectName(e.InvolvedObject.Namespace, e.InvolvedObject.Name), At: at, Message: e.Message})
}

// Evaluate runs every invariant on s (its History is the Checker's) and returns the violations it found now.
func (c *Checker) Evaluate(s *State) []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prune(s)
	s.History = c.history
	var found []Violation
	seen := map[findingKey]bool{}
	for i, inv := range c.invariants {
		checked, findings := inv.Check(s)
		res := &c.results[i]
		res.Evaluations++
		res.Checks += checked
		res.Open = 0
		for _, f := range findings {
			key := findingKey{inv.Name, f.Object + "\x00" + f.Message}
			seen[key] = true
			if c.reported[key] {
				continue
			}
			first, ok := c.open[key]
			if !ok {
				first = s.Now
				c.open[key] = first
			}
			if s.Now.Sub(first) < inv.Settle {
				res.Open++
				continue
			}
			v := Violation{Invariant: inv.Name, Object: f.Object, Message: f.Message, FirstSeen: first, Since: s.Now}
			res.Violations = append(res.Violations, v)
			found = append(found, v)
			c.reported[key] = true
			delete(c.open, key)
		}
	}
	// A finding gone before it settled was a passing state; one gone after was reported and may come back.
	for key := range c.open {
		if !seen[key] {
			delete(c.open, key)
		}
	}
	for key := range c.reported {
		if !seen[key] {
			delete(c.reported, key)
		}
	}
	return found
}

// prune drops the classes of pods gone longer than forgetAfter and the records of gangs without a pod left
// whose first member was bound longer ago.
func (c *Checker) prune(s *State) {
	for uid, pc := range c.history.Pods {
		if !pc.Deleted.IsZero() && s.Now.Sub(pc.Deleted) > forgetAfter {
			delete(c.history.Pods, uid)
		}
	}
	alive := map[string]bool{}
	for _, p := range s.Pods {
		if key := gangKey(p); key != "" {
			alive[key] = true
		}
	}
	for key, rec := range c.history.GangBound {
		if !alive[key] && s.Now.Sub(rec.FirstBound) > forgetAfter {
			delete(c.history.GangBound, key)
		}
	}
}

// Report returns what every invariant checked and found so far.
func (c *Checker) Report() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Report{Results: make([]Result, len(c.results))}
	for i, r := range c.results {
		r.Violations = append([]Violation(nil), r.Violations...)
		out.Results[i] = r
	}
	return out
}
