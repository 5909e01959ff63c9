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

package validation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

func validElasticQuotaArgs() *config.ElasticQuotaArgs {
	return &config.ElasticQuotaArgs{
		DelayEvictTime:              metav1.Duration{Duration: 120 * time.Second},
		RevokePodInterval:           metav1.Duration{Duration: time.Second},
		DefaultQuotaGroupMax:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")},
		SystemQuotaGroupMax:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")},
		QuotaGroupNamespace:         "koordinator-system",
		EnableRuntimeQuota:          true,
		EnableMinQuotaScale:         true,
		QuotaSnapshotUpdateInterval: metav1.Duration{Duration: 120 * time.Second},
	}
}

func TestValidateElasticQuotaArgs(t *testing.T) {
	path := field.NewPath("args")
	tests := map[string]struct {
		edit func(*config.ElasticQuotaArgs)
		want field.ErrorList
	}{
		"defaults are valid": {},
		"zero delay is valid": {
			edit: func(a *config.ElasticQuotaArgs) { a.DelayEvictTime.Duration = 0 },
		},
		"negative delay": {
			edit: func(a *config.ElasticQuotaArgs) { a.DelayEvictTime.Duration = -time.Second },
			want: field.ErrorList{field.Invalid(path.Child("delayEvictTime"), "", "")},
		},
		"zero revoke interval and snapshot interval": {
			edit: func(a *config.ElasticQuotaArgs) {
				a.RevokePodInterval.Duration = 0
				a.QuotaSnapshotUpdateInterval.Duration = 0
			},
			want: field.ErrorList{
				field.Invalid(path.Child("revokePodInterval"), "", ""),
				field.Invalid(path.Child("quotaSnapshotUpdateInterval"), "", ""),
			},
		},
		"bad resource name and negative max": {
			edit: func(a *config.ElasticQuotaArgs) {
				a.DefaultQuotaGroupMax = corev1.ResourceList{"bad name": resource.MustParse("1")}
				a.SystemQuotaGroupMax = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1")}
			},
			want: field.ErrorList{
				field.Invalid(path.Child("defaultQuotaGroupMax").Key("bad name"), "", ""),
				field.Invalid(path.Child("systemQuotaGroupMax").Key("memory"), "", ""),
			},
		},
		"bad namespace": {
			edit: func(a *config.ElasticQuotaArgs) { a.QuotaGroupNamespace = "Koordinator_System" },
			want: field.ErrorList{field.Invalid(path.Child("quotaGroupNamespace"), "", "")},
		},
		"hook plugins are not supported": {
			edit: func(a *config.ElasticQuotaArgs) {
				a.HookPlugins = []config.HookPluginConf{{Key: "k", FactoryKey: "f"}}
			},
			want: field.ErrorList{field.Invalid(path.Child("hookPlugins").Index(0), nil, "")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := validElasticQuotaArgs()
			if tc.edit != nil {
				tc.edit(args)
			}
			got := ValidateElasticQuotaArgs(path, args)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateElasticQuotaArgs (-want,+got):\n%s", diff)
			}
		})
	}
}
