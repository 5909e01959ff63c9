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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsElasticQuotaArgs(t *testing.T) {
	builtinMax := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(math.MaxInt64/5, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(math.MaxInt64/5, resource.BinarySI),
	}
	defaulted := &ElasticQuotaArgs{
		DelayEvictTime:                &metav1.Duration{Duration: 120 * time.Second},
		RevokePodInterval:             &metav1.Duration{Duration: time.Second},
		DefaultQuotaGroupMax:          builtinMax,
		SystemQuotaGroupMax:           builtinMax,
		QuotaGroupNamespace:           "koordinator-system",
		MonitorAllQuotas:              ptr.To(false),
		EnableCheckParentQuota:        ptr.To(false),
		EnableRuntimeQuota:            ptr.To(true),
		EnableMinQuotaScale:           ptr.To(true),
		DisableDefaultQuotaPreemption: ptr.To(true),
		EnableQueueHint:               ptr.To(false),
		QuotaSnapshotUpdateInterval:   &metav1.Duration{Duration: 120 * time.Second},
	}
	given := &ElasticQuotaArgs{
		DelayEvictTime:                &metav1.Duration{Duration: 0},
		RevokePodInterval:             &metav1.Duration{Duration: 5 * time.Second},
		DefaultQuotaGroupMax:          corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")},
		SystemQuotaGroupMax:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20")},
		QuotaGroupNamespace:           "quota-system",
		MonitorAllQuotas:              ptr.To(true),
		EnableCheckParentQuota:        ptr.To(true),
		EnableRuntimeQuota:            ptr.To(false),
		EnableMinQuotaScale:           ptr.To(false),
		DisableDefaultQuotaPreemption: ptr.To(false),
		EnableQueueHint:               ptr.To(true),
		QuotaSnapshotUpdateInterval:   &metav1.Duration{Duration: time.Minute},
	}
	tests := map[string]struct {
		in   *ElasticQuotaArgs
		want *ElasticQuotaArgs
	}{
		"empty":             {in: &ElasticQuotaArgs{}, want: defaulted},
		"given values stay": {in: given.DeepCopy(), want: given},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			SetDefaults_ElasticQuotaArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("SetDefaults_ElasticQuotaArgs (-want,+got):\n%s", diff)
			}
		})
	}
}
