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

package reservation

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestBind(t *testing.T) {
	pending := reservation("r1", "", utiltesting.Resources("cpu", "1500m", "memory", "1Gi"), byLabel("web"))
	reservePod, err := newReservePod(pending)
	if err != nil {
		t.Fatal(err)
	}
	reservePod.UID = "pod-r1"
	tests := map[string]struct {
		resv        *schedv1alpha1.Reservation
		pod         *corev1.Pod
		wantCode    string
		wantStatus  *schedv1alpha1.ReservationStatus
		wantPlaced  bool
		wantPodGone bool
		// conflicts is how many status updates fail with a conflict first.
		conflicts int
	}{
		"other pods are left to DefaultBinder": {
			resv:     pending,
			pod:      utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1")).Obj(),
			wantCode: "Skip",
		},
		"reserve pod: status written, pod deleted": {
			resv:     pending,
			pod:      reservePod,
			wantCode: "Success",
			wantStatus: &schedv1alpha1.ReservationStatus{
				Phase:       schedv1alpha1.ReservationAvailable,
				NodeName:    "n1",
				Allocatable: utiltesting.Resources("cpu", "1500m", "memory", "1Gi"),
				Conditions: []schedv1alpha1.ReservationCondition{
					{Type: schedv1alpha1.ReservationConditionScheduled, Status: schedv1alpha1.ConditionStatusTrue, Reason: schedv1alpha1.ReasonReservationScheduled, Message: "Reservation is scheduled to node n1"},
					{Type: schedv1alpha1.ReservationConditionReady, Status: schedv1alpha1.ConditionStatusTrue, Reason: schedv1alpha1.ReasonReservationAvailable, Message: "Reservation is available"},
				},
			},
			wantPlaced:  true,
			wantPodGone: true,
		},
		"conflicting writes are retried": {
			resv:        pending,
			pod:         reservePod,
			conflicts:   2,
			wantCode:    "Success",
			wantPlaced:  true,
			wantPodGone: true,
		},
		"reservation recreated under the same name: pod deleted": {
			resv:        edited(reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web")), func(r *schedv1alpha1.Reservation) { r.UID = "new" }),
			pod:         reservePod,
			wantCode:    "Error",
			wantPodGone: true,
		},
		"reservation already placed: pod deleted": {
			resv:        reservation("r1", "n2", utiltesting.Resources("cpu", "1"), byLabel("web")),
			pod:         reservePod,
			wantCode:    "Error",
			wantPodGone: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, []*schedv1alpha1.Reservation{tc.resv.DeepCopy()}, []*corev1.Node{utiltesting.MakeNode("n1").Allocatable(utiltesting.Resources("cpu", "4")).Obj()}, []*corev1.Pod{tc.pod})
			conflicts := tc.conflicts
			f.Koord.PrependReactor("update", "reservations", func(action k8stesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() != "status" || conflicts == 0 {
					return false, nil, nil
				}
				conflicts--
				return true, nil, apierrors.NewConflict(schedv1alpha1.Resource("reservations"), "r1", errors.New("changed"))
			})
			s := f.plugin.Bind(f.Ctx, framework.NewCycleState(), tc.pod, "n1")
			if conflicts != 0 {
				t.Errorf("%d conflicts left", conflicts)
			}
			if diff := cmp.Diff(tc.wantCode, s.Code().String()); diff != "" {
				t.Fatalf("Bind code (-want,+got):\n%s\n%v", diff, s)
			}
			if tc.wantStatus != nil {
				got, err := f.Koord.SchedulingV1alpha1().Reservations().Get(f.Ctx, "r1", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantStatus, &got.Status, cmpopts.IgnoreFields(schedv1alpha1.ReservationCondition{}, "LastProbeTime", "LastTransitionTime")); diff != "" {
					t.Errorf("status (-want,+got):\n%s", diff)
				}
			}
			if _, placed := f.plugin.cache.Placed(tc.resv.UID); placed != tc.wantPlaced && tc.resv.Status.NodeName == "" {
				t.Errorf("placed in cache = %v, want %v", placed, tc.wantPlaced)
			}
			_, err := f.Kube.CoreV1().Pods(tc.pod.Namespace).Get(f.Ctx, tc.pod.Name, metav1.GetOptions{})
			if gone := apierrors.IsNotFound(err); gone != tc.wantPodGone {
				t.Errorf("pod gone = %v, want %v (%v)", gone, tc.wantPodGone, err)
			}
		})
	}
}

func TestNewReservePod(t *testing.T) {
	r := reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web"))
	r.Spec.Template.Labels = map[string]string{"app": "web"}
	r.Spec.Template.Spec.NodeName = "n7"
	r.Spec.Template.Spec.Containers = append(r.Spec.Template.Spec.Containers, corev1.Container{})
	got, err := newReservePod(r)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"namespace":  DefaultReservePodNamespace,
		"name":       "r1",
		"labels":     map[string]string{"app": "web", extension.LabelReservePod: "true", extension.LabelReservationName: "r1", extension.LabelReservationUID: "r1"},
		"scheduler":  DefaultSchedulerName,
		"nodeName":   "",
		"preemption": (*corev1.PreemptionPolicy)(nil),
		"owner":      "Reservation/r1",
		"containers": []string{"c/" + reservePodImage, "reserve-1/" + reservePodImage},
		"nodeTerm":   "metadata.name In [n7]",
	}
	term := got.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0]
	gotMap := map[string]any{
		"namespace":  got.Namespace,
		"name":       got.Name,
		"labels":     got.Labels,
		"scheduler":  got.Spec.SchedulerName,
		"nodeName":   got.Spec.NodeName,
		"preemption": got.Spec.PreemptionPolicy,
		"owner":      got.OwnerReferences[0].Kind + "/" + got.OwnerReferences[0].Name,
		"containers": []string{got.Spec.Containers[0].Name + "/" + got.Spec.Containers[0].Image, got.Spec.Containers[1].Name + "/" + got.Spec.Containers[1].Image},
		"nodeTerm":   term.Key + " " + string(term.Operator) + " [" + term.Values[0] + "]",
	}
	if diff := cmp.Diff(want, gotMap); diff != "" {
		t.Errorf("reserve pod (-want,+got):\n%s", diff)
	}
	if r.Spec.Template.Spec.NodeName != "n7" || r.Spec.Template.Labels[extension.LabelReservePod] != "" {
		t.Error("newReservePod changed the reservation's template")
	}
	if _, err := newReservePod(edited(r.DeepCopy(), func(r *schedv1alpha1.Reservation) { r.Spec.Template.Spec.Containers = nil })); err == nil {
		t.Error("a template without containers was accepted")
	}
}

// TestFrameworkBind runs kube-scheduler's bind phase with Reservation before DefaultBinder, as the profile
// configures it: reserve pods are placed by Reservation, other pods are bound by DefaultBinder.
func TestFrameworkBind(t *testing.T) {
	schedmetrics.Register()
	pending := reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web"))
	reservePod, err := newReservePod(pending)
	if err != nil {
		t.Fatal(err)
	}
	other := utiltesting.MakePod("p").Req(utiltesting.Resources("cpu", "1")).Obj()
	// The node exists: the controller, which runs here, fails a Reservation placed on a node that is gone.
	env := plugintest.New(t, plugintest.WithObjects(reservePod, other, pending, utiltesting.MakeNode("n1").Obj()))
	var plugin *Plugin
	args := plugintest.Args[config.ReservationArgs, configv1.ReservationArgs](t, nil)
	fw := env.Framework(t, "koord-scheduler",
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(Name, plugintest.Capture(env, NewFactory(env.CRDs, plugins.WithClock(env.Clock)), args, &plugin)),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
	)
	ctx, kube, koord := env.Ctx, env.Kube, env.Koord

	if s := fw.RunBindPlugins(ctx, framework.NewCycleState(), other, "n1"); !s.IsSuccess() {
		t.Fatalf("bind other pod = %v", s)
	}
	var bound []string
	for _, a := range kube.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
			bound = append(bound, a.(k8stesting.CreateAction).GetObject().(*corev1.Binding).Name)
		}
	}
	if diff := cmp.Diff([]string{"p"}, bound); diff != "" {
		t.Errorf("pods bound by DefaultBinder (-want,+got):\n%s", diff)
	}

	if s := fw.RunBindPlugins(ctx, framework.NewCycleState(), reservePod, "n1"); !s.IsSuccess() {
		t.Fatalf("bind reserve pod = %v", s)
	}
	got, err := koord.SchedulingV1alpha1().Reservations().Get(ctx, "r1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Available", "n1"}, []string{string(got.Status.Phase), got.Status.NodeName}); diff != "" {
		t.Errorf("reservation (-want,+got):\n%s", diff)
	}
	for _, a := range kube.Actions() {
		if a.GetSubresource() == "binding" && a.(k8stesting.CreateAction).GetObject().(*corev1.Binding).Name == "r1" {
			t.Error("the reserve pod was bound")
		}
	}
}
