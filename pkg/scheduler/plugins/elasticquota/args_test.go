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

package elasticquota

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
)

// A Koordinator configuration with ElasticQuota args, in Koordinator's field names.
const koordinatorConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
    plugins:
      preFilter:
        enabled:
          - name: ElasticQuota
    pluginConfig:
      - name: ElasticQuota
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: ElasticQuotaArgs
          delayEvictTime: 5m
          monitorAllQuotas: true
          enableCheckParentQuota: true
          defaultQuotaGroupMax:
            cpu: "100"
`

func TestDecodeArgs(t *testing.T) {
	got := plugintest.DecodeArgs[config.ElasticQuotaArgs](t, koordinatorConfig, Name)
	builtinMax := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(math.MaxInt64/5, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(math.MaxInt64/5, resource.BinarySI),
	}
	want := &config.ElasticQuotaArgs{
		DelayEvictTime:                metav1.Duration{Duration: 5 * time.Minute},
		RevokePodInterval:             metav1.Duration{Duration: time.Second},
		DefaultQuotaGroupMax:          corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")},
		SystemQuotaGroupMax:           builtinMax,
		QuotaGroupNamespace:           "koordinator-system",
		MonitorAllQuotas:              true,
		EnableCheckParentQuota:        true,
		EnableRuntimeQuota:            true,
		EnableMinQuotaScale:           true,
		DisableDefaultQuotaPreemption: true,
		QuotaSnapshotUpdateInterval:   metav1.Duration{Duration: 120 * time.Second},
	}
	got.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want,+got):\n%s", diff)
	}
}

func TestNewRejectsInvalidArgs(t *testing.T) {
	env := plugintest.New(t)
	args := plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil)
	args.RevokePodInterval.Duration = 0
	_, err := NewFactory(env.CRDs)(env.Ctx, args, env.Handle(t))
	want := `pluginConfig[ElasticQuota].args.revokePodInterval: Invalid value: "0s": must be greater than 0`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
