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
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSchedulingFailure(t *testing.T) {
	tests := map[string]struct {
		msg  string
		want SchedulingFailure
	}{
		"node reasons by plugin, most nodes first": {
			msg: "0/5 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 3 node cpu usage 78 percent > threshold 65 percent. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
			want: SchedulingFailure{Nodes: 5, Rejections: []Rejection{
				{Plugin: "LoadAwareScheduling", Nodes: 3, Reason: "node cpu usage 78 percent > threshold 65 percent"},
				{Plugin: "NodeResourcesFit", Nodes: 1, Reason: "Insufficient cpu"},
				{Plugin: "TaintToleration", Nodes: 1, Reason: "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"},
			}, Preemption: "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."},
		},
		"a reason with a comma stays whole": {
			msg: "0/2 nodes are available: 2 node has 6 free CPUs (3 whole cores), the pod needs 8.",
			want: SchedulingFailure{Nodes: 2, Rejections: []Rejection{
				{Plugin: "NodeNUMAResource", Nodes: 2, Reason: "node has 6 free CPUs (3 whole cores), the pod needs 8"},
			}},
		},
		"prefilter rejection by quota": {
			msg: `0/3 nodes are available: quota "team-a" cpu: used 3 + request 2 > runtime 4. preemption: not eligible due to preemptionPolicy=Never.`,
			want: SchedulingFailure{Nodes: 3, PreFilter: &Rejection{Plugin: "ElasticQuota", Nodes: 3, Reason: `quota "team-a" cpu: used 3 + request 2 > runtime 4`},
				Preemption: "preemption: not eligible due to preemptionPolicy=Never."},
		},
		"prefilter rejection by gang": {
			msg:  `0/3 nodes are available: gang "default/train" has 2 of 4 members (min 3).`,
			want: SchedulingFailure{Nodes: 3, PreFilter: &Rejection{Plugin: "Coscheduling", Nodes: 3, Reason: `gang "default/train" has 2 of 4 members (min 3)`}},
		},
		"device reason": {
			msg: "0/1 nodes are available: 1 0 of the node's gpu devices fit the pod, no GPU has 30 percent memory free.",
			want: SchedulingFailure{Nodes: 1, Rejections: []Rejection{
				{Plugin: "DeviceShare", Nodes: 1, Reason: "0 of the node's gpu devices fit the pod, no GPU has 30 percent memory free"},
			}},
		},
		"unknown reason keeps no plugin": {
			msg:  "0/1 nodes are available: 1 something new.",
			want: SchedulingFailure{Nodes: 1, Rejections: []Rejection{{Nodes: 1, Reason: "something new"}}},
		},
		"not the scheduler's format": {
			msg:  `running PreBind plugin "DefaultPreBind": etcdserver: request timed out`,
			want: SchedulingFailure{Nodes: -1, Unparsed: `running PreBind plugin "DefaultPreBind": etcdserver: request timed out`},
		},
		"no nodes": {
			msg:  "0/0 nodes are available:",
			want: SchedulingFailure{Nodes: 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseSchedulingFailure(tc.msg)); diff != "" {
				t.Errorf("ParseSchedulingFailure (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSuggestions(t *testing.T) {
	tests := map[string]struct {
		msg  string
		want []string
	}{
		"hot nodes grouped by resource and threshold": {
			msg: "0/4 nodes are available: 1 node cpu usage 70 percent > threshold 65 percent, 2 node cpu usage 90 percent > threshold 65 percent, 1 node prod memory usage 97 percent > threshold 95 percent.",
			want: []string{
				"3 nodes would fit if their cpu usage dropped below 65 percent (LoadAwareScheduling)",
				"1 node would fit if their prod memory usage dropped below 95 percent (LoadAwareScheduling)",
			},
		},
		"aggregated usage": {
			msg:  "0/1 nodes are available: 1 node cpu p95 usage over 5m0s 89 percent > threshold 70 percent.",
			want: []string{"1 node would fit if their cpu p95 usage dropped below 70 percent (LoadAwareScheduling)"},
		},
		"quota over runtime": {
			msg:  `0/3 nodes are available: quota "team-a" cpu: used 3500m + request 1 > runtime 4.`,
			want: []string{`quota team-a needs 500m more cpu in its runtime (used 3500m + request 1 > runtime 4), or pods of the quota must finish`},
		},
		"non-preemptible pod over min": {
			msg:  `0/3 nodes are available: quota "team-a" memory: non-preemptible used 1Gi + request 2Gi > min 2Gi.`,
			want: []string{`quota team-a needs 1Gi more memory in its min (the pod is non-preemptible) (used 1Gi + request 2Gi > min 2Gi), or pods of the quota must finish`},
		},
		"only room missing": {
			msg:  "0/2 nodes are available: 2 Insufficient cpu.",
			want: []string{"every node lacks room (Insufficient cpu): free some or add nodes"},
		},
		"nothing derivable": {
			msg: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseSchedulingFailure(tc.msg).Suggestions()); diff != "" {
				t.Errorf("Suggestions (-want,+got):\n%s", diff)
			}
		})
	}
}

// FuzzParseSchedulingFailure: any message parses without panicking, and a parsed one accounts for every node
// reason it lists.
func FuzzParseSchedulingFailure(f *testing.F) {
	f.Add("0/5 nodes are available: 1 Insufficient cpu, 3 node cpu usage 78 percent > threshold 65 percent.")
	f.Add(`0/3 nodes are available: quota "a" cpu: used 3 + request 2 > runtime 4.`)
	f.Add("0/1 nodes are available: 1 a, b, c. preemption: x")
	f.Fuzz(func(t *testing.T, msg string) {
		got := ParseSchedulingFailure(msg)
		for _, r := range got.Rejections {
			if r.Nodes <= 0 || r.Nodes > got.Nodes {
				t.Errorf("rejection %+v counts nodes outside 1..%d", r, got.Nodes)
			}
		}
		_ = got.Suggestions()
	})
}
