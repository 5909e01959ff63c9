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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/koord-dev/koord/apis/configuration"
)

// pending returns the events waiting in ch without blocking.
func pending(ch <-chan event.GenericEvent) []string {
	var out []string
	for {
		select {
		case e := <-ch:
			out = append(out, e.Object.GetResourceVersion())
		default:
			return out
		}
	}
}

func snapshotWith(rv string, enable bool) *Snapshot {
	return &Snapshot{ResourceVersion: rv, SLOCfg: configuration.SLOCfg{
		Colocation: &configuration.ColocationCfg{ColocationStrategy: configuration.ColocationStrategy{Enable: ptr.To(enable)}},
	}}
}

func TestStore(t *testing.T) {
	type install struct {
		snap        *Snapshot
		wantChanged bool
	}
	tests := map[string]struct {
		installs    []install
		wantPending []string
		wantRV      string
		wantSynced  bool
	}{
		"new store: defaults, not synced, no events": {
			wantSynced: false,
		},
		"first install notifies even with the default configuration": {
			installs:    []install{{snap: DefaultSnapshot(), wantChanged: true}},
			wantPending: []string{""},
			wantSynced:  true,
		},
		"a new resourceVersion with the same configuration does not notify": {
			installs: []install{
				{snap: snapshotWith("1", true), wantChanged: true},
				{snap: snapshotWith("2", true), wantChanged: false},
			},
			wantPending: []string{"1"},
			wantRV:      "2",
			wantSynced:  true,
		},
		"a full buffer drops events, one stays pending": {
			installs: []install{
				{snap: snapshotWith("1", true), wantChanged: true},
				{snap: snapshotWith("2", false), wantChanged: true},
				{snap: snapshotWith("3", true), wantChanged: true},
			},
			wantPending: []string{"1"},
			wantRV:      "3",
			wantSynced:  true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewStore()
			a, b := s.Subscribe(), s.Subscribe()
			for i, in := range tc.installs {
				cm := configMap(in.snap.ResourceVersion, nil)
				if got := s.Install(in.snap, cm); got != in.wantChanged {
					t.Errorf("Install(#%d) = %v, want %v", i, got, in.wantChanged)
				}
			}
			for _, ch := range []<-chan event.GenericEvent{a, b} {
				if diff := cmp.Diff(tc.wantPending, pending(ch)); diff != "" {
					t.Errorf("pending events (-want,+got):\n%s", diff)
				}
			}
			if got := s.Get(); got == nil || got.ResourceVersion != tc.wantRV {
				t.Errorf("Get() = %+v, want resourceVersion %q", got, tc.wantRV)
			}
			if got := s.Synced(); got != tc.wantSynced {
				t.Errorf("Synced() = %v, want %v", got, tc.wantSynced)
			}
		})
	}
}

// TestStoreConcurrentReads runs readers against a writer; the race detector checks the store.
func TestStoreConcurrentReads(t *testing.T) {
	s := NewStore()
	ch := s.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			s.Install(snapshotWith("x", i%2 == 0), configMap("x", nil))
		}
	}()
	for range 1000 {
		if s.Get() == nil {
			t.Fatal("Get() returned nil")
		}
	}
	<-done
	if len(pending(ch)) != 1 {
		t.Errorf("want exactly one pending event after many installs")
	}
}

func TestEnqueueAllNodes(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
	).Build()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	EnqueueAllNodes(c).Generic(t.Context(), event.GenericEvent{Object: configMap("1", nil)}, q)
	var got []string
	for q.Len() > 0 {
		item, _ := q.Get()
		got = append(got, item.Name)
		q.Done(item)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Errorf("enqueued (-want,+got):\n%s", diff)
	}
}
