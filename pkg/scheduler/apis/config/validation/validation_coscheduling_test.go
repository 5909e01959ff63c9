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

package validation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

func TestValidateCoschedulingArgs(t *testing.T) {
	path := field.NewPath("args")
	valid := func() *config.CoschedulingArgs {
		return &config.CoschedulingArgs{
			DefaultTimeout:     metav1.Duration{Duration: 600 * time.Second},
			ControllerWorkers:  1,
			DefaultMatchPolicy: "once-satisfied",
		}
	}
	tests := map[string]struct {
		edit func(*config.CoschedulingArgs)
		want field.ErrorList
	}{
		"defaults are valid": {},
		"other values are valid": {
			edit: func(a *config.CoschedulingArgs) {
				a.DefaultTimeout.Duration = time.Second
				a.ControllerWorkers = 4
				a.SkipCheckScheduleCycle = true
				a.DefaultMatchPolicy = "waiting-and-running"
			},
		},
		"timeout not positive": {
			edit: func(a *config.CoschedulingArgs) { a.DefaultTimeout.Duration = 0 },
			want: field.ErrorList{field.Invalid(path.Child("defaultTimeout"), nil, "")},
		},
		"no worker": {
			edit: func(a *config.CoschedulingArgs) { a.ControllerWorkers = 0 },
			want: field.ErrorList{field.Invalid(path.Child("controllerWorkers"), nil, "")},
		},
		"unknown match policy": {
			edit: func(a *config.CoschedulingArgs) { a.DefaultMatchPolicy = "Only-Waiting" },
			want: field.ErrorList{field.NotSupported[string](path.Child("defaultMatchPolicy"), nil, nil)},
		},
		"preemption and network topology are valid": {
			edit: func(a *config.CoschedulingArgs) { a.EnablePreemption, a.AwareNetworkTopology = true, true },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := valid()
			if tc.edit != nil {
				tc.edit(args)
			}
			got := ValidateCoschedulingArgs(path, args)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateCoschedulingArgs() (-want,+got):\n%s", diff)
			}
		})
	}
}
