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

package numahint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// only fits the NUMA node sets that are exactly ids.
type only struct{ ids []int }

func (o only) Name() string { return "only" }

func (o only) FitsNUMA(_ string, numa []int) bool { return cmp.Equal(o.ids, numa) }

func TestState(t *testing.T) {
	cs := framework.NewCycleState()
	if Get(cs) != nil {
		t.Fatal("a state before any plugin made one")
	}
	if ok, _ := Get(cs).Fits("n", []int{0}); !ok {
		t.Error("no state refused a NUMA node set")
	}
	s := Of(cs)
	if Of(cs) != s || Get(cs) != s {
		t.Fatal("Of and Get return another state")
	}
	if s.HasProviders() {
		t.Error("providers before any was added")
	}
	s.Add(only{ids: []int{1}})
	if ok, by := s.Fits("n", []int{0}); ok || by != "only" {
		t.Errorf("Fits([0]) = %v, %q; want false, only", ok, by)
	}
	if ok, _ := s.Fits("n", []int{1}); !ok {
		t.Error("Fits([1]) = false")
	}
	s.Choose("n", []int{1})
	if got, ok := s.Chosen("n"); !ok || !cmp.Equal(got, []int{1}) {
		t.Errorf("Chosen = %v, %v; want [1]", got, ok)
	}
	s.Choose("n", nil)
	if _, ok := s.Chosen("n"); ok {
		t.Error("a choice left after Choose(nil)")
	}
}
