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

package coscheduling

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// BenchmarkLess measures the queue sort on a pair of pods, both in gangs or both not.
func BenchmarkLess(b *testing.B) {
	for _, gang := range []bool{false, true} {
		b.Run(fmt.Sprintf("gang=%v", gang), func(b *testing.B) {
			x, y := utiltesting.MakePod("x").Obj(), utiltesting.MakePod("y").Obj()
			if gang {
				x, y = utiltesting.MakePod("x").Gang("train", "8").Obj(), utiltesting.MakePod("y").Gang("eval", "8").Obj()
			}
			p := sortPlugin(x, y)
			qx, qy := queued(b, x, utiltesting.Now), queued(b, y, utiltesting.Now.Add(time.Second))
			b.ReportAllocs()
			for b.Loop() {
				p.Less(qx, qy)
			}
		})
	}
}

// BenchmarkPreFilter measures PreFilter of a member of a Strict gang of the given size, cycling through the
// members as the queue does.
func BenchmarkPreFilter(b *testing.B) {
	for _, size := range []int{8, 256} {
		b.Run(fmt.Sprintf("members=%d", size), func(b *testing.B) {
			pods := make([]*corev1.Pod, size)
			for i := range pods {
				pods[i] = utiltesting.MakePod(fmt.Sprintf("m%d", i)).Gang("train", fmt.Sprint(size)).Obj()
			}
			f := newFixture(b, plugintest.Args[config.CoschedulingArgs, configv1.CoschedulingArgs](b, nil), pods, nil)
			state := newCycleState()
			var status *fwk.Status
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				_, status = f.plugin.PreFilter(f.Ctx, state, pods[i%size], nil)
				i++
			}
			if !status.IsSuccess() {
				b.Fatalf("PreFilter() = %v", status)
			}
		})
	}
}
