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

package configuration

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func testNode(nodeLabels, annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: nodeLabels, Annotations: annotations}}
}

// withDefaults returns the default colocation strategy changed by edit.
func withDefaults(edit func(*ColocationStrategy)) ColocationStrategy {
	s := DefaultColocationStrategy()
	edit(&s)
	return s
}

func TestColocationStrategyForNode(t *testing.T) {
	cfg := `{"enable": true, "cpuReclaimThresholdPercent": 70, "degradeTimeMinutes": 10,
	  "nodeConfigs": [
	    {"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}}, "cpuReclaimThresholdPercent": 80, "memoryCalculatePolicy": "request"},
	    {"name": "any-pool", "nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "Exists"}]}, "cpuReclaimThresholdPercent": 90}
	  ]}`
	tests := map[string]struct {
		cfg         string
		node        *corev1.Node
		want        ColocationStrategy
		wantErr     string
		wantErrType error
	}{
		"no config, no node: defaults": {
			want: DefaultColocationStrategy(),
		},
		"cluster strategy over defaults": {
			cfg:  cfg,
			node: testNode(nil, nil),
			want: withDefaults(func(s *ColocationStrategy) {
				s.Enable, s.CPUReclaimThresholdPercent, s.DegradeTimeMinutes = ptr.To(true), ptr.To[int64](70), ptr.To[int64](10)
			}),
		},
		"first matching node config over cluster strategy": {
			cfg:  cfg,
			node: testNode(map[string]string{"pool": "big"}, nil),
			want: withDefaults(func(s *ColocationStrategy) {
				s.Enable, s.CPUReclaimThresholdPercent, s.DegradeTimeMinutes = ptr.To(true), ptr.To[int64](80), ptr.To[int64](10)
				s.MemoryCalculatePolicy = ptr.To(CalculateByPodRequest)
			}),
		},
		"second node config when the first does not match": {
			cfg:  cfg,
			node: testNode(map[string]string{"pool": "small"}, nil),
			want: withDefaults(func(s *ColocationStrategy) {
				s.Enable, s.CPUReclaimThresholdPercent, s.DegradeTimeMinutes = ptr.To(true), ptr.To[int64](90), ptr.To[int64](10)
			}),
		},
		"annotation overrides the node config": {
			cfg: cfg,
			node: testNode(map[string]string{"pool": "big"}, map[string]string{
				extension.AnnotationNodeColocationStrategy: `{"cpuReclaimThresholdPercent": 50, "enable": false}`,
			}),
			want: withDefaults(func(s *ColocationStrategy) {
				s.Enable, s.CPUReclaimThresholdPercent, s.DegradeTimeMinutes = ptr.To(false), ptr.To[int64](50), ptr.To[int64](10)
				s.MemoryCalculatePolicy = ptr.To(CalculateByPodRequest)
			}),
		},
		"labels override the annotation": {
			cfg: cfg,
			node: testNode(map[string]string{
				extension.LabelCPUReclaimRatio:              "0.29",
				extension.LabelMemoryReclaimRatio:           "1.5",
				extension.LabelMidStaticCPUReservedRatio:    "0.2",
				extension.LabelMidStaticMemoryReservedRatio: "0.655",
			}, map[string]string{
				extension.AnnotationNodeColocationStrategy: `{"cpuReclaimThresholdPercent": 50}`,
			}),
			want: withDefaults(func(s *ColocationStrategy) {
				s.Enable, s.DegradeTimeMinutes = ptr.To(true), ptr.To[int64](10)
				s.CPUReclaimThresholdPercent, s.MemoryReclaimThresholdPercent = ptr.To[int64](29), ptr.To[int64](150)
				s.MidStaticCPUReservedPercent, s.MidStaticMemoryReservedPercent = ptr.To[int64](20), ptr.To[int64](65)
			}),
		},
		"malformed annotation is ignored, labels still apply": {
			cfg: cfg,
			node: testNode(map[string]string{extension.LabelMemoryReclaimRatio: "0.8"}, map[string]string{
				extension.AnnotationNodeColocationStrategy: `{"cpuReclaimThresholdPercent": "high"}`,
			}),
			want: withDefaults(func(s *ColocationStrategy) {
				s.Enable, s.CPUReclaimThresholdPercent, s.DegradeTimeMinutes = ptr.To(true), ptr.To[int64](70), ptr.To[int64](10)
				s.MemoryReclaimThresholdPercent = ptr.To[int64](80)
			}),
			wantErr:     `annotation "node.koordinator.sh/colocation-strategy": field "cpuReclaimThresholdPercent": cannot decode string as int64`,
			wantErrType: &extension.AnnotationError{Key: extension.AnnotationNodeColocationStrategy},
		},
		"cluster switch off: a node config's enable does not turn colocation on": {
			cfg:  `{"enable": false, "nodeConfigs": [{"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}}, "enable": true}]}`,
			node: testNode(map[string]string{"pool": "big"}, nil),
			want: DefaultColocationStrategy(),
		},
		"cluster switch unset: neither does the annotation": {
			cfg:  `{"cpuReclaimThresholdPercent": 70}`,
			node: testNode(nil, map[string]string{extension.AnnotationNodeColocationStrategy: `{"enable": true}`}),
			want: withDefaults(func(s *ColocationStrategy) { s.CPUReclaimThresholdPercent = ptr.To[int64](70) }),
		},
		"no configuration: the annotation does not turn colocation on": {
			node: testNode(nil, map[string]string{extension.AnnotationNodeColocationStrategy: `{"enable": true, "cpuReclaimThresholdPercent": 50}`}),
			want: withDefaults(func(s *ColocationStrategy) { s.CPUReclaimThresholdPercent = ptr.To[int64](50) }),
		},
		"cluster switch on: a node config turns it off for its nodes": {
			cfg:  `{"enable": true, "nodeConfigs": [{"name": "off", "nodeSelector": {"matchLabels": {"pool": "off"}}, "enable": false}]}`,
			node: testNode(map[string]string{"pool": "off"}, nil),
			want: DefaultColocationStrategy(),
		},
		"annotation with an unknown field is ignored": {
			node:    testNode(nil, map[string]string{extension.AnnotationNodeColocationStrategy: `{"enable": true, "cpuReclaim": 5}`}),
			want:    DefaultColocationStrategy(),
			wantErr: `annotation "node.koordinator.sh/colocation-strategy": unknown field "cpuReclaim"`,
		},
		"invalid annotation values are ignored as a whole": {
			node: testNode(nil, map[string]string{extension.AnnotationNodeColocationStrategy: `{"enable": true, "degradeTimeMinutes": 0, "midCPUThresholdPercent": 101}`}),
			want: DefaultColocationStrategy(),
			wantErr: `annotation "node.koordinator.sh/colocation-strategy": [degradeTimeMinutes: Invalid value: 0: must be greater than or equal to 1, ` +
				`midCPUThresholdPercent: Invalid value: 101: must be between 0 and 100]`,
		},
		"bad labels are ignored and reported": {
			node: testNode(map[string]string{
				extension.LabelCPUReclaimRatio:           "seventy",
				extension.LabelMemoryReclaimRatio:        "-0.1",
				extension.LabelMidStaticCPUReservedRatio: "1.2",
			}, nil),
			want: DefaultColocationStrategy(),
			wantErr: `label "node.koordinator.sh/cpu-reclaim-ratio": "seventy" is not a ratio between 0 and 100, such as 0.7 for 70 %` + "\n" +
				`label "node.koordinator.sh/memory-reclaim-ratio": "-0.1" is not a ratio between 0 and 100, such as 0.7 for 70 %` + "\n" +
				`label "node.koordinator.sh/mid-static-cpu-reserved-ratio": "1.2" is not a ratio between 0 and 1, such as 0.7 for 70 %`,
			wantErrType: &extension.LabelError{},
		},
		"empty annotation is no annotation": {
			node: testNode(nil, map[string]string{extension.AnnotationNodeColocationStrategy: ""}),
			want: DefaultColocationStrategy(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var cfg *ColocationCfg
			if tc.cfg != "" {
				cfg = mustParseAll(t, tc.cfg).Colocation
			}
			got, err := ColocationStrategyForNode(cfg, tc.node)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("ColocationStrategyForNode() error (-want,+got):\n%s", diff)
			}
			if tc.wantErrType != nil && !errors.Is(err, tc.wantErrType) {
				t.Errorf("ColocationStrategyForNode() error %v is not %T", err, tc.wantErrType)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ColocationStrategyForNode() (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestColocationStrategyForNodeLeavesConfigAlone checks that rendering does not write into the shared
// configuration.
func TestColocationStrategyForNodeLeavesConfigAlone(t *testing.T) {
	cfg := mustParseAll(t, exampleColocation).Colocation
	before := cfg.DeepCopy()
	node := testNode(map[string]string{"kubernetes.io/kernel": "anolis", extension.LabelCPUReclaimRatio: "0.5"}, nil)
	got, err := ColocationStrategyForNode(cfg, node)
	if err != nil {
		t.Fatal(err)
	}
	*got.UpdateTimeThresholdSeconds = 1
	got.MetricAggregatePolicy.Durations[0].Duration = time.Second
	if diff := cmp.Diff(before, cfg); diff != "" {
		t.Errorf("configuration changed (-before,+after):\n%s", diff)
	}
}

func TestNodeSLOSpecForNode(t *testing.T) {
	cfg := mustParseAll(t, "",
		`{"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 60},
		  "nodeStrategies": [{"name": "gpu", "nodeSelector": {"matchLabels": {"gpu": "true"}}, "cpuSuppressThresholdPercent": 40, "memoryEvictThresholdPercent": 80}]}`,
		`{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true}}},
		  "nodeStrategies": [{"nodeSelector": {"matchLabels": {"gpu": "true"}}, "lsClass": {"networkQOS": {"enable": true, "ingressLimit": 80}}}]}`,
		`{"clusterStrategy": {"policy": "auto"}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"gpu": "true"}}, "cpuBurstPercent": 500}]}`,
		`{"clusterStrategy": {"minFreeKbytesFactor": 100}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"gpu": "true"}}, "watermarkScaleFactor": 150}]}`,
		`{"applications": [{"name": "cluster-app"}], "nodeConfigs": [{"nodeSelector": {"matchLabels": {"gpu": "true"}}, "applications": [{"name": "gpu-app", "qos": "LS"}]}]}`,
	)
	threshold := func(edit func(*slov1alpha1.ResourceThresholdStrategy)) *slov1alpha1.ResourceThresholdStrategy {
		s := DefaultResourceThresholdStrategy()
		edit(s)
		return s
	}
	qos := func(edit func(*slov1alpha1.ResourceQOSStrategy)) *slov1alpha1.ResourceQOSStrategy {
		s := DefaultResourceQOSStrategy()
		edit(s)
		return s
	}
	burst := func(edit func(*slov1alpha1.CPUBurstStrategy)) *slov1alpha1.CPUBurstStrategy {
		s := DefaultCPUBurstStrategy()
		edit(s)
		return s
	}
	tests := map[string]struct {
		cfg  *SLOCfg
		node *corev1.Node
		want slov1alpha1.NodeSLOSpec
	}{
		"no configuration: defaults": {
			node: testNode(nil, nil),
			want: slov1alpha1.NodeSLOSpec{
				ResourceUsedThresholdWithBE: DefaultResourceThresholdStrategy(),
				ResourceQOSStrategy:         DefaultResourceQOSStrategy(),
				CPUBurstStrategy:            DefaultCPUBurstStrategy(),
				SystemStrategy:              DefaultSystemStrategy(),
			},
		},
		"cluster strategies": {
			cfg:  cfg,
			node: testNode(map[string]string{"gpu": "false"}, nil),
			want: slov1alpha1.NodeSLOSpec{
				ResourceUsedThresholdWithBE: threshold(func(s *slov1alpha1.ResourceThresholdStrategy) {
					s.Enable, s.CPUSuppressThresholdPercent = ptr.To(true), ptr.To[int64](60)
				}),
				ResourceQOSStrategy: qos(func(s *slov1alpha1.ResourceQOSStrategy) { s.BEClass.CPUQOS.Enable = ptr.To(true) }),
				CPUBurstStrategy:    burst(func(s *slov1alpha1.CPUBurstStrategy) { s.Policy = slov1alpha1.CPUBurstAuto }),
				SystemStrategy:      &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100)},
				HostApplications:    []slov1alpha1.HostApplicationSpec{{Name: "cluster-app"}},
			},
		},
		"node strategies over cluster strategies, network QoS gets the schema defaults": {
			cfg:  cfg,
			node: testNode(map[string]string{"gpu": "true"}, nil),
			want: slov1alpha1.NodeSLOSpec{
				ResourceUsedThresholdWithBE: threshold(func(s *slov1alpha1.ResourceThresholdStrategy) {
					s.Enable, s.CPUSuppressThresholdPercent, s.MemoryEvictThresholdPercent = ptr.To(true), ptr.To[int64](40), ptr.To[int64](80)
				}),
				ResourceQOSStrategy: qos(func(s *slov1alpha1.ResourceQOSStrategy) {
					s.BEClass.CPUQOS.Enable = ptr.To(true)
					s.LSClass.NetworkQOS = &slov1alpha1.NetworkQOSCfg{Enable: ptr.To(true), NetworkQOS: slov1alpha1.NetworkQOS{
						IngressRequest: ptr.To(intstr.FromInt32(0)), IngressLimit: ptr.To(intstr.FromInt32(80)),
						EgressRequest: ptr.To(intstr.FromInt32(0)), EgressLimit: ptr.To(intstr.FromInt32(100)),
					}}
				}),
				CPUBurstStrategy: burst(func(s *slov1alpha1.CPUBurstStrategy) {
					s.Policy, s.CPUBurstPercent = slov1alpha1.CPUBurstAuto, ptr.To[int64](500)
				}),
				SystemStrategy:   &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150)},
				HostApplications: []slov1alpha1.HostApplicationSpec{{Name: "gpu-app", QoS: "LS"}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.cfg.DeepCopy()
			got := NodeSLOSpecForNode(tc.cfg, tc.node)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NodeSLOSpecForNode() (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.cfg); diff != "" {
				t.Errorf("NodeSLOSpecForNode() changed the configuration (-before,+after):\n%s", diff)
			}
		})
	}
}

func TestHostApplicationsForNode(t *testing.T) {
	cfg := mustParseAll(t, "", "", "", "", "", exampleHostApplication).HostApplication
	tests := map[string]struct {
		cfg  *HostApplicationCfg
		node *corev1.Node
		want []slov1alpha1.HostApplicationSpec
	}{
		"no configuration": {node: testNode(nil, nil)},
		"cluster list":     {cfg: cfg, node: testNode(nil, nil), want: cfg.Applications},
		"node list replaces the cluster list, even when empty": {cfg: cfg, node: testNode(map[string]string{"kubernetes.io/kernel": "anolis"}, nil)},
		"nil node gets the cluster list":                       {cfg: cfg, want: cfg.Applications},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := HostApplicationsForNode(tc.cfg, tc.node)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HostApplicationsForNode() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNodeMetricCollectPolicy(t *testing.T) {
	tests := map[string]struct {
		strategy ColocationStrategy
		want     *slov1alpha1.NodeMetricCollectPolicy
	}{
		"defaults": {
			strategy: DefaultColocationStrategy(),
			want: &slov1alpha1.NodeMetricCollectPolicy{
				AggregateDurationSeconds: ptr.To[int64](300),
				ReportIntervalSeconds:    ptr.To[int64](60),
				NodeAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{
					{Duration: 5 * time.Minute}, {Duration: 10 * time.Minute}, {Duration: 30 * time.Minute},
				}},
				NodeMemoryCollectPolicy: ptr.To(slov1alpha1.UsageWithoutPageCache),
			},
		},
		"set values": {
			strategy: ColocationStrategy{
				MetricAggregateDurationSeconds: ptr.To[int64](60),
				MetricReportIntervalSeconds:    ptr.To[int64](30),
				MetricMemoryCollectPolicy:      ptr.To(slov1alpha1.UsageWithPageCache),
				Enable:                         ptr.To(false),
			},
			want: &slov1alpha1.NodeMetricCollectPolicy{
				AggregateDurationSeconds: ptr.To[int64](60),
				ReportIntervalSeconds:    ptr.To[int64](30),
				NodeMemoryCollectPolicy:  ptr.To(slov1alpha1.UsageWithPageCache),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := NodeMetricCollectPolicy(tc.strategy)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NodeMetricCollectPolicy() (-want,+got):\n%s", diff)
			}
			*got.ReportIntervalSeconds = 1
			if *tc.strategy.MetricReportIntervalSeconds == 1 {
				t.Errorf("NodeMetricCollectPolicy() shares memory with the strategy")
			}
		})
	}
}
