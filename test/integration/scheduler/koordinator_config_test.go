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

package scheduler

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// TestKoordinatorChartConfig runs koord-scheduler with the configuration of Koordinator's v1.8 Helm chart
// (without DeviceShare, which Koord does not have yet): it loads, and schedules a plain
// pod, a pod of a quota, a gang, and pods placed and scored by network topology.
func TestKoordinatorChartConfig(t *testing.T) {
	f := newFixture(t)
	cnt := &schedulingv1alpha1.ClusterNetworkTopology{
		ObjectMeta: metav1.ObjectMeta{Name: schedulingv1alpha1.DefaultClusterNetworkTopologyName},
		Spec: schedulingv1alpha1.ClusterNetworkTopologySpec{NetworkTopologySpec: []schedulingv1alpha1.NetworkTopologySpec{
			{TopologyLayer: "BlockLayer", LabelKey: []string{"test.koord.dev/block"}},
			{TopologyLayer: schedulingv1alpha1.NodeTopologyLayer, ParentTopologyLayer: "BlockLayer"},
		}},
	}
	if err := env.Client.Create(t.Context(), cnt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cnt) })
	var nodes []string
	for _, n := range []string{"a", "b"} {
		name := f.node(n, "0", 0, nil)
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{"test.koord.dev/block":%q}}}`, name)
		if err := env.Client.Patch(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, name)
	}
	startSchedulerWith(t, filepath.Join("testdata", "koordinator-v1.8-chart-config.yaml"))

	f.boundNode(f.pod("plain", cpu("1"), nil))
	f.boundNode(f.quotaPod("quota", f.quota("team", "2Gi", "4Gi"), nil))
	for _, p := range f.gang("gang", 3, "1", nil) {
		f.boundNode(p)
	}
	topologyGang := f.gang("near", 2, "1", map[string]string{
		extension.AnnotationGangNetworkTopologySpec: `{"gatherStrategy":[{"layer":"BlockLayer","strategy":"PreferGather"}]}`,
	})
	for _, p := range topologyGang {
		f.boundNode(p)
	}
	// A pod of selector job-1 runs on the more loaded node; another pod of job-1 goes next to it, where
	// LeastAllocated alone would send it to the other node.
	near := nodes[1]
	f.pod("job-1-running", cpu("3"), func(p *corev1.Pod) {
		p.Spec.NodeName = near
		p.Annotations = map[string]string{extension.AnnotationNetworkTopologySelector: "job-1"}
	})
	scored := f.pod("job-1-new", cpu("1"), func(p *corev1.Pod) {
		p.Annotations = map[string]string{extension.AnnotationNetworkTopologySelector: "job-1"}
	})
	if got := f.boundNode(scored); got != near {
		t.Errorf("pod of selector job-1 bound to %s, want %s next to the other", got, near)
	}
}
