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

package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

const (
	// AnnotationGangNetworkTopologySpec, on a PodGroup (or on the pods of a gang defined by annotations),
	// asks for the gang to be placed by network topology (JSON NetworkTopologySpec). Coscheduling's
	// awareNetworkTopology argument turns the placement on.
	AnnotationGangNetworkTopologySpec = GangDomainPrefix + "network-topology-spec"
	// AnnotationGangNetworkTopologyIndex is a member's place in its gang (a decimal integer): members are
	// laid out on the chosen nodes in index order, then members without one by name.
	AnnotationGangNetworkTopologyIndex = GangDomainPrefix + "network-topology-index"
	// AnnotationNetworkTopologySelector groups pods that want to be near each other: domains holding more
	// pods with the same value are preferred.
	AnnotationNetworkTopologySelector = SchedulingDomainPrefix + "network-topology-selector"
)

// NetworkTopologyGatherStrategy says how strictly a gang is kept within one domain of a layer.
type NetworkTopologyGatherStrategy string

const (
	// NetworkTopologyMustGather keeps the gang within one domain of the layer, or does not place it.
	NetworkTopologyMustGather NetworkTopologyGatherStrategy = "MustGather"
	// NetworkTopologyPreferGather places the gang in as few domains as it can; the placement always
	// prefers the lowest layer that holds the whole gang, so it adds nothing to that.
	NetworkTopologyPreferGather NetworkTopologyGatherStrategy = "PreferGather"
)

// NetworkTopologySpec is the value of AnnotationGangNetworkTopologySpec.
type NetworkTopologySpec struct {
	// GatherStrategy are the rules, one per layer.
	GatherStrategy []NetworkTopologyGatherRule `json:"gatherStrategy,omitempty"`
}

// NetworkTopologyGatherRule is the rule of one layer.
type NetworkTopologyGatherRule struct {
	// Layer names the layer (a ClusterNetworkTopology layer).
	Layer schedv1alpha1.TopologyLayer `json:"layer"`
	// Strategy is MustGather or PreferGather.
	Strategy NetworkTopologyGatherStrategy `json:"strategy"`
	// PodCountMultiple, when above 1, makes each domain of the layer take a multiple of it of the gang's
	// members.
	PodCountMultiple int `json:"podCountMultiple,omitempty"`
}

// GetNetworkTopologySpec returns the network topology spec of obj (a PodGroup or a pod), nil when it has
// none or an empty one.
func GetNetworkTopologySpec(obj metav1.Object) (*NetworkTopologySpec, error) {
	v := obj.GetAnnotations()[AnnotationGangNetworkTopologySpec]
	if v == "" {
		return nil, nil
	}
	spec := &NetworkTopologySpec{}
	if err := json.Unmarshal([]byte(v), spec); err != nil {
		return nil, &AnnotationError{Key: AnnotationGangNetworkTopologySpec, Value: v, Err: err}
	}
	for i, r := range spec.GatherStrategy {
		var err error
		switch {
		case r.Layer == "":
			err = errors.New("a layer is required")
		case r.Strategy != NetworkTopologyMustGather && r.Strategy != NetworkTopologyPreferGather:
			err = fmt.Errorf("strategy %q is not MustGather or PreferGather", r.Strategy)
		case r.PodCountMultiple < 0:
			err = fmt.Errorf("podCountMultiple %d is negative", r.PodCountMultiple)
		}
		if err != nil {
			return nil, &AnnotationError{Key: AnnotationGangNetworkTopologySpec, Value: v, Err: fmt.Errorf("gatherStrategy[%d]: %w", i, err)}
		}
	}
	if len(spec.GatherStrategy) == 0 {
		return nil, nil
	}
	return spec, nil
}

// GetNetworkTopologyIndex returns the index of a gang member, -1 when it has none.
func GetNetworkTopologyIndex(obj metav1.Object) (int, error) {
	v, ok := obj.GetAnnotations()[AnnotationGangNetworkTopologyIndex]
	if !ok {
		return -1, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return -1, &AnnotationError{Key: AnnotationGangNetworkTopologyIndex, Value: v, Err: errors.New("not a non-negative integer")}
	}
	return i, nil
}
