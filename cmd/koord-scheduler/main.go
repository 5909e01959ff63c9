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

// Command koord-scheduler is upstream kube-scheduler with Koord's plugins (LoadAwareScheduling, ...)
// registered. It takes kube-scheduler's flags; config/scheduler/koord-scheduler-config.yaml is the default
// configuration, with the profile koord-scheduler.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/koord-dev/koord/pkg/scheduler"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "koord-scheduler: %v\n", err)
		os.Exit(1)
	}
}

// run runs kube-scheduler's command with Koord's plugins. The command installs its own signal handler, which
// ends the scheduler's context on SIGTERM or SIGINT.
func run(ctx context.Context) error {
	cmd := scheduler.NewCommand()
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true // main prints the error once.
	return cmd.ExecuteContext(ctx)
}
