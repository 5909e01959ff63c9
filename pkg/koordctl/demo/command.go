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

package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/examples"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordctl/progress"
)

// DefaultReportDir is where `koordctl demo` writes its report by default.
const DefaultReportDir = "koord-demo-report"

// clientQPS and clientBurst bound the scenario's own requests (pod creations and completions).
const (
	clientQPS   = 100
	clientBurst = 200
)

// Flags are the flags of `koordctl demo`.
type Flags struct {
	// Scenario is the scenario file; empty for the built-in examples.DefaultScenario.
	Scenario string
	// ReportDir is where the report is written.
	ReportDir string
	// Speed and Nodes, when above zero, override the scenario's.
	Speed float64
	// Nodes overrides the scenario's node count when above zero.
	Nodes int
	// BinDir, StateDir, KubeconfigOut, ConfigDir and Clean are those of `koordctl up`.
	BinDir, StateDir, KubeconfigOut, ConfigDir string
	// Clean removes the cluster's logs when it stops.
	Clean bool
	// Verbosity is the verbosity of koordctl's log.
	Verbosity int
}

// NewFlags returns the defaults.
func NewFlags() *Flags {
	o := cluster.DefaultOptions()
	return &Flags{
		ReportDir:     DefaultReportDir,
		BinDir:        o.BinDir,
		StateDir:      o.StateDir,
		KubeconfigOut: o.KubeconfigOut,
		Verbosity:     2,
	}
}

// AddFlags binds the flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Scenario, "scenario", f.Scenario, "Scenario file (YAML, see examples/README.md), or the name of a built-in one ("+strings.Join(BuiltInScenarios(), ", ")+"). Default: the built-in "+examples.DefaultScenario+".")
	fs.StringVar(&f.ReportDir, "report-dir", f.ReportDir, "Directory for report.html, data.csv and scenario.yaml.")
	fs.Float64Var(&f.Speed, "speed", f.Speed, "Speed of simulated time, overriding the scenario's (0 keeps it): 720 runs a simulated day in 2 minutes.")
	fs.IntVar(&f.Nodes, "nodes", f.Nodes, "Number of nodes, overriding the scenario's (0 keeps it).")
	fs.StringVar(&f.BinDir, "bin-dir", f.BinDir, "Directory with etcd, kube-apiserver, kwok (make bin), koord-manager and koord-scheduler (make build). Default: $"+cluster.BinDirEnv+", else ./bin.")
	fs.StringVar(&f.StateDir, "state-dir", f.StateDir, "State directory of the local cluster, as for koordctl up.")
	fs.StringVar(&f.KubeconfigOut, "kubeconfig-out", f.KubeconfigOut, "Where to write the administrator kubeconfig while the demo runs; empty: only the state directory's.")
	fs.StringVar(&f.ConfigDir, "config-dir", f.ConfigDir, "A Koord source tree's config/ directory to install the manifests from. Empty: the copy built into koordctl.")
	fs.BoolVar(&f.Clean, "clean", f.Clean, "Also remove the cluster's logs when it stops.")
	fs.IntVar(&f.Verbosity, "v", f.Verbosity, "Verbosity of koordctl's own log (<state-dir>/logs/koordctl.log).")
}

// LoadScenario reads the scenario of the flags (the built-in one when none is named), applies the overrides and
// validates the result. It returns the scenario and its source.
func (f *Flags) LoadScenario() (*Scenario, []byte, error) {
	var data []byte
	var err error
	name := f.Scenario
	builtIn := BuiltInScenario(f.Scenario)
	switch {
	case f.Scenario == "":
		name = "built-in " + examples.DefaultScenario
		data, err = fs.ReadFile(examples.FS, examples.DefaultScenario)
	case builtIn != "":
		if data, err = os.ReadFile(f.Scenario); errors.Is(err, fs.ErrNotExist) {
			name = "built-in " + builtIn
			data, err = fs.ReadFile(examples.FS, builtIn)
		}
	default:
		data, err = os.ReadFile(f.Scenario)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--scenario: %w (built-in scenarios: %s)", err, strings.Join(BuiltInScenarios(), ", "))
	}
	s, err := Load(data)
	if err != nil {
		return nil, nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	var errs []error
	if f.Speed < 0 || f.Speed > MaxSpeed {
		errs = append(errs, fmt.Errorf("--speed: %v is outside (0, %d]; 0 keeps the scenario's", f.Speed, MaxSpeed))
	} else if f.Speed > 0 {
		s.Cluster.Speed = f.Speed
	}
	if f.Nodes < 0 || f.Nodes > cluster.MaxNodes {
		errs = append(errs, fmt.Errorf("--nodes: %d is outside 1..%d; 0 keeps the scenario's", f.Nodes, cluster.MaxNodes))
	} else if f.Nodes > 0 {
		s.Cluster.Nodes = f.Nodes
	}
	if f.Nodes > 0 && f.Nodes <= cluster.MaxNodes {
		// Fewer nodes may not hold what the scenario binds to its first nodes.
		if verrs := ValidateScenario(nil, s); len(verrs) > 0 {
			errs = append(errs, fmt.Errorf("--nodes %d: %w", f.Nodes, verrs.ToAggregate()))
		}
	}
	if f.ReportDir == "" {
		errs = append(errs, errors.New("--report-dir: must not be empty"))
	}
	if f.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("--v: %d must be 0 or more", f.Verbosity))
	}
	return s, data, errors.Join(errs...)
}

// BuiltInScenarios returns the names of the scenarios built into koordctl: those of examples/demo/*.yaml
// without the extension.
func BuiltInScenarios() []string {
	paths, _ := fs.Glob(examples.FS, "demo/*.yaml")
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(path.Base(p), ".yaml")
	}
	return names
}

// BuiltInScenario returns the path in examples.FS of the built-in scenario that --scenario value names, by its
// name ("hot-nodes") or its file's name ("hot-nodes.yaml"); "" when it names none. A file of that name in the
// working directory comes first.
func BuiltInScenario(value string) string {
	if value == "" || strings.ContainsRune(value, '/') {
		return ""
	}
	p := "demo/" + strings.TrimSuffix(value, ".yaml") + ".yaml"
	if _, err := fs.Stat(examples.FS, p); err != nil {
		return ""
	}
	return p
}

// ClusterOptions returns the options of the scenario's cluster.
func (f *Flags) ClusterOptions(s *Scenario) (cluster.Options, error) {
	o := cluster.DefaultOptions()
	o.BinDir, o.StateDir, o.KubeconfigOut, o.ConfigDir, o.Clean = f.BinDir, f.StateDir, f.KubeconfigOut, f.ConfigDir, f.Clean
	o.Nodes = s.Cluster.Nodes
	o.NodeCPU, o.NodeMemory = s.Cluster.NodeCPU.DeepCopy(), s.Cluster.NodeMemory.DeepCopy()
	o.Speed = s.Cluster.Speed
	o.ReportInterval = s.Cluster.ReportIntervalOrDefault()
	feats, err := simFeatures(s.Cluster.SimFeatureGates)
	if err != nil {
		return o, fmt.Errorf("cluster.simFeatureGates: %w", err)
	}
	o.SimFeatures = feats
	if ad := s.Cluster.AggregateDuration; ad != nil {
		o.AggregateDuration = ad.Duration
	}
	o.Prediction = s.Cluster.Prediction.Config()
	if m := s.Cluster.Mid; m != nil {
		o.Mid = cluster.MidSettings{UnallocatedPercent: m.UnallocatedPercent, CPUThresholdPercent: m.CPUThresholdPercent,
			MemoryThresholdPercent: m.MemoryThresholdPercent}
	}
	o.DeschedulerLowNodeLoad = s.Cluster.LowNodeLoadEnabled()
	if d := s.Cluster.Descheduler; d != nil {
		o.DeschedulerConfigData = d.Config
	}
	return o, o.Validate()
}

// NewCommand returns `koordctl demo`.
func NewCommand() *cobra.Command {
	f := NewFlags()
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a colocation scenario on a local cluster and write a report",
		Long: `Run a scenario on a local Koord cluster (as koordctl up starts it, in this process): latency-sensitive
services with their daily usage and batch jobs arriving over time, for a simulated day. Every sample interval it
records, from the running cluster, the CPU utilization with and without colocation, the batch allocatable of
each node, the BE pods running and pending, suppressions, evictions and LS threshold breaches. At the end it
prints a summary and writes report.html (inline SVG charts), data.csv and scenario.yaml to --report-dir.
Ctrl-C stops early; the report then covers what was recorded.`,
		Example: `  koordctl demo
  koordctl demo --scenario examples/demo/colocation-day.yaml --speed 1440
  koordctl demo --scenario hot-nodes
  koordctl demo --scenario my-day.yaml --report-dir /tmp/report`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			tty := false
			if file, ok := out.(*os.File); ok {
				tty = progress.IsTerminal(file)
			}
			return RunCommand(cmd.Context(), f, out, tty)
		},
	}
	f.AddFlags(cmd.Flags())
	return cmd
}

// RunCommand runs `koordctl demo` with f, printing to out (live progress lines when tty): it starts the local
// cluster, runs the scenario until its end, Ctrl-C or SIGTERM, writes the report, prints the summary and stops
// the cluster. The report is written whenever the scenario started, also when it ended early.
func RunCommand(ctx context.Context, f *Flags, out io.Writer, tty bool) error {
	s, source, err := f.LoadScenario()
	if err != nil {
		return err
	}
	opts, err := f.ClusterOptions(s)
	if err != nil {
		return err
	}
	ctx, stop, err := cluster.Session(ctx, opts.StateDir, f.Verbosity, "koordctl-demo")
	if err != nil {
		return err
	}
	defer stop()

	clk := clock.RealClock{}
	printer := progress.New(out, tty, clk)
	printer.Printf("Scenario %s: %d nodes, %s of simulated time at speed %v (about %s), one sample every %s.\n",
		s.Name, s.Cluster.Nodes, shortDuration(s.Duration.Duration), s.Cluster.Speed,
		progress.FormatDuration(time.Duration(float64(s.Duration.Duration)/s.Cluster.Speed)), shortDuration(s.SampleInterval.Duration))
	c, err := cluster.Start(ctx, opts, printer)
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("interrupted; stopped what had started")
		}
		return err
	}
	report, runErr := runOnCluster(ctx, s, source, c, printer, tty)
	var reportErr error
	if report != nil {
		printer.Begin("Writing the report to " + f.ReportDir)
		reportErr = WriteReport(f.ReportDir, report)
		printer.End(reportErr)
	}
	printer.Begin("Stopping the cluster")
	stopErr := c.Stop()
	printer.End(stopErr)
	if report != nil && reportErr == nil {
		PrintSummary(out, report)
		abs, _ := filepath.Abs(filepath.Join(f.ReportDir, ReportHTML))
		fmt.Fprintf(out, "\nReport: %s\n", abs)
	}
	if errors.Is(runErr, context.Canceled) {
		// Ctrl-C: the report covers what ran.
		runErr = nil
	}
	return errors.Join(runErr, reportErr, c.Err(), stopErr)
}

// runOnCluster runs s on the started cluster c, showing progress, and returns the report of what was recorded
// (nil when the scenario could not start) and the run's error.
func runOnCluster(ctx context.Context, s *Scenario, source []byte, c *cluster.Cluster, printer *progress.Printer, tty bool) (*Report, error) {
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	koord, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("koord client: %w", err)
	}
	clk := clock.RealClock{}
	if tty {
		printer.Begin("Scenario " + s.Name)
	} else {
		printer.Printf("Scenario %s: %s simulated ...\n", s.Name, shortDuration(s.Duration.Duration))
	}
	started := clk.Now()
	lastLine := time.Duration(-1)
	lineEvery := max(s.SampleInterval.Duration, s.Duration.Duration/12)
	show := func(sm *Sample) {
		at := clockLabel(s.StartOfDay()+sm.Elapsed, s.Duration.Duration)
		if tty {
			// Short, so that the live line fits a terminal's width.
			printer.Update(fmt.Sprintf("%s CPU %s (%s w/o) batch %s BE %d/%d mid %s pods %d/%d", at,
				fmtFloat(sm.UtilWith(), 0)+"%", fmtFloat(sm.UtilWithout(), 0)+"%", fmtFloat(sm.BatchCPUTotal(), 0),
				sm.BERunning, sm.BEPending, fmtFloat(sm.MidCPUTotal(), 0), sm.MidRunning, sm.MidPending))
			return
		}
		// Plain output (no live line): a line every twelfth of the scenario, so that a log shows the day.
		if lastLine < 0 || sm.Elapsed-lastLine >= lineEvery {
			lastLine = sm.Elapsed
			printer.Printf("  %s  CPU %s (prod+system %s)  batch CPU %s cores  BE %d running, %d pending, %d done  mid CPU %s cores, %d mid pods running\n",
				at, fmtPct(sm.UtilWith()), fmtPct(sm.UtilWithout()), fmtFloat(sm.BatchCPUTotal(), 0),
				sm.BERunning, sm.BEPending, sm.BECompleted, fmtFloat(sm.MidCPUTotal(), 0), sm.MidRunning)
		}
	}
	nodes, samples, runErr := Run(ctx, s, Env{
		Kube: kube, Koord: koord, Sim: c.Sim(), Nodes: c.NodeNames(), Speed: s.Cluster.Speed, Failed: c.Failed(),
	}, show)
	if tty {
		printer.End(runErr)
	}
	if nodes == nil && samples == nil {
		return nil, runErr
	}
	r := &Report{Scenario: s, Source: source, Nodes: nodes, Samples: samples, Started: started, Wall: clk.Since(started)}
	switch {
	case errors.Is(runErr, context.Canceled):
		r.Stopped = "interrupted (Ctrl-C or SIGTERM)"
	case runErr != nil:
		r.Stopped = runErr.Error()
	}
	return r, runErr
}

// fmtPct formats a percentage with one decimal, "n/a" for NaN.
func fmtPct(v float64) string {
	if s := fmtFloat(v, 1); s != "" {
		return s + "%"
	}
	return "n/a"
}

// PrintSummary prints the summary of r for the terminal.
func PrintSummary(w io.Writer, r *Report) {
	sum := Summarize(r.Samples)
	fmt.Fprintf(w, "\nScenario %s: %s of simulated time in %s, %d samples, %d nodes.\n", r.Scenario.Name,
		shortDuration(sum.Simulated.Round(time.Minute)), progress.FormatDuration(r.Wall), sum.Samples, len(r.Nodes))
	if r.Stopped != "" {
		fmt.Fprintf(w, "Stopped early: %s.\n", r.Stopped)
	}
	fmt.Fprintf(w, `
                          with colocation   without (prod + system)
  CPU utilization, mean   %-17s %s   gain %s points (mid pods %s)
  CPU utilization, peak   %-17s %s
  BE pods completed       %d (at most %d running and %d pending at once)
  Batch CPU offered       %s cores on average (%s core-hours); BE pods used %s core-hours
  Mid CPU offered         %s cores on average (%s core-hours); mid pods used %s core-hours
  Mid pods                %d completed (at most %d running and %d pending at once)
  BE CPU suppressed       %s node-minutes
  BE pods evicted         %d
  LS above threshold      %s node-minutes
  Hottest node CPU        %s at the first sample, %s at the last
  Node CPU spread         %s points at the first sample, %s at the last (standard deviation)
  Pod migrations          %d (%d succeeded, %d failed or aborted)
`, fmtPct(sum.AvgUtilWith), fmtPct(sum.AvgUtilWithout), fmtFloat(sum.Gain, 1), fmtFloat(sum.MidGain, 1),
		fmtPct(sum.PeakUtilWith), fmtPct(sum.PeakUtilWithout),
		sum.BECompleted, sum.PeakBERunning, sum.PeakBEPending,
		fmtFloat(sum.AvgBatchCPU, 1), fmtFloat(sum.BatchCPUHours, 0), fmtFloat(sum.BECPUHours, 0),
		fmtFloat(sum.AvgMidCPU, 1), fmtFloat(sum.MidCPUHours, 0), fmtFloat(sum.MidUsedCPUHours, 0),
		sum.MidCompleted, sum.PeakMidRunning, sum.PeakMidPending,
		fmtFloat(float64(sum.SuppressedMoments)/momentsPerMinute, 1), sum.Evictions,
		fmtFloat(float64(sum.LSBreaches)/momentsPerMinute, 1),
		fmtPct(sum.FirstHottest), fmtPct(sum.LastHottest), fmtFloat(sum.FirstSpread, 1), fmtFloat(sum.LastSpread, 1),
		sum.Migrations, sum.MigrationsSucceeded, sum.MigrationsFailed)
	for _, f := range sum.FailedMigrations {
		fmt.Fprintf(w, "    %s\n", f)
	}
}
