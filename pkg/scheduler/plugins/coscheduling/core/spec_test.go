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

package core

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
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
			pod: gangPod("a", "train", "3"),
			want: Spec{MinMember: 3, TotalMember: 3, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}},
		},
		"every annotation": {
			pod: gangPod("a", "train", "2", g+"total-number", "4", g+"waiting-time", "30s", g+"mode", "NonStrict",
				g+"match-policy", "only-waiting", g+"groups", `["default/train","other/eval","default/aux"]`),
			want: Spec{MinMember: 2, TotalMember: 4, WaitTime: 30 * time.Second, Mode: extension.GangModeNonStrict,
				MatchPolicy: extension.GangMatchPolicyOnlyWaiting,
				Groups:      []ID{gid("aux"), gid("train"), {Namespace: "other", Name: "eval"}}},
		},
		"match policy under the scheduler-plugins key": {
			pod: gangPod("a", "train", "1", extension.AnnotationAliasGangMatchPolicy, "waiting-and-running"),
			want: Spec{MinMember: 1, TotalMember: 1, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyWaitingAndRunning, Groups: []ID{gid("train")}},
		},
		"lightweight coscheduling labels": {
			pod: func() *corev1.Pod {
				p := pod("a")
				p.Labels = map[string]string{
					extension.LabelLightweightCoschedulingPodGroupName:         "train",
					extension.LabelLightweightCoschedulingPodGroupMinAvailable: "2",
				}
				return p
			}(),
			want: Spec{MinMember: 2, TotalMember: 2, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}},
		},
		"no minimum":              {pod: pod("a", extension.AnnotationGangName, "train"), wantNoMin: true},
		"minimum not a number":    {pod: gangPod("a", "train", "three"), wantErrKey: extension.AnnotationGangMinNum},
		"minimum zero":            {pod: gangPod("a", "train", "0"), wantErrKey: extension.AnnotationGangMinNum},
		"total below minimum":     {pod: gangPod("a", "train", "3", g+"total-number", "2"), wantErrKey: extension.AnnotationGangTotalNum},
		"total negative":          {pod: gangPod("a", "train", "3", g+"total-number", "-2"), wantErrKey: extension.AnnotationGangTotalNum},
		"waiting time no unit":    {pod: gangPod("a", "train", "3", g+"waiting-time", "30"), wantErrKey: extension.AnnotationGangWaitTime},
		"waiting time negative":   {pod: gangPod("a", "train", "3", g+"waiting-time", "-1s"), wantErrKey: extension.AnnotationGangWaitTime},
		"unknown mode":            {pod: gangPod("a", "train", "3", g+"mode", "Lenient"), wantErrKey: extension.AnnotationGangMode},
		"unknown match policy":    {pod: gangPod("a", "train", "3", g+"match-policy", "all"), wantErrKey: extension.AnnotationGangMatchPolicy},
		"groups not a list":       {pod: gangPod("a", "train", "3", g+"groups", `"default/x"`), wantErrKey: extension.AnnotationGangGroups},
		"group without namespace": {pod: gangPod("a", "train", "3", g+"groups", `["x"]`), wantErrKey: extension.AnnotationGangGroups},
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
			pg: podGroup("train", 4),
			want: Spec{MinMember: 4, TotalMember: 4, WaitTime: 30 * time.Second, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}, FromPodGroup: true},
		},
		"default timeout": {
			pg: func() *v1alpha1.PodGroup { pg := podGroup("train", 2); pg.Spec.ScheduleTimeoutSeconds = nil; return pg }(),
			want: Spec{MinMember: 2, TotalMember: 2, WaitTime: 10 * time.Minute, Mode: extension.GangModeStrict,
				MatchPolicy: extension.GangMatchPolicyOnceSatisfied, Groups: []ID{gid("train")}, FromPodGroup: true},
		},
		"annotations": {
			pg: podGroup("train", 2, g+"mode", "NonStrict", g+"total-number", "5", g+"match-policy", "waiting-and-running", g+"groups", `["default/eval"]`),
			want: Spec{MinMember: 2, TotalMember: 5, WaitTime: 30 * time.Second, Mode: extension.GangModeNonStrict,
				MatchPolicy: extension.GangMatchPolicyWaitingAndRunning, Groups: []ID{gid("eval"), gid("train")}, FromPodGroup: true},
		},
		"bad mode": {pg: podGroup("train", 2, g+"mode", "strict"), wantErrKey: extension.AnnotationGangMode},
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
