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

// Package down is the `koordctl down` command: it stops the local cluster that `koordctl up` runs from a state
// directory, or cleans up after one whose koordctl was killed, through cluster.Down.
package down

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/pkg/koordctl/cluster"
)

// Flags are the flags of `koordctl down`.
type Flags struct {
	// StateDir is the state directory of the cluster to stop.
	StateDir string
	// Timeout is how long the cluster's process gets to stop before it is killed.
	Timeout time.Duration
	// Clean removes the logs too.
	Clean bool
}

// NewFlags returns the defaults.
func NewFlags() *Flags {
	return &Flags{StateDir: cluster.DefaultStateDir, Timeout: time.Minute}
}

// AddFlags binds the flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.StateDir, "state-dir", f.StateDir, "State directory of the cluster, as given to koordctl up.")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, "How long koordctl up gets to stop everything before it is killed and its leftovers are stopped directly.")
	fs.BoolVar(&f.Clean, "clean", f.Clean, "Also remove the logs.")
}

// Validate returns an error naming every invalid flag.
func (f *Flags) Validate() error {
	var errs []error
	if f.StateDir == "" {
		errs = append(errs, errors.New("--state-dir: must not be empty"))
	}
	if f.Timeout < time.Second {
		errs = append(errs, fmt.Errorf("--timeout: %s is shorter than 1s", f.Timeout))
	}
	return errors.Join(errs...)
}

// NewCommand returns `koordctl down`.
func NewCommand() *cobra.Command {
	f := NewFlags()
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the local cluster koordctl up runs",
		Long: `Stop the local cluster that koordctl up runs from the state directory: signal koordctl up, which stops every
component in reverse order and removes what it started, and wait until it has. If koordctl up is gone (killed),
stop the processes it left and remove its data.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), f, cmd.OutOrStdout())
		},
	}
	f.AddFlags(cmd.Flags())
	return cmd
}

// Run stops the cluster of f.StateDir and says what it did on out.
func Run(ctx context.Context, f *Flags, out io.Writer) error {
	if err := f.Validate(); err != nil {
		return err
	}
	res, err := cluster.Down(ctx, clock.RealClock{}, f.StateDir, f.Timeout, f.Clean)
	switch {
	case res.PID != 0 && res.Killed:
		_, _ = fmt.Fprintf(out, "koordctl up (pid %d) did not stop within %s and was killed.\n", res.PID, f.Timeout)
	case res.PID != 0:
		_, _ = fmt.Fprintf(out, "Stopped the cluster of koordctl up (pid %d).\n", res.PID)
	case len(res.Leftovers) == 0 && err == nil:
		_, _ = fmt.Fprintf(out, "No cluster runs from %s.\n", f.StateDir)
	}
	if len(res.Leftovers) > 0 {
		_, _ = fmt.Fprintf(out, "Stopped %d processes left by a cluster whose koordctl was gone: %v\n", len(res.Leftovers), res.Leftovers)
	}
	return err
}
