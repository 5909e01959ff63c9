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

package plugintest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme"
)

// Args returns the internal args *T that a pluginConfig entry with the v1 args *V produces in kube-scheduler:
// edit (may be nil) fills in the v1 args, which are then defaulted and converted.
func Args[T, V any](t testing.TB, edit func(*V)) *T {
	t.Helper()
	in := new(V)
	if edit != nil {
		edit(in)
	}
	obj, ok := any(in).(runtime.Object)
	if !ok {
		t.Fatalf("%T is not an API object", in)
	}
	scheme.Scheme.Default(obj)
	out := new(T)
	if err := scheme.Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("convert args: %v", err)
	}
	return out
}

// DecodeArgs decodes a KubeSchedulerConfiguration as kube-scheduler does (strict, defaulted) and returns the
// args of plugin name in its first profile.
func DecodeArgs[T any](t testing.TB, config, name string) *T {
	t.Helper()
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(config), nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded a %T", obj)
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == name {
			args, ok := any(pc.Args).(*T)
			if !ok {
				t.Fatalf("the args of %s are a %T", name, pc.Args)
			}
			return args
		}
	}
	t.Fatalf("no args of %s decoded", name)
	return nil
}

// Status is a comparable summary of a framework status.
type Status struct {
	Code    fwk.Code
	Reasons []string
}

// Summarize returns the summary of s; nil is Success.
func Summarize(s *fwk.Status) Status {
	if s == nil {
		return Status{Code: fwk.Success}
	}
	return Status{Code: s.Code(), Reasons: s.Reasons()}
}

// NodeInfo returns the NodeInfo of node with pods on it.
func NodeInfo(node *corev1.Node, pods ...*corev1.Pod) fwk.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

// PreFilterPreScorePlugin is a plugin with PreFilter and PreScore.
type PreFilterPreScorePlugin interface {
	fwk.PreFilterPlugin
	fwk.PreScorePlugin
}

// ExpectSkipped runs pl's PreFilter and PreScore for pod in a fresh CycleState, as a scheduling cycle does,
// and fails t unless both return Skip: then kube-scheduler calls neither the plugin's Filter nor its Score on
// any node. Benchmarks of what a plugin costs the pods it has nothing to do for call it in their loop.
func ExpectSkipped(ctx context.Context, t testing.TB, pl PreFilterPreScorePlugin, pod *corev1.Pod) {
	t.Helper()
	cs := framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, cs, pod, nil); s.Code() != fwk.Skip {
		t.Fatalf("PreFilter = %v, want Skip", s)
	}
	if s := pl.PreScore(ctx, cs, pod, nil); s.Code() != fwk.Skip {
		t.Fatalf("PreScore = %v, want Skip", s)
	}
}
