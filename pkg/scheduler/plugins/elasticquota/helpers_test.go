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

package elasticquota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"

	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
)

// fixture is the plugin built by its factory in a plugintest.Env holding the quotas, nodes and pods.
type fixture struct {
	*plugintest.Env
	plugin *Plugin
}

// newFixture builds the plugin with args over the quotas, nodes and pods, and waits until its manager has
// seen them.
func newFixture(t testing.TB, args *config.ElasticQuotaArgs, quotas []*schedv1alpha1.ElasticQuota, nodes []*corev1.Node, pods []*corev1.Pod) *fixture {
	t.Helper()
	env := plugintest.New(t, plugintest.WithObjectsOf(quotas), plugintest.WithObjectsOf(nodes), plugintest.WithObjectsOf(pods))
	p := plugintest.Plugin[*Plugin](t, env, NewFactory(env.CRDs, plugins.WithClock(env.Clock), plugins.WithFeatures(plfeature.Features{})), args)
	return &fixture{Env: env, plugin: p}
}
