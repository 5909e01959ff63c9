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

package collector_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// BenchmarkCollect measures one collection round for 50 pods of 3
// containers each on a fake cgroupfs.
func BenchmarkCollect(b *testing.B) {
	const pods, containersPerPod = 50, 3
	for _, c := range combos {
		b.Run(fmt.Sprintf("layout=%s/pods=%d/containers=%d", comboName(c.v, c.d), pods, pods*containersPerPod), func(b *testing.B) {
			_, ctx := ktesting.NewTestContext(b)
			fs := cgrouptest.NewFS(b, c.v, c.d)
			proc := newFakeProc(b)
			proc.stat(8, [8]uint64{1000, 0, 500, 8000, 100, 20, 30, 50})
			proc.meminfo(64*gi, 16*gi, 32*gi)
			l := &lister{}
			qos := []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}
			for i := range pods {
				var ids []string
				for j := range containersPerPod {
					ids = append(ids, fmt.Sprintf("containerd://%064d", i*containersPerPod+j))
				}
				pod := makePod(fmt.Sprintf("pod-%d", i), qos[i%len(qos)], ids...)
				fs.SetCPUUsage(fs.AddPod(pod.Status.QOSClass, pod.UID), time.Duration(i)*time.Second)
				for _, id := range ids {
					dir := fs.AddContainer(pod.Status.QOSClass, pod.UID, id)
					fs.SetCPUUsage(dir, time.Second)
					fs.SetMemory(dir, 100*mi, 10*mi)
				}
				l.pods = append(l.pods, pod)
			}
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			cache := metriccache.New(metriccache.Options{})
			col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, l, collector.WithClock(clk))
			if err := col.Collect(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				clk.Step(time.Second)
				if err := col.Collect(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
