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

// Command koordlet is Koord's node agent: it samples node, pod and container usage from /proc and the cgroup
// tree, reports it in the node's NodeMetric, and enforces the node's NodeSLO on cgroups (per-class settings, BE
// CPU suppression, CPU burst, evictions).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/util/logging"
)

// gcPercent is koordlet's GOGC unless the environment sets one: its live heap is a few MiB, and collecting at
// 50 % growth instead of Go's 100 % keeps about 3 MiB less resident for no measurable CPU
// (BenchmarkKoordletFootprint in test/perf/koordlet).
const gcPercent = 50

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "koordlet: %v\n", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	opts := koordlet.DefaultOptions()
	logCfg := logsapi.NewLoggingConfiguration()
	fs := pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
	opts.AddFlags(fs)
	logsapi.AddFlags(logCfg, fs)
	if err := fs.Parse(koordlet.KoordinatorArgs(fs, args)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := logging.Apply(logCfg); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	logger := klog.Background().WithName("koordlet")
	return koordlet.Run(klog.NewContext(ctx, logger), opts)
}
