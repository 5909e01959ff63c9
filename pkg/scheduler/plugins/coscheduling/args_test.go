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

package coscheduling

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// TestDecodeKoordinatorArgs decodes Koordinator's way of configuring the plugin: kube-scheduler's decoder
// defaults and converts the args.
func TestDecodeKoordinatorArgs(t *testing.T) {
	const cfg = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
    plugins:
      queueSort:
        enabled:
          - name: Coscheduling
        disabled:
          - name: "*"
    pluginConfig:
      - name: Coscheduling
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: CoschedulingArgs
          defaultTimeout: 5m
          controllerWorkers: 2
          skipCheckScheduleCycle: true
`
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(cfg), nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	var got *config.CoschedulingArgs
	for _, pc := range obj.(*schedconfig.KubeSchedulerConfiguration).Profiles[0].PluginConfig {
		if pc.Name == Name {
			got, _ = pc.Args.(*config.CoschedulingArgs)
		}
	}
	want := &config.CoschedulingArgs{
		DefaultTimeout:         metav1.Duration{Duration: 5 * time.Minute},
		ControllerWorkers:      2,
		SkipCheckScheduleCycle: true,
		DefaultMatchPolicy:     "once-satisfied",
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "TypeMeta" }, cmp.Ignore())); diff != "" {
		t.Errorf("decoded args (-want,+got):\n%s", diff)
	}
}
