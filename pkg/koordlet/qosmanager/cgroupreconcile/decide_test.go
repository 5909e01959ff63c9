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

package cgroupreconcile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

const gi = int64(1) << 30

func TestBatchResources(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := map[string]struct {
		pod  *corev1.Pod
		want PodBatchSettings
	}{
		"one container with requests and limits": {
			pod: qostest.Pod("p", qostest.Container("a", "",
				qostest.Resources("kubernetes.io/batch-cpu", "2000", "kubernetes.io/batch-memory", "2Gi"),
				qostest.Resources("kubernetes.io/batch-cpu", "4000", "kubernetes.io/batch-memory", "2Gi"))),
			want: PodBatchSettings{
				// 2000 × 1024 / 1000 = 2048; quota 4000 milli.
				Pod: BatchSettings{CPUShares: ptr.To[int64](2048), CFSQuotaMilli: ptr.To[int64](4000), MemoryLimit: ptr.To(2 * gi)},
				Containers: map[string]BatchSettings{
					"a": {CPUShares: ptr.To[int64](2048), CFSQuotaMilli: ptr.To[int64](4000), MemoryLimit: ptr.To(2 * gi)},
				},
			},
		},
		"a container without limits makes the pod unlimited": {
			pod: qostest.Pod("p",
				qostest.Container("a", "",
					qostest.Resources("kubernetes.io/batch-cpu", "500"),
					qostest.Resources("kubernetes.io/batch-cpu", "1000", "kubernetes.io/batch-memory", "1Gi")),
				qostest.Container("b", "", qostest.Resources("kubernetes.io/batch-cpu", "1500"), nil)),
			want: PodBatchSettings{
				// 500 → 512, 1500 → 1536, Σ 2000 → 2048.
				Pod: BatchSettings{CPUShares: ptr.To[int64](2048), CFSQuotaMilli: ptr.To[int64](Unlimited), MemoryLimit: ptr.To[int64](Unlimited)},
				Containers: map[string]BatchSettings{
					"a": {CPUShares: ptr.To[int64](512), CFSQuotaMilli: ptr.To[int64](1000), MemoryLimit: ptr.To(gi)},
					"b": {CPUShares: ptr.To[int64](1536), CFSQuotaMilli: ptr.To[int64](Unlimited), MemoryLimit: ptr.To[int64](Unlimited)},
				},
			},
		},
		"no batch resources: nothing decided": {
			pod:  qostest.Pod("p", qostest.Container("a", "", qostest.Resources("cpu", "1"), qostest.Resources("cpu", "1"))),
			want: PodBatchSettings{Containers: map[string]BatchSettings{"a": {}}},
		},
		"deprecated names and a tiny request": {
			pod: qostest.Pod("p", qostest.Container("a", "",
				qostest.Resources("koordinator.sh/batch-cpu", "1"),
				qostest.Resources("koordinator.sh/batch-cpu", "3"))),
			want: PodBatchSettings{
				// 1 × 1024 / 1000 = 1, raised to 2.
				Pod:        BatchSettings{CPUShares: ptr.To[int64](2), CFSQuotaMilli: ptr.To[int64](3)},
				Containers: map[string]BatchSettings{"a": {CPUShares: ptr.To[int64](2), CFSQuotaMilli: ptr.To[int64](3)}},
			},
		},
		"sidecars count, other init containers do not": {
			pod: func() *corev1.Pod {
				p := qostest.Pod("p", qostest.Container("a", "", qostest.Resources("kubernetes.io/batch-cpu", "1000"), nil))
				p.Spec.InitContainers = []corev1.Container{
					{Name: "init", Resources: corev1.ResourceRequirements{Requests: qostest.Resources("kubernetes.io/batch-cpu", "4000")}},
					{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: qostest.Resources("kubernetes.io/batch-cpu", "250")}},
				}
				return p
			}(),
			want: PodBatchSettings{
				// 1250 → 1280.
				Pod: BatchSettings{CPUShares: ptr.To[int64](1280)},
				Containers: map[string]BatchSettings{
					"a": {CPUShares: ptr.To[int64](1024)}, "sidecar": {CPUShares: ptr.To[int64](256)},
				},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, BatchResources(tc.pod)); diff != "" {
				t.Errorf("BatchResources (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestQuotaUs(t *testing.T) {
	tests := map[string]struct {
		milli, period, want int64
	}{
		"4 cores":        {milli: 4000, period: 100000, want: 400000},
		"other period":   {milli: 1500, period: 50000, want: 75000},
		"kernel minimum": {milli: 5, period: 100000, want: 1000},
		"unlimited":      {milli: Unlimited, period: 100000, want: Unlimited},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := QuotaUs(tc.milli, tc.period); got != tc.want {
				t.Errorf("QuotaUs(%d, %d) = %d, want %d", tc.milli, tc.period, got, tc.want)
			}
		})
	}
}

func TestGrows(t *testing.T) {
	tests := map[string]struct {
		cur, target int64
		want        bool
	}{
		"larger":               {cur: 100, target: 200, want: true},
		"equal":                {cur: 100, target: 100, want: true},
		"smaller":              {cur: 200, target: 100},
		"to unlimited":         {cur: 100, target: Unlimited, want: true},
		"from unlimited":       {cur: Unlimited, target: 100},
		"unlimited, unchanged": {cur: Unlimited, target: Unlimited, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := grows(tc.cur, tc.target); got != tc.want {
				t.Errorf("grows(%d, %d) = %v, want %v", tc.cur, tc.target, got, tc.want)
			}
		})
	}
}
