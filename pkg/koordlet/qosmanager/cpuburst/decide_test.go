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

package cpuburst

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func TestBurstUs(t *testing.T) {
	tests := map[string]struct {
		policy                    slov1alpha1.CPUBurstPolicy
		limitMilli, percent, want int64
	}{
		// 2 cores × 1000% × 100000 µs
		"cpuBurstOnly":       {policy: slov1alpha1.CPUBurstOnly, limitMilli: 2000, percent: 1000, want: 2000000},
		"auto, half a core":  {policy: slov1alpha1.CPUBurstAuto, limitMilli: 500, percent: 50, want: 25000},
		"quota burst only":   {policy: slov1alpha1.CFSQuotaBurstOnly, limitMilli: 2000, percent: 1000},
		"none":               {policy: slov1alpha1.CPUBurstNone, limitMilli: 2000, percent: 1000},
		"no limit, no burst": {policy: slov1alpha1.CPUBurstOnly, percent: 1000},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := BurstUs(tc.policy, tc.limitMilli, tc.percent, 100000); got != tc.want {
				t.Errorf("BurstUs = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSharePoolState(t *testing.T) {
	// Threshold 50%: cooling from 45%.
	tests := map[string]struct {
		usage, total float64
		want         NodeState
	}{
		"at the threshold":      {usage: 5, total: 10, want: NodeOverloaded},
		"in the cooling band":   {usage: 4.6, total: 10, want: NodeCooling},
		"at the cooling bound":  {usage: 4.5, total: 10, want: NodeCooling},
		"below":                 {usage: 4.4, total: 10, want: NodeIdle},
		"no shared pool at all": {usage: 0, total: 0, want: NodeOverloaded},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := SharePoolState(tc.usage, tc.total, 50); got != tc.want {
				t.Errorf("SharePoolState(%v, %v, 50) = %v, want %v", tc.usage, tc.total, got, tc.want)
			}
		})
	}
}

func TestQuotaOp(t *testing.T) {
	auto := slov1alpha1.CPUBurstAuto
	tests := map[string]struct {
		policy            slov1alpha1.CPUBurstPolicy
		allows, throttled bool
		node              NodeState
		want              Op
	}{
		"quota burst off":                 {policy: slov1alpha1.CPUBurstOnly, allows: true, throttled: true, node: NodeIdle, want: Reset},
		"throttled on an idle node":       {policy: auto, allows: true, throttled: true, node: NodeIdle, want: ScaleUp},
		"throttled on a cooling node":     {policy: auto, allows: true, throttled: true, node: NodeCooling, want: Remain},
		"throttled, node unknown":         {policy: auto, allows: true, throttled: true, node: NodeUnknown, want: Remain},
		"throttled on an overloaded node": {policy: auto, allows: true, throttled: true, node: NodeOverloaded, want: ScaleDown},
		"quiet on an overloaded node":     {policy: auto, allows: true, node: NodeOverloaded, want: ScaleDown},
		"quiet on an idle node":           {policy: slov1alpha1.CFSQuotaBurstOnly, allows: true, node: NodeIdle, want: Remain},
		"limiter out of tokens":           {policy: auto, throttled: true, node: NodeIdle, want: ScaleDown},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := QuotaOp(tc.policy, tc.allows, tc.throttled, tc.node); got != tc.want {
				t.Errorf("QuotaOp = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTargetQuota(t *testing.T) {
	// base 200000 (2 cores), ceiling 300% = 600000.
	tests := map[string]struct {
		op        Op
		cur, want int64
	}{
		"up by 20%":            {op: ScaleUp, cur: 200000, want: 240000},
		"up, capped":           {op: ScaleUp, cur: 576000, want: 600000},
		"down by 20%":          {op: ScaleDown, cur: 500000, want: 400000},
		"down, not below base": {op: ScaleDown, cur: 240000, want: 200000},
		"reset":                {op: Reset, cur: 480000, want: 200000},
		"remain":               {op: Remain, cur: 288000, want: 288000},
		"remain above ceiling": {op: Remain, cur: 700000, want: 600000},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := TargetQuota(tc.op, tc.cur, 200000, 600000); got != tc.want {
				t.Errorf("TargetQuota(%v, %d) = %d, want %d", tc.op, tc.cur, got, tc.want)
			}
		})
	}
}

func TestLimiter(t *testing.T) {
	start := time.Unix(1000, 0)
	// 10 s × (300 − 100) = 2000 percent-seconds, full at start.
	l := NewLimiter(10, 300, start)
	steps := []struct {
		after      time.Duration
		usage      float64
		wantAllow  bool
		wantTokens float64
	}{
		{after: 5 * time.Second, usage: 300, wantAllow: true, wantTokens: 1000},     // 2000 − 200×5
		{after: 10 * time.Second, usage: 300, wantAllow: false, wantTokens: -1000},  // 1000 − 200×10
		{after: 10 * time.Second, usage: 80, wantAllow: false, wantTokens: -1000},   // between 60% and 100%: unchanged
		{after: 10010 * time.Millisecond, usage: 0, wantAllow: true, wantTokens: 1}, // −1000 + 100×10.01
		{after: 100 * time.Second, usage: 10, wantAllow: true, wantTokens: 2000},    // capped at the capacity
		{after: 500 * time.Millisecond, usage: 500, wantAllow: true, wantTokens: 1800},
	}
	now := start
	for i, s := range steps {
		now = now.Add(s.after)
		allow, tokens := l.Allow(now, s.usage)
		if allow != s.wantAllow || tokens < s.wantTokens-1e-6 || tokens > s.wantTokens+1e-6 {
			t.Errorf("step %d: Allow = %v, %v; want %v, %v", i, allow, tokens, s.wantAllow, s.wantTokens)
		}
	}
	if !l.Matches(10, 300) || l.Matches(20, 300) {
		t.Errorf("Matches does not tell the settings apart")
	}
}

func TestParseCPUBurstAnnotation(t *testing.T) {
	tests := map[string]struct {
		raw        string
		want       *slov1alpha1.CPUBurstConfig
		wantErrSub string
	}{
		"policy and percent": {
			raw:  `{"policy":"auto","cpuBurstPercent":500}`,
			want: &slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstAuto, CPUBurstPercent: ptr.To[int64](500)},
		},
		"unknown field":  {raw: `{"policy":"auto","burst":5}`, wantErrSub: `unknown field "burst"`},
		"unknown policy": {raw: `{"policy":"always"}`, wantErrSub: "koordinator.sh/cpuBurst.policy"},
		"out of range":   {raw: `{"cfsQuotaBurstPercent":50}`, wantErrSub: "koordinator.sh/cpuBurst.cfsQuotaBurstPercent"},
		"not JSON":       {raw: `auto`, wantErrSub: "not a CPU burst configuration"},
		"trailing data":  {raw: `{"policy":"auto"} {}`, wantErrSub: "data after the JSON object"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCPUBurstAnnotation(tc.raw)
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodConfig(t *testing.T) {
	node := &slov1alpha1.CPUBurstConfig{
		Policy: slov1alpha1.CPUBurstNone, CPUBurstPercent: ptr.To[int64](1000),
		CFSQuotaBurstPercent: ptr.To[int64](300), CFSQuotaBurstPeriodSeconds: ptr.To[int64](-1),
	}
	got, err := PodConfig(map[string]string{extension.AnnotationPodCPUBurst: `{"policy":"cpuBurstOnly","cpuBurstPercent":20}`}, node)
	if err != nil {
		t.Fatal(err)
	}
	want := &slov1alpha1.CPUBurstConfig{
		Policy: slov1alpha1.CPUBurstOnly, CPUBurstPercent: ptr.To[int64](20),
		CFSQuotaBurstPercent: ptr.To[int64](300), CFSQuotaBurstPeriodSeconds: ptr.To[int64](-1),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want,+got):\n%s", diff)
	}
	if *node.CPUBurstPercent != 1000 || node.Policy != slov1alpha1.CPUBurstNone {
		t.Errorf("PodConfig modified the node configuration")
	}
	got, err = PodConfig(map[string]string{extension.AnnotationPodCPUBurst: `{`}, node)
	if err == nil || got != node {
		t.Errorf("PodConfig with a malformed annotation = %v, %v; want the node configuration and an error", got, err)
	}
	if got, err := PodConfig(nil, node); err != nil || got != node {
		t.Errorf("PodConfig without annotation = %v, %v; want the node configuration", got, err)
	}
}
