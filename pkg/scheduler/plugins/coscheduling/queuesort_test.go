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

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// queued wraps pod as kube-scheduler's queue does, queued at the given time.
func queued(t testing.TB, pod *corev1.Pod, at time.Time) *framework.QueuedPodInfo {
	t.Helper()
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		t.Fatalf("pod info: %v", err)
	}
	return &framework.QueuedPodInfo{PodInfo: pi, QueueingParams: framework.QueueingParams{Timestamp: at}}
}

// withPriority sets the priority of pod and, when sub is not empty, its sub-priority label.
func withPriority(pod *corev1.Pod, priority int32, sub string) *corev1.Pod {
	pod.Spec.Priority = ptr.To(priority)
	if sub != "" {
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[extension.LabelPodPriority] = sub
	}
	return pod
}

// sortPlugin returns a plugin for Less whose cache knows the pods.
func sortPlugin(pods ...*corev1.Pod) *Plugin {
	c := cache.NewCache(cache.Defaults{WaitTime: time.Minute, MatchPolicy: extension.GangMatchPolicyOnceSatisfied}, clock.RealClock{})
	for _, p := range pods {
		c.AddOrUpdatePod(p)
	}
	return &Plugin{cache: c, podGroups: plugins.NewFeed(c.AddOrUpdatePodGroup, c.DeletePodGroup)}
}

func TestLess(t *testing.T) {
	early, late := utiltesting.Now.Add(-time.Minute), utiltesting.Now
	// The gang "old" was created before the gang "new"; a member of "new" queued early still sorts after.
	oldMember := utiltesting.MakePod("o1").Gang("old", "2").Obj()
	oldMember.CreationTimestamp.Time = utiltesting.Now.Add(-time.Hour)
	newMember := utiltesting.MakePod("n1").Gang("new", "2").Obj()
	tests := map[string]struct {
		a, b     *framework.QueuedPodInfo
		want     bool
		wantBack bool
	}{
		"higher priority first": {
			a: queued(t, withPriority(utiltesting.MakePod("a").Obj(), 10, ""), late), b: queued(t, withPriority(utiltesting.MakePod("b").Obj(), 5, ""), early),
			want: true,
		},
		"higher sub-priority first": {
			a: queued(t, withPriority(utiltesting.MakePod("a").Obj(), 5, "9"), late), b: queued(t, withPriority(utiltesting.MakePod("b").Obj(), 5, "1"), early),
			want: true,
		},
		"earlier queue time first for pods in no gang": {
			a: queued(t, utiltesting.MakePod("b").Obj(), early), b: queued(t, utiltesting.MakePod("a").Obj(), late),
			want: true,
		},
		"name breaks ties of pods in no gang": {
			a: queued(t, utiltesting.MakePod("a").Obj(), late), b: queued(t, utiltesting.MakePod("b").Obj(), late),
			want: true,
		},
		"older gang first whatever the queue time": {
			a: queued(t, utiltesting.MakePod("o2").Gang("old", "2").Obj(), late), b: queued(t, utiltesting.MakePod("n2").Gang("new", "2").Obj(), early),
			want: true,
		},
		"members of one gang are equivalent": {
			a: queued(t, utiltesting.MakePod("o2").Gang("old", "2").Obj(), late), b: queued(t, utiltesting.MakePod("o3").Gang("old", "2").Obj(), early),
		},
		"gang name breaks ties of gangs of the same time": {
			a: queued(t, utiltesting.MakePod("x").Gang("alpha", "2").Obj(), late), b: queued(t, utiltesting.MakePod("y").Gang("beta", "2").Obj(), late),
			want: true,
		},
	}
	p := sortPlugin(oldMember, newMember)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := p.Less(tc.a, tc.b); got != tc.want {
				t.Errorf("Less(a, b) = %v, want %v", got, tc.want)
			}
			if got := p.Less(tc.b, tc.a); got != tc.wantBack {
				t.Errorf("Less(b, a) = %v, want %v", got, tc.wantBack)
			}
		})
	}
}

// TestLessIsStrictWeakOrder checks irreflexivity, asymmetry, transitivity and transitivity of
// incomparability over a mix of gang members and other pods.
func TestLessIsStrictWeakOrder(t *testing.T) {
	old := utiltesting.MakePod("o1").Gang("old", "2").Obj()
	old.CreationTimestamp.Time = utiltesting.Now.Add(-time.Hour)
	p := sortPlugin(old, utiltesting.MakePod("n1").Gang("new", "2").Obj())
	var entities []fwk.QueuedEntityInfo
	for i, at := range []time.Time{utiltesting.Now.Add(-2 * time.Hour), utiltesting.Now.Add(-time.Hour), utiltesting.Now} {
		for _, prio := range []int32{0, 10} {
			entities = append(entities,
				queued(t, withPriority(utiltesting.MakePod("plain"+string(rune('a'+i))).Obj(), prio, ""), at),
				queued(t, withPriority(utiltesting.MakePod("o"+string(rune('a'+i))).Gang("old", "2").Obj(), prio, ""), at),
				queued(t, withPriority(utiltesting.MakePod("n"+string(rune('a'+i))).Gang("new", "2").Obj(), prio, ""), at),
				queued(t, withPriority(utiltesting.MakePod("u"+string(rune('a'+i))).Gang("unknown", "2").Obj(), prio, "3"), at),
			)
		}
	}
	less := p.Less
	equiv := func(a, b fwk.QueuedEntityInfo) bool { return !less(a, b) && !less(b, a) }
	for _, a := range entities {
		if less(a, a) {
			t.Fatalf("Less is not irreflexive")
		}
		for _, b := range entities {
			if less(a, b) && less(b, a) {
				t.Fatalf("Less is not asymmetric")
			}
			for _, c := range entities {
				if less(a, b) && less(b, c) && !less(a, c) {
					t.Fatalf("Less is not transitive")
				}
				if equiv(a, b) && equiv(b, c) && !equiv(a, c) {
					t.Fatalf("incomparability is not transitive")
				}
			}
		}
	}
}
