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

package scheduler

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/term"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/koord-dev/koord/pkg/scheduler/leadership"
)

// schedulerCommand is kube-scheduler's command (app.NewSchedulerCommand: the same flags, help and steps),
// built here so that koord-scheduler can stand between app.Setup and app.Run and tell lead when the replica
// leads (see run). The registry is kube-scheduler's: plugins come in through app.WithPlugin as before.
func schedulerCommand(lead *leadership.Leadership, registry ...app.Option) *cobra.Command {
	opts := options.NewOptions()
	cmd := &cobra.Command{
		Use:   "koord-scheduler",
		Short: "Kubernetes scheduler with Koord's plugins",
		Long: `koord-scheduler is kube-scheduler with Koord's plugins registered: the same flags, --config file and
behaviour, plus the plugins LoadAwareScheduling, ElasticQuota, Coscheduling, Reservation, SchedulingHint and
DefaultPreBind. Koordinator's koord-scheduler flags are accepted as well.`,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			// Feature gates are set before RunE, as kube-scheduler's command does.
			return opts.ComponentGlobalsRegistry.Set()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd, opts, lead, registry...)
		},
		Args: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if len(arg) > 0 {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}
	nfs := opts.Flags
	verflag.AddFlags(nfs.FlagSet("global"))
	globalflag.AddGlobalFlags(nfs.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	fs := cmd.Flags()
	for _, f := range nfs.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, *nfs, cols)
	if err := cmd.MarkFlagFilename("config", "yaml", "yml", "json"); err != nil {
		klog.Background().Error(err, "Failed to mark flag filename")
	}
	return cmd
}

// run is kube-scheduler's run step with one addition: between app.Setup and app.Run it hands lead the leader
// election's lock (or, without leader election, elects the replica at once), so that the plugins' controllers
// start when kube-scheduler starts scheduling and not before.
func run(cmd *cobra.Command, opts *options.Options, lead *leadership.Leadership, registry ...app.Option) error {
	verflag.PrintAndExitIfRequested()
	fg := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	// Logging first, so that the flags print with the final logging configuration.
	if err := logsapi.ValidateAndApply(opts.Logs, fg); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	cliflag.PrintFlags(cmd.Flags())
	if opts.InformerName == nil {
		name, err := cache.NewInformerName("kube-scheduler")
		if err != nil {
			return err
		}
		opts.InformerName = name
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-server.SetupSignalHandler()
		cancel()
	}()

	cc, sched, err := app.Setup(ctx, opts, registry...)
	if err != nil {
		return err
	}
	if cc.LeaderElection == nil {
		lead.Elect()
	} else {
		cc.LeaderElection.Lock = lead.Observe(cc.LeaderElection.Lock)
	}
	go func() {
		select {
		case <-lead.Elected():
			RegisteredMetrics().Leading.Set(1)
		case <-ctx.Done():
		}
	}()
	fg.(featuregate.MutableFeatureGate).AddMetrics()
	opts.ComponentGlobalsRegistry.AddMetrics()
	return app.Run(ctx, cc, sched)
}
