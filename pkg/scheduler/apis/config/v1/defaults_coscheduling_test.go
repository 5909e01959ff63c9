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

package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsCoschedulingArgs(t *testing.T) {
	tests := map[string]struct {
		in   *CoschedulingArgs
		want *CoschedulingArgs
	}{
		"empty": {
			in: &CoschedulingArgs{},
			want: &CoschedulingArgs{
				DefaultTimeout:         &metav1.Duration{Duration: 600 * time.Second},
				ControllerWorkers:      ptr.To[int64](1),
				SkipCheckScheduleCycle: ptr.To(false),
				EnablePreemption:       ptr.To(false),
				AwareNetworkTopology:   ptr.To(false),
				DefaultMatchPolicy:     ptr.To("once-satisfied"),
			},
		},
		"given values stay": {
			in: &CoschedulingArgs{
				DefaultTimeout:         &metav1.Duration{Duration: time.Minute},
				ControllerWorkers:      ptr.To[int64](3),
				SkipCheckScheduleCycle: ptr.To(true),
				EnablePreemption:       ptr.To(true),
				AwareNetworkTopology:   ptr.To(true),
				DefaultMatchPolicy:     ptr.To("only-waiting"),
			},
			want: &CoschedulingArgs{
				DefaultTimeout:         &metav1.Duration{Duration: time.Minute},
				ControllerWorkers:      ptr.To[int64](3),
				SkipCheckScheduleCycle: ptr.To(true),
				EnablePreemption:       ptr.To(true),
				AwareNetworkTopology:   ptr.To(true),
				DefaultMatchPolicy:     ptr.To("only-waiting"),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			SetDefaults_CoschedulingArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("SetDefaults_CoschedulingArgs() (-want,+got):\n%s", diff)
			}
		})
	}
}
