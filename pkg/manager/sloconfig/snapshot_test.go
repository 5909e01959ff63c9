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

package sloconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// configMap returns the SLO ConfigMap at resourceVersion rv with the given data.
func configMap(rv string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: configuration.ConfigNamespace, Name: configuration.SLOCtrlConfigMap, ResourceVersion: rv},
		Data:       data,
	}
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		cm      *corev1.ConfigMap
		want    *Snapshot
		wantErr string
	}{
		"nil ConfigMap: defaults": {want: DefaultSnapshot()},
		"no keys: defaults with the resourceVersion": {
			cm:   configMap("7", nil),
			want: &Snapshot{ResourceVersion: "7"},
		},
		"blank keys mean defaults, unknown keys are ignored": {
			cm: configMap("8", map[string]string{
				configuration.ColocationConfigKey: "  \n", configuration.SystemConfigKey: "",
				"cpu-normalization-config": `{"enable": true}`,
			}),
			want: &Snapshot{ResourceVersion: "8"},
		},
		"every key": {
			cm: configMap("9", map[string]string{
				configuration.ColocationConfigKey:        `{"enable": true}`,
				configuration.ResourceThresholdConfigKey: `{"clusterStrategy": {"enable": true}}`,
				configuration.ResourceQOSConfigKey:       `{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true}}}}`,
				configuration.CPUBurstConfigKey:          `{"clusterStrategy": {"policy": "auto"}}`,
				configuration.SystemConfigKey:            `{"clusterStrategy": {"minFreeKbytesFactor": 100}}`,
				configuration.HostApplicationConfigKey:   `{"applications": [{"name": "nginx"}]}`,
			}),
			want: &Snapshot{ResourceVersion: "9", SLOCfg: configuration.SLOCfg{
				Colocation:        &configuration.ColocationCfg{ColocationStrategy: configuration.ColocationStrategy{Enable: ptr.To(true)}},
				ResourceThreshold: &configuration.ResourceThresholdCfg{ClusterStrategy: &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(true)}},
				ResourceQOS: &configuration.ResourceQOSCfg{ClusterStrategy: &slov1alpha1.ResourceQOSStrategy{
					BEClass: &slov1alpha1.ResourceQOS{CPUQOS: &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true)}},
				}},
				CPUBurst: &configuration.CPUBurstCfg{ClusterStrategy: &slov1alpha1.CPUBurstStrategy{
					CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstAuto},
				}},
				System:          &configuration.SystemCfg{ClusterStrategy: &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100)}},
				HostApplication: &configuration.HostApplicationCfg{Applications: []slov1alpha1.HostApplicationSpec{{Name: "nginx"}}},
			}},
		},
		"every problem of every key, one per line": {
			cm: configMap("10", map[string]string{
				configuration.ColocationConfigKey:        `{"cpuReclaimThresholdPrecent": 70, "degradeTimeMinutes": 0}`,
				configuration.ResourceThresholdConfigKey: `{"clusterStrategy": {"memoryEvictLowerPercent": 75}}`,
				configuration.CPUBurstConfigKey:          `{"clusterStrategy": {"cpuBurstPercent": 0}}`,
				configuration.SystemConfigKey:            `{"clusterStrategy": {`,
			}),
			wantErr: `colocation-config: unknown field "cpuReclaimThresholdPrecent"` + "\n" +
				"system-config: line 1, column 21: unexpected end of JSON input\n" +
				"colocation-config.degradeTimeMinutes: Invalid value: 0: must be greater than or equal to 1\n" +
				"resource-threshold-config.clusterStrategy.memoryEvictLowerPercent: Invalid value: 75: must be less than memoryEvictThresholdPercent (70)\n" +
				"cpu-burst-config.clusterStrategy.cpuBurstPercent: Invalid value: 0: must be between 1 and 10000",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.cm)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("Parse() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse() (-want,+got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestParseTolerant: fields Koord does not know make Parse fail but not ParseTolerant, which applies the fields it
// knows, validated, and names the others; any other problem fails both.
func TestParseTolerant(t *testing.T) {
	cm := configMap("11", map[string]string{
		configuration.ColocationConfigKey:        `{"enable": true, "cpuReclaimThresholdPercent": 60, "aFutureKoordinatorField": 1}`,
		configuration.ResourceThresholdConfigKey: `{"clusterStrategy": {"enable": true, "memoryEvictThresholdPercent": 80, "cpuEvictPlicy": "x"}}`,
	})
	snap, unknown, err := ParseTolerant(cm)
	if err != nil {
		t.Fatal(err)
	}
	want := &Snapshot{ResourceVersion: "11", SLOCfg: configuration.SLOCfg{
		Colocation: &configuration.ColocationCfg{ColocationStrategy: configuration.ColocationStrategy{
			Enable: ptr.To(true), CPUReclaimThresholdPercent: ptr.To[int64](60)}},
		ResourceThreshold: &configuration.ResourceThresholdCfg{ClusterStrategy: &slov1alpha1.ResourceThresholdStrategy{
			Enable: ptr.To(true), MemoryEvictThresholdPercent: ptr.To[int64](80)}},
	}}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("ParseTolerant() (-want,+got):\n%s", diff)
	}
	wantUnknown := `colocation-config: unknown field "aFutureKoordinatorField"` + "\n" +
		`resource-threshold-config: unknown field "clusterStrategy.cpuEvictPlicy"`
	if diff := cmp.Diff(wantUnknown, errString(unknown)); diff != "" {
		t.Errorf("unknown fields (-want,+got):\n%s", diff)
	}
	if _, err := Parse(cm); errString(err) != wantUnknown {
		t.Errorf("Parse() error = %q, want the unknown fields %q", errString(err), wantUnknown)
	}

	// A value of the wrong type is no unknown field: the version is refused, with every problem named.
	cm.Data[configuration.ColocationConfigKey] = `{"enable": "yes", "nope": 1}`
	if snap, unknown, err := ParseTolerant(cm); err == nil || snap != nil || unknown != nil {
		t.Errorf("ParseTolerant() with a type error = %v, %v, %v; want only an error", snap, unknown, err)
	}
}
