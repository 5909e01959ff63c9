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

package reservation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// A Koordinator configuration with Reservation args, in Koordinator's field names and profile shape (Reservation
// before DefaultBinder in bind, score weight 5000).
const koordinatorConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
    plugins:
      score:
        enabled:
          - name: Reservation
            weight: 5000
      bind:
        disabled:
          - name: DefaultBinder
        enabled:
          - name: Reservation
          - name: DefaultBinder
    pluginConfig:
      - name: Reservation
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: ReservationArgs
          enablePreemption: true
          gcDurationSeconds: 3600
          ignoredResources: ["example.com/gpu"]
`

func TestDecodeArgs(t *testing.T) {
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(koordinatorConfig), nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded %T", obj)
	}
	var got *config.ReservationArgs
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == Name {
			got, _ = pc.Args.(*config.ReservationArgs)
		}
	}
	if got == nil {
		t.Fatal("no ReservationArgs decoded")
	}
	want := &config.ReservationArgs{
		EnablePreemption:            true,
		MinCandidateNodesPercentage: 10,
		MinCandidateNodesAbsolute:   100,
		ControllerWorkers:           1,
		GCDurationSeconds:           3600,
		GCIntervalSeconds:           60,
		ResyncIntervalSeconds:       60,
		IgnoredResources:            []corev1.ResourceName{"example.com/gpu"},
	}
	got.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want,+got):\n%s", diff)
	}
	var binders []string
	for _, p := range cfg.Profiles[0].Plugins.Bind.Enabled {
		binders = append(binders, p.Name)
	}
	if diff := cmp.Diff([]string{"Reservation", "DefaultBinder"}, binders); diff != "" {
		t.Errorf("bind plugins (-want,+got):\n%s", diff)
	}
}
