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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/configuration"
)

// FuzzParse checks that Parse never panics on an arbitrary ConfigMap, that every line of its error names a key,
// and that an accepted ConfigMap renders a NodeSLO and a collection policy for a node.
func FuzzParse(f *testing.F) {
	f.Add(`{"enable": true}`, `{"clusterStrategy": {"enable": true}}`, `{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true}}}}`,
		`{"clusterStrategy": {"policy": "auto"}}`, `{"clusterStrategy": {}}`, `{"applications": [{"name": "a"}]}`)
	f.Add(`{"cpuReclaimThresholdPrecent": 1}`, `{"clusterStrategy": {"memoryEvictLowerPercent": 90}}`, `{`, `null`, ``, `[]`)
	f.Add(`{"nodeConfigs": [{"nodeSelector": {"matchLabels": {"a": "b"}}}, {"nodeSelector": {"matchLabels": {"a": "b"}}}]}`,
		`{"nodeStrategies": [{}]}`, `{"nodeStrategies": [null]}`, `{"clusterStrategy": {"cpuBurstPercent": 0}}`, `"x"`, `{"nodeConfigs": [{}]}`)
	keys := []string{
		configuration.ColocationConfigKey, configuration.ResourceThresholdConfigKey, configuration.ResourceQOSConfigKey,
		configuration.CPUBurstConfigKey, configuration.SystemConfigKey, configuration.HostApplicationConfigKey,
	}
	f.Fuzz(func(t *testing.T, colocation, threshold, qos, burst, system, hostApps string) {
		data := map[string]string{}
		for i, v := range []string{colocation, threshold, qos, burst, system, hostApps} {
			data[keys[i]] = v
		}
		snap, err := Parse(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1"}, Data: data})
		if err != nil {
			for line := range strings.Lines(err.Error()) {
				named := false
				for _, k := range keys {
					named = named || strings.HasPrefix(line, k+":") || strings.HasPrefix(line, k+".")
				}
				if !named {
					t.Fatalf("error line %q does not start with a key", line)
				}
			}
			return
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}}}
		configuration.NodeSLOSpecForNode(&snap.SLOCfg, node)
		strategy, _ := configuration.ColocationStrategyForNode(snap.Colocation, node)
		configuration.NodeMetricCollectPolicy(strategy)
	})
}
