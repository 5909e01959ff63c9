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

package down

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
)

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		tc   func(*Flags)
		want []string
	}{
		"defaults": {tc: func(*Flags) {}},
		"invalid": {
			tc:   func(f *Flags) { f.StateDir, f.Timeout = "", 500*time.Millisecond },
			want: []string{"--state-dir: must not be empty", "--timeout: 500ms is shorter than 1s"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := NewFlags()
			tc.tc(f)
			var got []string
			if err := f.Validate(); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestRunWithNothingRunning(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := NewFlags()
	f.StateDir = filepath.Join(t.TempDir(), "none")
	var out bytes.Buffer
	if err := Run(ctx, f, &out); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if diff := cmp.Diff("No cluster runs from "+f.StateDir+".\n", out.String()); diff != "" {
		t.Errorf("output (-want,+got):\n%s", diff)
	}
}
