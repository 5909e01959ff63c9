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

package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
)

// Flags are the flags of `koordctl check`.
type Flags struct {
	// Watch, when not zero, keeps checking for that long (until interrupted when negative); zero checks once.
	Watch time.Duration
	// Interval is how often a watch evaluates the invariants.
	Interval time.Duration
	// Output is "table" or "json".
	Output string
	// Options tune the invariants.
	Options Options
	// Kubeconfig and Context choose the cluster, as kubectl's flags do ($KUBECONFIG and ~/.kube/config by
	// default).
	Kubeconfig, Context string
}

// NewFlags returns the defaults.
func NewFlags() *Flags {
	return &Flags{Interval: 5 * time.Second, Output: "table"}
}

// AddFlags binds the flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&f.Watch, "watch", f.Watch, "Keep checking for this long (e.g. 10m; -1s: until interrupted), with the history the bind, gang and "+
		"eviction invariants need; 0 checks the cluster as it is once, every finding a violation.")
	fs.DurationVar(&f.Interval, "interval", f.Interval, "How often a --watch evaluates the invariants.")
	fs.StringVarP(&f.Output, "output", "o", f.Output, "Output format: table or json.")
	fs.DurationVar(&f.Options.QuotaRevokeDelay, "quota-revoke-delay", 0, "The revoke controller's delayEvictTime when koord-scheduler runs it "+
		"(ElasticQuotaArgs.monitorAllQuotas); 0: it does not, and quotas are not checked against their runtime.")
	fs.DurationVar(&f.Options.FormulaSettle, "formula-settle", 0, "How long a node may offer more batch resources than the formula gives (default 1m).")
	fs.DurationVar(&f.Options.GangDefaultWaitTime, "gang-default-wait-time", 0, "A gang's waiting time when it sets none (default 10m, CoschedulingArgs.defaultTimeout).")
	fs.DurationVar(&f.Options.JobDefaultTTL, "job-default-ttl", 0, "A PodMigrationJob's ttl when it sets none (default 5m, MigrationControllerArgs.defaultJobTTL).")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).")
	fs.StringVar(&f.Context, "context", f.Context, "The kubeconfig context to use.")
	fs.BoolVar(&f.Options.UnreportedPodsUsageOnly, "unreported-pods-usage-only", false, "koord-manager runs with --unreported-pods-in-max-usage-request=false.")
}

// Validate returns an error naming every invalid flag.
func (f *Flags) Validate() error {
	var errs []error
	if f.Output != "table" && f.Output != "json" {
		errs = append(errs, fmt.Errorf("--output: %q is neither table nor json", f.Output))
	}
	if f.Interval < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("--interval: %s is shorter than 100ms", f.Interval))
	}
	return errors.Join(errs...)
}

// NewCommand returns `koordctl check`.
func NewCommand() *cobra.Command {
	f := NewFlags()
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the invariants of a cluster running Koord",
		Long: `Check the invariants of a cluster running Koord (see the package doc of pkg/koordctl/check and
docs/koordctl.md): pods fit their nodes, batch capacity at bind and on nodes follows the formula, gangs are all or
nothing, quotas stay within their runtime, LS pods are not evicted, migrations end and Reservations serve only
their owners. Without --watch it checks the cluster as it is; with --watch it keeps the history the bind, gang
and eviction invariants need and counts a finding as a violation only when it outlasts its settle time. It
prints what each invariant checked and every violation, and fails when there is one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.Validate(); err != nil {
				return err
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = f.Kubeconfig
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
				&clientcmd.ConfigOverrides{CurrentContext: f.Context}).ClientConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			koord, err := versioned.NewForConfig(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			report, err := Run(ctx, f, kube, koord, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := report.Write(cmd.OutOrStdout(), f.Output); err != nil {
				return err
			}
			if n := len(report.Violations()); n > 0 {
				return fmt.Errorf("%d invariant violations", n)
			}
			return nil
		},
	}
	f.AddFlags(cmd.Flags())
	return cmd
}

// Run checks the cluster as f says and returns the report; violations found during a watch are printed to
// progress as they come.
func Run(ctx context.Context, f *Flags, kube kubernetes.Interface, koord versioned.Interface, progress io.Writer) (Report, error) {
	o := f.Options
	o.Once = f.Watch == 0
	checker := New(o)
	w, err := NewWatch(checker, kube, koord, nil)
	if err != nil {
		return Report{}, err
	}
	defer w.Stop()
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.Start(syncCtx); err != nil {
		return Report{}, err
	}
	if f.Watch == 0 {
		s, err := w.State()
		if err != nil {
			return Report{}, err
		}
		checker.Evaluate(s)
		return checker.Report(), nil
	}
	if f.Watch > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Watch)
		defer cancel()
	}
	err = w.Run(ctx, f.Interval, func(v Violation) {
		fmt.Fprintf(progress, "%s  %s  %s: %s\n", v.Since.Format(time.RFC3339), v.Invariant, v.Object, v.Message)
	})
	return checker.Report(), err
}

// Write prints the report as a table (each invariant, then each violation) or as JSON.
func (r Report) Write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INVARIANT\tEVALUATIONS\tCHECKS\tVIOLATIONS\tOPEN")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", res.Invariant, res.Evaluations, res.Checks, len(res.Violations), res.Open)
	}
	if v := r.Violations(); len(v) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "INVARIANT\tOBJECT\tSINCE\tMESSAGE")
		for _, x := range v {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Invariant, x.Object, x.Since.Format(time.RFC3339), x.Message)
		}
	}
	return tw.Flush()
}
