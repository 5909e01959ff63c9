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
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/configuration"
)

// TestShippedConfigMapParses keeps config/manager/slo-controller-config.yaml valid: every key parses and
// validates, and it spells out the defaults it claims to.
func TestShippedConfigMapParses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "manager", "slo-controller-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		t.Fatalf("decode the shipped ConfigMap: %v", err)
	}
	if cm.Namespace != configuration.ConfigNamespace || cm.Name != configuration.SLOCtrlConfigMap {
		t.Errorf("shipped ConfigMap is %s/%s, want %s/%s", cm.Namespace, cm.Name, configuration.ConfigNamespace, configuration.SLOCtrlConfigMap)
	}
	snap, err := Parse(cm)
	if err != nil {
		t.Fatalf("the shipped ConfigMap does not parse: %v", err)
	}
	for _, key := range []string{configuration.ColocationConfigKey, configuration.ResourceThresholdConfigKey,
		configuration.ResourceQOSConfigKey, configuration.CPUBurstConfigKey, configuration.SystemConfigKey} {
		if cm.Data[key] == "" {
			t.Errorf("the shipped ConfigMap has no %s", key)
		}
	}
	got, err := configuration.ColocationStrategyForNode(snap.Colocation, &corev1.Node{})
	if err != nil {
		t.Fatal(err)
	}
	want := configuration.DefaultColocationStrategy()
	// The file states the defaults explicitly: rendering it must give exactly the defaults.
	if gotJSON, wantJSON := mustJSON(t, got), mustJSON(t, want); gotJSON != wantJSON {
		t.Errorf("shipped colocation-config differs from the defaults:\n got %s\nwant %s", gotJSON, wantJSON)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
