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

package scheme

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	schedconfigv1 "k8s.io/kube-scheduler/config/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
)

// A Koordinator configuration: kube-scheduler decodes it into the internal args, defaulted.
const koordinatorConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
    plugins:
      filter:
        enabled:
          - name: LoadAwareScheduling
      reserve:
        enabled:
          - name: LoadAwareScheduling
    pluginConfig:
      - name: LoadAwareScheduling
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: LoadAwareSchedulingArgs
          nodeMetricExpirationSeconds: 300
          usageThresholds:
            cpu: 0
            memory: 0
          estimatedScalingFactors:
            cpu: 80
          aggregated:
            usageThresholds:
              cpu: 70
            usageAggregationType: p95
            usageAggregatedDuration: 5m
  - schedulerName: defaulted
    plugins:
      filter:
        enabled:
          - name: LoadAwareScheduling
`

func TestDecodeKubeSchedulerConfiguration(t *testing.T) {
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(koordinatorConfig), nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded %T", obj)
	}
	argsOf := func(prof schedconfig.KubeSchedulerProfile) runtime.Object {
		for _, pc := range prof.PluginConfig {
			if pc.Name == "LoadAwareScheduling" {
				return pc.Args
			}
		}
		return nil
	}
	want := &config.LoadAwareSchedulingArgs{
		FilterExpiredNodeMetrics:    true,
		NodeMetricExpirationSeconds: 300,
		ResourceWeights:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1},
		UsageThresholds:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 0, corev1.ResourceMemory: 0},
		EstimatedScalingFactors:     map[corev1.ResourceName]int64{corev1.ResourceCPU: 80, corev1.ResourceMemory: 70},
		Aggregated: &config.LoadAwareSchedulingAggregatedArgs{
			UsageThresholds:         map[corev1.ResourceName]int64{corev1.ResourceCPU: 70},
			UsageAggregationType:    extension.P95,
			UsageAggregatedDuration: metav1.Duration{Duration: 5 * time.Minute},
		},
	}
	if diff := cmp.Diff(want, argsOf(cfg.Profiles[0])); diff != "" {
		t.Errorf("given args (-want,+got):\n%s", diff)
	}
	wantDefault := &config.LoadAwareSchedulingArgs{
		FilterExpiredNodeMetrics:    true,
		NodeMetricExpirationSeconds: 180,
		ResourceWeights:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1},
		UsageThresholds:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
		EstimatedScalingFactors:     map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70},
	}
	if diff := cmp.Diff(wantDefault, argsOf(cfg.Profiles[1])); diff != "" {
		t.Errorf("args of a profile without pluginConfig (-want,+got):\n%s", diff)
	}

	// kube-scheduler converts its configuration back to v1 for /configz.
	out := &schedconfigv1.KubeSchedulerConfiguration{}
	if err := kubeschedulerscheme.Scheme.Convert(cfg, out, nil); err != nil {
		t.Fatalf("convert back to v1: %v", err)
	}
	if _, ok := out.Profiles[0].PluginConfig[0].Args.Object.(*configv1.LoadAwareSchedulingArgs); !ok {
		t.Errorf("v1 args are %T", out.Profiles[0].PluginConfig[0].Args.Object)
	}
}
