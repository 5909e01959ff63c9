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

package extension

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestGetGangName(t *testing.T) {
	tests := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"none":                   {pod: podWith(nil, nil), want: ""},
		"koordinator annotation": {pod: annotated(AnnotationGangName, "g1"), want: "g1"},
		"pod group label":        {pod: podWith(map[string]string{LabelPodGroup: "pg"}, nil), want: "pg"},
		"lightweight label":      {pod: podWith(map[string]string{LabelLightweightCoschedulingPodGroupName: "lw"}, nil), want: "lw"},
		"lightweight annotation": {
			pod:  annotated(LabelLightweightCoschedulingPodGroupName, "lw"),
			want: "lw",
		},
		"annotation wins over labels": {
			pod:  podWith(map[string]string{LabelPodGroup: "pg", LabelLightweightCoschedulingPodGroupName: "lw"}, map[string]string{AnnotationGangName: "g1"}),
			want: "g1",
		},
		"pod group label wins over lightweight": {
			pod:  podWith(map[string]string{LabelPodGroup: "pg", LabelLightweightCoschedulingPodGroupName: "lw"}, nil),
			want: "pg",
		},
		"empty annotation is ignored": {
			pod:  podWith(map[string]string{LabelPodGroup: "pg"}, map[string]string{AnnotationGangName: ""}),
			want: "pg",
		},
		"gang name as label is ignored": {
			pod:  podWith(map[string]string{AnnotationGangName: "g1"}, nil),
			want: "",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetGangName(tc.pod)); diff != "" {
				t.Errorf("GetGangName() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetGangMinNum(t *testing.T) {
	tests := map[string]struct {
		pod       *corev1.Pod
		want      int
		wantErr   string
		wantLabel bool
	}{
		"missing":     {pod: podWith(nil, nil), want: 0},
		"empty":       {pod: annotated(AnnotationGangMinNum, ""), want: 0},
		"annotation":  {pod: annotated(AnnotationGangMinNum, "3"), want: 3},
		"max int32":   {pod: annotated(AnnotationGangMinNum, "2147483647"), want: 2147483647},
		"alias label": {pod: podWith(map[string]string{LabelLightweightCoschedulingPodGroupMinAvailable: "2"}, nil), want: 2},
		"alias annotation": {
			pod:  annotated(LabelLightweightCoschedulingPodGroupMinAvailable, "4"),
			want: 4,
		},
		"koordinator annotation wins": {
			pod:  podWith(map[string]string{LabelLightweightCoschedulingPodGroupMinAvailable: "2"}, map[string]string{AnnotationGangMinNum: "5"}),
			want: 5,
		},
		"negative": {
			pod:     annotated(AnnotationGangMinNum, "-1"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/min-available": "-1" is not a positive integer`,
		},
		"zero": {
			pod:     annotated(AnnotationGangMinNum, "0"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/min-available": "0" is not a positive integer`,
		},
		"not a number": {
			pod:     annotated(AnnotationGangMinNum, "three"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/min-available": "three" is not a positive integer`,
		},
		"too big": {
			pod:     annotated(AnnotationGangMinNum, "2147483648"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/min-available": "2147483648" is not a positive integer`,
		},
		"bad alias label": {
			pod:       podWith(map[string]string{LabelLightweightCoschedulingPodGroupMinAvailable: "1.5"}, nil),
			wantErr:   `label "pod-group.scheduling.sigs.k8s.io/min-available": "1.5" is not a positive integer`,
			wantLabel: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetGangMinNum(tc.pod)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetGangMinNum() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetGangMinNum() (-want,+got):\n%s", diff)
			}
			if err == nil {
				return
			}
			if diff := cmp.Diff(tc.wantLabel, errors.Is(err, &LabelError{})); diff != "" {
				t.Errorf("errors.Is(err, &LabelError{}) (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(!tc.wantLabel, errors.Is(err, &AnnotationError{})); diff != "" {
				t.Errorf("errors.Is(err, &AnnotationError{}) (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetGangTotalNumber(t *testing.T) {
	tests := map[string]struct {
		pod     *corev1.Pod
		want    int
		wantErr string
	}{
		"missing": {pod: podWith(nil, nil), want: 0},
		"valid":   {pod: annotated(AnnotationGangTotalNum, "8"), want: 8},
		"zero": {
			pod:     annotated(AnnotationGangTotalNum, "0"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/total-number": "0" is not a positive integer`,
		},
		"blank padded": {
			pod:     annotated(AnnotationGangTotalNum, " 8"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/total-number": " 8" is not a positive integer`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetGangTotalNumber(tc.pod)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetGangTotalNumber() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetGangTotalNumber() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetGangWaitingTime(t *testing.T) {
	tests := map[string]struct {
		pod     *corev1.Pod
		want    time.Duration
		wantErr string
	}{
		"missing":  {pod: podWith(nil, nil), want: 0},
		"seconds":  {pod: annotated(AnnotationGangWaitTime, "30s"), want: 30 * time.Second},
		"compound": {pod: annotated(AnnotationGangWaitTime, "1h30m"), want: 90 * time.Minute},
		"fraction": {pod: annotated(AnnotationGangWaitTime, "1.5m"), want: 90 * time.Second},
		"no unit": {
			pod:     annotated(AnnotationGangWaitTime, "30"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/waiting-time": time: missing unit in duration "30"`,
		},
		"negative": {
			pod:     annotated(AnnotationGangWaitTime, "-5s"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/waiting-time": "-5s" is not a positive duration`,
		},
		"zero": {
			pod:     annotated(AnnotationGangWaitTime, "0s"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/waiting-time": "0s" is not a positive duration`,
		},
		"garbage": {
			pod:     annotated(AnnotationGangWaitTime, "soon"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/waiting-time": time: invalid duration "soon"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetGangWaitingTime(tc.pod)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetGangWaitingTime() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetGangWaitingTime() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetGangMode(t *testing.T) {
	tests := map[string]struct {
		pod     *corev1.Pod
		want    GangMode
		wantErr string
	}{
		"missing":   {pod: podWith(nil, nil), want: GangModeStrict},
		"strict":    {pod: annotated(AnnotationGangMode, "Strict"), want: GangModeStrict},
		"nonstrict": {pod: annotated(AnnotationGangMode, "NonStrict"), want: GangModeNonStrict},
		"lower case": {
			pod:     annotated(AnnotationGangMode, "strict"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/mode": unsupported value "strict"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetGangMode(tc.pod)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetGangMode() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetGangMode() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetGangMatchPolicy(t *testing.T) {
	tests := map[string]struct {
		pod     *corev1.Pod
		want    GangMatchPolicy
		wantErr string
	}{
		"missing":             {pod: podWith(nil, nil), want: GangMatchPolicyOnceSatisfied},
		"once satisfied":      {pod: annotated(AnnotationGangMatchPolicy, "once-satisfied"), want: GangMatchPolicyOnceSatisfied},
		"only waiting":        {pod: annotated(AnnotationGangMatchPolicy, "only-waiting"), want: GangMatchPolicyOnlyWaiting},
		"waiting and running": {pod: annotated(AnnotationGangMatchPolicy, "waiting-and-running"), want: GangMatchPolicyWaitingAndRunning},
		"alias":               {pod: annotated(AnnotationAliasGangMatchPolicy, "only-waiting"), want: GangMatchPolicyOnlyWaiting},
		"koordinator key wins": {
			pod:  podWith(nil, map[string]string{AnnotationGangMatchPolicy: "waiting-and-running", AnnotationAliasGangMatchPolicy: "only-waiting"}),
			want: GangMatchPolicyWaitingAndRunning,
		},
		"unknown": {
			pod:     annotated(AnnotationGangMatchPolicy, "all"),
			wantErr: `annotation "gang.scheduling.koordinator.sh/match-policy": unsupported value "all"`,
		},
		"unknown alias": {
			pod:     annotated(AnnotationAliasGangMatchPolicy, "all"),
			wantErr: `annotation "pod-group.scheduling.sigs.k8s.io/match-policy": unsupported value "all"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetGangMatchPolicy(tc.pod)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetGangMatchPolicy() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetGangMatchPolicy() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetGangGroups(t *testing.T) {
	tests := map[string]struct {
		pod     *corev1.Pod
		want    []string
		wantErr string
	}{
		"missing":    {pod: podWith(nil, nil), want: nil},
		"valid":      {pod: annotated(AnnotationGangGroups, `["ns/a","ns/b"]`), want: []string{"ns/a", "ns/b"}},
		"empty list": {pod: annotated(AnnotationGangGroups, `[]`), want: []string{}},
		"null":       {pod: annotated(AnnotationGangGroups, `null`), want: []string{}},
		"no namespace": {
			pod:     annotated(AnnotationGangGroups, `["a","/b","ns/","x/y/z"]`),
			wantErr: "annotation \"gang.scheduling.koordinator.sh/groups\": [0]: \"a\" is not of the form namespace/name\n[1]: \"/b\" is not of the form namespace/name\n[2]: \"ns/\" is not of the form namespace/name\n[3]: \"x/y/z\" is not of the form namespace/name",
		},
		"not a list": {
			pod:     annotated(AnnotationGangGroups, `"ns/a"`),
			wantErr: `annotation "gang.scheduling.koordinator.sh/groups": json: cannot unmarshal string into Go value of type []string`,
		},
		"numbers": {
			pod:     annotated(AnnotationGangGroups, `[1]`),
			wantErr: `annotation "gang.scheduling.koordinator.sh/groups": json: cannot unmarshal number into Go value of type string`,
		},
		"malformed": {
			pod:     annotated(AnnotationGangGroups, `["ns/a"`),
			wantErr: `annotation "gang.scheduling.koordinator.sh/groups": unexpected end of JSON input`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := GetGangGroups(tc.pod)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("GetGangGroups() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetGangGroups() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetGangGroups(t *testing.T) {
	tests := map[string]struct {
		groups    []string
		wantValue *string
		wantErr   string
	}{
		"nil removes": {groups: nil, wantValue: nil},
		"empty":       {groups: []string{}, wantValue: new(`[]`)},
		"two":         {groups: []string{"ns/a", "other/b"}, wantValue: new(`["ns/a","other/b"]`)},
		"invalid": {
			groups:    []string{"a"},
			wantValue: new("old"),
			wantErr:   `annotation "gang.scheduling.koordinator.sh/groups": [0]: "a" is not of the form namespace/name`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := annotated(AnnotationGangGroups, "old")
			err := SetGangGroups(pod, tc.groups)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("SetGangGroups() error (-want,+got):\n%s", diff)
			}
			value, ok := pod.Annotations[AnnotationGangGroups]
			var got *string
			if ok {
				got = &value
			}
			if diff := cmp.Diff(tc.wantValue, got); diff != "" {
				t.Errorf("annotation value (-want,+got):\n%s", diff)
			}
			if err != nil || tc.groups == nil {
				return
			}
			groups, err := GetGangGroups(pod)
			if err != nil {
				t.Fatalf("GetGangGroups() error: %v", err)
			}
			if diff := cmp.Diff(tc.groups, groups); diff != "" {
				t.Errorf("round trip (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestIsGangTimeout(t *testing.T) {
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"missing": {pod: podWith(nil, nil), want: false},
		"true":    {pod: annotated(AnnotationGangTimeout, "true"), want: true},
		"false":   {pod: annotated(AnnotationGangTimeout, "false"), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, IsGangTimeout(tc.pod)); diff != "" {
				t.Errorf("IsGangTimeout() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGangKeys(t *testing.T) {
	got := []string{
		AnnotationGangName, AnnotationGangMinNum, AnnotationGangWaitTime, AnnotationGangTotalNum,
		AnnotationGangMode, AnnotationGangGroups, AnnotationGangMatchPolicy, AnnotationGangTimeout,
		LabelPodGroup, LabelLightweightCoschedulingPodGroupName, LabelLightweightCoschedulingPodGroupMinAvailable,
		AnnotationAliasGangMatchPolicy,
	}
	want := []string{
		"gang.scheduling.koordinator.sh/name", "gang.scheduling.koordinator.sh/min-available",
		"gang.scheduling.koordinator.sh/waiting-time", "gang.scheduling.koordinator.sh/total-number",
		"gang.scheduling.koordinator.sh/mode", "gang.scheduling.koordinator.sh/groups",
		"gang.scheduling.koordinator.sh/match-policy", "gang.scheduling.koordinator.sh/timeout",
		"pod-group.scheduling.sigs.k8s.io", "pod-group.scheduling.sigs.k8s.io/name",
		"pod-group.scheduling.sigs.k8s.io/min-available", "pod-group.scheduling.sigs.k8s.io/match-policy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gang keys (-want,+got):\n%s", diff)
	}
}
