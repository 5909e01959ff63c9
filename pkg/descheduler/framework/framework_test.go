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

package framework

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// evictPlugin is an evict and filter plugin that records evictions and refuses pods named "refused".
type evictPlugin struct {
	evicted []string
	fail    bool
}

func (p *evictPlugin) Name() string                           { return config.MigrationControllerName }
func (p *evictPlugin) Filter(pod *corev1.Pod) bool            { return pod.Name != "refused" }
func (p *evictPlugin) PreEvictionFilter(pod *corev1.Pod) bool { return true }
func (p *evictPlugin) Evict(_ context.Context, pod *corev1.Pod, o evictions.EvictOptions) error {
	if p.fail {
		return errors.New("no")
	}
	p.evicted = append(p.evicted, o.ProfileName+"/"+pod.Name)
	return nil
}

// balancePlugin evicts every pod of every node it is given, through the handle's evictor.
type balancePlugin struct{ h frameworktypes.Handle }

func (p *balancePlugin) Name() string { return config.LowNodeLoadName }
func (p *balancePlugin) Balance(ctx context.Context, nodes []*corev1.Node) *frameworktypes.Status {
	for _, n := range nodes {
		pods, _ := p.h.GetPodsAssignedToNodeFunc()(n.Name, nil)
		slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		for _, pod := range pods {
			if p.h.Evictor().Filter(pod) {
				_ = p.h.Evictor().Evict(ctx, pod, evictions.EvictOptions{})
			}
		}
	}
	return nil
}

func readyNode(name string) *corev1.Node {
	n := utiltesting.MakeNode(name).Obj()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return n
}

func newTestDescheduler(t *testing.T, c *config.DeschedulerConfiguration, objs ...runtime.Object) (*Descheduler, *evictPlugin, error) {
	t.Helper()
	kube := kubefake.NewClientset(objs...)
	ev := &evictPlugin{}
	o := Options{
		Config: c, Client: kube,
		Informers:      informers.NewSharedInformerFactory(kube, 0),
		KoordInformers: koordinformers.NewSharedInformerFactory(koordfake.NewSimpleClientset(), 0),
		Recorder:       &events.FakeRecorder{},
		Clock:          clocktesting.NewFakeClock(utiltesting.Now),
		Registry: map[string]PluginFactory{
			config.MigrationControllerName: func(context.Context, runtime.Object, frameworktypes.Handle) (frameworktypes.Plugin, error) {
				return ev, nil
			},
			config.LowNodeLoadName: func(_ context.Context, _ runtime.Object, h frameworktypes.Handle) (frameworktypes.Plugin, error) {
				return &balancePlugin{h: h}, nil
			},
		},
	}
	d, err := New(context.Background(), o)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	o.Informers.Start(ctx.Done())
	o.Informers.WaitForCacheSync(ctx.Done())
	return d, ev, nil
}

func decode(t *testing.T, yaml string) *config.DeschedulerConfiguration {
	t.Helper()
	c, err := config.Decode([]byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\n" + yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRunOnce(t *testing.T) {
	pods := func() []runtime.Object {
		var out []runtime.Object
		for _, p := range []struct{ name, node, ns string }{
			{"a1", "a", "x"}, {"a2", "a", "x"}, {"a3", "a", "y"}, {"refused", "a", "y"}, {"b1", "b", "x"}, {"c1", "c", "x"},
		} {
			out = append(out, utiltesting.MakePod(p.name).Namespace(p.ns).Node(p.node).Obj())
		}
		return out
	}
	notReady := readyNode("c")
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{name: "every ready node, filtered pods left alone", config: "profiles:\n- name: p\n  plugins: {balance: {enabled: [{name: LowNodeLoad}]}}\n",
			want: []string{"p/a1", "p/a2", "p/a3", "p/b1"}},
		{name: "per node limit", config: "maxNoOfPodsToEvictPerNode: 2\nprofiles:\n- name: p\n  plugins: {balance: {enabled: [{name: LowNodeLoad}]}}\n",
			want: []string{"p/a1", "p/a2", "p/b1"}},
		{name: "per namespace limit", config: "maxNoOfPodsToEvictPerNamespace: 1\nprofiles:\n- name: p\n  plugins: {balance: {enabled: [{name: LowNodeLoad}]}}\n",
			want: []string{"p/a1", "p/a3"}},
		{name: "total limit", config: "maxNoOfPodsToEvictTotal: 3\nprofiles:\n- name: p\n  plugins: {balance: {enabled: [{name: LowNodeLoad}]}}\n",
			want: []string{"p/a1", "p/a2", "p/a3"}},
		{name: "profile node selector", config: "profiles:\n- name: p\n  nodeSelector: {matchLabels: {pool: b}}\n  plugins: {balance: {enabled: [{name: LowNodeLoad}]}}\n",
			want: []string{"p/b1"}},
		{name: "no balance plugin", config: "profiles:\n- name: p\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := readyNode("b")
			b.Labels = map[string]string{"pool": "b"}
			d, ev, err := newTestDescheduler(t, decode(t, tt.config), append(pods(), readyNode("a"), b, notReady)...)
			if err != nil {
				t.Fatal(err)
			}
			d.RunOnce(context.Background())
			if diff := cmp.Diff(tt.want, ev.evicted); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
			// The limits are per round.
			ev.evicted = nil
			d.RunOnce(context.Background())
			if diff := cmp.Diff(tt.want, ev.evicted); diff != "" {
				t.Errorf("second round evicted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	c := decode(t, "profiles:\n- name: p\n  plugins: {balance: {enabled: [{name: LowNodeLoad}]}, evict: {disabled: [{name: '*'}]}}\n")
	if _, _, err := newTestDescheduler(t, c); err == nil || !strings.Contains(err.Error(), "no evict plugin") {
		t.Errorf("error %v, want one saying there is no evict plugin", err)
	}
	c = decode(t, "profiles:\n- name: p\n")
	c.Profiles[0].Plugins.Deschedule.Enabled = []config.Plugin{{Name: "RemoveDuplicates"}}
	if _, _, err := newTestDescheduler(t, c); err == nil || !strings.Contains(err.Error(), "plugin RemoveDuplicates is not supported") {
		t.Errorf("error %v, want one naming the plugin", err)
	}
	c = decode(t, "profiles:\n- name: p\n")
	c.Profiles[0].Plugins.Deschedule.Enabled = []config.Plugin{{Name: config.MigrationControllerName}}
	if _, _, err := newTestDescheduler(t, c); err == nil || !strings.Contains(err.Error(), "is not a deschedule plugin") {
		t.Errorf("error %v, want one saying it is not a deschedule plugin", err)
	}
}
