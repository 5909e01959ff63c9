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
	"testing"

	"github.com/koord-dev/koord/apis/extension"
)

// The renderers run once per node per pass of the node controllers, so their cost times the node count is what a
// configuration change costs.

func BenchmarkColocationStrategyForNode(b *testing.B) {
	cfg := mustParseAll(b, exampleColocation).Colocation
	for name, node := range map[string]map[string]string{
		"match=cluster":    {"pool": "x"},
		"match=node":       {"kubernetes.io/kernel": "anolis"},
		"match=node+label": {"kubernetes.io/kernel": "anolis", extension.LabelCPUReclaimRatio: "0.7"},
	} {
		n := testNode(node, nil)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ColocationStrategyForNode(cfg, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNodeSLOSpecForNode(b *testing.B) {
	cfg := mustParseAll(b, "", exampleResourceThreshold, exampleResourceQOS, exampleCPUBurst, exampleSystem, exampleHostApplication)
	n := testNode(map[string]string{"kubernetes.io/kernel": "anolis"}, nil)
	b.ReportAllocs()
	for b.Loop() {
		NodeSLOSpecForNode(cfg, n)
	}
}
