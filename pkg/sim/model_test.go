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

package sim

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

const gi = 1 << 30

// container returns a container with the given requests and limits ("" leaves a resource out).
func container(requests, limits map[corev1.ResourceName]string) corev1.Container {
	list := func(m map[corev1.ResourceName]string) corev1.ResourceList {
		if len(m) == 0 {
			return nil
		}
		l := corev1.ResourceList{}
		for n, v := range m {
			l[n] = resource.MustParse(v)
		}
		return l
	}
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: list(requests), Limits: list(limits)}}
}

// testPod returns a pod with uid, the given containers, QoS label (none when "") and usage annotation (none
// when "").
func testPod(uid string, qos extension.QoSClass, usage string, containers ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: uid, UID: types.UID(uid)},
		Spec:       corev1.PodSpec{Containers: containers},
	}
	if qos != "" {
		p.Labels = map[string]string{extension.LabelPodQoS: string(qos)}
	}
	if usage != "" {
		p.Annotations = map[string]string{AnnotationUsage: usage}
	}
	return p
}

func TestNewPodModel(t *testing.T) {
	inf := math.Inf(1)
	ignoreSeeds := cmpopts.IgnoreUnexported(PodModel{})
	tests := map[string]struct {
		pod     *corev1.Pod
		want    PodModel
		wantErr string
	}{
		"ls-default-fractions": {
			pod: testPod("ls", extension.QoSLS, "",
				container(map[corev1.ResourceName]string{"cpu": "2", "memory": "10Gi"}, map[corev1.ResourceName]string{"cpu": "4"})),
			want: PodModel{UID: "ls", CPU: Constant(1), Memory: Constant(7 * gi), CPULimit: 4, MemoryLimit: inf},
		},
		"containers-summed-limit-only-counts-as-request": {
			pod: testPod("sum", "", "",
				container(map[corev1.ResourceName]string{"cpu": "500m", "memory": "1Gi"}, map[corev1.ResourceName]string{"cpu": "1", "memory": "2Gi"}),
				container(nil, map[corev1.ResourceName]string{"cpu": "1500m", "memory": "2Gi"})),
			want: PodModel{UID: "sum", CPU: Constant(1), Memory: Constant(0.7 * 3 * gi), CPULimit: 2.5, MemoryLimit: 4 * gi},
		},
		"be-batch-resources": {
			pod: testPod("be", extension.QoSBE, "", container(
				map[corev1.ResourceName]string{extension.BatchCPU: "2000", extension.BatchMemory: "4Gi"},
				map[corev1.ResourceName]string{extension.BatchCPU: "3000", extension.BatchMemory: "8Gi"})),
			want: PodModel{UID: "be", BE: true, CPU: Constant(1), Memory: Constant(0.7 * 4 * gi), CPULimit: 3, MemoryLimit: 8 * gi},
		},
		"be-deprecated-batch-names": {
			pod: testPod("old", extension.QoSBE, "", container(
				map[corev1.ResourceName]string{extension.KoordBatchCPU: "1000", extension.KoordBatchMemory: "1Gi"}, nil)),
			want: PodModel{UID: "old", BE: true, CPU: Constant(0.5), Memory: Constant(0.7 * gi), CPULimit: inf, MemoryLimit: inf},
		},
		"mid-resources": {
			// 3000 milli-cores of mid-cpu: 1.5 cores used by default.
			pod: func() *corev1.Pod {
				p := testPod("mid", extension.QoSLS, "", container(
					map[corev1.ResourceName]string{extension.MidCPU: "3000", extension.MidMemory: "2Gi"},
					map[corev1.ResourceName]string{extension.MidCPU: "4000"}))
				p.Labels[extension.LabelPodPriorityClass] = string(extension.PriorityMid)
				return p
			}(),
			want: PodModel{UID: "mid", Mid: true, CPU: Constant(1.5), Memory: Constant(0.7 * 2 * gi), CPULimit: 4, MemoryLimit: inf},
		},
		"best-effort-without-anything": {
			pod:  testPod("none", "", "", corev1.Container{Name: "c"}),
			want: PodModel{UID: "none", BE: true, CPU: Constant(0), Memory: Constant(0), CPULimit: inf, MemoryLimit: inf},
		},
		"annotation-replaces-cpu-only": {
			pod: testPod("anno", extension.QoSLS, `{"cpu":{"type":"diurnal","base":"1","amplitude":"500m"}}`,
				container(map[corev1.ResourceName]string{"cpu": "2", "memory": "1Gi"}, nil)),
			want: PodModel{
				UID: "anno", CPU: Profile{Type: ProfileDiurnal, Base: 1, Amplitude: 0.5, Period: 24 * time.Hour},
				Memory: Constant(0.7 * gi), CPULimit: inf, MemoryLimit: inf,
			},
		},
		"malformed-annotation-keeps-default": {
			pod: testPod("bad", extension.QoSLS, `{"cpu":{"type":"constant"}}`,
				container(map[corev1.ResourceName]string{"cpu": "2", "memory": "1Gi"}, nil)),
			want:    PodModel{UID: "bad", CPU: Constant(1), Memory: Constant(0.7 * gi), CPULimit: inf, MemoryLimit: inf},
			wantErr: "cpu.value: Required value",
		},
		"pod-level-resources": {
			pod: func() *corev1.Pod {
				p := testPod("podlevel", "", "", container(map[corev1.ResourceName]string{"cpu": "8"}, nil))
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
				return p
			}(),
			want: PodModel{UID: "podlevel", CPU: Constant(1), Memory: Constant(0), CPULimit: 2, MemoryLimit: inf},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := NewPodModel(tc.pod)
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, ignoreSeeds, approx); diff != "" {
				t.Errorf("model (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodModelCappedByLimit(t *testing.T) {
	pod := testPod("capped", extension.QoSLS, `{"cpu":{"type":"constant","value":"3"},"memory":{"type":"constant","value":"3Gi"}}`,
		container(nil, map[corev1.ResourceName]string{"cpu": "2", "memory": "1Gi"}))
	m, err := NewPodModel(pod)
	if err != nil {
		t.Fatal(err)
	}
	node := &NodeModel{CPUCapacity: 8, MemoryCapacity: 16 * gi, Since: day, Pods: []PodModel{m}}
	m.Since = day
	node.Pods[0] = m
	cpu, mem, ok := node.PodAt("capped", day.Add(time.Hour))
	if diff := cmp.Diff([]any{2.0, float64(gi), true}, []any{cpu, mem, ok}); diff != "" {
		t.Errorf("usage (-want,+got):\n%s", diff)
	}
}

// suppressionNode is a 10-CPU node with system usage 0.5: an LS pod using lsCPU and two BE pods asking 3 and 1
// cores.
func suppressionNode(lsCPU float64, s *Suppression) *NodeModel {
	pod := func(uid string, be bool, cpu float64) PodModel {
		return PodModel{UID: types.UID(uid), BE: be, CPU: Constant(cpu), Memory: Constant(gi), CPULimit: math.Inf(1), MemoryLimit: math.Inf(1), Since: day}
	}
	return &NodeModel{
		CPUCapacity: 10, MemoryCapacity: 32 * gi, SystemCPU: 0.5, SystemMemory: gi, Since: day,
		Pods:               []PodModel{pod("be-a", true, 3), pod("be-b", true, 1), pod("ls", false, lsCPU)},
		Suppression:        s,
		LSThresholdPercent: 65,
	}
}

func TestNodeModelSuppression(t *testing.T) {
	cfsQuota := &Suppression{Policy: slov1alpha1.CPUCfsQuotaPolicy, ThresholdPercent: 65}
	cpuset := &Suppression{Policy: slov1alpha1.CPUSetPolicy, ThresholdPercent: 65}
	at := day.Add(time.Hour)
	tests := map[string]struct {
		node    *NodeModel
		want    Moment
		wantBEA float64 // usage of be-a (asks 3 of the 4 BE cores)
	}{
		"off": {
			node: suppressionNode(4, nil),
			want: Moment{Time: at, NodeCPU: 8.5, NodeMemory: 4 * gi, LSCPU: 4, BECPU: 4, BEDemandCPU: 4,
				BEAllowedCPU: math.Inf(1), BELimitCPU: math.Inf(1), Pods: 3, BEPods: 2},
			wantBEA: 3,
		},
		// BEAllowed = 10 × 65% − 4 − max(0.5, 0) = 2: both BE pods get half of what they ask.
		"cfs-quota-scales-down": {
			node: suppressionNode(4, cfsQuota),
			want: Moment{Time: at, NodeCPU: 6.5, NodeMemory: 4 * gi, LSCPU: 4, BECPU: 2, BEDemandCPU: 4, BEAllowedCPU: 2, BELimitCPU: 2,
				Suppressed: true, Pods: 3, BEPods: 2},
			wantBEA: 1.5,
		},
		// BEAllowed = 6.5 − 1 − 0.5 = 5 ≥ 4: nothing to suppress.
		"cfs-quota-room-left": {
			node: suppressionNode(1, cfsQuota),
			want: Moment{Time: at, NodeCPU: 5.5, NodeMemory: 4 * gi, LSCPU: 1, BECPU: 4, BEDemandCPU: 4, BEAllowedCPU: 5, BELimitCPU: 5,
				Pods: 3, BEPods: 2},
			wantBEA: 3,
		},
		// BEAllowed = 6.5 − 5.5 − 0.5 = 0.5: the cpuset keeps 2 whole CPUs.
		"cpuset-keeps-two-cpus": {
			node: suppressionNode(5.5, cpuset),
			want: Moment{Time: at, NodeCPU: 8, NodeMemory: 4 * gi, LSCPU: 5.5, BECPU: 2, BEDemandCPU: 4, BEAllowedCPU: 0.5, BELimitCPU: 2,
				Suppressed: true, Pods: 3, BEPods: 2},
			wantBEA: 1.5,
		},
		// BEAllowed = 6.5 − 3.7 − 0.5 = 2.3: the cpuset rounds up to 3 CPUs.
		"cpuset-rounds-up": {
			node: suppressionNode(3.7, cpuset),
			want: Moment{Time: at, NodeCPU: 7.2, NodeMemory: 4 * gi, LSCPU: 3.7, BECPU: 3, BEDemandCPU: 4, BEAllowedCPU: 2.3, BELimitCPU: 3,
				Suppressed: true, Pods: 3, BEPods: 2},
			wantBEA: 2.25,
		},
		// The LS pod alone uses 7 > 65% of 10 cores; BEAllowed is 0 (not below), the quota floor is 0.02 cores.
		"ls-threshold-breached": {
			node: suppressionNode(7, cfsQuota),
			want: Moment{Time: at, NodeCPU: 7.52, NodeMemory: 4 * gi, LSCPU: 7, BECPU: 0.02, BEDemandCPU: 4, BEAllowedCPU: 0, BELimitCPU: 0.02,
				Suppressed: true, LSThresholdBreached: true, Pods: 3, BEPods: 2},
			wantBEA: 0.015,
		},
		"reservation-counts-over-system": {
			node: func() *NodeModel {
				n := suppressionNode(4, &Suppression{Policy: slov1alpha1.CPUCfsQuotaPolicy, ThresholdPercent: 65, NodeReserved: 1})
				return n
			}(),
			// BEAllowed = 6.5 − 4 − max(0.5, 1) = 1.5.
			want: Moment{Time: at, NodeCPU: 6, NodeMemory: 4 * gi, LSCPU: 4, BECPU: 1.5, BEDemandCPU: 4, BEAllowedCPU: 1.5, BELimitCPU: 1.5,
				Suppressed: true, Pods: 3, BEPods: 2},
			wantBEA: 1.125,
		},
		"min-percent-floor": {
			node: suppressionNode(7, &Suppression{Policy: slov1alpha1.CPUCfsQuotaPolicy, ThresholdPercent: 65, MinPercent: ptr.To[int64](10)}),
			want: Moment{Time: at, NodeCPU: 8.5, NodeMemory: 4 * gi, LSCPU: 7, BECPU: 1, BEDemandCPU: 4, BEAllowedCPU: 1, BELimitCPU: 1,
				Suppressed: true, LSThresholdBreached: true, Pods: 3, BEPods: 2},
			wantBEA: 0.75,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tc.node.At(at)
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("moment (-want,+got):\n%s", diff)
			}
			cpu, _, ok := tc.node.PodAt("be-a", at)
			if !ok {
				t.Fatal("be-a is not running")
			}
			if diff := cmp.Diff(tc.wantBEA, cpu, approx); diff != "" {
				t.Errorf("be-a CPU (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNodeModelPodLifetime(t *testing.T) {
	n := suppressionNode(4, nil)
	n.Pods[0].Since = day.Add(time.Hour)     // be-a starts an hour in
	n.Pods[1].Until = day.Add(2 * time.Hour) // be-b stops two hours in
	tests := map[string]struct {
		at       time.Time
		wantPods int
		wantCPU  float64
	}{
		"before-be-a-starts":   {at: day.Add(time.Hour - time.Nanosecond), wantPods: 2, wantCPU: 5.5},
		"be-a-starts":          {at: day.Add(time.Hour), wantPods: 3, wantCPU: 8.5},
		"last-moment-of-be-b":  {at: day.Add(2*time.Hour - time.Nanosecond), wantPods: 3, wantCPU: 8.5},
		"be-b-stopped":         {at: day.Add(2 * time.Hour), wantPods: 2, wantCPU: 7.5},
		"long-after-be-b-stop": {at: day.Add(48 * time.Hour), wantPods: 2, wantCPU: 7.5},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := n.At(tc.at)
			if diff := cmp.Diff([]any{tc.wantPods, tc.wantCPU}, []any{got.Pods, got.NodeCPU}, approx); diff != "" {
				t.Errorf("pods and node CPU (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNodeModelMidPods(t *testing.T) {
	since := time.Unix(0, 0)
	m := &NodeModel{
		CPUCapacity: 8, MemoryCapacity: 32 * gi, SystemCPU: 0.5, SystemMemory: gi, Since: since,
		Pods: []PodModel{
			{UID: "ls", CPU: Constant(2), Memory: Constant(4 * gi), CPULimit: math.Inf(1), MemoryLimit: math.Inf(1), Since: since},
			{UID: "mid", Mid: true, CPU: Constant(1.5), Memory: Constant(2 * gi), CPULimit: math.Inf(1), MemoryLimit: math.Inf(1), Since: since},
			{UID: "be", BE: true, CPU: Constant(1), Memory: Constant(gi), CPULimit: math.Inf(1), MemoryLimit: math.Inf(1), Since: since},
		},
		LSThresholdPercent: 65,
	}
	at := since.Add(time.Hour)
	// LS 2 + mid 1.5 = 3.5 non-BE cores, of which 1.5 mid; node 3.5 + 1 + 0.5.
	want := Moment{Time: at, NodeCPU: 5, NodeMemory: 8 * gi, LSCPU: 3.5, MidCPU: 1.5, BECPU: 1, BEDemandCPU: 1,
		BEAllowedCPU: math.Inf(1), BELimitCPU: math.Inf(1), Pods: 3, BEPods: 1, MidPods: 1}
	if diff := cmp.Diff(want, m.At(at)); diff != "" {
		t.Errorf("moment (-want,+got):\n%s", diff)
	}
}
