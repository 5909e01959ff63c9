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

import corev1 "k8s.io/api/core/v1"

// QoSClass is the Koordinator QoS class of a pod, carried by the label
// koordinator.sh/qosClass.
type QoSClass string

// Koordinator QoS classes.
const (
	// QoSLSE is latency-sensitive exclusive: bound CPUs shared with no one,
	// not even BE pods.
	QoSLSE QoSClass = "LSE"
	// QoSLSR is latency-sensitive reserved: bound CPUs shared only with BE
	// pods.
	QoSLSR QoSClass = "LSR"
	// QoSLS is latency-sensitive: the shared CPU pool; the typical
	// microservice.
	QoSLS QoSClass = "LS"
	// QoSBE is best effort: batch work on reclaimed resources that may be
	// suppressed or evicted.
	QoSBE QoSClass = "BE"
	// QoSSystem is for system daemons.
	QoSSystem QoSClass = "SYSTEM"
	// QoSNone means no (known) Koordinator QoS class.
	QoSNone QoSClass = ""
)

// QoSClassForGuaranteed is the class of a Kubernetes Guaranteed pod that has
// no Koordinator QoS class of its own.
const QoSClassForGuaranteed = QoSLSR

// GetQoSClassByName returns the QoS class named name, or QoSNone when name is
// not a known class. The match is exact: "ls" is not "LS".
func GetQoSClassByName(name string) QoSClass {
	switch q := QoSClass(name); q {
	case QoSLSE, QoSLSR, QoSLS, QoSBE, QoSSystem:
		return q
	}
	return QoSNone
}

// GetQoSClassByLabels returns the QoS class in the koordinator.sh/qosClass
// label, or QoSNone when the label is missing or unknown.
func GetQoSClassByLabels(labels map[string]string) QoSClass {
	return GetQoSClassByName(labels[LabelPodQoS])
}

// GetPodQoSClassRaw returns the QoS class in the pod's label only, or QoSNone
// when the pod is nil or the label is missing or unknown.
func GetPodQoSClassRaw(pod *corev1.Pod) QoSClass {
	if pod == nil {
		return QoSNone
	}
	return GetQoSClassByLabels(pod.Labels)
}

// GetPodQoSClassWithDefault returns the QoS class in the pod's label and,
// when the label is missing or unknown, the class derived from the pod's
// Kubernetes QoS class. It returns QoSNone only for a nil pod.
func GetPodQoSClassWithDefault(pod *corev1.Pod) QoSClass {
	if pod == nil {
		return QoSNone
	}
	if q := GetPodQoSClassRaw(pod); q != QoSNone {
		return q
	}
	return GetPodQoSClassWithKubeQoS(GetKubeQoSClass(pod))
}

// GetPodQoSClassWithKubeQoS returns the Koordinator QoS class a pod of the
// given Kubernetes QoS class has by default: Guaranteed maps to
// QoSClassForGuaranteed (LSR), Burstable to LS and BestEffort to BE. Any other
// value maps to QoSNone.
func GetPodQoSClassWithKubeQoS(kubeQoS corev1.PodQOSClass) QoSClass {
	switch kubeQoS {
	case corev1.PodQOSGuaranteed:
		return QoSClassForGuaranteed
	case corev1.PodQOSBurstable:
		return QoSLS
	case corev1.PodQOSBestEffort:
		return QoSBE
	}
	return QoSNone
}

// GetKubeQoSClass returns the Kubernetes QoS class of a non-nil pod: the one
// recorded in status.qosClass if any, else the one computed from the spec.
//
// The computation follows the kubelet: only cpu and memory count; the pod is
// BestEffort when no container requests or limits either, Guaranteed when
// every container has equal non-zero requests and limits for both, and
// Burstable otherwise. Pod-level resources, when they set cpu or memory,
// replace the container ones. A request left out next to a limit counts as
// equal to the limit, which is what API defaulting would make it, so the
// result does not depend on whether the pod has been defaulted.
func GetKubeQoSClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	if r := pod.Spec.Resources; r != nil && hasComputeResources(r) {
		return requirementsQoS(r)
	}
	var qos corev1.PodQOSClass
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			switch c := requirementsQoS(&containers[i].Resources); {
			case c == corev1.PodQOSBurstable:
				return c
			case qos == "":
				qos = c
			case qos != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

// qosComputeResources are the resources that decide the Kubernetes QoS class.
var qosComputeResources = [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// hasComputeResources reports whether r requests or limits cpu or memory.
func hasComputeResources(r *corev1.ResourceRequirements) bool {
	for _, name := range qosComputeResources {
		if _, ok := r.Requests[name]; ok {
			return true
		}
		if _, ok := r.Limits[name]; ok {
			return true
		}
	}
	return false
}

// requirementsQoS returns the Kubernetes QoS class of one set of resource
// requirements.
func requirementsQoS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	var qos corev1.PodQOSClass
	for _, name := range qosComputeResources {
		limit, hasLimit := r.Limits[name]
		request, hasRequest := r.Requests[name]
		if !hasRequest && hasLimit {
			request = limit
		}
		var c corev1.PodQOSClass
		switch {
		case !request.Equal(limit):
			return corev1.PodQOSBurstable
		case request.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		if qos == "" {
			qos = c
		} else if qos != c {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}
