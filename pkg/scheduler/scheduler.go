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

// Package scheduler assembles koord-scheduler: upstream kube-scheduler's command with Koord's plugins
// registered through app.WithPlugin. There is no fork of the scheduler app and no extended framework handle:
// plugins take kube-scheduler's plain handle and share informers for Koord's CRDs through crdinformers.
//
// Plugins lists the registrations; NewCommand is what cmd/koord-scheduler runs; Start runs the same
// scheduler inside a process (tests, benchmarks, local clusters), bound to a context.
package scheduler

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/configz"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/leadership"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/defaultprebind"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/nodenumaresource"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/reservation"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/schedulinghint"
)

// The extension points of every plugin, checked at build time: a plugin that stops implementing one its
// README and the shipped profile use fails to build. Each plugin's README says what it does at each.
var (
	_ fwk.PreFilterPlugin   = (*loadaware.Plugin)(nil)
	_ fwk.FilterPlugin      = (*loadaware.Plugin)(nil)
	_ fwk.ScorePlugin       = (*loadaware.Plugin)(nil)
	_ fwk.ReservePlugin     = (*loadaware.Plugin)(nil)
	_ fwk.EnqueueExtensions = (*loadaware.Plugin)(nil)
	_ fwk.SignPlugin        = (*loadaware.Plugin)(nil)

	_ fwk.PreFilterPlugin   = (*elasticquota.Plugin)(nil)
	_ fwk.FilterPlugin      = (*elasticquota.Plugin)(nil)
	_ fwk.PostFilterPlugin  = (*elasticquota.Plugin)(nil)
	_ fwk.ReservePlugin     = (*elasticquota.Plugin)(nil)
	_ fwk.PreEnqueuePlugin  = (*elasticquota.Plugin)(nil)
	_ fwk.EnqueueExtensions = (*elasticquota.Plugin)(nil)

	_ fwk.PreBindPlugin = (*defaultprebind.Plugin)(nil)

	_ fwk.PreFilterPlugin = (*schedulinghint.Plugin)(nil)
	_ fwk.PreScorePlugin  = (*schedulinghint.Plugin)(nil)
	_ fwk.ScorePlugin     = (*schedulinghint.Plugin)(nil)
	_ fwk.SignPlugin      = (*schedulinghint.Plugin)(nil)

	_ fwk.QueueSortPlugin   = (*coscheduling.Plugin)(nil)
	_ fwk.PreEnqueuePlugin  = (*coscheduling.Plugin)(nil)
	_ fwk.PreFilterPlugin   = (*coscheduling.Plugin)(nil)
	_ fwk.PostFilterPlugin  = (*coscheduling.Plugin)(nil)
	_ fwk.PreScorePlugin    = (*coscheduling.Plugin)(nil)
	_ fwk.ScorePlugin       = (*coscheduling.Plugin)(nil)
	_ fwk.PermitPlugin      = (*coscheduling.Plugin)(nil)
	_ fwk.ReservePlugin     = (*coscheduling.Plugin)(nil)
	_ fwk.PreBindPlugin     = (*coscheduling.Plugin)(nil)
	_ fwk.PostBindPlugin    = (*coscheduling.Plugin)(nil)
	_ fwk.EnqueueExtensions = (*coscheduling.Plugin)(nil)
	_ fwk.SignPlugin        = (*coscheduling.Plugin)(nil)

	_ fwk.PreFilterPlugin   = (*reservation.Plugin)(nil)
	_ fwk.FilterPlugin      = (*reservation.Plugin)(nil)
	_ fwk.PostFilterPlugin  = (*reservation.Plugin)(nil)
	_ fwk.PreScorePlugin    = (*reservation.Plugin)(nil)
	_ fwk.ScorePlugin       = (*reservation.Plugin)(nil)
	_ fwk.ReservePlugin     = (*reservation.Plugin)(nil)
	_ fwk.PreBindPlugin     = (*reservation.Plugin)(nil)
	_ fwk.BindPlugin        = (*reservation.Plugin)(nil)
	_ fwk.EnqueueExtensions = (*reservation.Plugin)(nil)

	_ fwk.PreFilterPlugin   = (*nodenumaresource.Plugin)(nil)
	_ fwk.FilterPlugin      = (*nodenumaresource.Plugin)(nil)
	_ fwk.PreScorePlugin    = (*nodenumaresource.Plugin)(nil)
	_ fwk.ScorePlugin       = (*nodenumaresource.Plugin)(nil)
	_ fwk.ReservePlugin     = (*nodenumaresource.Plugin)(nil)
	_ fwk.PreBindPlugin     = (*nodenumaresource.Plugin)(nil)
	_ fwk.EnqueueExtensions = (*nodenumaresource.Plugin)(nil)
	_ fwk.SignPlugin        = (*nodenumaresource.Plugin)(nil)
	_ fwk.PreFilterPlugin   = (*deviceshare.Plugin)(nil)
	_ fwk.FilterPlugin      = (*deviceshare.Plugin)(nil)
	_ fwk.PreScorePlugin    = (*deviceshare.Plugin)(nil)
	_ fwk.ScorePlugin       = (*deviceshare.Plugin)(nil)
	_ fwk.ReservePlugin     = (*deviceshare.Plugin)(nil)
	_ fwk.PreBindPlugin     = (*deviceshare.Plugin)(nil)
	_ fwk.EnqueueExtensions = (*deviceshare.Plugin)(nil)
	_ fwk.SignPlugin        = (*deviceshare.Plugin)(nil)
)

// Plugins returns the options that register every Koord plugin with kube-scheduler. The plugins of one call
// share one set of Koord CRD informers, so call it once per scheduler. They record their metrics in
// RegisteredMetrics; opts add to that (koord-scheduler's command passes its Leadership).
func Plugins(opts ...plugins.Option) []app.Option {
	informers := crdinformers.New()
	opts = append([]plugins.Option{plugins.WithMetrics(RegisteredMetrics())}, opts...)
	return []app.Option{
		app.WithPlugin(loadaware.Name, loadaware.NewFactory(informers, opts...)),
		app.WithPlugin(elasticquota.Name, elasticquota.NewFactory(informers, opts...)),
		app.WithPlugin(coscheduling.Name, coscheduling.NewFactory(informers, opts...)),
		app.WithPlugin(reservation.Name, reservation.NewFactory(informers, opts...)),
		app.WithPlugin(nodenumaresource.Name, nodenumaresource.NewFactory(informers, opts...)),
		app.WithPlugin(deviceshare.Name, deviceshare.NewFactory(informers, opts...)),
		app.WithPlugin(schedulinghint.Name, schedulinghint.NewFactory()),
		app.WithPlugin(defaultprebind.Name, defaultprebind.New),
	}
}

// RegisteredMetrics returns the plugins' metrics, registered in kube-scheduler's legacy registry (which
// koord-scheduler's /metrics serves) on the first call. The registry is the process's, so every scheduler of
// the process shares them.
var RegisteredMetrics = sync.OnceValue(func() *metrics.Metrics {
	m := metrics.NewMetrics()
	// Registration fails only for a name registered twice: a bug in this package, caught by its tests.
	utilruntime.Must(m.Register(legacyregistry.Registerer()))
	return m
})

// defaultFlags are the flags koord-scheduler's command line starts with; the command line may override them.
//
// NominatedNodeNameForExpectation (beta, on in kube-scheduler v1.37) makes kube-scheduler write
// .status.nominatedNodeName of every pod that waits in Permit: with Coscheduling, every gang member but the
// last, one API write per pod. Koordinator's scheduler never writes it; with it, koord-scheduler binds gangs
// at two thirds of the rate (test/perf/scheduler, koord-jobs). `--feature-gates=NominatedNodeNameForExpectation=true`
// turns it back on.
var defaultFlags = []string{"--feature-gates=NominatedNodeNameForExpectation=false"}

// Args returns koord-scheduler's command line for args: its default flags, then args.
func Args(args ...string) []string {
	return append(slices.Clone(defaultFlags), args...)
}

// NewCommand returns kube-scheduler's command, with its flags and --config file, running with Koord's
// plugins registered, on the process's command line after koord-scheduler's defaults (see Args).
func NewCommand() *cobra.Command {
	cmd, _ := newCommand(os.Args[1:])
	return cmd
}

// newCommand is NewCommand for the command line args, with the Koordinator flags it added.
func newCommand(args []string) (*cobra.Command, *koordinatorFlags) {
	lead := leadership.New()
	cmd := schedulerCommand(lead, Plugins(plugins.WithLeadership(lead))...)
	args, ignoredGates := splitKoordinatorGates(Args(args...))
	cmd.SetArgs(args)
	koordinator := addKoordinatorFlags(cmd)
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		logger := klog.Background().WithName("koord-scheduler")
		if len(ignoredGates) > 0 {
			logger.Info("Ignored Koordinator feature gates that Koord does not implement", "gates", ignoredGates)
		}
		koordinator.set.LogIgnored(logger)
		if err := koordinator.serveInsecure(klog.NewContext(c.Context(), logger)); err != nil {
			return err
		}
		return run(c, args)
	}
	return cmd, koordinator
}

// Server is a scheduler started by Start.
type Server struct {
	done chan struct{}
	err  error
}

// Start builds a kube-scheduler from args, the command line kube-scheduler takes (e.g. --config, --leader-elect;
// Args(...) for koord-scheduler's),
// with the plugins registry registers (Plugins() for koord-scheduler, none for upstream kube-scheduler), and
// runs it until ctx ends. It returns once the scheduler is built, or the error that stopped it from being
// built, such as invalid plugin args. Unlike the command, it installs no signal handler, leaves logging alone
// (the scheduler logs through the logger in ctx) and turns leader election off: kube-scheduler exits the
// process when a leader's context ends.
//
// kube-scheduler keeps some process-wide state (the /configz registration), so only one Server may run in a
// process at a time; Wait for one before starting the next.
func Start(ctx context.Context, args []string, registry ...app.Option) (*Server, error) {
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(append(slices.Clone(args), "--leader-elect=false")); err != nil {
		return nil, err
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("apply feature gates: %w", err)
	}
	cc, sched, err := app.Setup(ctx, opts, registry...)
	if err != nil {
		return nil, err
	}
	// Without leader election the scheduler leads at once.
	RegisteredMetrics().Leading.Set(1)
	s := &Server{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer configz.Delete("componentconfig")
		err := app.Run(ctx, cc, sched)
		if ctx.Err() == nil {
			s.err = err
		}
	}()
	return s, nil
}

// Wait blocks until the scheduler has stopped and returns why, or nil when it stopped because its context
// ended.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Done is closed when the scheduler has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }
