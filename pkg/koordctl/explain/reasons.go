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

package explain

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// SchedulingFailure is a scheduler's "0/N nodes are available: ..." message (the PodScheduled condition and
// the FailedScheduling event of an unschedulable pod) taken apart.
type SchedulingFailure struct {
	// Nodes is how many nodes the scheduler considered; -1 when the message does not say.
	Nodes int `json:"nodes"`
	// PreFilter is set when the pod was rejected before any node was looked at (a quota, a gang, an
	// invalid annotation): the reason applies to every node.
	PreFilter *Rejection `json:"preFilter,omitempty"`
	// Rejections are the reasons nodes were rejected, each with how many nodes gave it, most nodes first.
	// A node rejected for several reasons counts under each.
	Rejections []Rejection `json:"rejections,omitempty"`
	// Preemption is what preemption (PostFilter) reported, e.g. that no victims would help.
	Preemption string `json:"preemption,omitempty"`
	// Unparsed holds the message when it is not in the scheduler's format (an error, another scheduler).
	Unparsed string `json:"unparsed,omitempty"`
}

// Rejection is one reason the scheduler gave, with the plugin that gives it.
type Rejection struct {
	// Plugin is the scheduler plugin known to give Reason; "" when none is known.
	Plugin string `json:"plugin,omitempty"`
	// Nodes is how many nodes were rejected for Reason (all of them for a PreFilter rejection).
	Nodes int `json:"nodes"`
	// Reason is the reason as the plugin wrote it.
	Reason string `json:"reason"`
}

// reasonPlugins maps the reasons of the plugins in Koord's and kube-scheduler's profiles to their plugin. The
// first pattern that matches wins.
var reasonPlugins = []struct {
	pattern *regexp.Regexp
	plugin  string
}{
	{regexp.MustCompile(`^(Insufficient |Too many pods)`), "NodeResourcesFit"},
	{regexp.MustCompile(`^node\(s\) didn't match Pod's node affinity/selector`), "NodeAffinity"},
	{regexp.MustCompile(`^node\(s\) had untolerated taint`), "TaintToleration"},
	{regexp.MustCompile(`^node\(s\) were unschedulable`), "NodeUnschedulable"},
	{regexp.MustCompile(`^node\(s\) didn't match pod (anti-)?affinity rules|^node\(s\) didn't satisfy existing pods anti-affinity`), "InterPodAffinity"},
	{regexp.MustCompile(`^node\(s\) didn't match pod topology spread constraints`), "PodTopologySpread"},
	{regexp.MustCompile(`^node\(s\) didn't have free ports`), "NodePorts"},
	{regexp.MustCompile(`^node\(s\) didn't match the requested node name`), "NodeName"},
	{regexp.MustCompile(`volume|persistentvolumeclaim|PersistentVolumeClaim`), "VolumeBinding"},
	{regexp.MustCompile(`^node (prod )?[a-z.\-/]+ (p\d+ )?usage .*> threshold|^node metric`), "LoadAwareScheduling"},
	{regexp.MustCompile(`^quota "`), "ElasticQuota"},
	{regexp.MustCompile(`^gang "|^its gang |gang asks for network-topology|^ClusterNetworkTopology`), "Coscheduling"},
	{regexp.MustCompile(`(?i)reservation`), "Reservation"},
	{regexp.MustCompile(`NUMA|whole (physical )?cores|free CPUs|CPU topology|CPUs spread`), "NodeNUMAResource"},
	{regexp.MustCompile(`(?i)GPU|device|RDMA|PCIe|NPU`), "DeviceShare"},
	{regexp.MustCompile(`scheduling-hint`), "SchedulingHint"},
}

// pluginOf returns the plugin known to give reason, or "".
func pluginOf(reason string) string {
	for _, p := range reasonPlugins {
		if p.pattern.MatchString(reason) {
			return p.plugin
		}
	}
	return ""
}

var (
	fitErrorPrefix = regexp.MustCompile(`^0/(\d+) nodes are available:\s*`)
	countedReason  = regexp.MustCompile(`^(\d+) (.+)$`)
)

// ParseSchedulingFailure takes apart the message kube-scheduler's framework writes for a pod that fits no
// node: "0/N nodes are available: " then either the PreFilter message or the node reasons as "count reason"
// sorted and joined by ", ", a period, and possibly " preemption: ..." (PostFilter).
func ParseSchedulingFailure(msg string) SchedulingFailure {
	m := fitErrorPrefix.FindStringSubmatch(msg)
	if m == nil {
		return SchedulingFailure{Nodes: -1, Unparsed: msg}
	}
	f := SchedulingFailure{}
	f.Nodes, _ = strconv.Atoi(m[1])
	rest := msg[len(m[0]):]
	if i := strings.Index(rest, "preemption:"); i >= 0 {
		f.Preemption = strings.TrimSpace(rest[i:])
		rest = rest[:i]
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ".")
	if rest == "" {
		return f
	}
	if rejections, ok := parseCountedReasons(rest, f.Nodes); ok {
		f.Rejections = rejections
		return f
	}
	f.PreFilter = &Rejection{Plugin: pluginOf(rest), Nodes: f.Nodes, Reason: rest}
	return f
}

// parseCountedReasons parses "3 reason a, 1 reason b" into rejections, most nodes first. Reasons may contain
// ", " themselves: a part that does not start with a count continues the previous reason. It fails when the
// first part has no count or a count exceeds nodes.
func parseCountedReasons(s string, nodes int) ([]Rejection, bool) {
	var out []Rejection
	for part := range strings.SplitSeq(s, ", ") {
		m := countedReason.FindStringSubmatch(part)
		n := -1
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if m == nil || n > nodes || n == 0 {
			if len(out) == 0 {
				return nil, false
			}
			out[len(out)-1].Reason += ", " + part
			continue
		}
		out = append(out, Rejection{Nodes: n, Reason: m[2]})
	}
	for i := range out {
		out[i].Plugin = pluginOf(out[i].Reason)
	}
	slices.SortStableFunc(out, func(a, b Rejection) int { return cmp.Compare(b.Nodes, a.Nodes) })
	return out, true
}

var (
	// loadAwareReason is LoadAwareScheduling's "node cpu usage 78 percent > threshold 65 percent", with the
	// prod and aggregated variants ("node prod cpu usage ...", "node cpu p95 usage over 5m0s ...").
	loadAwareReason = regexp.MustCompile(`^node (prod )?(\S+) (?:(p\d+) usage(?: over \S+)?|usage) (\d+)(?: percent|%) > threshold (\d+)(?: percent|%)$`)
	// quotaReason is ElasticQuota's `quota "a" cpu: used 3 + request 2 > runtime 4`.
	quotaReason = regexp.MustCompile(`^quota "([^"]+)" (\S+): (non-preemptible )?used (\S+) \+ request (\S+) > (\S+) (\S+)$`)
)

// Suggestions returns what would make the pod fit, derived from the reasons: how many nodes would fit if their
// usage dropped below the threshold, how much more a quota needs.
func (f SchedulingFailure) Suggestions() []string {
	var out []string
	type key struct{ prod, resource, threshold string }
	hot := map[key]int{}
	var order []key
	all := f.Rejections
	if f.PreFilter != nil {
		all = append([]Rejection{*f.PreFilter}, all...)
	}
	for _, r := range all {
		for part := range strings.SplitSeq(r.Reason, ", ") {
			if m := loadAwareReason.FindStringSubmatch(part); m != nil {
				k := key{m[1], m[2], m[5]}
				if m[3] != "" {
					k.resource += " " + m[3]
				}
				if _, ok := hot[k]; !ok {
					order = append(order, k)
				}
				hot[k] += r.Nodes
				continue
			}
			if m := quotaReason.FindStringSubmatch(part); m != nil {
				out = append(out, quotaSuggestion(m))
			}
		}
	}
	for _, k := range order {
		out = append(out, fmt.Sprintf("%d %s fit if their %s%s usage dropped below %s percent (LoadAwareScheduling)", hot[k], plural(hot[k], "node would", "nodes would"), k.prod, k.resource, k.threshold))
	}
	if f.PreFilter == nil && len(f.Rejections) == 1 && f.Rejections[0].Plugin == "NodeResourcesFit" {
		out = append(out, fmt.Sprintf("every node lacks room (%s): free some or add nodes", f.Rejections[0].Reason))
	}
	return out
}

// quotaSuggestion words a quotaReason match: how much more of the resource the quota needs.
func quotaSuggestion(m []string) string {
	quota, res, nonPreemptible, used, request, limitName, limit := m[1], m[2], m[3] != "", m[4], m[5], m[6], m[7]
	need := ""
	u, err1 := resource.ParseQuantity(used)
	r, err2 := resource.ParseQuantity(request)
	l, err3 := resource.ParseQuantity(limit)
	if err1 == nil && err2 == nil && err3 == nil {
		u.Add(r)
		u.Sub(l)
		need = u.String() + " more "
	}
	what := "its " + limitName
	if nonPreemptible {
		what = "its min (the pod is non-preemptible)"
	}
	return fmt.Sprintf("quota %s needs %s%s in %s (used %s + request %s > %s %s), or pods of the quota must finish", quota, need, res, what, used, request, limitName, limit)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
