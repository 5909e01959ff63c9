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

package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestSession: a session's logger writes to koordctl.log in the state directory's log directory, and stop
// releases the session.
func TestSession(t *testing.T) {
	t.Cleanup(klog.ClearLogger)
	dir := t.TempDir()
	ctx, stop, err := Session(context.Background(), dir, 2, "koordctl-test")
	if err != nil {
		t.Fatal(err)
	}
	klog.FromContext(ctx).Info("Started a test session")
	klog.FromContext(ctx).V(3).Info("Too verbose to be written")
	stop()
	data, err := os.ReadFile(filepath.Join(dir, LogDir, "koordctl.log"))
	if err != nil {
		t.Fatalf("read the session's log: %v", err)
	}
	log := string(data)
	if !strings.Contains(log, "Started a test session") || !strings.Contains(log, "koordctl-test") {
		t.Errorf("the log does not hold the session's named entry:\n%s", log)
	}
	if strings.Contains(log, "Too verbose") {
		t.Errorf("the log holds an entry above the verbosity:\n%s", log)
	}
	if ctx.Err() == nil {
		t.Error("the session's context did not end with stop")
	}
}
