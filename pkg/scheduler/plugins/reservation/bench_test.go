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

package reservation

import (
	"fmt"
	"testing"

	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// BenchmarkFilter runs PreFilter once and Filter on every node, per scheduling cycle, with reservations spread
// over the first nodes.
func BenchmarkFilter(b *testing.B) {
	for _, nodes := range []int{1000} {
		for _, resvs := range []int{100} {
			for _, kind := range []string{"non-owner", "owner"} {
				b.Run(fmt.Sprintf("nodes=%d/reservations=%d/pod=%s", nodes, resvs, kind), func(b *testing.B) {
					_, ctx := ktesting.NewTestContext(b)
					p := &Plugin{cache: cache.NewCache(nil)}
					infos := make([]fwk.NodeInfo, nodes)
					for i := range nodes {
						running := utiltesting.MakePod(fmt.Sprintf("running-%d", i)).Req(utiltesting.Resources("cpu", "2", "memory", "4Gi")).Node(fmt.Sprintf("n%d", i)).Obj()
						infos[i] = plugintest.NodeInfo(utiltesting.MakeNode(fmt.Sprintf("n%d", i)).Allocatable(utiltesting.Resources("cpu", "32", "memory", "128Gi")).Obj(), running)
					}
					for i := range resvs {
						r := reservation(fmt.Sprintf("r%d", i), fmt.Sprintf("n%d", i%nodes), utiltesting.Resources("cpu", "4", "memory", "8Gi"), byLabel(fmt.Sprintf("app-%d", i%10)))
						if err := p.cache.UpdateReservation(r); err != nil {
							b.Fatal(err)
						}
					}
					labels := map[string]string{"app": "other"}
					if kind == "owner" {
						labels["app"] = "app-3"
					}
					incoming := utiltesting.MakePod("p").Labels(labels).Req(utiltesting.Resources("cpu", "1", "memory", "2Gi")).Obj()
					b.ReportAllocs()
					for b.Loop() {
						cs := framework.NewCycleState()
						if _, s := p.PreFilter(ctx, cs, incoming, nil); !s.IsSuccess() {
							b.Fatalf("PreFilter = %v", s)
						}
						for _, ni := range infos {
							if s := p.Filter(ctx, cs, incoming, ni); !s.IsSuccess() {
								b.Fatalf("Filter = %v", s)
							}
						}
					}
				})
			}
		}
	}
}
