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

// Package up is the `koordctl up` command: it parses and validates the flags, sends the logs of koordctl itself
// to the state directory, brings a local cluster up through package cluster with a progress display, prints how
// to use it, and runs it in the foreground until Ctrl-C, SIGTERM (`koordctl down`), SIGHUP or a component
// failure, then stops it.
package up

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordctl/progress"
)

// Flags are the flags of `koordctl up`. NewFlags gives the defaults; Options turns them into cluster options.
type Flags struct {
	// Options holds every flag that maps onto a cluster option directly.
	Options cluster.Options
	// NodeCPU and NodeMemory are the quantities of --node-cpu and --node-memory, parsed by Options.
	NodeCPU, NodeMemory string
	// SimFeatureGates are the koordlet gates of the simulated node agents (--sim-feature-gates).
	SimFeatureGates featuregate.MutableVersionedFeatureGate
	// Verbosity is the verbosity of koordctl's own log (--v).
	Verbosity int
}

// NewFlags returns the defaults.
func NewFlags() *Flags {
	o := cluster.DefaultOptions()
	return &Flags{
		Options:         o,
		NodeCPU:         o.NodeCPU.String(),
		NodeMemory:      o.NodeMemory.String(),
		SimFeatureGates: features.NewKoordletGate(),
		Verbosity:       2,
	}
}

// AddFlags binds the flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	o := &f.Options
	fs.StringVar(&o.BinDir, "bin-dir", o.BinDir, "Directory with etcd, kube-apiserver and kwok (make bin) and koord-manager, koord-scheduler and koord-descheduler (make build). Default: $"+cluster.BinDirEnv+", else ./bin.")
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "Directory for the running cluster: kubeconfig, pid file, logs/ of every process, run/ (data, removed on stop).")
	fs.StringVar(&o.KubeconfigOut, "kubeconfig-out", o.KubeconfigOut, "Where to write the administrator kubeconfig for kubectl (removed on stop); empty: only the state directory's.")
	fs.StringVar(&o.ConfigDir, "config-dir", o.ConfigDir, "A Koord source tree's config/ directory to install CRDs, namespace, PriorityClasses, slo-controller-config and the scheduler configuration from. Empty: the copy built into koordctl.")
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, fmt.Sprintf("Number of fake (KWOK) nodes, 1..%d.", cluster.MaxNodes))
	fs.StringVar(&f.NodeCPU, "node-cpu", f.NodeCPU, "CPU capacity of each node.")
	fs.StringVar(&f.NodeMemory, "node-memory", f.NodeMemory, "Memory capacity of each node.")
	fs.Int64Var(&o.NodePods, "node-pods", o.NodePods, "Pod capacity of each node.")
	fs.StringVar(&o.NodeDevices, "node-devices", o.NodeDevices, `Simulated devices of each node, e.g. "gpu=4x16Gi,rdma=2" (GPUs of 16Gi and RDMA NICs over the node's NUMA nodes), reported as the nodes' Device objects; empty: none.`)
	fs.StringVar(&o.KWOKStages, "kwok-stages", o.KWOKStages, "A file of KWOK Stage objects replacing the default node and pod stages.")
	fs.IntVar(&o.APIServerPort, "apiserver-port", o.APIServerPort, "kube-apiserver's port on 127.0.0.1; 0 picks a free one.")
	fs.IntVar(&o.EtcdPort, "etcd-port", o.EtcdPort, "etcd's client port on 127.0.0.1; 0 picks a free one.")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "koord-manager's webhook port; 0 picks a free one.")
	fs.IntVar(&o.ManagerHealthPort, "manager-health-port", o.ManagerHealthPort, "koord-manager's /healthz and /readyz port on 127.0.0.1; 0 picks a free one.")
	fs.IntVar(&o.SchedulerPort, "scheduler-port", o.SchedulerPort, "koord-scheduler's secure port on 127.0.0.1; 0 picks a free one.")
	fs.IntVar(&o.ControllerManagerPort, "controller-manager-port", o.ControllerManagerPort, "kube-controller-manager's secure port on 127.0.0.1; 0 picks a free one.")
	fs.IntVar(&o.DefaultSchedulerPort, "default-scheduler-port", o.DefaultSchedulerPort, "The secure port on 127.0.0.1 of kube-scheduler, which schedules pods that ask for default-scheduler; 0 picks a free one.")
	fs.Float64Var(&o.Speed, "speed", o.Speed, "Speed of simulated time for the node agents (usage profiles, report windows): 1 is real time, 60 a simulated minute per second.")
	fs.DurationVar(&o.ReportInterval, "report-interval", o.ReportInterval, "metricReportIntervalSeconds of the slo-controller-config: how often, in wall time whatever --speed, each node reports its NodeMetric; whole seconds. --nodes / --report-interval is the NodeMetric writes per second.")
	fs.DurationVar(&o.DegradeTime, "degrade-time", o.DegradeTime, "degradeTimeMinutes of the slo-controller-config: how long after its last NodeMetric a node loses its batch resources. 0 keeps the default (15m).")
	fs.DurationVar(&o.AggregateDuration, "aggregate-duration", o.AggregateDuration, "metricAggregateDurationSeconds of the slo-controller-config: the window, in simulated time, over which each node averages the usage it reports; whole seconds. 0 keeps the default (5m).")
	fs.StringVar(&o.SchedulerConfig, "scheduler-config", o.SchedulerConfig, "A KubeSchedulerConfiguration file for koord-scheduler instead of config/scheduler/koord-scheduler-config.yaml.")
	fs.StringVar(&o.DeschedulerConfig, "descheduler-config", o.DeschedulerConfig, "A DeschedulerConfiguration file for koord-descheduler instead of config/descheduler/koord-descheduler-config.yaml.")
	fs.BoolVar(&o.DeschedulerLowNodeLoad, "descheduler-low-node-load", o.DeschedulerLowNodeLoad, "Enable LowNodeLoad in every koord-descheduler profile, so that pods move off nodes above the high usage thresholds (the shipped configuration, like Koordinator's, has it off).")
	fs.IntVar(&o.DeschedulerPort, "descheduler-port", o.DeschedulerPort, "koord-descheduler's /healthz, /readyz and /metrics port on 127.0.0.1; 0 picks a free one.")
	fs.BoolVar(&o.Monitoring, "monitoring", o.Monitoring, "Run Prometheus (bin/prometheus, make bin) scraping every component, with Koord's alert rules, so that the dashboards' queries (charts/koord/files/dashboards) can be run against the local cluster through its HTTP API.")
	fs.IntVar(&o.PrometheusPort, "prometheus-port", o.PrometheusPort, "Prometheus's HTTP port on 127.0.0.1 with --monitoring; 0 picks a free one.")
	fs.StringVar(&o.AuditLog, "audit-log", o.AuditLog, "Write kube-apiserver's audit log (the metadata of every request: user agent, verb, resource, code; one JSON line each) to this file, to see which component asks what of the apiserver. Kept on stop. Empty: none.")
	fs.IntVar(&o.Replicas, "replicas", o.Replicas, fmt.Sprintf("Replicas of koord-manager and koord-scheduler, 1..%d. With more than one they elect leaders as in a real cluster, a proxy on --webhook-port spreads webhook calls over the manager replicas, and a replica that exits is started again.", cluster.MaxReplicas))
	fs.BoolVar(&o.Clean, "clean", o.Clean, "Also remove the logs when the cluster stops.")
	fs.IntVar(&f.Verbosity, "v", f.Verbosity, "Verbosity of koordctl's own log (<state-dir>/logs/koordctl.log).")
	gates := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.SimFeatureGates.AddFlag(gates)
	if g := gates.Lookup("feature-gates"); g != nil {
		fs.Var(g.Value, "sim-feature-gates", "koordlet feature gates of the simulated node agents (BECPUSuppress, BEMemoryEvict), key=value pairs. "+
			strings.ReplaceAll(g.Usage, "\n", " "))
	}
}

// ClusterOptions parses the flags that need it and returns the cluster options, or an error naming every
// invalid flag.
func (f *Flags) ClusterOptions() (cluster.Options, error) {
	o := f.Options
	var errs []error
	if q, err := resource.ParseQuantity(f.NodeCPU); err != nil {
		errs = append(errs, fmt.Errorf("--node-cpu: %q is not a quantity such as 32 or 500m", f.NodeCPU))
	} else {
		o.NodeCPU = q
	}
	if q, err := resource.ParseQuantity(f.NodeMemory); err != nil {
		errs = append(errs, fmt.Errorf("--node-memory: %q is not a quantity such as 128Gi", f.NodeMemory))
	} else {
		o.NodeMemory = q
	}
	if f.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("--v: %d must be 0 or more", f.Verbosity))
	}
	o.SimFeatures = features.ResolveKoordlet(f.SimFeatureGates)
	// A quantity that did not parse keeps its default here, so that Validate reports only the other flags.
	if err := o.Validate(); err != nil {
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

// NewCommand returns `koordctl up`.
func NewCommand() *cobra.Command {
	f := NewFlags()
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run a local Koord cluster in the foreground",
		Long: `Run a local Koord cluster in the foreground: etcd and kube-apiserver, Koord's CRDs and configuration with
colocation on, koord-manager, koord-scheduler, KWOK with fake nodes, and a simulated node agent per node that
reports NodeMetrics. It writes a kubeconfig for kubectl. Ctrl-C (or koordctl down) stops everything and removes
what it started; the logs stay in <state-dir>/logs unless --clean.`,
		Example: `  koordctl up
  koordctl up --nodes 1000 --report-interval 60s
  koordctl up --speed 60 --degrade-time 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			tty := false
			if file, ok := out.(*os.File); ok {
				tty = progress.IsTerminal(file)
			}
			return Run(cmd.Context(), f, out, tty)
		},
	}
	f.AddFlags(cmd.Flags())
	return cmd
}

// Run runs `koordctl up` with f, printing to out (live progress lines when tty), until ctx ends, SIGINT,
// SIGTERM (koordctl down) or SIGHUP (the terminal closed) arrives, or a component fails. It returns the error
// of a failed start or component.
func Run(ctx context.Context, f *Flags, out io.Writer, tty bool) error {
	opts, err := f.ClusterOptions()
	if err != nil {
		return err
	}
	ctx, stop, err := cluster.Session(ctx, opts.StateDir, f.Verbosity, "koordctl")
	if err != nil {
		return err
	}
	defer stop()

	clk := clock.RealClock{}
	printer := progress.New(out, tty, clk)
	started := clk.Now()
	c, err := cluster.Start(ctx, opts, printer)
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("interrupted; stopped what had started")
		}
		return err
	}
	printSummary(printer, c, progress.FormatDuration(clk.Since(started)))

	select {
	case <-ctx.Done():
		printer.Printf("\n")
	case <-c.Failed():
		// The error, with the end of the component's log, is returned and printed once, after the stop.
		printer.Printf("\nA component stopped; stopping the rest.\n")
	}
	printer.Begin("Stopping the cluster")
	stopErr := c.Stop()
	printer.End(stopErr)
	return errors.Join(c.Err(), stopErr)
}

// printSummary tells the user how to reach the running cluster and how to stop it.
func printSummary(p *progress.Printer, c *cluster.Cluster, took string) {
	nodes := len(c.NodeNames())
	p.Printf(`
Koord is running (%d nodes, up in %s). kube-apiserver: %s

  export KUBECONFIG=%s
  kubectl get nodes
  kubectl get nodemetrics                  # usage reported by the simulated node agents
  kubectl get nodes -o custom-columns='NAME:.metadata.name,BATCH-CPU:.status.allocatable.kubernetes\.io/batch-cpu,BATCH-MEMORY:.status.allocatable.kubernetes\.io/batch-memory'
  kubectl apply -f %s   # a BE pod on batch resources

Logs: %s
Stop: Ctrl-C here, or from another shell: koordctl down --state-dir=%s
`, nodes, took, c.RESTConfig().Host, c.Kubeconfig(), c.SampleBEPodPath(), c.LogDir(), c.StateDir())
	if url := c.PrometheusURL(); url != "" {
		p.Printf(`
Prometheus: %s (HTTP API; Koord's alert rules loaded)
  curl -s '%s/api/v1/query' --data-urlencode 'query=sum(koord_manager_noderesource_batch_allocatable{resource="cpu"})'
  curl -s '%s/api/v1/rules'              # the alert rules and their health
`, url, url, url)
	}
}
