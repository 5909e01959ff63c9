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

package loadaware

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// fixture is the plugin built by its factory in a plugintest.Env holding the NodeMetrics and pods.
type fixture struct {
	*plugintest.Env
	plugin  *Plugin
	metrics *metrics.Metrics
}

// newFixture builds the plugin with args over the NodeMetrics and the pods, and waits until the assign cache
// has seen the pods.
func newFixture(t testing.TB, args *config.LoadAwareSchedulingArgs, nodeMetrics []*slov1alpha1.NodeMetric, pods []*corev1.Pod) *fixture {
	t.Helper()
	env := plugintest.New(t, plugintest.WithObjectsOf(nodeMetrics), plugintest.WithObjectsOf(pods))
	m := metrics.NewMetrics()
	p := plugintest.Plugin[*Plugin](t, env, NewFactory(env.CRDs, plugins.WithClock(env.Clock), plugins.WithMetrics(m)), args)
	return &fixture{Env: env, plugin: p, metrics: m}
}

// filter runs Filter for pod on node in a fresh cycle.
func (f *fixture) filter(pod *corev1.Pod, node *corev1.Node) *fwk.Status {
	return f.plugin.Filter(f.Ctx, framework.NewCycleState(), pod, plugintest.NodeInfo(node))
}

// score runs Score for pod on node in a fresh cycle.
func (f *fixture) score(t testing.TB, pod *corev1.Pod, node *corev1.Node) int64 {
	t.Helper()
	s, status := f.plugin.Score(f.Ctx, framework.NewCycleState(), pod, plugintest.NodeInfo(node))
	if !status.IsSuccess() {
		t.Fatalf("Score(%s) = %v", node.Name, status)
	}
	return s
}

// reserve runs Reserve for pod on node.
func (f *fixture) reserve(t testing.TB, pod *corev1.Pod, node string) {
	t.Helper()
	if status := f.plugin.Reserve(f.Ctx, framework.NewCycleState(), pod, node); !status.IsSuccess() {
		t.Fatalf("Reserve = %v", status)
	}
}

// node is a node with 10 cpus and 10Gi of memory.
func node(name string) *utiltesting.NodeWrapper {
	return utiltesting.MakeNode(name).Allocatable(utiltesting.Resources("cpu", "10", "memory", "10Gi"))
}
