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

package schedulinghint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func newPlugin(t *testing.T, edit func(*configv1.SchedulingHintArgs)) *Plugin {
	t.Helper()
	env := plugintest.New(t)
	return plugintest.Plugin[*Plugin](t, env, NewFactory(), plugintest.Args[config.SchedulingHintArgs](t, edit))
}

func hinted(hint string) *corev1.Pod {
	return utiltesting.MakePod("p").Annotation(extension.AnnotationSchedulingHint, hint).Obj()
}

func TestPreFilter(t *testing.T) {
	tests := map[string]struct {
		pod        *corev1.Pod
		wantCode   fwk.Code
		wantMsg    string
		wantResult *fwk.PreFilterResult
	}{
		"no hint":   {pod: utiltesting.MakePod("p").Obj(), wantCode: fwk.Skip},
		"malformed": {pod: hinted(`{"nodeNames":1}`), wantCode: fwk.UnschedulableAndUnresolvable, wantMsg: `annotation "internal.scheduling.koordinator.sh/scheduling-hint": json: cannot unmarshal number into Go struct field SchedulingHint.nodeNames of type []string`},
		"required nodes": {
			pod:        hinted(`{"nodeNames":["n1","n2"]}`),
			wantResult: &fwk.PreFilterResult{NodeNames: sets.New("n1", "n2")},
		},
		"preferred nodes only restrict nothing": {pod: hinted(`{"preferredNodeNames":["n1"]}`)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := newPlugin(t, nil)
			res, st := p.PreFilter(t.Context(), framework.NewCycleState(), tc.pod, nil)
			if diff := cmp.Diff(plugintest.Status{Code: tc.wantCode, Reasons: reasons(tc.wantMsg)}, plugintest.Summarize(st)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func reasons(msg string) []string {
	if msg == "" {
		return nil
	}
	return []string{msg}
}

// TestScore: the preferred nodes score from MaxScore down in their order, at most maxHintNodes of them and
// only among the required ones; other nodes score 0.
func TestScore(t *testing.T) {
	p := newPlugin(t, func(a *configv1.SchedulingHintArgs) { a.MaxHintNodes = new(int32(3)) })
	pod := hinted(`{"nodeNames":["a","b","c","d","x"],"preferredNodeNames":["b","y","a","c","d"]}`)
	cycle := framework.NewCycleState()
	if _, st := p.PreFilter(t.Context(), cycle, pod, nil); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := p.PreScore(t.Context(), cycle, pod, nil); !st.IsSuccess() {
		t.Fatal(st)
	}
	got := map[string]int64{}
	for _, n := range []string{"a", "b", "c", "d", "x", "y"} {
		s, st := p.Score(t.Context(), cycle, pod, plugintest.NodeInfo(utiltesting.MakeNode(n).Obj()))
		if !st.IsSuccess() {
			t.Fatal(st)
		}
		got[n] = s
	}
	// b, a, c are the first three preferred nodes the hint allows (y is not required).
	want := map[string]int64{"b": 100, "a": 67, "c": 34, "d": 0, "x": 0, "y": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if st := p.PreScore(t.Context(), framework.NewCycleState(), hinted(`{"nodeNames":["a"]}`), nil); st.Code() != fwk.Skip {
		t.Errorf("PreScore for a pod that prefers nothing = %v, want Skip", st)
	}
}

func TestNewRejectsBadArgs(t *testing.T) {
	env := plugintest.New(t)
	args := plugintest.Args[config.SchedulingHintArgs](t, func(a *configv1.SchedulingHintArgs) { a.MaxHintNodes = new(int32(0)) })
	_, err := NewFactory()(env.Ctx, args, nil)
	if want := `pluginConfig[SchedulingHint].args.maxHintNodes: Invalid value: 0: must be positive`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestSignPod: pods sign alike exactly when their hints are the same text, under either key; a pod without a
// hint signs with nothing.
func TestSignPod(t *testing.T) {
	p := newPlugin(t, nil)
	sign := func(pod *corev1.Pod) []fwk.SignFragment {
		t.Helper()
		fragments, status := p.SignPod(t.Context(), pod)
		if !status.IsSuccess() {
			t.Fatalf("SignPod = %v", status)
		}
		return fragments
	}
	if got := sign(utiltesting.MakePod("p").Obj()); got != nil {
		t.Errorf("no hint: %v, want no fragment", got)
	}
	a := sign(hinted(`{"nodeNames":["n1"]}`))
	b := sign(utiltesting.MakePod("q").Annotation(extension.DeprecatedAnnotationSchedulingHint, `{"nodeNames":["n1"]}`).Obj())
	c := sign(hinted(`{"nodeNames":["n2"]}`))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("the same hint under the two keys signs differently (-current +deprecated):\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Errorf("hints for n1 and n2 sign alike: %v", a)
	}
}
