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

package cluster

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/configuration"
	koordconfig "github.com/koord-dev/koord/config"
	deschedulerconfig "github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

func TestLocalSLOConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		slo            SLOConfig
		wantReport     int64
		wantDegrade    int64
		wantAggregates int64
		// wantMid are midUnallocatedPercent, midCPUThresholdPercent and midMemoryThresholdPercent; the shipped
		// file sets none.
		wantMid []*int64
	}{
		"mid settings": {
			slo:        SLOConfig{ReportInterval: time.Second, Mid: MidSettings{UnallocatedPercent: ptr.To[int64](20), CPUThresholdPercent: ptr.To[int64](40)}},
			wantReport: 1, wantDegrade: 15, wantAggregates: 300, wantMid: []*int64{ptr.To[int64](20), ptr.To[int64](40), nil},
		},
		"defaults":     {slo: SLOConfig{ReportInterval: 10 * time.Second}, wantReport: 10, wantDegrade: 15, wantAggregates: 300},
		"degrade time": {slo: SLOConfig{ReportInterval: time.Minute, DegradeTime: 3 * time.Minute}, wantReport: 60, wantDegrade: 3, wantAggregates: 300},
		"aggregate duration": {
			slo:        SLOConfig{ReportInterval: 5 * time.Second, AggregateDuration: 10 * time.Second},
			wantReport: 5, wantDegrade: 15, wantAggregates: 10,
		},
	} {
		t.Run(name, func(t *testing.T) {
			cm, err := LocalSLOConfig(koordconfig.FS, tc.slo)
			if err != nil {
				t.Fatalf("LocalSLOConfig() = %v", err)
			}
			if diff := cmp.Diff([]string{"koordinator-system", "slo-controller-config"}, []string{cm.Namespace, cm.Name}); diff != "" {
				t.Errorf("name (-want,+got):\n%s", diff)
			}
			// The values parse strictly and validate, as koord-manager's loader requires.
			colocation, err := configuration.ParseColocationCfg(cm.Data[configuration.ColocationConfigKey])
			if err != nil {
				t.Fatalf("colocation-config does not parse: %v", err)
			}
			if errs := configuration.ValidateColocationCfg(field.NewPath("c"), colocation); len(errs) > 0 {
				t.Errorf("colocation-config does not validate: %v", errs)
			}
			wantMid := tc.wantMid
			if wantMid == nil {
				wantMid = []*int64{nil, nil, nil}
			}
			if diff := cmp.Diff(wantMid, []*int64{colocation.MidUnallocatedPercent, colocation.MidCPUThresholdPercent, colocation.MidMemoryThresholdPercent}); diff != "" {
				t.Errorf("mid settings (-want,+got):\n%s", diff)
			}
			got := []*int64{colocation.MetricReportIntervalSeconds, colocation.DegradeTimeMinutes, colocation.MetricAggregateDurationSeconds}
			want := []*int64{ptr.To(tc.wantReport), ptr.To(tc.wantDegrade), ptr.To(tc.wantAggregates)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report interval, degrade time, aggregate duration (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(ptr.To(true), colocation.Enable); diff != "" {
				t.Errorf("colocation enable (-want,+got):\n%s", diff)
			}
			threshold, err := configuration.ParseResourceThresholdCfg(cm.Data[configuration.ResourceThresholdConfigKey])
			if err != nil {
				t.Fatalf("resource-threshold-config does not parse: %v", err)
			}
			if threshold.ClusterStrategy == nil || !ptr.Deref(threshold.ClusterStrategy.Enable, false) {
				t.Errorf("resource-threshold-config cluster strategy = %+v, want enabled", threshold.ClusterStrategy)
			}
			if diff := cmp.Diff(ptr.To(int64(65)), threshold.ClusterStrategy.CPUSuppressThresholdPercent); diff != "" {
				t.Errorf("cpuSuppressThresholdPercent kept from the shipped file (-want,+got):\n%s", diff)
			}
			// Keys the local cluster does not change are copied as they are.
			shipped := shippedConfigMap(t)
			for _, key := range []string{configuration.ResourceQOSConfigKey, configuration.CPUBurstConfigKey, configuration.SystemConfigKey} {
				if diff := cmp.Diff(shipped.Data[key], cm.Data[key]); diff != "" {
					t.Errorf("%s (-shipped,+local):\n%s", key, diff)
				}
			}
		})
	}
}

func shippedConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	data, err := koordconfig.FS.ReadFile(sloConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.Unmarshal(data, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

func TestLocalSLOConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		files   fstest.MapFS
		wantMsg string
	}{
		"no file": {
			files:   fstest.MapFS{},
			wantMsg: "read manager/slo-controller-config.yaml",
		},
		"malformed colocation-config": {
			files: fstest.MapFS{sloConfigFile: {Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  colocation-config: '{"enable": "yes"}'
`)}},
			wantMsg: "manager/slo-controller-config.yaml: colocation-config",
		},
		"invalid threshold": {
			files: fstest.MapFS{sloConfigFile: {Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  resource-threshold-config: '{"clusterStrategy": {"cpuSuppressThresholdPercent": 300}}'
`)}},
			wantMsg: "resource threshold settings: resource-threshold-config.clusterStrategy.cpuSuppressThresholdPercent",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LocalSLOConfig(tc.files, SLOConfig{ReportInterval: 10 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("LocalSLOConfig() = %v, want an error containing %q", err, tc.wantMsg)
			}
		})
	}
}

func TestEmbeddedManifests(t *testing.T) {
	crds, err := readCRDs(koordconfig.FS)
	if err != nil {
		t.Fatalf("readCRDs() = %v", err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	for _, want := range []string{"nodemetrics.slo.koordinator.sh", "nodeslos.slo.koordinator.sh", "reservations.scheduling.koordinator.sh"} {
		if !slices.Contains(names, want) {
			t.Errorf("CRDs %v lack %s", names, want)
		}
	}
	var kinds []string
	for _, dir := range []string{namespaceDir, priorityClassDir} {
		objs, err := readObjects(koordconfig.FS, dir)
		if err != nil {
			t.Fatalf("readObjects(%s) = %v", dir, err)
		}
		for _, o := range objs {
			kinds = append(kinds, o.GetKind()+"/"+o.GetName())
		}
	}
	want := []string{
		"Namespace/koordinator-system", "PriorityClass/koord-batch", "PriorityClass/koord-free", "PriorityClass/koord-mid", "PriorityClass/koord-prod",
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("objects (-want,+got):\n%s", diff)
	}
}

func TestSchedulerConfig(t *testing.T) {
	base, err := koordconfig.FS.ReadFile(schedulerConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	out, err := SchedulerConfig(base, "/state/kubeconfig")
	if err != nil {
		t.Fatalf("SchedulerConfig() = %v", err)
	}
	var got, orig map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(base, &orig); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"kubeconfig": "/state/kubeconfig"}, got["clientConnection"]); diff != "" {
		t.Errorf("clientConnection (-want,+got):\n%s", diff)
	}
	le, _ := got["leaderElection"].(map[string]any)
	if le["leaderElect"] != false {
		t.Errorf("leaderElection = %v, want leaderElect false", le)
	}
	if diff := cmp.Diff(orig["profiles"], got["profiles"]); diff != "" {
		t.Errorf("profiles changed (-want,+got):\n%s", diff)
	}

	// Several replicas elect a leader through the Lease the file names.
	out, err = schedulerConfig(base, "/state/kubeconfig", true)
	if err != nil {
		t.Fatalf("schedulerConfig(leaderElect) = %v", err)
	}
	var replicated map[string]any
	if err := yaml.Unmarshal(out, &replicated); err != nil {
		t.Fatal(err)
	}
	wantLE := map[string]any{"leaderElect": true, "resourceName": "koord-scheduler", "resourceNamespace": "koordinator-system"}
	if diff := cmp.Diff(wantLE, replicated["leaderElection"]); diff != "" {
		t.Errorf("leaderElection with replicas (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"kubeconfig": "/state/kubeconfig"}, replicated["clientConnection"]); diff != "" {
		t.Errorf("clientConnection with replicas (-want,+got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		data    string
		wantMsg string
	}{
		"not yaml":    {data: "{", wantMsg: "decode scheduler configuration"},
		"wrong kind":  {data: "apiVersion: v1\nkind: ConfigMap\n", wantMsg: `kind is "ConfigMap", want KubeSchedulerConfiguration`},
		"old version": {data: "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", wantMsg: `apiVersion is "kubescheduler.config.k8s.io/v1beta3"`},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := SchedulerConfig([]byte(tc.data), "k"); err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("SchedulerConfig() = %v, want an error containing %q", err, tc.wantMsg)
			}
		})
	}
}

func TestFakeNode(t *testing.T) {
	cpu, memory := DefaultNodeCPU, DefaultNodeMemory
	cidrs := map[string]int{}
	for _, i := range []int{0, 1, 255, 256, MaxNodes - 1} {
		n := FakeNode(i, cpu, memory, 110)
		if prev, ok := cidrs[n.Spec.PodCIDR]; ok {
			t.Errorf("nodes %d and %d share pod CIDR %s", prev, i, n.Spec.PodCIDR)
		}
		cidrs[n.Spec.PodCIDR] = i
		if n.Labels[NodeLabel] != NodeLabelValue || n.Labels[corev1.LabelHostname] != n.Name {
			t.Errorf("node %d labels %v lack %s=%s or the hostname", i, n.Labels, NodeLabel, NodeLabelValue)
		}
		if len(n.Spec.Taints) != 0 {
			t.Errorf("node %d has taints %v", i, n.Spec.Taints)
		}
	}
	n := FakeNode(300, cpu, memory, 110)
	if diff := cmp.Diff([]string{"kwok-node-300", "10.2.44.0/24", "32", "128Gi", "110"},
		[]string{n.Name, n.Spec.PodCIDR, n.Status.Allocatable.Cpu().String(), n.Status.Allocatable.Memory().String(), n.Status.Capacity.Pods().String()}); diff != "" {
		t.Errorf("node 300 (-want,+got):\n%s", diff)
	}
}

func TestDefaultKWOKStages(t *testing.T) {
	var names []string
	for _, doc := range strings.Split(DefaultKWOKStages(), "\n---\n") {
		var stage struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			t.Fatalf("stage does not decode: %v", err)
		}
		names = append(names, stage.Kind+"/"+stage.Metadata.Name)
	}
	want := []string{"Stage/node-initialize", "Stage/node-heartbeat-with-lease", "Stage/pod-ready", "Stage/pod-complete", "Stage/pod-delete"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("stages (-want,+got):\n%s", diff)
	}
}

func TestSampleBEPod(t *testing.T) {
	pod := &corev1.Pod{}
	if err := yaml.UnmarshalStrict([]byte(SampleBEPod), pod); err != nil {
		t.Fatalf("sample BE pod does not decode: %v", err)
	}
	got := []string{pod.Labels["koordinator.sh/qosClass"], pod.Spec.PriorityClassName, pod.Spec.SchedulerName}
	if diff := cmp.Diff([]string{"BE", "koord-batch", "koord-scheduler"}, got); diff != "" {
		t.Errorf("QoS, priority class, scheduler (-want,+got):\n%s", diff)
	}
}

func TestDeschedulerConfig(t *testing.T) {
	base, err := koordconfig.FS.ReadFile(deschedulerConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	balanceOf := func(t *testing.T, data []byte) []string {
		t.Helper()
		c, err := deschedulerconfig.Decode(data)
		if err != nil {
			t.Fatalf("Decode() = %v", err)
		}
		var names []string
		for _, p := range c.Profiles[0].Plugins.Balance.Enabled {
			names = append(names, p.Name)
		}
		return names
	}
	for name, tc := range map[string]struct {
		lowNodeLoad bool
		wantBalance []string
	}{
		"as shipped":          {wantBalance: nil},
		"LowNodeLoad enabled": {lowNodeLoad: true, wantBalance: []string{"LowNodeLoad"}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := DeschedulerConfig(base, "/state/kubeconfig", "127.0.0.1:4321", tc.lowNodeLoad)
			if err != nil {
				t.Fatalf("DeschedulerConfig() = %v", err)
			}
			c, err := deschedulerconfig.Decode(out)
			if err != nil {
				t.Fatalf("Decode() = %v", err)
			}
			if got := ptr.Deref(c.LeaderElection.LeaderElect, true); got {
				t.Errorf("leaderElection.leaderElect = %v, want false", got)
			}
			got := []string{c.ClientConnection.Kubeconfig, ptr.Deref(c.HealthzBindAddress, ""), ptr.Deref(c.MetricsBindAddress, "")}
			if diff := cmp.Diff([]string{"/state/kubeconfig", "127.0.0.1:4321", "127.0.0.1:4321"}, got); diff != "" {
				t.Errorf("kubeconfig, healthz and metrics addresses (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBalance, balanceOf(t, out)); diff != "" {
				t.Errorf("balance plugins (-want,+got):\n%s", diff)
			}
		})
	}

	// Enabling twice, or a configuration that already enables it, keeps one LowNodeLoad.
	once, err := DeschedulerConfig(base, "k", "127.0.0.1:1", true)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := DeschedulerConfig(once, "k", "127.0.0.1:1", true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"LowNodeLoad"}, balanceOf(t, twice)); diff != "" {
		t.Errorf("balance plugins after enabling twice (-want,+got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		data        string
		lowNodeLoad bool
		wantMsg     string
	}{
		"not yaml":   {data: "{", wantMsg: "decode descheduler configuration"},
		"wrong kind": {data: "apiVersion: v1\nkind: ConfigMap\n", wantMsg: `kind is "ConfigMap", want DeschedulerConfiguration`},
		"unknown field": {
			data:    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\ndeschedulingIntervall: 10s\n",
			wantMsg: "deschedulingIntervall",
		},
		"no profiles to enable in": {
			data: "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\n", lowNodeLoad: true,
			wantMsg: "no profiles to enable LowNodeLoad in",
		},
		"profile not an object": {
			data: "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\nprofiles: [x]\n", lowNodeLoad: true,
			wantMsg: "profiles[0] is not an object",
		},
		"invalid thresholds": {
			data: `apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
profiles:
- name: p
  pluginConfig:
  - name: LowNodeLoad
    args: {apiVersion: descheduler/v1alpha2, kind: LowNodeLoadArgs, lowThresholds: {cpu: 80}, highThresholds: {cpu: 70}}
`,
			lowNodeLoad: true,
			wantMsg:     "lowThresholds",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DeschedulerConfig([]byte(tc.data), "k", "127.0.0.1:1", tc.lowNodeLoad); err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("DeschedulerConfig() = %v, want an error containing %q", err, tc.wantMsg)
			}
		})
	}
}
