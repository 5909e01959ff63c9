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

package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/pkg/koordctl/preflight"
	"github.com/koord-dev/koord/pkg/sim"
)

// Progress is told about the steps of Start, one at a time: Begin, any number of Updates, End.
// progress.Printer implements it.
type Progress interface {
	// Begin starts a step.
	Begin(step string)
	// Update reports how far the running step is, e.g. "412/1000 Ready".
	Update(detail string)
	// End finishes the running step; err is nil when it succeeded.
	End(err error)
}

// nopProgress is the Progress of a Start that was given none.
type nopProgress struct{}

func (nopProgress) Begin(string)  {}
func (nopProgress) Update(string) {}
func (nopProgress) End(error)     {}

// Ports are the ports the running cluster's components listen on, on 127.0.0.1.
type Ports struct {
	// APIServer is kube-apiserver's secure port.
	APIServer int
	// Etcd is etcd's client port.
	Etcd int
	// Webhook is koord-manager's webhook server.
	Webhook int
	// ManagerHealth serves koord-manager's /healthz and /readyz.
	ManagerHealth int
	// Scheduler is koord-scheduler's secure port (/healthz, /metrics).
	Scheduler int
	// ControllerManager is kube-controller-manager's secure port.
	ControllerManager int
	// DefaultScheduler is the secure port of kube-scheduler, which schedules the pods that ask for
	// default-scheduler.
	DefaultScheduler int
	// Descheduler serves koord-descheduler's /healthz, /readyz and /metrics.
	Descheduler int
	// SimMetrics serves the simulated node agents' /metrics (koordlet's metrics of every simulated node).
	SimMetrics int
	// Prometheus is Prometheus's HTTP API; 0 without Options.Monitoring.
	Prometheus int
	// ManagerReplicas are the ports of each koord-manager replica, in the order of Replicas: with one replica,
	// Webhook and ManagerHealth; with more, Webhook is the port of the proxy in front of their webhook ports
	// and ManagerHealth the first replica's.
	ManagerReplicas []ReplicaPorts
	// SchedulerReplicas are the secure ports of each koord-scheduler replica, in the order of Replicas; the
	// first is Scheduler.
	SchedulerReplicas []int
}

// ReplicaPorts are the ports of one koord-manager replica.
type ReplicaPorts struct {
	// Webhook is its webhook server.
	Webhook int
	// Health serves its /healthz and /readyz.
	Health int
	// Metrics serves its /metrics.
	Metrics int
}

// apiserverWatch is how often, and how many times in a row, /readyz must fail before the control plane counts
// as gone.
const (
	apiserverWatchInterval = 5 * time.Second
	apiserverWatchFailures = 3
)

// Cluster is a running local cluster: etcd, kube-apiserver, koord-manager, koord-scheduler and KWOK as child
// processes, and the simulated node agents in this process. Start it with Start; stop it with Stop.
type Cluster struct {
	opts     Options
	progress Progress
	clock    clock.WithTickerAndDelayedExecution
	logger   klog.Logger

	stateDir, runDir, logDir string
	kubeconfigPath           string
	kubeconfig               []byte
	ports                    Ports

	lock *stateLock
	cp   *controlPlane
	sim  *sim.Cluster
	// procs are the components running as child processes, in start order; Restart replaces one.
	procsMu sync.Mutex
	procs   []*process
	// exits counts, per replica, the times it exited on its own and was started again.
	exits map[string]int
	// proxy stands for the webhook Service in front of koord-manager's replicas, when there are several.
	proxy *tcpProxy

	// ctx bounds the goroutines of the running cluster (process monitors, the apiserver watch, the simulated
	// agents); cancel ends them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	stopping atomic.Bool
	// restarts counts the deliberate restarts of etcd or kube-apiserver under way.
	restarts atomic.Int32
	failOnce sync.Once
	failed   chan struct{}
	failErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start brings a local cluster up, step by step, reporting each step to progress (nil for none): preflight
// checks (binaries, ports, the state directory), etcd and kube-apiserver, Koord's manifests with colocation on,
// koord-manager, koord-scheduler, KWOK with opts.Nodes nodes, and the simulated node agents, which have
// reported every node's NodeMetric once when Start returns. The cluster runs until Stop; if a component dies
// before, Failed is closed and Err says which and why. When Start fails it stops what it had started, and the
// error says what went wrong. ctx bounds the start only; the logger in ctx is the cluster's.
func Start(ctx context.Context, opts Options, progress Progress) (_ *Cluster, retErr error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = nopProgress{}
	}
	c := &Cluster{
		opts:     opts,
		progress: progress,
		clock:    clock.RealClock{},
		logger:   klog.FromContext(ctx),
		failed:   make(chan struct{}),
		exits:    map[string]int{},
	}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		if retErr != nil {
			if err := c.Stop(); err != nil {
				retErr = errors.Join(retErr, fmt.Errorf("clean up: %w", err))
			}
		}
	}()

	var in inputs
	var fsys fs.FS
	if err := c.step("Preflight: binaries, ports, state directory", func(func(string)) error {
		var err error
		in, err = c.preflight()
		fsys = manifests(c.opts.ConfigDir)
		return err
	}); err != nil {
		return nil, err
	}

	var cfg *rest.Config
	if err := c.step("Control plane: etcd and kube-apiserver", func(func(string)) error {
		cp, err := startControlPlane(ctx, c.opts.BinDir, c.runDir, c.logDir, c.ports.Etcd, c.ports.APIServer, c.opts.AuditLog)
		if err != nil {
			return err
		}
		c.cp, cfg, c.kubeconfig = cp, cp.config, cp.kubeconfig
		if err := writeFile(c.kubeconfigPath, c.kubeconfig, 0o600); err != nil {
			return err
		}
		if c.opts.KubeconfigOut != "" {
			if err := writeFile(c.opts.KubeconfigOut, c.kubeconfig, 0o600); err != nil {
				return err
			}
		}
		if err := writeFile(c.SampleBEPodPath(), []byte(SampleBEPod), 0o644); err != nil {
			return err
		}
		c.wg.Go(func() {
			watchAPIServer(c.ctx, c.clock, cfg, apiserverWatchInterval, apiserverWatchFailures, c.controlPlaneRestarting, func(err error) {
				c.fail(fmt.Errorf("%w; last lines of %s:\n%s", err, filepath.Join(c.logDir, "kube-apiserver.log"),
					tail(filepath.Join(c.logDir, "kube-apiserver.log"), tailLines)))
			})
		})
		c.logger.Info("Started the control plane", "apiserver", cfg.Host, "kubeconfig", c.kubeconfigPath)
		return nil
	}); err != nil {
		return nil, err
	}
	protoCfg := rest.CopyConfig(cfg)
	protoCfg.ContentType = "application/vnd.kubernetes.protobuf"
	kube, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}

	if err := c.step("Install: CRDs, namespace, PriorityClasses, slo-controller-config (colocation on)", func(func(string)) error {
		return install(ctx, cfg, fsys, SLOConfig{
			ReportInterval: opts.ReportInterval, DegradeTime: opts.DegradeTime, AggregateDuration: opts.AggregateDuration, Mid: opts.Mid,
		})
	}); err != nil {
		return nil, err
	}
	if err := c.step("kube-controller-manager and default-scheduler", func(func(string)) error {
		return c.startKubeComponents(ctx)
	}); err != nil {
		return nil, err
	}
	if err := c.step("koord-manager: controllers and webhooks", func(func(string)) error {
		return c.startManager(ctx, kube)
	}); err != nil {
		return nil, err
	}
	if err := c.step("koord-scheduler", func(func(string)) error {
		return c.startScheduler(ctx, in.schedulerConfig)
	}); err != nil {
		return nil, err
	}
	if err := c.step("koord-descheduler", func(func(string)) error {
		return c.startDescheduler(ctx, in.deschedulerConfig)
	}); err != nil {
		return nil, err
	}
	if err := c.step(fmt.Sprintf("KWOK: %d nodes Ready", opts.Nodes), func(update func(string)) error {
		return c.startKWOK(ctx, kube, in.stages, update)
	}); err != nil {
		return nil, err
	}
	if err := c.step("Simulated node agents: every node reported", func(update func(string)) error {
		return c.startSim(ctx, cfg, update)
	}); err != nil {
		return nil, err
	}
	if opts.Monitoring {
		if err := c.step("Prometheus: scraping every component, Koord's alert rules", func(func(string)) error {
			return c.startPrometheus(ctx)
		}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// step runs f as a progress step. f may report progress through update.
func (c *Cluster) step(name string, f func(update func(string)) error) error {
	c.progress.Begin(name)
	start := c.clock.Now()
	err := f(c.progress.Update)
	c.progress.End(err)
	if err == nil {
		c.logger.V(2).Info("Finished a step", "step", name, "took", c.clock.Since(start))
	}
	return err
}

// inputs are the files the steps after preflight need, read and checked by preflight.
type inputs struct {
	// stages are the KWOK Stage objects.
	stages string
	// schedulerConfig and deschedulerConfig are the configurations of koord-scheduler and koord-descheduler,
	// before the cluster adapts them.
	schedulerConfig, deschedulerConfig []byte
}

// preflight resolves the paths, checks the binaries, takes the state directory, cleans up after a crashed run
// there, resolves the ports and reads the files the later steps need.
func (c *Cluster) preflight() (in inputs, err error) {
	o := &c.opts
	for _, p := range []*string{&o.BinDir, &o.StateDir, &o.KubeconfigOut, &o.AuditLog, &o.ConfigDir, &o.KWOKStages, &o.SchedulerConfig, &o.DeschedulerConfig} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return inputs{}, fmt.Errorf("resolve %s: %w", *p, err)
		}
	}
	binaries := slices.Concat(preflight.ControlPlaneBinaries, preflight.KoordBinaries)
	if o.Monitoring {
		binaries = append(binaries, preflight.MonitoringBinaries...)
	}
	if err := preflight.CheckBinaries(o.BinDir, binaries); err != nil {
		return inputs{}, err
	}

	in.stages = DefaultKWOKStages()
	if o.KWOKStages != "" {
		data, err := os.ReadFile(o.KWOKStages)
		if err != nil {
			return inputs{}, fmt.Errorf("--kwok-stages: %w", err)
		}
		in.stages = string(data)
	}
	if o.SchedulerConfig != "" {
		if in.schedulerConfig, err = os.ReadFile(o.SchedulerConfig); err != nil {
			return inputs{}, fmt.Errorf("--scheduler-config: %w", err)
		}
	} else if in.schedulerConfig, err = fs.ReadFile(manifests(o.ConfigDir), schedulerConfigFile); err != nil {
		return inputs{}, fmt.Errorf("read %s: %w", schedulerConfigFile, err)
	}
	switch {
	case len(o.DeschedulerConfigData) > 0:
		in.deschedulerConfig = o.DeschedulerConfigData
	case o.DeschedulerConfig != "":
		if in.deschedulerConfig, err = os.ReadFile(o.DeschedulerConfig); err != nil {
			return inputs{}, fmt.Errorf("--descheduler-config: %w", err)
		}
	default:
		if in.deschedulerConfig, err = fs.ReadFile(manifests(o.ConfigDir), deschedulerConfigFile); err != nil {
			return inputs{}, fmt.Errorf("read %s: %w", deschedulerConfigFile, err)
		}
	}
	// Fail on a configuration that cannot be adapted before anything starts.
	if _, err := SchedulerConfig(in.schedulerConfig, ""); err != nil {
		return inputs{}, err
	}
	if _, err := DeschedulerConfig(in.deschedulerConfig, "", "127.0.0.1:0", o.DeschedulerLowNodeLoad); err != nil {
		if o.DeschedulerConfig != "" && len(o.DeschedulerConfigData) == 0 {
			return inputs{}, fmt.Errorf("--descheduler-config: %w", err)
		}
		return inputs{}, err
	}

	c.stateDir = o.StateDir
	c.runDir = filepath.Join(c.stateDir, RunDir)
	c.logDir = filepath.Join(c.stateDir, LogDir)
	c.kubeconfigPath = filepath.Join(c.stateDir, KubeconfigFile)
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return inputs{}, fmt.Errorf("create state directory: %w", err)
	}
	if c.lock, err = lockState(c.stateDir); err != nil {
		return inputs{}, err
	}
	if _, err := os.Stat(c.runDir); err == nil {
		pids, err := cleanUpLeftovers(c.clock, c.stateDir)
		if err != nil {
			return inputs{}, fmt.Errorf("clean up after the previous run in %s: %w", c.stateDir, err)
		}
		c.logger.Info("Cleaned up after a previous run that did not stop", "stateDir", c.stateDir, "stoppedProcesses", pids)
	}
	if err := os.Mkdir(c.runDir, 0o700); err != nil {
		return inputs{}, fmt.Errorf("create run directory: %w", err)
	}
	if err := writeRunState(c.runDir, runState{PID: os.Getpid(), KubeconfigOut: o.KubeconfigOut}); err != nil {
		return inputs{}, err
	}

	want := []preflight.Port{
		{Flag: "--apiserver-port", Host: "127.0.0.1", Port: o.APIServerPort},
		{Flag: "--etcd-port", Host: "127.0.0.1", Port: o.EtcdPort},
		{Flag: "--webhook-port", Host: "", Port: o.WebhookPort},
		{Flag: "--manager-health-port", Host: "127.0.0.1", Port: o.ManagerHealthPort},
		{Flag: "--scheduler-port", Host: "127.0.0.1", Port: o.SchedulerPort},
		{Flag: "--controller-manager-port", Host: "127.0.0.1", Port: o.ControllerManagerPort},
		{Flag: "--default-scheduler-port", Host: "127.0.0.1", Port: o.DefaultSchedulerPort},
		{Flag: "--descheduler-port", Host: "127.0.0.1", Port: o.DeschedulerPort},
		{Flag: "the simulated node agents' metrics port", Host: "127.0.0.1"},
		{Flag: "--prometheus-port", Host: "127.0.0.1", Port: o.PrometheusPort},
	}
	// With several replicas, each has ports of its own (free ones), and --webhook-port is the proxy's.
	n := o.replicas()
	if n > 1 {
		for r := range n {
			name := replicaName(managerName, r)
			want = append(want, preflight.Port{Flag: name + " webhook port", Host: ""})
			if r > 0 {
				want = append(want,
					preflight.Port{Flag: name + " health port", Host: "127.0.0.1"},
					preflight.Port{Flag: replicaName(schedulerName, r) + " secure port", Host: "127.0.0.1"})
			}
		}
	}
	// Each koord-manager replica serves its metrics on a free port, the last ones resolved.
	for r := range n {
		want = append(want, preflight.Port{Flag: replicaName(managerName, r) + " metrics port", Host: "127.0.0.1"})
	}
	ports, err := preflight.ResolvePorts(want)
	if err != nil {
		return inputs{}, err
	}
	metricsPorts := ports[len(ports)-n:]
	c.ports = Ports{
		APIServer: ports[0], Etcd: ports[1], Webhook: ports[2], ManagerHealth: ports[3], Scheduler: ports[4],
		ControllerManager: ports[5], DefaultScheduler: ports[6], Descheduler: ports[7], SimMetrics: ports[8],
		ManagerReplicas:   []ReplicaPorts{{Webhook: ports[2], Health: ports[3]}},
		SchedulerReplicas: []int{ports[4]},
	}
	if o.Monitoring {
		c.ports.Prometheus = ports[9]
	}
	if n > 1 {
		extra := ports[10:]
		c.ports.ManagerReplicas[0].Webhook = extra[0]
		for r := 1; r < n; r++ {
			k := 1 + (r-1)*3
			c.ports.ManagerReplicas = append(c.ports.ManagerReplicas, ReplicaPorts{Webhook: extra[k], Health: extra[k+1]})
			c.ports.SchedulerReplicas = append(c.ports.SchedulerReplicas, extra[k+2])
		}
	}
	for r := range c.ports.ManagerReplicas {
		c.ports.ManagerReplicas[r].Metrics = metricsPorts[r]
	}
	return in, nil
}

// startProcess starts the binary name of the bin directory as the component name, with its log in the log
// directory, and watches it: if it exits while the cluster runs, the cluster fails.
func (c *Cluster) startProcess(ctx context.Context, name string, args []string) (*process, error) {
	return c.startBinary(ctx, name, name, args, false)
}

// startBinary starts the binary of the bin directory as the component name, with its log in the log directory,
// and watches it: if it exits while the cluster runs, the cluster fails, or, for a replica, starts it again.
func (c *Cluster) startBinary(ctx context.Context, name, binary string, args []string, replica bool) (*process, error) {
	p, err := startProcess(name, filepath.Join(c.opts.BinDir, binary), args, filepath.Join(c.logDir, name+".log"), false)
	if err != nil {
		return nil, err
	}
	p.replica, p.started = replica, c.clock.Now()
	c.procsMu.Lock()
	c.procs = append(c.procs, p)
	c.procsMu.Unlock()
	klog.FromContext(ctx).Info("Started a component", "component", name, "pid", p.pid(), "log", p.logPath)
	c.watch(p)
	return p, nil
}

// watch fails the cluster when p exits while the cluster runs, unless p was killed on purpose or is a replica,
// which is started again.
func (c *Cluster) watch(p *process) {
	c.wg.Go(func() {
		select {
		case <-p.done:
			switch {
			case p.killed.Load():
			case p.replica:
				c.restartExited(p)
			default:
				c.fail(p.exitError())
			}
		case <-c.ctx.Done():
		}
	})
}

// Restarts of a replica that exits on its own: after replicaRestartDelay, as a kubelet's first crash back-off;
// an exit within replicaCrashWindow of the start counts towards a crash loop, and maxReplicaCrashes of those in
// a row fail the cluster.
const (
	replicaRestartDelay = time.Second
	replicaCrashWindow  = 30 * time.Second
	maxReplicaCrashes   = 3
)

// restartExited starts the replica p again after it exited on its own: a replica that loses its leader lease
// exits by design (controller-runtime and kube-scheduler do), and its Deployment would start it again. A
// replica that keeps exiting soon after its start fails the cluster.
func (c *Cluster) restartExited(p *process) {
	c.logger.Info("A replica exited; starting it again as its Deployment would", "component", p.name, "pid", p.pid(),
		"exit", p.waitErr, "ranFor", c.clock.Since(p.started).Round(time.Millisecond))
	crashes := p.crashes
	if c.clock.Since(p.started) < replicaCrashWindow {
		crashes++
	} else {
		crashes = 0
	}
	if crashes >= maxReplicaCrashes {
		c.fail(fmt.Errorf("%w (it exited %d times in a row within %s of its start)", p.exitError(), crashes, replicaCrashWindow))
		return
	}
	select {
	case <-c.ctx.Done():
		return
	case <-c.clock.After(replicaRestartDelay):
	}
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	i := slices.Index(c.procs, p)
	if i < 0 || c.ctx.Err() != nil {
		return // Restart replaced it, or the cluster stops
	}
	np, err := startProcess(p.name, p.path, p.args, p.logPath, true)
	if err != nil {
		c.fail(fmt.Errorf("start %s again after it exited: %w", p.name, err))
		return
	}
	np.replica, np.ready, np.crashes, np.started = true, p.ready, crashes, c.clock.Now()
	c.procs[i] = np
	c.exits[p.name]++
	c.logger.Info("Started a replica again", "component", p.name, "pid", np.pid(), "exits", c.exits[p.name])
	c.watch(np)
}

// Exits returns how many times the replica name exited on its own and was started again.
func (c *Cluster) Exits(name string) int {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	return c.exits[name]
}

// Component names of the replicated components; replica r > 0 of component x is x-(r+1).
const (
	managerName   = "koord-manager"
	schedulerName = "koord-scheduler"
)

// replicaName names replica r (from 0) of component: the component's name for the first, then name-2, name-3.
func replicaName(component string, r int) string {
	if r == 0 {
		return component
	}
	return fmt.Sprintf("%s-%d", component, r+1)
}

// Replicas returns the names of the replicas of component (koord-manager or koord-scheduler), in order; for
// any other component of Components, its own name.
func (c *Cluster) Replicas(component string) []string {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	var names []string
	for _, p := range c.procs {
		if p.name == component || strings.HasPrefix(p.name, component+"-") && p.replica {
			names = append(names, p.name)
		}
	}
	return names
}

// leaseAcquired is what client-go's leader election logs when a replica becomes the leader.
const leaseAcquired = "Successfully acquired lease"

// Leader returns the replica of component that leads: the only one when the component has one replica (it
// runs without leader election), else the running replica whose log says it acquired the lease since it
// started. It fails when no running replica leads (yet), or more than one claims to.
func (c *Cluster) Leader(component string) (string, error) {
	names := c.Replicas(component)
	switch len(names) {
	case 0:
		return "", fmt.Errorf("leader of %s: not a component of the cluster (it has %v)", component, c.Components())
	case 1:
		return names[0], nil
	}
	c.procsMu.Lock()
	procs := slices.DeleteFunc(slices.Clone(c.procs), func(p *process) bool { return !slices.Contains(names, p.name) || p.exited() })
	c.procsMu.Unlock()
	var leaders []string
	for _, p := range procs {
		ok, err := p.logContains(leaseAcquired)
		if err != nil {
			return "", fmt.Errorf("leader of %s: read the log of %s: %w", component, p.name, err)
		}
		if ok {
			leaders = append(leaders, p.name)
		}
	}
	switch len(leaders) {
	case 0:
		return "", fmt.Errorf("leader of %s: none of the running replicas %v has acquired the lease", component, names)
	case 1:
		return leaders[0], nil
	default:
		return "", fmt.Errorf("leader of %s: %v all say they acquired the lease since they started", component, leaders)
	}
}

// PIDs returns the process id of every running process of the cluster by component name: etcd,
// kube-apiserver, and those of Components (each replica by its name). The node agents run in this process.
func (c *Cluster) PIDs() map[string]int {
	pids := map[string]int{}
	if c.cp != nil {
		pids = c.cp.pids()
	}
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	for _, p := range c.procs {
		if !p.exited() {
			pids[p.name] = p.pid()
		}
	}
	return pids
}

// Components returns the names of the components that run as child processes, in the order they started.
func (c *Cluster) Components() []string {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	names := make([]string, len(c.procs))
	for i, p := range c.procs {
		names[i] = p.name
	}
	return names
}

// Restart kills the component name with SIGKILL (as a crash would: no graceful shutdown, no lease release;
// nothing when Kill killed it already), starts it again with the same flags, its log appended to the old one, and waits until it is ready as its
// first start did. The cluster does not count the kill as a failure. It fails when name is not a component of
// Components, or when the new process does not become ready.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	c.procsMu.Lock()
	i := slices.IndexFunc(c.procs, func(p *process) bool { return p.name == name })
	if i < 0 {
		c.procsMu.Unlock()
		return fmt.Errorf("restart %s: not a component of the cluster (it has %v)", name, c.Components())
	}
	old := c.procs[i]
	c.procsMu.Unlock()
	old.kill()
	p, err := startProcess(old.name, old.path, old.args, old.logPath, true)
	if err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	p.replica, p.started = old.replica, c.clock.Now()
	c.procsMu.Lock()
	c.procs[i] = p
	c.procsMu.Unlock()
	c.logger.Info("Restarted a component after killing it", "component", name, "oldPID", old.pid(), "pid", p.pid())
	c.watch(p)
	return c.waitReady(ctx, p, old.ready...)
}

// Kill kills the component name with SIGKILL, as a crash would, and leaves it down until Restart starts it
// again; the cluster does not count the kill as a failure. It fails when name is not a component of
// Components.
func (c *Cluster) Kill(name string) error {
	c.procsMu.Lock()
	i := slices.IndexFunc(c.procs, func(p *process) bool { return p.name == name })
	if i < 0 {
		c.procsMu.Unlock()
		return fmt.Errorf("kill %s: not a component of the cluster (it has %v)", name, c.Components())
	}
	p := c.procs[i]
	c.procsMu.Unlock()
	p.kill()
	c.logger.Info("Killed a component", "component", name, "pid", p.pid())
	return nil
}

// RestartAPIServer kills kube-apiserver with SIGKILL and starts it again with the same flags and certificates,
// and waits until it serves. Everything else keeps running and must ride it out.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.restarts.Add(1)
	defer c.restarts.Add(-1)
	if err := c.cp.restartAPIServer(ctx, filepath.Join(c.logDir, "kube-apiserver.log")); err != nil {
		return err
	}
	c.logger.Info("Restarted kube-apiserver after killing it")
	return nil
}

// RestartEtcd stops etcd and starts it again on its data, as an etcd restart in a real cluster, and waits until
// kube-apiserver serves again. Everything else keeps running and must ride it out.
func (c *Cluster) RestartEtcd(ctx context.Context) error {
	c.restarts.Add(1)
	defer c.restarts.Add(-1)
	if err := c.cp.restartEtcd(); err != nil {
		return err
	}
	c.logger.Info("Restarted etcd")
	return waitServing(ctx, c.cp.config)
}

// controlPlaneRestarting reports whether RestartEtcd or RestartAPIServer is under way: the apiserver watch does
// not count the failures they cause.
func (c *Cluster) controlPlaneRestarting() bool { return c.restarts.Load() > 0 }

// startSim runs the simulated node agents in this process and waits until each node has reported once.
func (c *Cluster) startSim(ctx context.Context, cfg *rest.Config, update func(string)) error {
	clk, err := sim.NewClock(c.clock, c.clock.Now(), c.opts.Speed)
	if err != nil {
		return fmt.Errorf("--speed: %w", err)
	}
	metrics := sim.NewMetrics()
	if err := c.serveSimMetrics(metrics); err != nil {
		return err
	}
	s, err := sim.NewClusterForConfig(cfg, clk, sim.Options{Features: c.opts.SimFeatures, Prediction: c.opts.Prediction, Metrics: metrics})
	if err != nil {
		return err
	}
	c.sim = s
	c.wg.Go(func() {
		if err := s.Run(klog.NewContext(c.ctx, c.logger.WithName("sim"))); err != nil && c.ctx.Err() == nil {
			c.fail(fmt.Errorf("simulated node agents: %w", err))
		}
	})
	return c.waitProgress(ctx, 250*time.Millisecond, nil, func(context.Context) (int, error) {
		reported := 0
		for _, n := range s.Snapshot().Nodes {
			if !n.LastReport.IsZero() {
				reported++
			}
		}
		update(fmt.Sprintf("%d/%d reported", reported, c.opts.Nodes))
		return reported, nil
	}, c.opts.Nodes, "nodes reported a NodeMetric")
}

// stallTimeout is how long a wait for many objects (nodes Ready, NodeMetrics reported) goes on without any
// progress before it fails. A large cluster takes longer, so there is no overall limit.
const stallTimeout = 2 * time.Minute

// waitProgress calls count every interval until it returns want or more. It fails when the count has not grown
// for stallTimeout (naming what with and the last count error), when p (if not nil) exits, when the cluster
// fails, or when ctx ends.
func (c *Cluster) waitProgress(ctx context.Context, interval time.Duration, p *process, count func(context.Context) (int, error), want int, what string) error {
	best, since := -1, c.clock.Now()
	var done <-chan struct{}
	if p != nil {
		done = p.done
	}
	for {
		n, err := count(ctx)
		if err == nil && n >= want {
			return nil
		}
		if n > best {
			best, since = n, c.clock.Now()
		}
		if c.clock.Since(since) > stallTimeout {
			msg := fmt.Sprintf("%d of %d %s, with no progress for %s", max(best, 0), want, what, stallTimeout)
			if err != nil {
				msg += fmt.Sprintf(" (last error: %v)", err)
			}
			if p != nil {
				msg += fmt.Sprintf("; last lines of %s:\n%s", p.logPath, tail(p.logPath, tailLines))
			}
			return errors.New(msg)
		}
		select {
		case <-done:
			return p.exitError()
		case <-c.failed:
			return c.Err()
		case <-ctx.Done():
			return ctx.Err()
		case <-c.clock.After(interval):
		}
	}
}

// fail records the first failure of the running cluster and closes Failed; failures while stopping do not
// count.
func (c *Cluster) fail(err error) {
	if c.stopping.Load() {
		return
	}
	c.failOnce.Do(func() {
		c.failErr = err
		c.logger.Error(err, "A component of the local cluster stopped")
		close(c.failed)
	})
}

// Failed is closed when a component stopped while the cluster was running; Err then says which and why.
func (c *Cluster) Failed() <-chan struct{} { return c.failed }

// Err returns why the cluster failed (the component, how it ended, the end of its log), or nil.
func (c *Cluster) Err() error {
	select {
	case <-c.failed:
		return c.failErr
	default:
		return nil
	}
}

// Kubeconfig returns the path of the administrator kubeconfig: Options.KubeconfigOut when set, else the one in
// the state directory.
func (c *Cluster) Kubeconfig() string {
	if c.opts.KubeconfigOut != "" {
		return c.opts.KubeconfigOut
	}
	return c.kubeconfigPath
}

// RESTConfig returns a client configuration for the administrator (a member of system:masters).
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.cp.config) }

// Ports returns the ports the components listen on.
func (c *Cluster) Ports() Ports { return c.ports }

// StateDir returns the absolute path of the state directory.
func (c *Cluster) StateDir() string { return c.stateDir }

// LogDir returns the directory of the components' logs.
func (c *Cluster) LogDir() string { return c.logDir }

// NodeNames returns the names of the fake nodes, in index order.
func (c *Cluster) NodeNames() []string {
	names := make([]string, c.opts.Nodes)
	for i := range names {
		names[i] = NodeName(i)
	}
	return names
}

// SampleBEPodPath returns the path of the sample BE pod manifest (SampleBEPod) in the state directory.
func (c *Cluster) SampleBEPodPath() string { return filepath.Join(c.stateDir, SampleBEPodFile) }

// Sim returns the simulated node agents, for their counters (Snapshot).
func (c *Cluster) Sim() *sim.Cluster { return c.sim }

// Stop stops everything Start started, in reverse order: the simulated agents, KWOK, koord-scheduler,
// koord-manager, kube-apiserver and etcd (SIGTERM to each process group, SIGKILL after a grace period); then it
// removes the run directory, the kubeconfigs and the pid file, and with Options.Clean the logs. Call it once
// Start has returned; later calls return the first call's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	c.stopping.Store(true)
	c.cancel()
	c.wg.Wait()
	var errs []error
	c.procsMu.Lock()
	procs := slices.Clone(c.procs)
	c.procsMu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].stop(c.clock, stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	if c.proxy != nil {
		if err := c.proxy.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, fmt.Errorf("stop the webhook proxy: %w", err))
		}
	}
	if c.cp != nil {
		if err := c.cp.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	// The state directory is ours to clean only when this cluster took it: a Start refused because another
	// cluster runs from the same directory must leave that one alone.
	if c.lock == nil {
		return errors.Join(errs...)
	}
	errs = append(errs, c.cleanStateDir()...)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.logger.Info("Stopped the local cluster", "stateDir", c.stateDir)
	return nil
}

// cleanStateDir stops whatever still names the run directory, removes it, the kubeconfigs and the sample, lets
// go of the pid file, and with Options.Clean removes the logs.
func (c *Cluster) cleanStateDir() []error {
	var errs []error
	// Nothing should be left; a failure in envtest's bookkeeping could leave etcd or kube-apiserver.
	if left := killProcessesNaming(c.clock, c.runDir+string(filepath.Separator), stopGrace); len(left) > 0 {
		errs = append(errs, fmt.Errorf("stopped processes left behind: %v", left))
	}
	if err := os.RemoveAll(c.runDir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", c.runDir, err))
	}
	if c.kubeconfig != nil && c.opts.KubeconfigOut != "" {
		if err := removeIfSame(c.opts.KubeconfigOut, c.kubeconfigPath); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range []string{c.kubeconfigPath, c.SampleBEPodPath()} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", f, err))
		}
	}
	if err := c.lock.release(); err != nil {
		errs = append(errs, err)
	}
	if c.opts.Clean {
		if err := removeLogs(c.stateDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// writeFile writes data to path with perm.
func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
