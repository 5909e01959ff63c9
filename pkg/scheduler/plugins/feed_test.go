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
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// recorder is a state that records what a Feed passes on.
type recorder struct{ got []string }

func (r *recorder) update(nm *slov1alpha1.NodeMetric) {
	r.got = append(r.got, "update "+nm.Name+"@"+nm.ResourceVersion)
}

func (r *recorder) remove(nm *slov1alpha1.NodeMetric) {
	r.got = append(r.got, "remove "+nm.Name+"@"+nm.ResourceVersion)
}

func nodeMetric(name, rv string) *slov1alpha1.NodeMetric {
	return &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
}

func unstructuredOf(t testing.TB, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestFeedOrder: whatever order two informers deliver versions in, the state sees each version once and never
// an older one after a newer.
func TestFeedOrder(t *testing.T) {
	type event struct {
		deleted bool
		obj     any
	}
	update := func(obj any) event { return event{obj: obj} }
	del := func(obj any) event { return event{deleted: true, obj: obj} }
	tests := map[string]struct {
		events []event
		want   []string
	}{
		"added":                            {events: []event{update(nodeMetric("n1", "10"))}, want: []string{"update n1@10"}},
		"updated":                          {events: []event{update(nodeMetric("n1", "10")), update(nodeMetric("n1", "11"))}, want: []string{"update n1@10", "update n1@11"}},
		"older version arrives late":       {events: []event{update(nodeMetric("n1", "11")), update(nodeMetric("n1", "10"))}, want: []string{"update n1@11"}},
		"same version from both informers": {events: []event{update(nodeMetric("n1", "11")), update(unstructuredOf(t, nodeMetric("n1", "11")))}, want: []string{"update n1@11"}},
		"deleted at its last version":      {events: []event{update(nodeMetric("n1", "10")), del(nodeMetric("n1", "10"))}, want: []string{"update n1@10", "remove n1@10"}},
		"deleted twice":                    {events: []event{del(nodeMetric("n1", "10")), del(nodeMetric("n1", "10"))}, want: []string{"remove n1@10"}},
		"deleted, then an older update":    {events: []event{update(nodeMetric("n1", "10")), del(nodeMetric("n1", "12")), update(nodeMetric("n1", "11"))}, want: []string{"update n1@10", "remove n1@12"}},
		"re-created after deletion":        {events: []event{del(nodeMetric("n1", "12")), update(nodeMetric("n1", "13"))}, want: []string{"remove n1@12", "update n1@13"}},
		"older deletion arrives late":      {events: []event{update(nodeMetric("n1", "13")), del(nodeMetric("n1", "12"))}, want: []string{"update n1@13"}},
		"deletion tombstone":               {events: []event{del(toolscache.DeletedFinalStateUnknown{Key: "n1", Obj: unstructuredOf(t, nodeMetric("n1", "3"))})}, want: []string{"remove n1@3"}},
		"objects apart":                    {events: []event{update(nodeMetric("n1", "10")), update(nodeMetric("n2", "9"))}, want: []string{"update n1@10", "update n2@9"}},
		"versions that are not numbers: every event passes": {
			events: []event{update(nodeMetric("n1", "")), update(nodeMetric("n1", "")), update(nodeMetric("n1", "x"))},
			want:   []string{"update n1@", "update n1@", "update n1@x"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &recorder{}
			f := NewFeed(r.update, r.remove)
			for _, e := range tc.events {
				var err error
				if e.deleted {
					err = f.Event(e.obj, nil)
				} else {
					err = f.Event(nil, e.obj)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, r.got); diff != "" {
				t.Errorf("passed on (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestFeedConvertsOnce: an unstructured event's object is converted once, however many pods a hint runs for.
func TestFeedConvertsOnce(t *testing.T) {
	r := &recorder{}
	f := NewFeed(r.update, r.remove)
	oldObj, newObj := unstructuredOf(t, nodeMetric("n1", "1")), unstructuredOf(t, nodeMetric("n1", "2"))
	var first *slov1alpha1.NodeMetric
	for i := range 3 {
		if err := f.Event(oldObj, newObj); err != nil {
			t.Fatal(err)
		}
		o, err := f.Object(oldObj)
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.Object(newObj)
		if err != nil {
			t.Fatal(err)
		}
		if o.ResourceVersion != "1" || n.ResourceVersion != "2" {
			t.Fatalf("Object gave versions %s and %s, want 1 and 2", o.ResourceVersion, n.ResourceVersion)
		}
		if i == 0 {
			first = n
		} else if n != first {
			t.Errorf("pod %d: the new object was converted again", i)
		}
	}
	if diff := cmp.Diff([]string{"update n1@2"}, r.got); diff != "" {
		t.Errorf("passed on (-want,+got):\n%s", diff)
	}
	typed := nodeMetric("n2", "5")
	if got, err := f.Object(typed); err != nil || got != typed {
		t.Errorf("Object(typed) = %p, %v; want the object itself", got, err)
	}
}

func TestFeedRejectsOtherKinds(t *testing.T) {
	f := NewFeed[slov1alpha1.NodeMetric](nil, nil)
	tests := map[string]any{
		"not an object":       "n1",
		"unstructured, wrong": &unstructured.Unstructured{Object: map[string]any{"kind": "NodeMetric", "metadata": map[string]any{"name": "n1"}, "status": "hot"}},
	}
	for name, obj := range tests {
		t.Run(name, func(t *testing.T) {
			if err := f.Update(obj); err == nil {
				t.Errorf("Update(%v) succeeded", obj)
			}
		})
	}
}

// TestFeedForgetsOldDeletions: the versions of deleted objects are kept for the most recent maxDeleted
// deletions only.
func TestFeedForgetsOldDeletions(t *testing.T) {
	f := NewFeed[slov1alpha1.NodeMetric](nil, nil)
	for i := range maxDeleted + 10 {
		if err := f.Delete(nodeMetric(fmt.Sprintf("n%d", i), "5")); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(f.versions); got != maxDeleted {
		t.Errorf("versions kept = %d, want %d", got, maxDeleted)
	}
	if _, ok := f.versions["/n0"]; ok {
		t.Error("the oldest deletion is still remembered")
	}
	// A deleted key that came back is live and stays.
	if err := f.Update(nodeMetric("n20", "6")); err != nil {
		t.Fatal(err)
	}
	for i := range maxDeleted {
		if err := f.Delete(nodeMetric(fmt.Sprintf("m%d", i), "5")); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := f.versions["/n20"]; !ok || v.deleted {
		t.Errorf("the re-created object's version = %+v, %v; want it kept, live", v, ok)
	}
}

func TestFeedHandler(t *testing.T) {
	r := &recorder{}
	f := NewFeed(r.update, r.remove)
	h := f.Handler(testLogger(t))
	h.OnAdd(nodeMetric("n1", "1"), true)
	h.OnUpdate(nodeMetric("n1", "1"), nodeMetric("n1", "2"))
	h.OnUpdate(nodeMetric("n1", "2"), "not a NodeMetric")
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "n1", Obj: nodeMetric("n1", "2")})
	if diff := cmp.Diff([]string{"update n1@1", "update n1@2", "remove n1@2"}, r.got); diff != "" {
		t.Errorf("passed on (-want,+got):\n%s", diff)
	}
}
