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

package metriccache

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Resources of pressure stall information (PSI) series: the kernel's avg10 of a resource's "some" line (the share
// of the last 10 seconds in which at least one task stalled on it) or "full" line (all non-idle tasks stalled
// at once), in percent (0 to 100), as sampled at each collection. Node series come from /proc/pressure, pod and
// host application series from their cgroups. The full CPU series exist only on kernels that report it (Linux
// 5.13 and later).
const (
	// ResourcePSICPUSomeAvg10 is the share of time some tasks waited for a CPU.
	ResourcePSICPUSomeAvg10 corev1.ResourceName = "psi-cpu-some-avg10"
	// ResourcePSICPUFullAvg10 is the share of time all tasks waited for a CPU.
	ResourcePSICPUFullAvg10 corev1.ResourceName = "psi-cpu-full-avg10"
	// ResourcePSIMemorySomeAvg10 is the share of time some tasks stalled on memory (reclaim, refaults, swap-in).
	ResourcePSIMemorySomeAvg10 corev1.ResourceName = "psi-memory-some-avg10"
	// ResourcePSIMemoryFullAvg10 is the share of time all tasks stalled on memory: thrashing.
	ResourcePSIMemoryFullAvg10 corev1.ResourceName = "psi-memory-full-avg10"
	// ResourcePSIIOSomeAvg10 is the share of time some tasks waited for block I/O.
	ResourcePSIIOSomeAvg10 corev1.ResourceName = "psi-io-some-avg10"
	// ResourcePSIIOFullAvg10 is the share of time all tasks waited for block I/O.
	ResourcePSIIOFullAvg10 corev1.ResourceName = "psi-io-full-avg10"
)

// psiPrefix starts the name of every PSI resource.
const psiPrefix = "psi-"

// IsPSI reports whether r is the resource of a pressure stall information series.
func IsPSI(r corev1.ResourceName) bool {
	return strings.HasPrefix(string(r), psiPrefix)
}
