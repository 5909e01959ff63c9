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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
)

// affinity is a pod's parsed reservation-affinity annotation.
type affinity struct {
	raw      *extension.ReservationAffinity
	selector *nodeaffinity.NodeSelector
}

// newAffinity parses the pod's reservation-affinity annotation; nil when the pod has none.
func newAffinity(pod *corev1.Pod) (*affinity, error) {
	a, err := extension.GetReservationAffinity(pod.Annotations)
	if err != nil || a == nil {
		return nil, err
	}
	out := &affinity{raw: a}
	if a.Name == "" && a.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		sel, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: a.RequiredDuringSchedulingIgnoredDuringExecution.ReservationSelectorTerms})
		if err != nil {
			return nil, fmt.Errorf("annotation %s: requiredDuringSchedulingIgnoredDuringExecution: %w", extension.AnnotationReservationAffinity, err)
		}
		out.selector = sel
	}
	return out, nil
}

// selects reports whether the affinity allows the reservation: by name, else by its selector terms (against
// the reservation's labels, and metadata.name for matchFields) and its reservationSelector.
func (a *affinity) selects(r *cache.Info) bool {
	if a == nil {
		return true
	}
	if a.raw.Name != "" {
		return a.raw.Name == r.Name
	}
	if a.selector != nil && !a.selector.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: r.Labels}}) {
		return false
	}
	for k, v := range a.raw.ReservationSelector {
		if got, ok := r.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// tolerates reports whether the affinity's tolerations tolerate every NoSchedule and NoExecute taint of the
// reservation.
func (a *affinity) tolerates(logger klog.Logger, r *cache.Info) bool {
	var tolerations []corev1.Toleration
	if a != nil {
		tolerations = a.raw.Tolerations
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, r.Taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !untolerated
}

// matchesPod reports whether pod may allocate the reservation: an owner, the reservation still takes owners,
// its taints are tolerated and the pod's reservation-affinity selects it.
func matchesPod(logger klog.Logger, r *cache.Info, pod *corev1.Pod, a *affinity) bool {
	return r.AcceptsOwners() && r.Owners.Match(pod) && a.selects(r) && a.tolerates(logger, r)
}
