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
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
)

// TestEstimatedUsageOfAssignedPods: a pod bound to the node (estimated at 850m cpu) adds
// max(0, estimate - reported) while its NodeMetric, updated 10s ago every 60s, may miss part of it.
func TestEstimatedUsageOfAssignedPods(t *testing.T) {
	reported := func(cpu string) []slov1alpha1.PodMetricInfo {
		return []slov1alpha1.PodMetricInfo{podUsage("assigned", extension.PriorityProd, rl("cpu", cpu))}
	}
	initializedAt := func(p *corev1.Pod, at time.Time) *corev1.Pod {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: at},
		})
		return p
	}
	assigned := func(age time.Duration) *corev1.Pod {
		return bound(prodPod("assigned", rl("cpu", "1")), "n1", now.Add(-age))
	}
	tests := map[string]struct {
		args     func(*configv1.LoadAwareSchedulingArgs)
		pod      *corev1.Pod
		reported []slov1alpha1.PodMetricInfo
		prodOnly bool
		want     int64
	}{
		"assigned after the report, not reported": {
			pod:  assigned(5 * time.Second),
			want: 850,
		},
		"assigned after the report, partly reported": {
			pod:      assigned(5 * time.Second),
			reported: reported("300m"),
			want:     550,
		},
		"reported above the estimate adds nothing": {
			pod:      assigned(5 * time.Second),
			reported: reported("2"),
			want:     0,
		},
		"assigned less than a report interval before the report": {
			pod:      assigned(30 * time.Second),
			reported: reported("300m"),
			want:     550,
		},
		"assigned long before the report and reported": {
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     0,
		},
		"assigned long before the report, not reported": {
			pod:  assigned(10 * time.Minute),
			want: 850,
		},
		"estimatedSecondsAfterPodScheduled keeps it estimated": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](900) },
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     550,
		},
		"estimatedSecondsAfterPodScheduled has run out": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](300) },
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     0,
		},
		"estimatedSecondsAfterInitialized: not initialized yet": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterInitialized = ptr.To[int64](60) },
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     550,
		},
		"estimatedSecondsAfterInitialized: initialized recently": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterInitialized = ptr.To[int64](60) },
			pod:      initializedAt(assigned(10*time.Minute), now.Add(-30*time.Second)),
			reported: reported("300m"),
			want:     550,
		},
		"estimatedSecondsAfterInitialized: initialized long ago": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterInitialized = ptr.To[int64](60) },
			pod:      initializedAt(assigned(10*time.Minute), now.Add(-5*time.Minute)),
			reported: reported("300m"),
			want:     0,
		},
		"pod annotation sets the estimation seconds when allowed": {
			args: func(a *configv1.LoadAwareSchedulingArgs) { a.AllowCustomizeEstimation = true },
			pod: func() *corev1.Pod {
				p := assigned(10 * time.Minute)
				p.Annotations = map[string]string{extension.AnnotationCustomEstimatedSecondsAfterPodScheduled: "900"}
				return p
			}(),
			reported: reported("300m"),
			want:     550,
		},
		"pod annotation is ignored unless allowed": {
			pod: func() *corev1.Pod {
				p := assigned(10 * time.Minute)
				p.Annotations = map[string]string{extension.AnnotationCustomEstimatedSecondsAfterPodScheduled: "900"}
				return p
			}(),
			reported: reported("300m"),
			want:     0,
		},
		"pod annotation sets the scaling factors when allowed": {
			args: func(a *configv1.LoadAwareSchedulingArgs) { a.AllowCustomizeEstimation = true },
			pod: func() *corev1.Pod {
				p := assigned(5 * time.Second)
				p.Annotations = map[string]string{extension.AnnotationCustomEstimatedScalingFactors: `{"cpu":50}`}
				return p
			}(),
			want: 500,
		},
		"malformed scaling factors fall back to the args": {
			args: func(a *configv1.LoadAwareSchedulingArgs) { a.AllowCustomizeEstimation = true },
			pod: func() *corev1.Pod {
				p := assigned(5 * time.Second)
				p.Annotations = map[string]string{extension.AnnotationCustomEstimatedScalingFactors: `{"cpu":500}`}
				return p
			}(),
			want: 850,
		},
		"prod usage counts prod pods only": {
			pod:      bound(batchPod("assigned", rl(string(extension.BatchCPU), "1000")), "n1", now.Add(-5*time.Second)),
			prodOnly: true,
			want:     0,
		},
		"terminated pods do not count": {
			pod: func() *corev1.Pod {
				p := assigned(5 * time.Second)
				p.Status.Phase = corev1.PodSucceeded
				return p
			}(),
			want: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			nm := withPods(metric("n1", 10*time.Second, rl("cpu", "0")), tc.reported...)
			f := newFixture(t, argsWith(t, tc.args), []*slov1alpha1.NodeMetric{nm}, []*corev1.Pod{tc.pod})
			n := f.plugin.nodes.Get("n1")
			got := n.AssignedUsage(n.View(), tc.prodOnly, f.clock.Now())
			if diff := cmp.Diff(tc.want, got[0]); diff != "" {
				t.Errorf("estimated cpu usage (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestAssignCacheFollowsPods: bound pods enter the assign cache, deleted and terminated ones leave it.
func TestAssignCacheFollowsPods(t *testing.T) {
	p1 := bound(pod("p1", rl("cpu", "1")), "n1", now)
	p2 := bound(pod("p2", rl("cpu", "1")), "n1", now)
	pending := pod("pending", rl("cpu", "1"))
	// Placed by Reserve but never bound, as a Reservation's reserve pod is, then deleted.
	placed := pod("placed", rl("cpu", "1"))
	f := newFixture(t, argsWith(t, nil), nil, []*corev1.Pod{p1, p2, pending, placed})
	if got := f.plugin.nodes.Len("n1"); got != 2 {
		t.Fatalf("assigned pods on n1 = %d, want 2", got)
	}
	f.reserve(t, placed, "n3")
	pods := f.kube.CoreV1().Pods("default")
	if err := pods.Delete(f.ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	done := p2.DeepCopy()
	done.Status.Phase = corev1.PodFailed
	if _, err := pods.UpdateStatus(f.ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nowBound := bound(pending, "n2", now)
	if _, err := pods.Update(f.ctx, nowBound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(f.ctx, "placed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		return f.plugin.nodes.Len("n1") == 0 && f.plugin.nodes.Len("n2") == 1 && f.plugin.nodes.Len("n3") == 0
	})
}

// TestAssignedUsageMemo: the memoized usage of assigned pods follows the pods, the NodeMetric and the time.
func TestAssignedUsageMemo(t *testing.T) {
	args := argsWith(t, func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](400) })
	reported := withPods(metric("n1", 10*time.Second, rl("cpu", "0")), podUsage("assigned", extension.PriorityProd, rl("cpu", "300m")))
	// Assigned 5 minutes ago, estimated for 400s: for 100s more.
	f := newFixture(t, args, []*slov1alpha1.NodeMetric{reported}, []*corev1.Pod{bound(prodPod("assigned", rl("cpu", "1")), "n1", now.Add(-5*time.Minute))})
	cpuAt := func() int64 {
		n := f.plugin.nodes.Get("n1")
		return n.AssignedUsage(n.View(), false, f.clock.Now())[0]
	}
	if got := cpuAt(); got != 550 {
		t.Fatalf("assigned cpu while estimated = %d, want 550", got)
	}
	f.clock.Step(99 * time.Second)
	if got := cpuAt(); got != 550 {
		t.Errorf("assigned cpu 1s before the estimation ends = %d, want 550", got)
	}
	f.clock.Step(time.Second)
	if got := cpuAt(); got != 0 {
		t.Errorf("assigned cpu once the estimation ended = %d, want 0", got)
	}
	f.reserve(t, prodPod("new", rl("cpu", "1")), "n1")
	if got := cpuAt(); got != 850 {
		t.Errorf("assigned cpu after a reservation = %d, want 850", got)
	}
	// A new report that includes the new pod, a minute after it was placed.
	newReport := withPods(metric("n1", -time.Hour, rl("cpu", "0")),
		podUsage("assigned", extension.PriorityProd, rl("cpu", "300m")), podUsage("new", extension.PriorityProd, rl("cpu", "1")))
	newReport.Status.UpdateTime = &metav1.Time{Time: f.clock.Now().Add(2 * time.Minute)}
	f.plugin.nodes.UpdateNodeMetric(newReport)
	if got := cpuAt(); got != 0 {
		t.Errorf("assigned cpu after a report that covers the pods = %d, want 0", got)
	}
}
