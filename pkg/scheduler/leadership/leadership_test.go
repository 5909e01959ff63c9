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

package leadership

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// fakeLock is a resourcelock.Interface whose writes fail with err.
type fakeLock struct {
	resourcelock.Interface
	identity string
	err      error
}

func (f *fakeLock) Identity() string { return f.identity }
func (f *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	return f.err
}
func (f *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error {
	return f.err
}

// TestObserve: only a successful write of a record that names the lock's own identity elects.
func TestObserve(t *testing.T) {
	tests := map[string]struct {
		holder string
		err    error
		update bool
		want   bool
	}{
		"create naming itself":  {holder: "me", want: true},
		"update naming itself":  {holder: "me", update: true, want: true},
		"failed create":         {holder: "me", err: errors.New("conflict")},
		"failed update":         {holder: "me", update: true, err: errors.New("conflict")},
		"update naming another": {holder: "other", update: true},
		"release (no holder)":   {holder: "", update: true},
		"create naming another": {holder: "other"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := New()
			lock := l.Observe(&fakeLock{identity: "me", err: tc.err})
			rec := resourcelock.LeaderElectionRecord{HolderIdentity: tc.holder}
			var err error
			if tc.update {
				err = lock.Update(t.Context(), rec)
			} else {
				err = lock.Create(t.Context(), rec)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error = %v, want %v", err, tc.err)
			}
			if got := l.Leading(); got != tc.want {
				t.Errorf("Leading() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRun: a controller starts once the replica leads, not before; never when its context ends first; at once
// for a nil Leadership.
func TestRun(t *testing.T) {
	l := New()
	started := make(chan struct{})
	l.Run(t.Context(), "test", func(context.Context) { close(started) })
	select {
	case <-started:
		t.Fatal("started before leading")
	case <-time.After(50 * time.Millisecond):
	}
	l.Elect()
	l.Elect() // twice is fine
	<-started

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	never := New()
	ran := make(chan struct{})
	never.Run(ctx, "test", func(context.Context) { close(ran) })
	never.Elect()
	select {
	case <-ran:
		t.Error("started after its context ended")
	case <-time.After(50 * time.Millisecond):
	}

	var none *Leadership
	if !none.Leading() {
		t.Error("a nil Leadership does not lead")
	}
	atOnce := make(chan struct{})
	none.Run(t.Context(), "test", func(context.Context) { close(atOnce) })
	<-atOnce
}
