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

// Package nritest runs the container runtime's side of NRI in a test, so that koordlet's hooks are called over
// the real protocol without a containerd.
package nritest

import (
	"context"
	"testing"

	"github.com/containerd/nri/pkg/adaptation"
)

// StartRuntime runs the runtime's side of NRI on socket, as containerd runs it (NRI's own adaptation), with no
// containers of its own; it stops when the test ends, unless stopped before. Plugins that connect join it once
// synchronized: a test calls it until a plugin's answer shows.
func StartRuntime(t testing.TB, socket string) *adaptation.Adaptation {
	t.Helper()
	empty := t.TempDir()
	sync := func(ctx context.Context, cb adaptation.SyncCB) error {
		_, err := cb(ctx, nil, nil)
		return err
	}
	update := func(context.Context, []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
		return nil, nil
	}
	rt, err := adaptation.New("test-runtime", "v0", sync, update, adaptation.WithSocketPath(socket),
		adaptation.WithPluginPath(empty), adaptation.WithPluginConfigPath(empty))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	return rt
}
