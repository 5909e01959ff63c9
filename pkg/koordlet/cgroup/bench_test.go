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

package cgroup_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

// BenchmarkReads measures the reads a collection round makes per cgroup.
func BenchmarkReads(b *testing.B) {
	for _, c := range combos {
		b.Run("layout="+c.String(), func(b *testing.B) {
			_, ctx := ktesting.NewTestContext(b)
			fs := cgrouptest.NewFS(b, c.v, c.d)
			dir := fs.AddContainer(corev1.PodQOSBurstable, testUID, "containerd://abc")
			fs.SetCPUUsage(dir, 5*time.Second)
			fs.SetMemory(dir, 100<<20, 10<<20)
			m := cgroup.NewManager(fs.Layout())
			b.Run("op=CPUUsage", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.CPUUsage(ctx, dir); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("op=MemoryStats", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.MemoryStats(ctx, dir); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("op=SetCPUSharesUnchanged", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.SetCPUShares(ctx, dir, 1024); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
