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
	"testing"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// TestPostFilter: a reserve pod does not go on to preemption unless enablePreemption is set; other pods do.
func TestPostFilter(t *testing.T) {
	reservePod, err := newReservePod(reservation("r1", "", utiltesting.Resources("cpu", "1"), byLabel("web")))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		enablePreemption bool
		reservePod       bool
		want             fwk.Code
	}{
		"reserve pod":                     {reservePod: true, want: fwk.UnschedulableAndUnresolvable},
		"reserve pod, preemption enabled": {reservePod: true, enablePreemption: true, want: fwk.Unschedulable},
		"other pod":                       {want: fwk.Unschedulable},
		"other pod, preemption enabled":   {enablePreemption: true, want: fwk.Unschedulable},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := &Plugin{args: &config.ReservationArgs{EnablePreemption: tc.enablePreemption}}
			pod := reservePod
			if !tc.reservePod {
				pod = pod.DeepCopy()
				pod.Labels = nil
			}
			result, status := p.PostFilter(t.Context(), nil, pod, nil)
			if result != nil || status.Code() != tc.want {
				t.Errorf("PostFilter = %v, %v; want nil, %v", result, status, tc.want)
			}
		})
	}
}
