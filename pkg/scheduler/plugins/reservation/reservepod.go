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
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Defaults of reserve pods (their labels are in package plugins).
const (
	// DefaultReservePodNamespace is the namespace of reserve pods whose template names none.
	DefaultReservePodNamespace = "koordinator-system"
	// DefaultSchedulerName is the scheduler of reserve pods whose template names none.
	DefaultSchedulerName = "koord-scheduler"
	// reservePodImage is the image of template containers that have none: reserve pods never run.
	reservePodImage = "registry.k8s.io/pause:3.10"
)

// reservePodNamespace is the namespace of the reserve pod of r.
func reservePodNamespace(r *schedv1alpha1.Reservation) string {
	if r.Spec.Template != nil && r.Spec.Template.Namespace != "" {
		return r.Spec.Template.Namespace
	}
	return DefaultReservePodNamespace
}

// newReservePod builds the reserve pod of r from its template: the template's labels, annotations and spec,
// named after r, owned by r, and scheduled by koord-scheduler unless the template names a scheduler. A
// template nodeName becomes a required node affinity, so that the pod still goes through the scheduler.
// The pod keeps the template's preemption policy (the Priority admission plugin rejects one that differs from
// its PriorityClass's); the plugin's PostFilter keeps it from preempting unless enablePreemption is set.
func newReservePod(r *schedv1alpha1.Reservation) (*corev1.Pod, error) {
	if r.Spec.Template == nil {
		return nil, fmt.Errorf("reservation %s has no spec.template", r.Name)
	}
	tmpl := r.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        r.Name,
			Namespace:   reservePodNamespace(r),
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: schedv1alpha1.SchemeGroupVersion.String(),
				Kind:       "Reservation",
				Name:       r.Name,
				UID:        r.UID,
				Controller: ptr.To(true),
			}},
		},
		Spec: tmpl.Spec,
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[extension.LabelReservePod] = "true"
	pod.Labels[extension.LabelReservationName] = r.Name
	pod.Labels[extension.LabelReservationUID] = string(r.UID)
	// A reserve pod carries no reservation affinity and ignores other reservations.
	delete(pod.Annotations, extension.AnnotationReservationAffinity)
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = DefaultSchedulerName
	}
	if node := pod.Spec.NodeName; node != "" {
		pod.Spec.NodeName = ""
		pod.Spec.Affinity = withNodeName(pod.Spec.Affinity, node)
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, fmt.Errorf("reservation %s: spec.template.spec.containers is empty: it must list the quantity.Amounts to reserve", r.Name)
	}
	for i := range pod.Spec.InitContainers {
		fillContainer(&pod.Spec.InitContainers[i], fmt.Sprintf("init-%d", i))
	}
	for i := range pod.Spec.Containers {
		fillContainer(&pod.Spec.Containers[i], fmt.Sprintf("reserve-%d", i))
	}
	if r.Spec.PreAllocation {
		// The resources it reserves may be those of running pods, which kube-scheduler's NodeResourcesFit
		// counts as used: the reserve pod requests nothing and the plugin checks the template's requests.
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[extension.AnnotationReservePodPreAllocation] = "true"
		for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range cs {
				cs[i].Resources = corev1.ResourceRequirements{}
			}
		}
		pod.Spec.Overhead = nil
	}
	return pod, nil
}

// isPreAllocating reports whether pod is the reserve pod of a Reservation with spec.preAllocation.
func isPreAllocating(pod *corev1.Pod) bool {
	return extension.IsReservePod(pod) && pod.Annotations[extension.AnnotationReservePodPreAllocation] == "true"
}

// templateRequests returns what the Reservation r reserves: the requests of its template's pod as the
// apiserver would default them (a limit without a request requests the limit), without the ignored resources.
func templateRequests(c *cache.Cache, r *schedv1alpha1.Reservation) quantity.Amounts {
	if r.Spec.Template == nil {
		return quantity.Amounts{}
	}
	spec := r.Spec.Template.Spec.DeepCopy()
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			res := &cs[i].Resources
			for name, limit := range res.Limits {
				if _, ok := res.Requests[name]; !ok {
					if res.Requests == nil {
						res.Requests = corev1.ResourceList{}
					}
					res.Requests[name] = limit
				}
			}
		}
	}
	return c.PodRequests(&corev1.Pod{Spec: *spec})
}

// fillContainer gives a template container the name and image the API requires.
func fillContainer(c *corev1.Container, name string) {
	if c.Name == "" {
		c.Name = name
	}
	if c.Image == "" {
		c.Image = reservePodImage
	}
}

// withNodeName adds to aff a required term that selects the node by name.
func withNodeName(aff *corev1.Affinity, node string) *corev1.Affinity {
	req := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	if aff == nil {
		aff = &corev1.Affinity{}
	}
	if aff.NodeAffinity == nil {
		aff.NodeAffinity = &corev1.NodeAffinity{}
	}
	ns := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if ns == nil || len(ns.NodeSelectorTerms) == 0 {
		aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req}}}}
		return aff
	}
	for i := range ns.NodeSelectorTerms {
		ns.NodeSelectorTerms[i].MatchFields = append(ns.NodeSelectorTerms[i].MatchFields, req)
	}
	return aff
}
