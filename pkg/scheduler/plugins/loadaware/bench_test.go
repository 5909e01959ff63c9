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

package loadaware

import (
	"fmt"
	"testing"
	"time"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// BenchmarkFilterScore runs Filter then Score of one pod on one node whose NodeMetric reports 100 pods, with
// a number of pods assigned to the node since the last report. cycle=new starts a scheduling cycle per
// iteration (the pod's estimate is computed each time); cycle=same reuses one, as for the other nodes of a
// cycle.
func BenchmarkFilterScore(b *testing.B) {
	for _, tc := range []struct {
		assigned int
		newCycle bool
	}{{0, true}, {0, false}, {10, false}, {100, false}} {
		cycle := "same"
		if tc.newCycle {
			cycle = "new"
		}
		assigned := tc.assigned
		b.Run(fmt.Sprintf("assigned=%d/cycle=%s", assigned, cycle), func(b *testing.B) {
			report := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "2", "memory", "2Gi"))
			for i := range 100 {
				report.Pod("default", fmt.Sprintf("running-%d", i), extension.PriorityProd, utiltesting.Resources("cpu", "10m", "memory", "10Mi"))
			}
			nm := report.Obj()
			f := newFixture(b, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](b, nil), []*slov1alpha1.NodeMetric{nm}, nil)
			for i := range assigned {
				f.reserve(b, utiltesting.MakePod(fmt.Sprintf("assigned-%d", i)).Req(utiltesting.Resources("cpu", "10m", "memory", "10Mi")).Obj(), "n1")
			}
			ni := plugintest.NodeInfo(node("n1").Obj())
			p := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "100m", "memory", "100Mi")).Obj()
			state := framework.NewCycleState()
			b.ReportAllocs()
			for b.Loop() {
				cycle := state
				if tc.newCycle {
					cycle = framework.NewCycleState()
				}
				if s := f.plugin.Filter(f.Ctx, cycle, p, ni); !s.IsSuccess() {
					b.Fatalf("Filter = %v", s)
				}
				if _, s := f.plugin.Score(f.Ctx, cycle, p, ni); !s.IsSuccess() {
					b.Fatalf("Score = %v", s)
				}
			}
		})
	}
}

// BenchmarkFilterScoreCycle runs one scheduling cycle's worth of Filter and Score: one pod over every node of
// a cluster, each node with its own NodeMetric, node object and a few pods assigned since its last report, as
// kube-scheduler does for each pod. It reports the cost per node. With cache=cold every cycle starts with the
// CPU caches flushed of the plugin's state, as in kube-scheduler, where the other plugins, the informers and
// the other pods' cycles run between two visits of a node: there a node's state costs what reaching it in
// memory costs, which the single-node benchmark does not show.
func BenchmarkFilterScoreCycle(b *testing.B) {
	// evict is larger than the CPU's caches; writing it evicts everything else.
	evict := make([]byte, 64<<20)
	for _, tc := range []struct {
		nodes int
		cold  bool
	}{{100, false}, {1000, false}, {1000, true}, {5000, true}} {
		nodes := tc.nodes
		name := fmt.Sprintf("nodes=%d/cache=warm", nodes)
		if tc.cold {
			name = fmt.Sprintf("nodes=%d/cache=cold", nodes)
		}
		b.Run(name, func(b *testing.B) {
			metrics := make([]*slov1alpha1.NodeMetric, nodes)
			infos := make([]fwk.NodeInfo, nodes)
			for i := range nodes {
				name := fmt.Sprintf("perf-0-koord-node-%d", i)
				metrics[i] = utiltesting.MakeNodeMetric(name).Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "3", "memory", "4Gi")).Obj()
				infos[i] = plugintest.NodeInfo(node(name).Obj())
			}
			f := newFixture(b, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](b, nil), metrics, nil)
			for i := range nodes {
				for j := range 3 {
					f.reserve(b, utiltesting.MakePod(fmt.Sprintf("assigned-%d-%d", i, j)).Req(utiltesting.Resources("cpu", "100m", "memory", "200Mi")).Obj(), infos[i].Node().Name)
				}
			}
			p := utiltesting.MakePod("incoming").Req(utiltesting.Resources("cpu", "100m", "memory", "200Mi")).Obj()
			b.ReportAllocs()
			for b.Loop() {
				if tc.cold {
					b.StopTimer()
					for i := 0; i < len(evict); i += 64 {
						evict[i]++
					}
					b.StartTimer()
				}
				cycle := framework.NewCycleState()
				for _, ni := range infos {
					if s := f.plugin.Filter(f.Ctx, cycle, p, ni); !s.IsSuccess() {
						b.Fatalf("Filter = %v", s)
					}
					if _, s := f.plugin.Score(f.Ctx, cycle, p, ni); !s.IsSuccess() {
						b.Fatalf("Score = %v", s)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
		})
	}
}
