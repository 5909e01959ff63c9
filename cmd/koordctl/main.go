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

// Command koordctl is Koord's command-line tool: `koordctl up` runs a local cluster with the whole colocation
// loop, `koordctl down` stops it, `koordctl demo` runs a colocation scenario on one and writes a report. See
// docs/koordctl.md. `koordctl explain` says why a pod waits, how a node's batch resources were computed, how a
// quota's runtime came about and where a gang stands; installed as kubectl-koord, koordctl is also kubectl's
// plugin `kubectl koord`.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koord-dev/koord/pkg/koordctl/check"
	"github.com/koord-dev/koord/pkg/koordctl/demo"
	"github.com/koord-dev/koord/pkg/koordctl/down"
	"github.com/koord-dev/koord/pkg/koordctl/explain"
	"github.com/koord-dev/koord/pkg/koordctl/up"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "koordctl: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	root := &cobra.Command{
		Use:           commandName(),
		Short:         "Koord's command-line tool",
		SilenceUsage:  true,
		SilenceErrors: true, // main prints the error once.
	}
	root.AddCommand(up.NewCommand(), down.NewCommand(), demo.NewCommand(), check.NewCommand(), explain.NewCommand())
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// commandName is how the program was called: "kubectl koord" when it runs as kubectl's plugin (an executable
// named kubectl-koord on the PATH), else "koordctl", so that help and usage show what the user typed.
func commandName() string {
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "kubectl-koord" {
		return "kubectl koord"
	}
	return "koordctl"
}
