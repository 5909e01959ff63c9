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

package plugins

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// Labels of reserve pods: the pods the Reservation plugin's controller creates so that kube-scheduler places
// Reservations. A reserve pod goes through every plugin like any pod, but its Bind turns the placement into
// its Reservation's status and deletes it; it never runs. Other plugins tell reserve pods apart with
// IsReservePod.
const (
	// LabelReservePod ("true") marks a reserve pod.
	LabelReservePod = extension.SchedulingDomainPrefix + "reserve-pod"
	// LabelReservationName is the name of the Reservation a reserve pod places.
	LabelReservationName = extension.SchedulingDomainPrefix + "reservation-name"
	// LabelReservationUID is the UID of the Reservation a reserve pod places.
	LabelReservationUID = extension.SchedulingDomainPrefix + "reservation-uid"
)

// IsReservePod reports whether pod is a reserve pod.
func IsReservePod(pod *corev1.Pod) bool {
	return pod != nil && pod.Labels[LabelReservePod] == "true" && pod.Labels[LabelReservationName] != ""
}
