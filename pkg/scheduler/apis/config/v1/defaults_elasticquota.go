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

package v1

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Defaults of ElasticQuotaArgs (Koordinator's).
const (
	// DefaultDelayEvictTime is the default DelayEvictTime.
	DefaultDelayEvictTime = 120 * time.Second
	// DefaultRevokePodInterval is the default RevokePodInterval.
	DefaultRevokePodInterval = time.Second
	// DefaultQuotaGroupNamespace is the default QuotaGroupNamespace.
	DefaultQuotaGroupNamespace = "koordinator-system"
	// DefaultQuotaSnapshotUpdateInterval is the default QuotaSnapshotUpdateInterval.
	DefaultQuotaSnapshotUpdateInterval = 120 * time.Second
)

// defaultBuiltinQuotaMax is the max of the system and default quotas when none is given: MaxInt64/5 cores of
// cpu and bytes of memory, as Koordinator has it. It is copied, never shared, into args.
func defaultBuiltinQuotaMax() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(math.MaxInt64/5, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(math.MaxInt64/5, resource.BinarySI),
	}
}

// SetDefaults_ElasticQuotaArgs fills in the defaults of ElasticQuotaArgs: evict after 120 s of over-use,
// checked every second (only with monitorAllQuotas, off by default); MaxInt64/5 cpu and memory for the
// default and system quotas; the built-in quotas in koordinator-system; runtime quotas and min scaling on;
// parent checks and queueing hints off; default-quota pods protected from preemption.
func SetDefaults_ElasticQuotaArgs(obj *ElasticQuotaArgs) {
	if obj.DelayEvictTime == nil {
		obj.DelayEvictTime = &metav1.Duration{Duration: DefaultDelayEvictTime}
	}
	if obj.RevokePodInterval == nil {
		obj.RevokePodInterval = &metav1.Duration{Duration: DefaultRevokePodInterval}
	}
	if len(obj.DefaultQuotaGroupMax) == 0 {
		obj.DefaultQuotaGroupMax = defaultBuiltinQuotaMax()
	}
	if len(obj.SystemQuotaGroupMax) == 0 {
		obj.SystemQuotaGroupMax = defaultBuiltinQuotaMax()
	}
	if obj.QuotaGroupNamespace == "" {
		obj.QuotaGroupNamespace = DefaultQuotaGroupNamespace
	}
	if obj.MonitorAllQuotas == nil {
		obj.MonitorAllQuotas = ptr.To(false)
	}
	if obj.EnableCheckParentQuota == nil {
		obj.EnableCheckParentQuota = ptr.To(false)
	}
	if obj.EnableRuntimeQuota == nil {
		obj.EnableRuntimeQuota = ptr.To(true)
	}
	if obj.EnableMinQuotaScale == nil {
		obj.EnableMinQuotaScale = ptr.To(true)
	}
	if obj.DisableDefaultQuotaPreemption == nil {
		obj.DisableDefaultQuotaPreemption = ptr.To(true)
	}
	if obj.EnableQueueHint == nil {
		obj.EnableQueueHint = ptr.To(false)
	}
	if obj.QuotaSnapshotUpdateInterval == nil {
		obj.QuotaSnapshotUpdateInterval = &metav1.Duration{Duration: DefaultQuotaSnapshotUpdateInterval}
	}
}
