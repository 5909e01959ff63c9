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

package elasticquota

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// BenchmarkCycle runs the plugin's part of one scheduling cycle (PreFilter, Filter on one node, Reserve,
// Unreserve) for a pod of one of 20 quotas (4 parents of 4 leaves) with 1000 pods. requestChanged=true
// makes a pending pod come and go before each cycle, so that every PreFilter recomputes the runtime quotas.
func BenchmarkCycle(b *testing.B) {
	for _, changed := range []bool{false, true} {
		b.Run(fmt.Sprintf("quotas=20/pods=1000/requestChanged=%v", changed), func(b *testing.B) {
			var quotas []*schedv1alpha1.ElasticQuota
			for p := range 4 {
				parent := fmt.Sprintf("p%d", p)
				pq := utiltesting.MakeElasticQuota(parent).Min(utiltesting.Resources("cpu", "100", "memory", "100Gi")).Max(utiltesting.Resources("cpu", "1000", "memory", "1000Gi")).Obj()
				pq.Labels["quota.scheduling.koordinator.sh/is-parent"] = "true"
				quotas = append(quotas, pq)
				for l := range 4 {
					quotas = append(quotas, utiltesting.MakeElasticQuota(fmt.Sprintf("%s-l%d", parent, l)).Min(utiltesting.Resources("cpu", "20", "memory", "20Gi")).Max(utiltesting.Resources("cpu", "500", "memory", "500Gi")).Parent(parent).Obj())
				}
			}
			var pods []*corev1.Pod
			for i := range 1000 {
				nodeName := ""
				if i%2 == 0 {
					nodeName = "n1"
				}
				pods = append(pods, utiltesting.MakePod(fmt.Sprintf("pod-%d", i)).Label(extension.LabelQuotaName, fmt.Sprintf("p%d-l%d", i%4, (i/4)%4)).Priority(0).Node(nodeName).Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj())
			}
			incoming := utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "p0-l0").Priority(0).Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj()
			other := utiltesting.MakePod("other").Label(extension.LabelQuotaName, "p1-l1").Priority(0).Req(utiltesting.Resources("cpu", "1", "memory", "1Gi")).Obj()
			f := newFixture(b, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](b, nil), quotas, []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "2000", "memory", "2000Gi", "pods", "2000")).Obj()}, append(pods, incoming))
			b.ReportAllocs()
			for b.Loop() {
				if changed {
					f.plugin.manager.UpdatePod(other)
					f.plugin.manager.DeletePod(other.UID)
				}
				cycle := framework.NewCycleState()
				if _, s := f.plugin.PreFilter(f.Ctx, cycle, incoming, nil); !s.IsSuccess() {
					b.Fatalf("PreFilter = %v", s)
				}
				if s := f.plugin.Filter(f.Ctx, cycle, incoming, nil); !s.IsSuccess() {
					b.Fatalf("Filter = %v", s)
				}
				f.plugin.Reserve(f.Ctx, cycle, incoming, "n1")
				f.plugin.Unreserve(f.Ctx, cycle, incoming, "n1")
			}
		})
	}
}
