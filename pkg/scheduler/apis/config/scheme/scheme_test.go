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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	schedconfigv1 "k8s.io/kube-scheduler/config/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
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

// TestKoordinatorChartArgs decodes the plugin args of Koordinator's v1.8 Helm chart (testdata; the Reservation
// args add the fields of Koordinator's ReservationArgs the chart leaves out) strictly, as kube-scheduler loads
// --config, and validates them: every field decodes, and the values are valid (gang preemption and
// network-topology-aware gangs, which the chart turns on, included).
func TestKoordinatorChartArgs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "koordinator-v1.8-chart-args.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("decode Koordinator's chart configuration: %v", err)
	}
	cfg := obj.(*schedconfig.KubeSchedulerConfiguration)
	var errs []string
	for _, pc := range cfg.Profiles[0].PluginConfig {
		switch args := pc.Args.(type) {
		case *config.LoadAwareSchedulingArgs:
			if args.FilterExpiredNodeMetrics || args.NodeMetricExpirationSeconds != 300 {
				t.Errorf("LoadAwareScheduling args %+v, want the chart's", args)
			}
			errs = append(errs, errStrings(validation.ValidateLoadAwareSchedulingArgs(nil, args))...)
		case *config.ElasticQuotaArgs:
			if args.QuotaGroupNamespace != "koordinator-system" {
				t.Errorf("ElasticQuota quotaGroupNamespace %q", args.QuotaGroupNamespace)
			}
			errs = append(errs, errStrings(validation.ValidateElasticQuotaArgs(nil, args))...)
		case *config.CoschedulingArgs:
			if !args.EnablePreemption || !args.AwareNetworkTopology {
				t.Errorf("Coscheduling args %+v, want the chart's", args)
			}
			errs = append(errs, errStrings(validation.ValidateCoschedulingArgs(nil, args))...)
		case *config.ReservationArgs:
			if !args.DisableGarbageCollection || args.PreAllocationConfig == nil || args.PreAllocationConfig.ClusterLabelKey != "pod.koordinator.sh/is-pre-allocatable" {
				t.Errorf("Reservation args %+v, want the file's", args)
			}
			errs = append(errs, errStrings(validation.ValidateReservationArgs(nil, args))...)
		}
	}
	if len(errs) > 0 {
		t.Errorf("validation of Koordinator's chart args: %v", errs)
	}
}

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
