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

package plugins

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Every calls f at each tick of interval on clk until ctx ends; the first call is one interval after the
// start. Plugins run their periodic work (controllers, checks) with it, on the clock of their Options, so that
// tests step it with a fake clock.
func Every(ctx context.Context, clk clock.WithTicker, interval time.Duration, f func()) {
	ticker := clk.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			f()
		}
	}
}
