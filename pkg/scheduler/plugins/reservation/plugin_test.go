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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestNewFactory(t *testing.T) {
	tests := map[string]struct {
		args    runtime.Object
		wantErr string
	}{
		"wrong args type": {
			args:    &configv1.ReservationArgs{},
			wantErr: "want args of type ReservationArgs",
		},
		"invalid args": {
			args:    plugintest.Args[config.ReservationArgs](t, func(a *configv1.ReservationArgs) { a.GCDurationSeconds = -1 }),
			wantErr: "pluginConfig[Reservation].args.gcDurationSeconds: Invalid value: -1: must be greater than 0",
		},
		"controller places a pending reservation's reserve pod": {
			args: plugintest.Args[config.ReservationArgs, configv1.ReservationArgs](t, nil),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := plugintest.New(t, plugintest.WithObjects(reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web"))))
			_, err := NewFactory(env.CRDs, plugins.WithClock(env.Clock))(env.Ctx, tc.args, env.Handle(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewFactory error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			env.Start(t)
			plugintest.Eventually(t, func() bool {
				_, err := env.Kube.CoreV1().Pods(DefaultReservePodNamespace).Get(env.Ctx, "r1", metav1.GetOptions{})
				return err == nil
			})
		})
	}
}

func TestReservationHint(t *testing.T) {
	base := reservation("r1", "n1", utiltesting.Resources("cpu", "1"), byLabel("web"))
	toUnstructured := func(r *schedv1alpha1.Reservation) *unstructured.Unstructured {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: obj}
	}
	tests := map[string]struct {
		oldObj, newObj any
		want           fwk.QueueingHint
	}{
		"added":   {newObj: base, want: fwk.Queue},
		"deleted": {oldObj: base, want: fwk.Queue},
		"phase changed": {
			oldObj: base,
			newObj: edited(base.DeepCopy(), func(r *schedv1alpha1.Reservation) { r.Status.Phase = schedv1alpha1.ReservationFailed }),
			want:   fwk.Queue,
		},
		"allocated changed, from the dynamic informer": {
			oldObj: toUnstructured(base),
			newObj: toUnstructured(edited(base.DeepCopy(), func(r *schedv1alpha1.Reservation) { r.Status.Allocated = utiltesting.Resources("cpu", "1") })),
			want:   fwk.Queue,
		},
		"only conditions changed": {
			oldObj: base,
			newObj: edited(base.DeepCopy(), func(r *schedv1alpha1.Reservation) {
				r.Status.Conditions = []schedv1alpha1.ReservationCondition{{Type: schedv1alpha1.ReservationConditionReady}}
			}),
			want: fwk.QueueSkip,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil, nil, nil, nil)
			got, err := f.plugin.isSchedulableAfterReservationChange(f.Logger, utiltesting.MakePod("p").Obj(), tc.oldObj, tc.newObj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hint (-want,+got):\n%s", diff)
			}
		})
	}
	p := newFixture(t, nil, nil, nil, nil).plugin
	if _, err := p.isSchedulableAfterReservationChange(testLogger(t), utiltesting.MakePod("p").Obj(), &corev1.Pod{}, base); err == nil {
		t.Error("a pod passed as a Reservation gave no error")
	}

	// The hint hands the event to the cache before the plugin's own informer does: the retry it causes sees a
	// placed Reservation, and no longer sees it once it failed or went.
	placed := edited(base.DeepCopy(), func(r *schedv1alpha1.Reservation) {
		r.ResourceVersion = "5"
		r.Status.Phase, r.Status.NodeName, r.Status.Allocatable = schedv1alpha1.ReservationAvailable, "n1", utiltesting.Resources("cpu", "1")
	})
	failed := edited(placed.DeepCopy(), func(r *schedv1alpha1.Reservation) {
		r.ResourceVersion = "6"
		r.Status.Phase = schedv1alpha1.ReservationFailed
	})
	for _, step := range []struct {
		name           string
		oldObj, newObj any
		wantPlaced     bool
	}{
		{"placed", base, toUnstructured(placed), true},
		{"failed", placed, toUnstructured(failed), false},
		{"placed again from an older event", base, placed, false},
		{"deleted", failed, nil, false},
	} {
		if _, err := p.isSchedulableAfterReservationChange(testLogger(t), utiltesting.MakePod("p").Obj(), step.oldObj, step.newObj); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if _, got := p.cache.Placed(placed.UID); got != step.wantPlaced {
			t.Errorf("after the %s event: cache holds the Reservation as placed = %v, want %v", step.name, got, step.wantPlaced)
		}
	}
}

// testLogger is the logger of t.
func testLogger(t *testing.T) klog.Logger {
	logger, _ := ktesting.NewTestContext(t)
	return logger
}
