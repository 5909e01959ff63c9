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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// ResourceMap is a set of resource quantities plus the per-device usage behind them. It serializes as
// {"resources": {...}, "devices": [...]}, as Koordinator's does; Go code reads the quantities through the
// embedded ResourceList.
type ResourceMap struct {
	// ResourceList holds the quantities by resource name: cpu in cores (e.g. "1500m"), memory in bytes, and any
	// extended resource in its own unit.
	// +optional
	corev1.ResourceList `json:"resources,omitempty"`

	// Devices is the usage of each device (e.g. GPU) on the node, for device-aware consumers. Entries have the
	// shape of Device.spec.devices.
	// +optional
	Devices []schedulingv1alpha1.DeviceInfo `json:"devices,omitempty"`
}
