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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestIsSchedulableAfterPodGroupChange(t *testing.T) {
	toUnstructured := func(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatalf("to unstructured: %v", err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	tests := map[string]struct {
		pod     *corev1.Pod
		oldObj  any
		newObj  func(t *testing.T) any
		want    fwk.QueueingHint
		wantErr bool
	}{
		"the gang's PodGroup, new minimum": {
			pod:    utiltesting.MakePod("a").PodGroup("train").Obj(),
			oldObj: utiltesting.MakePodGroup("train", 3).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj(),
			newObj: func(*testing.T) any {
				return utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
			},
			want: fwk.Queue,
		},
		"the gang's PodGroup, status only": {
			pod:    utiltesting.MakePod("a").PodGroup("train").Obj(),
			oldObj: utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj(),
			newObj: func(*testing.T) any {
				pg := utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
				pg.Status.Phase = v1alpha1.PodGroupScheduling
				return pg
			},
			want: fwk.QueueSkip,
		},
		"the gang's PodGroup, unstructured": {
			pod: utiltesting.MakePod("a").PodGroup("train").Obj(),
			newObj: func(t *testing.T) any {
				return toUnstructured(t, utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30*time.Second).Obj())
			},
			want: fwk.Queue,
		},
		"the gang's PodGroup, typed": {
			pod: utiltesting.MakePod("a").PodGroup("train").Obj(),
			newObj: func(*testing.T) any {
				return utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
			},
			want: fwk.Queue,
		},
		"another PodGroup": {
			pod: utiltesting.MakePod("a").PodGroup("train").Obj(),
			newObj: func(*testing.T) any {
				return utiltesting.MakePodGroup("eval", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
			},
			want: fwk.QueueSkip,
		},
		"a pod in no gang": {
			pod: utiltesting.MakePod("a").Obj(),
			newObj: func(*testing.T) any {
				return utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
			},
			want: fwk.QueueSkip,
		},
		"not a PodGroup": {
			pod:     utiltesting.MakePod("a").PodGroup("train").Obj(),
			newObj:  func(*testing.T) any { return utiltesting.MakePod("x").Obj() },
			want:    fwk.Queue,
			wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			p := sortPlugin()
			got, err := p.isSchedulableAfterPodGroupChange(logger, tc.pod, tc.oldObj, tc.newObj(t))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hint (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestIsSchedulableAfterPodAdd(t *testing.T) {
	groups := []string{extension.AnnotationGangGroups, `["default/ps"]`}
	tests := map[string]struct {
		pod, added *corev1.Pod
		want       fwk.QueueingHint
	}{
		"a member of the pod's gang":   {pod: utiltesting.MakePod("a").Gang("train", "2").Obj(), added: utiltesting.MakePod("b").Gang("train", "2").Obj(), want: fwk.Queue},
		"a member of another gang":     {pod: utiltesting.MakePod("a").Gang("train", "2").Obj(), added: utiltesting.MakePod("b").Gang("eval", "2").Obj(), want: fwk.QueueSkip},
		"a pod in no gang":             {pod: utiltesting.MakePod("a").Gang("train", "2").Obj(), added: utiltesting.MakePod("b").Obj(), want: fwk.QueueSkip},
		"a member of the gang's group": {pod: utiltesting.MakePod("w").Gang("workers", "1").Annotations(groups...).Obj(), added: utiltesting.MakePod("p").Gang("ps", "1").Obj(), want: fwk.Queue},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			p := sortPlugin(tc.pod)
			got, err := p.isSchedulableAfterPodAdd(logger, tc.pod, nil, tc.added)
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hint (-want,+got):\n%s", diff)
			}
		})
	}
}
