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

package plugins

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

func testLogger(t testing.TB) klog.Logger {
	logger, _ := ktesting.NewTestContext(t)
	return logger
}

func TestEventResources(t *testing.T) {
	got := []fwk.EventResource{NodeMetricEvents, ElasticQuotaEvents, PodGroupEvents, ReservationEvents}
	want := []fwk.EventResource{
		"nodemetrics.v1alpha1.slo.koordinator.sh",
		"elasticquotas.v1alpha1.scheduling.sigs.k8s.io",
		"podgroups.v1alpha1.scheduling.sigs.k8s.io",
		"reservations.v1alpha1.scheduling.koordinator.sh",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event resources (-want,+got):\n%s", diff)
	}
}

// plugin is a plugin built by the factory under test.
type plugin struct{ args *config.CoschedulingArgs }

func (*plugin) Name() string { return "Test" }

func TestFactory(t *testing.T) {
	validate := func(path *field.Path, args *config.CoschedulingArgs) field.ErrorList {
		if args.ControllerWorkers < 1 {
			return field.ErrorList{field.Invalid(path.Child("controllerWorkers"), args.ControllerWorkers, "must be at least 1")}
		}
		return nil
	}
	built := 0
	factory := Factory("Test", validate, func(_ context.Context, args *config.CoschedulingArgs, _ fwk.Handle) (*plugin, error) {
		built++
		if args.ControllerWorkers > 10 {
			return nil, errors.New("too many workers")
		}
		return &plugin{args: args}, nil
	})
	tests := map[string]struct {
		args    runtime.Object
		wantErr string
	}{
		"valid":             {args: &config.CoschedulingArgs{ControllerWorkers: 1}},
		"wrong type":        {args: &config.ReservationArgs{}, wantErr: "want args of type CoschedulingArgs, got *config.ReservationArgs"},
		"no args":           {wantErr: "want args of type CoschedulingArgs, got <nil>"},
		"invalid":           {args: &config.CoschedulingArgs{}, wantErr: "pluginConfig[Test].args.controllerWorkers: Invalid value: 0: must be at least 1"},
		"constructor fails": {args: &config.CoschedulingArgs{ControllerWorkers: 11}, wantErr: "too many workers"},
	}
	_, ctx := ktesting.NewTestContext(t)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			built = 0
			pl, err := factory(ctx, tc.args, fh)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				if pl != nil {
					t.Errorf("plugin = %#v, want none", pl)
				}
				if strings.Contains(tc.wantErr, "want args") || strings.Contains(tc.wantErr, "Invalid") {
					if built != 0 {
						t.Error("the constructor ran on args that were not valid")
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pl.(*plugin).args != tc.args {
				t.Error("the plugin did not get the args")
			}
		})
	}
}

func TestObjectOf(t *testing.T) {
	pod := &corev1.Pod{}
	tests := map[string]struct {
		obj  any
		want *corev1.Pod
	}{
		"pod":             {obj: pod, want: pod},
		"tombstone":       {obj: toolscache.DeletedFinalStateUnknown{Key: "p", Obj: pod}, want: pod},
		"another kind":    {obj: &corev1.Node{}},
		"tombstone, node": {obj: toolscache.DeletedFinalStateUnknown{Key: "n", Obj: &corev1.Node{}}},
		"nil":             {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PodOf(tc.obj); got != tc.want {
				t.Errorf("PodOf = %p, want %p", got, tc.want)
			}
		})
	}
}

func TestNodesOf(t *testing.T) {
	a, b := &corev1.Node{}, &corev1.Node{}
	if old, n, err := NodesOf(nil, a); err != nil || old != nil || n != a {
		t.Errorf("NodesOf(add) = %p, %p, %v", old, n, err)
	}
	if old, n, err := NodesOf(a, b); err != nil || old != a || n != b {
		t.Errorf("NodesOf(update) = %p, %p, %v", old, n, err)
	}
	if _, _, err := NodesOf(a, &corev1.Pod{}); err == nil || err.Error() != "want a node, got *v1.Pod" {
		t.Errorf("NodesOf(pod) error = %v", err)
	}
	if _, _, err := NodesOf("x", b); err == nil || err.Error() != "want a node, got string" {
		t.Errorf("NodesOf(string, node) error = %v", err)
	}
}

func TestHandlers(t *testing.T) {
	var changed, deleted []string
	h := Handlers(
		func(p *corev1.Pod) { changed = append(changed, p.Name) },
		func(p *corev1.Pod) { deleted = append(deleted, p.Name) },
	)
	pod := func(name string) *corev1.Pod {
		p := &corev1.Pod{}
		p.Name = name
		return p
	}
	h.OnAdd(pod("a"), false)
	h.OnUpdate(pod("a"), pod("b"))
	h.OnAdd(&corev1.Node{}, false)
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Obj: pod("c")})
	h.OnDelete(&corev1.Node{})
	if diff := cmp.Diff([]string{"a", "b"}, changed); diff != "" {
		t.Errorf("changed (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c"}, deleted); diff != "" {
		t.Errorf("deleted (-want,+got):\n%s", diff)
	}
	onlyDeletes := Handlers[corev1.Pod](nil, func(*corev1.Pod) {})
	if onlyDeletes.AddFunc != nil || onlyDeletes.UpdateFunc != nil {
		t.Error("handlers for a nil changed function")
	}
}
