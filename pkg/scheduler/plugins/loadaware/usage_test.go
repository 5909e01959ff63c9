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
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// TestEstimatedUsageOfAssignedPods: a pod bound to the node (estimated at 850m cpu) adds
// max(0, estimate - reported) while its NodeMetric, updated 10s ago every 60s, may miss part of it.
func TestEstimatedUsageOfAssignedPods(t *testing.T) {
	reported := func(cpu string) []slov1alpha1.PodMetricInfo {
		return utiltesting.MakeNodeMetric("n1").Pod("default", "assigned", extension.PriorityProd, utiltesting.Resources("cpu", cpu)).Status.PodsMetric
	}
	reportedAs := func(name string, pc extension.PriorityClass, cpu string) []slov1alpha1.PodMetricInfo {
		return utiltesting.MakeNodeMetric("n1").Pod("default", name, pc, utiltesting.Resources("cpu", cpu)).Status.PodsMetric
	}
	initializedAt := func(p *corev1.Pod, at time.Time) *corev1.Pod {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: at},
		})
		return p
	}
	assigned := func(age time.Duration) *corev1.Pod {
		return utiltesting.MakePod("assigned").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Scheduled("n1", utiltesting.Now.Add(-age)).Obj()
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
		// The NodeMetric is 10s old: a deadline 5s ago is after it, and the pod is still estimated until a
		// NodeMetric taken after the deadline arrives.
		"estimated until a NodeMetric after its deadline": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](595) },
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     550,
		},
		"estimatedSecondsAfterInitialized: not initialized yet, no deadline": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterInitialized = ptr.To[int64](60) },
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     0,
		},
		"estimatedSecondsAfterInitialized: not initialized, the scheduled deadline holds": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.EstimatedSecondsAfterInitialized = ptr.To[int64](60)
				a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](900)
			},
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			want:     550,
		},
		"estimatedSecondsAfterInitialized: once initialized, its deadline replaces the scheduled one": {
			args: func(a *configv1.LoadAwareSchedulingArgs) {
				a.EstimatedSecondsAfterInitialized = ptr.To[int64](60)
				a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](900)
			},
			pod:      initializedAt(assigned(10*time.Minute), utiltesting.Now.Add(-5*time.Minute)),
			reported: reported("300m"),
			want:     0,
		},
		"estimatedSecondsAfterInitialized: initialized recently": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterInitialized = ptr.To[int64](60) },
			pod:      initializedAt(assigned(10*time.Minute), utiltesting.Now.Add(-30*time.Second)),
			reported: reported("300m"),
			want:     550,
		},
		"estimatedSecondsAfterInitialized: initialized long ago": {
			args:     func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterInitialized = ptr.To[int64](60) },
			pod:      initializedAt(assigned(10*time.Minute), utiltesting.Now.Add(-5*time.Minute)),
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
			pod:      utiltesting.MakePod("assigned").Req(utiltesting.Resources(string(extension.BatchCPU), "1000")).Priority(extension.PriorityBatchValueDefault).QoS(extension.QoSBE).Scheduled("n1", utiltesting.Now.Add(-5*time.Second)).Obj(),
			reported: reportedAs("assigned", extension.PriorityProd, "300m"),
			prodOnly: true,
			want:     0,
		},
		"prod usage: a prod pod reported as prod, its report in": {
			pod:      assigned(10 * time.Minute),
			reported: reported("300m"),
			prodOnly: true,
			want:     300,
		},
		"prod usage: a prod pod reported as prod, assigned after the report": {
			pod:      assigned(5 * time.Second),
			reported: reported("300m"),
			prodOnly: true,
			want:     850,
		},
		"prod usage: a prod pod reported as batch counts its whole estimate": {
			pod:      assigned(10 * time.Minute),
			reported: reportedAs("assigned", extension.PriorityBatch, "300m"),
			prodOnly: true,
			want:     850,
		},
		"prod usage: a pod the scheduler does not know counts for nothing": {
			pod:      assigned(10 * time.Minute),
			reported: append(reported("300m"), reportedAs("gone", extension.PriorityProd, "2")...),
			prodOnly: true,
			want:     300,
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
			nm := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10 * time.Second)).NodeUsage(utiltesting.Resources("cpu", "0")).Obj()
			nm.Status.PodsMetric = tc.reported
			f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs](t, tc.args), []*slov1alpha1.NodeMetric{nm}, []*corev1.Pod{tc.pod})
			n := f.plugin.nodes.Get("n1")
			got := n.AssignedUsage(n.View())
			if tc.prodOnly {
				got = n.ProdUsage(n.View())
			}
			if diff := cmp.Diff(tc.want, got[0]); diff != "" {
				t.Errorf("estimated cpu usage (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestAssignCacheFollowsPods: bound pods enter the assign cache, deleted and terminated ones leave it.
func TestAssignCacheFollowsPods(t *testing.T) {
	p1 := utiltesting.MakePod("p1").Req(utiltesting.Resources("cpu", "1")).Scheduled("n1", utiltesting.Now).Obj()
	p2 := utiltesting.MakePod("p2").Req(utiltesting.Resources("cpu", "1")).Scheduled("n1", utiltesting.Now).Obj()
	pending := utiltesting.MakePod("pending").Req(utiltesting.Resources("cpu", "1")).Obj()
	// Placed by Reserve but never bound, as a Reservation's reserve pod is, then deleted.
	placed := utiltesting.MakePod("placed").Req(utiltesting.Resources("cpu", "1")).Obj()
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), nil, []*corev1.Pod{p1, p2, pending, placed})
	if got := f.plugin.nodes.Len("n1"); got != 2 {
		t.Fatalf("assigned pods on n1 = %d, want 2", got)
	}
	f.reserve(t, placed, "n3")
	pods := f.Kube.CoreV1().Pods("default")
	if err := pods.Delete(f.Ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	done := p2.DeepCopy()
	done.Status.Phase = corev1.PodFailed
	if _, err := pods.UpdateStatus(f.Ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nowBound := utiltesting.WrapPod(pending).Scheduled("n2", utiltesting.Now).Obj()
	if _, err := pods.Update(f.Ctx, nowBound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(f.Ctx, "placed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	plugintest.Eventually(t, func() bool {
		return f.plugin.nodes.Len("n1") == 0 && f.plugin.nodes.Len("n2") == 1 && f.plugin.nodes.Len("n3") == 0
	})
}

// TestAssignedUsageMemo: the memoized usage of assigned pods follows the pods and the NodeMetric; the time
// alone changes nothing, since a deadline is compared with the NodeMetric's update time.
func TestAssignedUsageMemo(t *testing.T) {
	args := plugintest.Args[config.LoadAwareSchedulingArgs](t, func(a *configv1.LoadAwareSchedulingArgs) { a.EstimatedSecondsAfterPodScheduled = ptr.To[int64](400) })
	reported := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-10*time.Second)).NodeUsage(utiltesting.Resources("cpu", "0")).Pod("default", "assigned", extension.PriorityProd, utiltesting.Resources("cpu", "300m")).Obj()
	// Assigned 5 minutes ago, deadline in 100s.
	f := newFixture(t, args, []*slov1alpha1.NodeMetric{reported}, []*corev1.Pod{utiltesting.MakePod("assigned").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Scheduled("n1", utiltesting.Now.Add(-5*time.Minute)).Obj()})
	cpuAt := func() int64 {
		n := f.plugin.nodes.Get("n1")
		return n.AssignedUsage(n.View())[0]
	}
	if got := cpuAt(); got != 550 {
		t.Fatalf("assigned cpu while estimated = %d, want 550", got)
	}
	f.Clock.Step(time.Hour)
	if got := cpuAt(); got != 550 {
		t.Errorf("assigned cpu past the deadline, with no newer NodeMetric = %d, want 550", got)
	}
	f.plugin.nodes.UpdateNodeMetric(utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(101*time.Second)).NodeUsage(utiltesting.Resources("cpu", "0")).Pod("default", "assigned", extension.PriorityProd, utiltesting.Resources("cpu", "300m")).Obj())
	if got := cpuAt(); got != 0 {
		t.Errorf("assigned cpu after a NodeMetric taken past the deadline = %d, want 0", got)
	}
	f.reserve(t, utiltesting.MakePod("new").Req(utiltesting.Resources("cpu", "1")).Priority(extension.PriorityProdValueDefault).Obj(), "n1")
	if got := cpuAt(); got != 850 {
		t.Errorf("assigned cpu after a reservation = %d, want 850", got)
	}
	// A new report that includes the new pod, a minute after it was placed.
	newReport := utiltesting.MakeNodeMetric("n1").Updated(utiltesting.Now.Add(-(-time.Hour))).NodeUsage(utiltesting.Resources("cpu", "0")).Pod("default", "assigned", extension.PriorityProd, utiltesting.Resources("cpu", "300m")).Pod("default", "new", extension.PriorityProd, utiltesting.Resources("cpu", "1")).Obj()
	newReport.Status.UpdateTime = &metav1.Time{Time: f.Clock.Now().Add(2 * time.Minute)}
	f.plugin.nodes.UpdateNodeMetric(newReport)
	if got := cpuAt(); got != 0 {
		t.Errorf("assigned cpu after a report that covers the pods = %d, want 0", got)
	}
}

// TestReservePodsAreNotAssigned: a Reservation's reserve pod does not count on its node; its Reservation holds
// what it reserves.
func TestReservePodsAreNotAssigned(t *testing.T) {
	f := newFixture(t, plugintest.Args[config.LoadAwareSchedulingArgs, configv1.LoadAwareSchedulingArgs](t, nil), nil, nil)
	reservePod := utiltesting.MakePod("r1").Req(utiltesting.Resources("cpu", "6")).
		Label(extension.LabelReservePod, "true").Label(extension.LabelReservationName, "r1").Obj()
	f.reserve(t, reservePod, "n1")
	f.reserve(t, utiltesting.MakePod("p1").Req(utiltesting.Resources("cpu", "1")).Obj(), "n1")
	if got := f.plugin.nodes.Len("n1"); got != 1 {
		t.Errorf("assigned pods on n1 = %d, want 1 (the reserve pod does not count)", got)
	}
}
