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

package migration

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

func TestSortCandidates(t *testing.T) {
	job := func(name string, age time.Duration) *schedv1alpha1.PodMigrationJob {
		return &schedv1alpha1.PodMigrationJob{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(testNow.Add(-age))}}
	}
	qos := func(q extension.QoSClass) podOption {
		return func(p *corev1.Pod) { p.Labels = map[string]string{extension.LabelPodQoS: string(q)} }
	}
	priority := func(v int32) podOption { return func(p *corev1.Pod) { p.Spec.Priority = ptr.To(v) } }
	batchJob := func(uid types.UID) podOption {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: string(uid), UID: uid, Controller: ptr.To(true)}}
		}
	}
	tests := map[string]struct {
		cands     []candidate
		migrating map[types.UID]int
		want      []string
	}{
		"newest job first": {
			cands: []candidate{{job("old", 2*time.Minute), makePod("a")}, {job("new", time.Minute), makePod("b")}},
			want:  []string{"new", "old"},
		},
		"koordinator QoS: BE, LS, LSR, LSE": {
			cands: []candidate{
				{job("lse", 4*time.Minute), makePod("a", qos(extension.QoSLSE))},
				{job("ls", 3*time.Minute), makePod("b", qos(extension.QoSLS))},
				{job("be", 2*time.Minute), makePod("c", qos(extension.QoSBE))},
				{job("lsr", time.Minute), makePod("d", qos(extension.QoSLSR))},
			},
			want: []string{"be", "ls", "lsr", "lse"},
		},
		"lower priority first, before QoS": {
			cands: []candidate{
				{job("high-be", time.Minute), makePod("a", qos(extension.QoSBE), priority(9500))},
				{job("low-lse", 2*time.Minute), makePod("b", qos(extension.QoSLSE), priority(9100))},
			},
			want: []string{"low-lse", "high-be"},
		},
		"job without pod first": {
			cands: []candidate{{job("with", time.Minute), makePod("a")}, {job("without", 2*time.Minute), nil}},
			want:  []string{"without", "with"},
		},
		"batch jobs grouped, most migrating first": {
			cands: []candidate{
				{job("j1-a", time.Minute), makePod("a", batchJob("j1"), priority(1))},
				{job("j2-a", time.Minute), makePod("b", batchJob("j2"), priority(2))},
				{job("j1-b", time.Minute), makePod("c", batchJob("j1"), priority(3))},
				{job("j2-b", time.Minute), makePod("d", batchJob("j2"), priority(4))},
			},
			migrating: map[types.UID]int{"j2": 1},
			want:      []string{"j2-a", "j2-b", "j1-a", "j1-b"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sortCandidates(tc.cands, tc.migrating)
			var got []string
			for _, c := range tc.cands {
				got = append(got, c.job.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want,+got):\n%s", diff)
			}
		})
	}
}
