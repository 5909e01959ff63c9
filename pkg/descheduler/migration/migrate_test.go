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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// TestEvictionStarted covers a controller killed between evicting a pod and recording it: the next one must
// see from the pod itself that the eviction happened, or it would fail the job because the replacement pod took
// the Reservation.
func TestEvictionStarted(t *testing.T) {
	job := &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec:       schedv1alpha1.PodMigrationJobSpec{PodRef: &corev1.ObjectReference{Namespace: "ns", Name: "web-0", UID: "uid-web-0"}},
	}
	terminating := makePod("web-0", func(p *corev1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: testNow}
		p.Finalizers = []string{"example.com/hold"}
	})
	for name, tc := range map[string]struct {
		recorded bool
		pods     []client.Object
		want     bool
	}{
		"recorded in the status":   {recorded: true, pods: []client.Object{makePod("web-0")}, want: true},
		"pod still there":          {pods: []client.Object{makePod("web-0")}, want: false},
		"pod gone":                 {want: true},
		"pod terminating":          {pods: []client.Object{terminating}, want: true},
		"another pod of that name": {pods: []client.Object{makePod("web-0", func(p *corev1.Pod) { p.UID = types.UID("uid-new") })}, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := newTestController(t, defaultArgs(), tc.pods...)
			got, err := c.evictionStarted(t.Context(), job, tc.recorded)
			if err != nil {
				t.Fatalf("evictionStarted() = %v", err)
			}
			if got != tc.want {
				t.Errorf("evictionStarted() = %v, want %v", got, tc.want)
			}
		})
	}
}
