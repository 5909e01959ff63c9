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

package features

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

func TestKoordletGateDefaults(t *testing.T) {
	g := NewKoordletGate()
	for f, specs := range KoordletFeatures() {
		if got, want := g.Enabled(f), specs[len(specs)-1].Default; got != want {
			t.Errorf("%s enabled = %v, want the default %v", f, got, want)
		}
	}
	want := Koordlet{
		PodCgroupReconcile: true, BatchResource: true, CPUSetAllocator: true, BECPUSuppress: true, CPUBurst: true,
		NodeTopologyReport: true, Accelerators: true, RDMADevices: true, GroupIdentity: true, RdtResctrl: true,
	}
	if diff := cmp.Diff(want, ResolveKoordlet(g)); diff != "" {
		t.Errorf("ResolveKoordlet of the defaults (-want,+got):\n%s", diff)
	}
}

func TestKoordletGateSetFromFlag(t *testing.T) {
	tests := map[string]struct {
		value      string
		want       Koordlet
		wantErrSub string
	}{
		"Koordinator DaemonSet value turns the alpha evictions on": {
			value: "AllAlpha=true,AllBeta=true",
			want: Koordlet{PodCgroupReconcile: true, BatchResource: true, CPUSetAllocator: true, BECPUSuppress: true,
				CPUBurst: true, BEMemoryEvict: true, BECPUEvict: true, CPUEvict: true, CPUAllocatableEvict: true, MemoryEvict: true,
				MemoryAllocatableEvict: true, NodeTopologyReport: true, Accelerators: true, RDMADevices: true, GPUEnvInject: true, RDMADeviceInject: true, SystemConfig: true,
				CgroupReconcile: true, GroupIdentity: true, CoreSched: true, RdtResctrl: true, PSICollector: true},
		},
		"one strategy off": {
			value: "BECPUSuppress=false,BEMemoryEvict=true",
			want: Koordlet{PodCgroupReconcile: true, BatchResource: true, CPUSetAllocator: true, CPUBurst: true,
				BEMemoryEvict: true, NodeTopologyReport: true, Accelerators: true, RDMADevices: true, GroupIdentity: true, RdtResctrl: true},
		},
		"reconciler and the per-class settings off": {
			value: "PodCgroupReconcile=false,BatchResource=false,CPUSetAllocator=false",
			want:  Koordlet{BECPUSuppress: true, CPUBurst: true, NodeTopologyReport: true, Accelerators: true, RDMADevices: true, GroupIdentity: true, RdtResctrl: true},
		},
		"reconciler off alone: the runtime hooks still apply the per-class settings": {
			value: "PodCgroupReconcile=false",
			want: Koordlet{BatchResource: true, CPUSetAllocator: true, BECPUSuppress: true, CPUBurst: true,
				NodeTopologyReport: true, Accelerators: true, RDMADevices: true, GroupIdentity: true, RdtResctrl: true},
		},
		"unknown gate":  {value: "TerwayQoS=true", wantErrSub: "unrecognized feature gate: TerwayQoS"},
		"not a boolean": {value: "CPUBurst=sometimes", wantErrSub: "invalid value of CPUBurst=sometimes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewKoordletGate()
			err := g.Set(tc.value)
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("Set(%q) error = %v, want one containing %q", tc.value, err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatalf("Set(%q): %v", tc.value, err)
			}
			if diff := cmp.Diff(tc.want, ResolveKoordlet(g)); diff != "" {
				t.Errorf("ResolveKoordlet after Set(%q) (-want,+got):\n%s", tc.value, diff)
			}
		})
	}
}

func TestKoordletGateDuringTest(t *testing.T) {
	g := NewKoordletGate()
	t.Run("override", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, g, BEMemoryEvict, true)
		if !ResolveKoordlet(g).BEMemoryEvict {
			t.Errorf("BEMemoryEvict = false inside the override, want true")
		}
	})
	if ResolveKoordlet(g).BEMemoryEvict {
		t.Errorf("BEMemoryEvict = true after the subtest, want the default false")
	}
}

func TestKoordletAndManagerGatesAreSeparate(t *testing.T) {
	for f := range KoordletFeatures() {
		if _, ok := ManagerFeatures()[f]; ok {
			t.Errorf("%s is both a koord-manager and a koordlet gate", f)
		}
	}
	if err := NewManagerGate().Set("CPUBurst=true"); err == nil {
		t.Errorf("koord-manager's gate set accepted the koordlet gate CPUBurst")
	}
}
