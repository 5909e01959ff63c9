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
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/core"
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
	c := core.NewCache(core.Defaults{WaitTime: time.Minute, MatchPolicy: extension.GangMatchPolicyOnceSatisfied}, clock.RealClock{})
	for _, p := range pods {
		c.AddOrUpdatePod(p)
	}
	return &Plugin{cache: c}
}

func TestLess(t *testing.T) {
	early, late := now.Add(-time.Minute), now
	// The gang "old" was created before the gang "new"; a member of "new" queued early still sorts after.
	oldMember := gangPod("o1", "old", "2")
	oldMember.CreationTimestamp.Time = now.Add(-time.Hour)
	newMember := gangPod("n1", "new", "2")
	tests := map[string]struct {
		a, b     *framework.QueuedPodInfo
		want     bool
		wantBack bool
	}{
		"higher priority first": {
			a: queued(t, withPriority(plainPod("a"), 10, ""), late), b: queued(t, withPriority(plainPod("b"), 5, ""), early),
			want: true,
		},
		"higher sub-priority first": {
			a: queued(t, withPriority(plainPod("a"), 5, "9"), late), b: queued(t, withPriority(plainPod("b"), 5, "1"), early),
			want: true,
		},
		"earlier queue time first for pods in no gang": {
			a: queued(t, plainPod("b"), early), b: queued(t, plainPod("a"), late),
			want: true,
		},
		"name breaks ties of pods in no gang": {
			a: queued(t, plainPod("a"), late), b: queued(t, plainPod("b"), late),
			want: true,
		},
		"older gang first whatever the queue time": {
			a: queued(t, gangPod("o2", "old", "2"), late), b: queued(t, gangPod("n2", "new", "2"), early),
			want: true,
		},
		"members of one gang are equivalent": {
			a: queued(t, gangPod("o2", "old", "2"), late), b: queued(t, gangPod("o3", "old", "2"), early),
		},
		"gang name breaks ties of gangs of the same time": {
			a: queued(t, gangPod("x", "alpha", "2"), late), b: queued(t, gangPod("y", "beta", "2"), late),
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
	old := gangPod("o1", "old", "2")
	old.CreationTimestamp.Time = now.Add(-time.Hour)
	p := sortPlugin(old, gangPod("n1", "new", "2"))
	var entities []fwk.QueuedEntityInfo
	for i, at := range []time.Time{now.Add(-2 * time.Hour), now.Add(-time.Hour), now} {
		for _, prio := range []int32{0, 10} {
			entities = append(entities,
				queued(t, withPriority(plainPod("plain"+string(rune('a'+i))), prio, ""), at),
				queued(t, withPriority(gangPod("o"+string(rune('a'+i)), "old", "2"), prio, ""), at),
				queued(t, withPriority(gangPod("n"+string(rune('a'+i)), "new", "2"), prio, ""), at),
				queued(t, withPriority(gangPod("u"+string(rune('a'+i)), "unknown", "2"), prio, "3"), at),
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
