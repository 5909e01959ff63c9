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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/topology"
)

// scoreKey holds the ranks PreScore computed.
const scoreKey fwk.StateKey = Name + "/score"

// ranks are the nodes' ranks for the pod, 0 for the best.
type ranks map[string]int

// Clone returns the ranks themselves: they are never changed.
func (r ranks) Clone() fwk.StateData { return r }

// PreScore ranks the nodes for a pod with a network-topology-selector annotation, with awareNetworkTopology
// and the ClusterNetworkTopology "default": nodes in the domains with more pods of the same selector first,
// then those in tighter domains, then by name (topology.Tree.Rank), as Koordinator's Coscheduling does. Other
// pods are skipped.
func (p *Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *corev1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	selector := pod.Annotations[extension.AnnotationNetworkTopologySelector]
	if p.topology == nil || selector == "" {
		return fwk.NewStatus(fwk.Skip)
	}
	cnt, err := p.topology.lister.Get(schedv1alpha1.DefaultClusterNetworkTopologyName)
	if apierrors.IsNotFound(err) {
		return fwk.NewStatus(fwk.Skip)
	}
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("get ClusterNetworkTopology: %w", err))
	}
	all, err := p.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("list nodes: %w", err))
	}
	existing := map[string]int{}
	clusterNodes := make([]*corev1.Node, 0, len(all))
	for _, ni := range all {
		clusterNodes = append(clusterNodes, ni.Node())
		for _, pi := range ni.GetPods() {
			if pi.GetPod().Annotations[extension.AnnotationNetworkTopologySelector] == selector {
				existing[ni.Node().Name]++
			}
		}
	}
	tree, err := topology.Build(cnt.Spec.NetworkTopologySpec, clusterNodes)
	if err != nil {
		// A topology that does not build leaves the scores to the other plugins; planning gangs says why.
		return fwk.NewStatus(fwk.Skip)
	}
	candidates := make([]string, len(nodes))
	for i, ni := range nodes {
		candidates[i] = ni.Node().Name
	}
	state.Write(scoreKey, ranks(tree.Rank(candidates, existing)))
	return nil
}

// Score returns the node's rank from PreScore; NormalizeScore turns ranks into scores, the best 100. Nodes
// not in the topology rank last.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *corev1.Pod, node fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := state.Read(scoreKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("read PreScore state: %w", err))
	}
	r, ok := s.(ranks)
	if !ok {
		return 0, fwk.AsStatus(fmt.Errorf("PreScore state is %T", s))
	}
	rank, ok := r[node.Node().Name]
	if !ok {
		return int64(len(r)), nil
	}
	return int64(rank), nil
}

// ScoreExtensions normalizes the ranks: the best rank gets MaxScore.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore maps ranks onto 0..MaxScore, rank 0 highest.
func (p *Plugin) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *corev1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	return helper.DefaultNormalizeScore(fwk.MaxScore, true, scores)
}
