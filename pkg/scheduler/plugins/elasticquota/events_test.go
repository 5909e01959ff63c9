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

package elasticquota

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestIsSchedulableAfterQuotaChange(t *testing.T) {
	base := utiltesting.MakeElasticQuota("team-a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Obj()
	edited := func(edit func(*schedv1alpha1.ElasticQuota)) *schedv1alpha1.ElasticQuota {
		q := base.DeepCopy()
		edit(q)
		return q
	}
	unstructuredOf := func(q *schedv1alpha1.ElasticQuota) *unstructured.Unstructured {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(q)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: u}
	}
	tests := map[string]struct {
		oldObj, newObj any
		want           fwk.QueueingHint
	}{
		"added":          {newObj: base, want: fwk.Queue},
		"deleted":        {oldObj: base, want: fwk.Queue},
		"max raised":     {oldObj: base, newObj: edited(func(q *schedv1alpha1.ElasticQuota) { q.Spec.Max = utiltesting.Resources("cpu", "50") }), want: fwk.Queue},
		"parent moved":   {oldObj: base, newObj: edited(func(q *schedv1alpha1.ElasticQuota) { q.Labels[extension.LabelQuotaParent] = "p" }), want: fwk.Queue},
		"weight changed": {oldObj: base, newObj: edited(func(q *schedv1alpha1.ElasticQuota) { q.Annotations[extension.AnnotationSharedWeight] = `{"cpu":"1"}` }), want: fwk.Queue},
		"status written": {
			oldObj: base,
			newObj: edited(func(q *schedv1alpha1.ElasticQuota) {
				q.Status.Used = utiltesting.Resources("cpu", "3")
				q.Annotations[extension.AnnotationRuntime] = `{"cpu":"10"}`
			}),
			want: fwk.QueueSkip,
		},
		"unstructured from kube-scheduler's informer": {
			oldObj: unstructuredOf(base),
			newObj: unstructuredOf(edited(func(q *schedv1alpha1.ElasticQuota) { q.Spec.Min = utiltesting.Resources("cpu", "20") })),
			want:   fwk.Queue,
		},
	}
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), nil, nil, nil)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := f.plugin.isSchedulableAfterQuotaChange(f.Logger, utiltesting.MakePod("p").Label(extension.LabelQuotaName, "team-a").Priority(0).Obj(), tc.oldObj, tc.newObj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hint (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestIsSchedulableAfterPodDelete(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	tests := map[string]struct {
		deleted *corev1.Pod
		want    fwk.QueueingHint
	}{
		"pod with requests":    {deleted: utiltesting.MakePod("d").Label(extension.LabelQuotaName, "team-a").Priority(0).Node("n1").Req(utiltesting.Resources("cpu", "1")).Obj(), want: fwk.Queue},
		"pod without requests": {deleted: utiltesting.MakePod("d").Label(extension.LabelQuotaName, "team-a").Priority(0).Node("n1").Obj(), want: fwk.QueueSkip},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := isSchedulableAfterPodDelete(logger, utiltesting.MakePod("p").Label(extension.LabelQuotaName, "team-a").Priority(0).Obj(), tc.deleted, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hint (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	for name, tc := range map[string]struct {
		hints bool
	}{"with hints": {hints: true}, "without hints": {}} {
		t.Run(name, func(t *testing.T) {
			args := plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil)
			args.EnableQueueHint = tc.hints
			p := &Plugin{args: args}
			events, err := p.EventsToRegister(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range events {
				got = append(got, string(e.Event.Resource))
				if (e.QueueingHintFn != nil) != tc.hints {
					t.Errorf("event %s has a hint: %v, want %v", e.Event.Resource, e.QueueingHintFn != nil, tc.hints)
				}
			}
			if diff := cmp.Diff([]string{"elasticquotas.v1alpha1.scheduling.sigs.k8s.io", "Pod", "Node"}, got); diff != "" {
				t.Errorf("events (-want,+got):\n%s", diff)
			}
		})
	}
}
