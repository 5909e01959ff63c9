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

package cache

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestSpecFromPod(t *testing.T) {
	g := extension.GangDomainPrefix
	tests := map[string]struct {
		pod        *corev1.Pod
		want       Spec
		wantErrKey string
		wantNoMin  bool
	}{
		"defaults": {
			pod: utiltesting.MakePod("a").Gang("train", "3").Obj(),
			want: Spec{MinMember: 3, TotalMember: 3, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}},
		},
		"every annotation": {
			pod: utiltesting.MakePod("a").Gang("train", "2").Annotations(g+"total-number", "4", g+"waiting-time", "30s", g+"mode", "NonStrict", g+"match-policy", "only-waiting", g+"groups", `["default/train","other/eval","default/aux"]`).Obj(),
			want: Spec{MinMember: 2, TotalMember: 4, WaitTime: 30 * time.Second, Mode: extension.GangModeNonStrict,
				MatchPolicy: extension.GangMatchPolicyOnlyWaiting,
				Groups:      []ID{gid("aux"), gid("train"), {Namespace: "other", Name: "eval"}}},
		},
		"match policy under the scheduler-plugins key": {
			pod: utiltesting.MakePod("a").Gang("train", "1").Annotations(extension.AnnotationAliasGangMatchPolicy, "waiting-and-running").Obj(),
			want: Spec{MinMember: 1, TotalMember: 1, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyWaitingAndRunning, Groups: []ID{gid("train")}},
		},
		"lightweight coscheduling labels": {
			pod: func() *corev1.Pod {
				p := utiltesting.MakePod("a").Obj()
				p.Labels = map[string]string{
					extension.LabelLightweightCoschedulingPodGroupName:         "train",
					extension.LabelLightweightCoschedulingPodGroupMinAvailable: "2",
				}
				return p
			}(),
			want: Spec{MinMember: 2, TotalMember: 2, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}},
		},
		"no minimum":              {pod: utiltesting.MakePod("a").Annotations(extension.AnnotationGangName, "train").Obj(), wantNoMin: true},
		"minimum not a number":    {pod: utiltesting.MakePod("a").Gang("train", "three").Obj(), wantErrKey: extension.AnnotationGangMinNum},
		"minimum zero":            {pod: utiltesting.MakePod("a").Gang("train", "0").Obj(), wantErrKey: extension.AnnotationGangMinNum},
		"total below minimum":     {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"total-number", "2").Obj(), wantErrKey: extension.AnnotationGangTotalNum},
		"total negative":          {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"total-number", "-2").Obj(), wantErrKey: extension.AnnotationGangTotalNum},
		"waiting time no unit":    {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"waiting-time", "30").Obj(), wantErrKey: extension.AnnotationGangWaitTime},
		"waiting time negative":   {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"waiting-time", "-1s").Obj(), wantErrKey: extension.AnnotationGangWaitTime},
		"unknown mode":            {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"mode", "Lenient").Obj(), wantErrKey: extension.AnnotationGangMode},
		"unknown match policy":    {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"match-policy", "all").Obj(), wantErrKey: extension.AnnotationGangMatchPolicy},
		"groups not a list":       {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"groups", `"default/x"`).Obj(), wantErrKey: extension.AnnotationGangGroups},
		"group without namespace": {pod: utiltesting.MakePod("a").Gang("train", "3").Annotations(g+"groups", `["x"]`).Obj(), wantErrKey: extension.AnnotationGangGroups},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SpecFromPod(tc.pod, defaults)
			switch {
			case tc.wantNoMin:
				if !errors.Is(err, errNoMinimum) {
					t.Fatalf("SpecFromPod() error = %v, want errNoMinimum", err)
				}
				return
			case tc.wantErrKey != "":
				if !errors.Is(err, &extension.AnnotationError{Key: tc.wantErrKey}) && !errors.Is(err, &extension.LabelError{Key: tc.wantErrKey}) {
					t.Fatalf("SpecFromPod() error = %v, want one naming %s", err, tc.wantErrKey)
				}
				return
			case err != nil:
				t.Fatalf("SpecFromPod() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SpecFromPod() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSpecFromPodGroup(t *testing.T) {
	g := extension.GangDomainPrefix
	tests := map[string]struct {
		pg         *v1alpha1.PodGroup
		want       Spec
		wantErrKey string
	}{
		"spec fields": {
			pg: utiltesting.MakePodGroup("train", 4).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj(),
			want: Spec{MinMember: 4, TotalMember: 4, WaitTime: 30 * time.Second, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}, FromPodGroup: true},
		},
		"default timeout": {
			pg: func() *v1alpha1.PodGroup {
				pg := utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30 * time.Second).Obj()
				pg.Spec.ScheduleTimeoutSeconds = nil
				return pg
			}(),
			want: Spec{MinMember: 2, TotalMember: 2, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}, FromPodGroup: true},
		},
		"annotations": {
			pg: utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30*time.Second).Annotations(g+"mode", "NonStrict", g+"total-number", "5", g+"match-policy", "waiting-and-running", g+"groups", `["default/eval"]`).Obj(),
			want: Spec{MinMember: 2, TotalMember: 5, WaitTime: 30 * time.Second, Mode: extension.GangModeNonStrict,
				MatchPolicy: extension.GangMatchPolicyWaitingAndRunning, Groups: []ID{gid("eval"), gid("train")}, FromPodGroup: true},
		},
		"bad mode": {pg: utiltesting.MakePodGroup("train", 2).Created(utiltesting.Now.Add(-time.Hour)).Timeout(30*time.Second).Annotations(g+"mode", "strict").Obj(), wantErrKey: extension.AnnotationGangMode},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SpecFromPodGroup(tc.pg, defaults)
			if tc.wantErrKey != "" {
				if !errors.Is(err, &extension.AnnotationError{Key: tc.wantErrKey}) {
					t.Fatalf("SpecFromPodGroup() error = %v, want one naming %s", err, tc.wantErrKey)
				}
				return
			}
			if err != nil {
				t.Fatalf("SpecFromPodGroup() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SpecFromPodGroup() (-want,+got):\n%s", diff)
			}
		})
	}
}
