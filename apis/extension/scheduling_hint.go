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
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Scheduling hints: a pod names the nodes it must be placed on, and the ones to try first.
const (
	// AnnotationSchedulingHint holds a pod's SchedulingHint as JSON.
	AnnotationSchedulingHint = InternalSchedulingDomainPrefix + "scheduling-hint"
	// DeprecatedAnnotationSchedulingHint is Koordinator's former key of AnnotationSchedulingHint, read when
	// the current one is absent or empty.
	DeprecatedAnnotationSchedulingHint = SchedulingDomainPrefix + "scheduling-hint"
)

// SchedulingHint is a pod's scheduling hint.
type SchedulingHint struct {
	// NodeNames are the only nodes the pod may be placed on; empty means any.
	NodeNames []string `json:"nodeNames,omitempty"`
	// PreferredNodeNames are nodes to try first, in order.
	PreferredNodeNames []string `json:"preferredNodeNames,omitempty"`
	// Extensions carries hints for other plugins.
	Extensions map[string]any `json:"extensions,omitempty"`
}

// GetSchedulingHint returns the pod's scheduling hint: nil when it has none (or an empty one), an error naming
// the annotation when it does not parse or has a field Koordinator's does not.
func GetSchedulingHint(pod *corev1.Pod) (*SchedulingHint, error) {
	if pod == nil {
		return nil, nil
	}
	key := AnnotationSchedulingHint
	raw := pod.Annotations[key]
	if raw == "" {
		key = DeprecatedAnnotationSchedulingHint
		raw = pod.Annotations[key]
	}
	if raw == "" {
		return nil, nil
	}
	hint := &SchedulingHint{}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(hint); err != nil {
		return nil, fmt.Errorf("annotation %q: %w", key, err)
	}
	return hint, nil
}
