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

package koordlet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/cpuset"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/devices"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/nodetopology"
	"github.com/koord-dev/koord/pkg/koordlet/podcgroups"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpuburst"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpuevict"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpuqos"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/memoryevict"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/memoryqos"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/resctrl"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/sysconfig"
	"github.com/koord-dev/koord/pkg/koordlet/reporter"
	"github.com/koord-dev/koord/pkg/koordlet/runtimehooks"
	"github.com/koord-dev/koord/pkg/koordlet/statesinformer"
)

// Component is koordlet's name in Events, logs and the user agent.
const Component = "koordlet"

// Run builds the agent from opts and runs it until ctx ends.
func Run(ctx context.Context, opts Options) error {
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	a, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// restConfig loads the kubeconfig at path, or the in-cluster configuration when path is empty.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration (use --kubeconfig outside a pod): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// Agent is a running koordlet: the loops that sample usage, report it and enforce QoS on one node.
type Agent struct {
	opts     Options
	kube     kubernetes.Interface
	cgroups  *cgroup.Manager
	cache    *metriccache.Cache
	informer *statesinformer.Informer
	collect  *collector.Collector
	report   *reporter.Reporter
	// predict trains the peak prediction the reports carry.
	predict *prediction.Server
	// topology reports the NodeResourceTopology; nil with NodeTopologyReport off.
	topology *nodetopology.Reporter
	// devices reports the node's Device; nil when no device source is on.
	devices *devices.Reporter
	qos     *qosmanager.Manager
	// sysconfig writes the kernel memory settings; nil with SystemConfig off. Its originals are written back
	// when the agent stops.
	sysconfig *sysconfig.Strategy
	// hooks answer the container runtime over NRI; nil with --enable-nri-runtime-hook=false or no rule to
	// apply (BatchResource, CPUSetAllocator, GPUEnvInject and RDMADeviceInject off).
	hooks    *runtimehooks.Hooks
	events   record.EventBroadcaster
	registry *prometheus.Registry
	// koordinator holds Koordinator's names of the metrics in registry; /metrics serves both.
	koordinator *prometheus.Registry
	// psiMetrics are the collector's PSI metrics; nil while PSI is not collected.
	psiMetrics *collector.Metrics
}

// New assembles an agent: it detects the cgroup layout under opts.CgroupRoot, and builds the clients, the
// metric cache and every loop. Nothing runs until Run.
func New(ctx context.Context, cfg *rest.Config, opts Options) (*Agent, error) {
	logger := klog.FromContext(ctx)
	layout, err := detectLayout(opts)
	if err != nil {
		return nil, err
	}
	logger.Info("Detected cgroup layout", "root", layout.Root, "version", layout.Version.String(), "driver", layout.Driver, "kubepods", layout.KubepodsDir())

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	cfg = rest.AddUserAgent(cfg, Component)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	koord, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("koord client: %w", err)
	}

	gates := features.ResolveKoordlet(opts.FeatureGates)
	features.LogGates(logger, opts.FeatureGates, features.KoordletFeatures())
	if opts.gatesFlag != nil {
		opts.gatesFlag.LogIgnored(logger)
	}
	if opts.compat != nil {
		opts.compat.LogIgnored(logger)
	}

	a := &Agent{opts: opts, kube: kube, registry: prometheus.NewRegistry()}
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.events = record.NewBroadcaster(record.WithContext(ctx))
	recorder := a.events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component, Host: opts.NodeName})

	a.cgroups = cgroup.NewManager(layout)
	a.cache = metriccache.New(metriccache.Options{
		NodeSamples:      samples(opts.NodeMetricWindow, opts.CollectInterval),
		PodSamples:       samples(opts.PodMetricWindow, opts.CollectInterval),
		ContainerSamples: samples(opts.PodMetricWindow, opts.CollectInterval),
	})
	a.informer = statesinformer.New(kube, koord, opts.NodeName)
	collectOpts := []collector.Option{collector.WithHostApps(a.informer)}
	if gates.PSICollector {
		m := collector.NewMetrics()
		if err := m.Register(a.registry); err != nil {
			return nil, fmt.Errorf("register collector metrics: %w", err)
		}
		collectOpts = append(collectOpts, collector.WithPSI(), collector.WithMetrics(m))
		a.psiMetrics = m
	}
	a.collect = collector.New(a.cgroups, opts.ProcRoot, a.cache, a.informer, collectOpts...)
	predictMetrics := prediction.NewMetrics()
	if err := predictMetrics.Register(a.registry); err != nil {
		return nil, fmt.Errorf("register prediction metrics: %w", err)
	}
	predictOpts := []prediction.Option{prediction.WithMetrics(predictMetrics)}
	if opts.Prediction.CheckpointDir != "" {
		predictOpts = append(predictOpts, prediction.WithStore(prediction.NewStore(opts.Prediction.CheckpointDir)))
	}
	a.predict = prediction.NewServer(opts.Prediction, a.cache, a.informer, predictOpts...)
	a.report = reporter.New(koord, opts.NodeName, a.cache, a.informer, reporter.WithWarmUp(opts.ReportWarmup),
		reporter.WithPredictor(a.predict), reporter.WithHostApps(a.informer))
	if gates.NodeTopologyReport {
		a.topology = nodetopology.NewReporter(koord, opts.NodeName, nodetopology.Paths{
			SysRoot: opts.SysRoot, KubeletConfig: opts.KubeletConfig, KubeletRootDir: opts.KubeletRootDir,
		}, a.informer)
	}

	if sources := deviceSources(opts, gates); len(sources) > 0 {
		a.devices = devices.NewReporter(koord, opts.NodeName, a.informer, sources...)
	}

	strategies, err := a.strategies(gates, recorder)
	if err != nil {
		return nil, err
	}
	qosMetrics := qosmanager.NewMetrics()
	if err := qosMetrics.Register(a.registry); err != nil {
		return nil, fmt.Errorf("register QoS metrics: %w", err)
	}
	kubeletPinned := nodetopology.NewKubeletPinned(opts.KubeletRootDir)
	a.qos = qosmanager.New(strategies, a.informer, a.cache, qosmanager.WithMetrics(qosMetrics),
		qosmanager.WithMaxSampleAge(3*opts.CollectInterval),
		qosmanager.WithKubeletCPUs(kubeletPinned.Pinned))
	if opts.RuntimeHooks.NRI && (gates.BatchResource || gates.CPUSetAllocator || gates.GPUEnvInject || gates.RDMADeviceInject ||
		gates.CgroupReconcile || gates.GroupIdentity) {
		m := runtimehooks.NewMetrics()
		if err := m.Register(a.registry); err != nil {
			return nil, fmt.Errorf("register runtime hook metrics: %w", err)
		}
		policy, err := runtimehooks.ParseFailurePolicy(opts.RuntimeHooks.FailurePolicy)
		if err != nil {
			return nil, fmt.Errorf("--runtime-hooks-failure-policy: %w", err)
		}
		a.hooks = runtimehooks.New(a.cgroupRules(gates), a.informer, runtimehooks.WithFailurePolicy(policy),
			runtimehooks.WithKubeletCPUs(kubeletPinned.Pinned), runtimehooks.WithMetrics(m),
			runtimehooks.WithDevices(runtimehooks.Devices{GPU: gates.GPUEnvInject, RDMA: gates.RDMADeviceInject, DevRoot: "/dev",
				SysRoot: opts.SysRoot, HAMiCoreLibrary: opts.RuntimeHooks.HAMiCoreLibrary}),
			runtimehooks.WithQoS(runtimehooks.QoS{Cgroups: a.cgroups, MemoryQoS: gates.CgroupReconcile, GroupIdentity: gates.GroupIdentity}))
	}
	if err := a.registerUsageAndKoordinatorMetrics(); err != nil {
		return nil, err
	}
	return a, nil
}

// registerUsageAndKoordinatorMetrics registers the usage gauges, and Koordinator's names of koordlet's metrics
// in a registry of their own (they gather from a.registry); /metrics serves both.
func (a *Agent) registerUsageAndKoordinatorMetrics() error {
	if err := a.registry.Register(newUsageCollector(a.cache, a.informer.Pods, a.opts.NodeName)); err != nil {
		return fmt.Errorf("register usage metrics: %w", err)
	}
	km, err := newKoordinatorMetrics(a.registry, a.opts.NodeName, a.psiMetrics.CPUFullSupported)
	if err != nil {
		return fmt.Errorf("koordlet metrics under Koordinator's names: %w", err)
	}
	a.koordinator = prometheus.NewRegistry()
	if err := km.Register(a.koordinator); err != nil {
		return fmt.Errorf("register koordlet metrics under Koordinator's names: %w", err)
	}
	km.started(float64(clock.RealClock{}.Now().Unix()))
	return nil
}

// cgroupRules is the cgroup reconciler with the BatchResource and CPUSetAllocator gates: the rules of both the
// reconcile loop and the runtime hooks.
func (a *Agent) cgroupRules(gates features.Koordlet) *cgroupreconcile.Strategy {
	sysRoot := a.opts.SysRoot
	return cgroupreconcile.New(a.cgroups, cgroupreconcile.Features{
		BatchResource:   gates.BatchResource,
		CPUSetAllocator: gates.CPUSetAllocator,
	}, cgroupreconcile.WithNUMACPUs(func() (map[int]cpuset.CPUSet, error) { return nodetopology.ReadNUMACPUs(sysRoot) }))
}

// deviceSources are where the node's devices come from: the --device-file alone when given, else NVML
// (Accelerators) and sysfs (RDMADevices).
func deviceSources(opts Options, gates features.Koordlet) []devices.Source {
	if opts.DeviceFile != "" {
		return []devices.Source{devices.NewFileSource(opts.DeviceFile)}
	}
	var out []devices.Source
	if gates.Accelerators {
		out = append(out, devices.NewGPUSource(devices.NewNVML(), opts.SysRoot))
	}
	if gates.RDMADevices {
		out = append(out, devices.NewRDMASource(opts.SysRoot))
	}
	return out
}

// detectLayout resolves the cgroup version and kubelet's driver, unless the driver was given.
func detectLayout(opts Options) (cgroup.Layout, error) {
	v, err := cgroup.DetectVersion(opts.CgroupRoot)
	if err != nil {
		return cgroup.Layout{}, fmt.Errorf("--cgroup-root %s: %w", opts.CgroupRoot, err)
	}
	d := cgroup.Driver(opts.CgroupDriver)
	if d == "" {
		if d, err = cgroup.DetectDriver(opts.CgroupRoot, v, opts.KubeletCgroupRoot); err != nil {
			return cgroup.Layout{}, fmt.Errorf("detect the cgroup driver (or set --cgroup-driver): %w", err)
		}
	}
	return cgroup.Layout{Root: opts.CgroupRoot, Version: v, Driver: d, Parent: opts.KubeletCgroupRoot}, nil
}

// strategies builds the QoS strategies whose gates are on, in the order they run each round: per-class settings
// first, then suppression and burst, then evictions.
func (a *Agent) strategies(gates features.Koordlet, recorder record.EventRecorder) ([]qosmanager.Strategy, error) {
	var out []qosmanager.Strategy
	annotations := qosmanager.NewAnnotationReporter(recorder)
	if gates.PodCgroupReconcile && (gates.BatchResource || gates.CPUSetAllocator) {
		out = append(out, a.cgroupRules(gates))
	}
	if gates.SystemConfig {
		a.sysconfig = sysconfig.New(a.opts.ProcRoot, a.opts.SysRoot)
		out = append(out, a.sysconfig)
	}
	if gates.CgroupReconcile {
		out = append(out, memoryqos.New(a.cgroups, memoryqos.WithAnnotationReporter(annotations)))
	}
	if gates.GroupIdentity || gates.CoreSched {
		out = append(out, cpuqos.New(a.cgroups, cpuqos.Features{GroupIdentity: gates.GroupIdentity, CoreSched: gates.CoreSched},
			a.opts.ProcRoot, cpuqos.WithAnnotationReporter(annotations)))
	}
	if gates.RdtResctrl {
		m := resctrl.NewMetrics()
		if err := m.Register(a.registry); err != nil {
			return nil, fmt.Errorf("register resctrl metrics: %w", err)
		}
		out = append(out, resctrl.New(a.opts.resctrlRoot(), a.cgroups, resctrl.WithMetrics(m)))
	}
	if gates.BECPUSuppress {
		m := cpusuppress.NewMetrics()
		if err := m.Register(a.registry); err != nil {
			return nil, fmt.Errorf("register cpusuppress metrics: %w", err)
		}
		out = append(out, cpusuppress.New(a.cgroups, cpusuppress.WithMetrics(m)))
	}
	if gates.CPUBurst {
		out = append(out, cpuburst.New(a.cgroups, cpuburst.WithAnnotationReporter(annotations)))
	}
	memoryGates := memoryevict.Gates{BEMemoryEvict: gates.BEMemoryEvict, MemoryAllocatableEvict: gates.MemoryAllocatableEvict, MemoryEvict: gates.MemoryEvict}
	cpuGates := cpuevict.Gates{BECPUEvict: gates.BECPUEvict, CPUAllocatableEvict: gates.CPUAllocatableEvict, CPUEvict: gates.CPUEvict}
	if memoryGates != (memoryevict.Gates{}) || cpuGates != (cpuevict.Gates{}) {
		m := evictor.NewMetrics()
		if err := m.Register(a.registry); err != nil {
			return nil, fmt.Errorf("register evictor metrics: %w", err)
		}
		m.Declare(append(memoryGates.Reasons(), cpuGates.Reasons()...)...)
		ev := evictor.New(a.kube, recorder, evictor.WithMetrics(m))
		if memoryGates != (memoryevict.Gates{}) {
			out = append(out, memoryevict.New(ev, memoryevict.WithGates(memoryGates), memoryevict.WithAnnotationReporter(annotations)))
		}
		if cpuGates != (cpuevict.Gates{}) {
			out = append(out, cpuevict.New(a.cgroups, ev, cpuevict.WithGates(cpuGates), cpuevict.WithInterval(a.opts.QoSInterval),
				cpuevict.WithAnnotationReporter(annotations)))
		}
	}
	return out, nil
}

// Run runs every loop until ctx ends. The informers keep their last objects while the apiserver is away, so the
// QoS strategies go on enforcing the last NodeSLO. Only the prediction's models are persisted on disk (its
// checkpoints, written again when the agent stops); a restart re-derives the rest from the cgroups and the API.
func (a *Agent) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	a.events.StartStructuredLogging(3)
	a.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: a.kube.CoreV1().Events("")})
	defer a.events.Shutdown()

	servers, err := a.startServers(ctx)
	if err != nil {
		return err
	}

	var wg sync.WaitGroup
	wg.Go(func() { a.informer.Run(ctx) })
	logger.Info("Waiting for the node's objects", "node", a.opts.NodeName)
	if !a.informer.WaitForCacheSync(ctx) {
		cancel()
		wg.Wait()
		servers.wait()
		return fmt.Errorf("caches of node %s did not sync before shutdown", a.opts.NodeName)
	}
	logger.Info("Started", "node", a.opts.NodeName, "collectInterval", a.opts.CollectInterval, "qosInterval", a.opts.QoSInterval)

	wg.Go(func() { a.collect.Run(ctx, a.opts.CollectInterval) })
	wg.Go(func() { a.predict.Run(ctx) })
	wg.Go(func() { a.report.Run(ctx) })
	if a.devices != nil {
		wg.Go(func() { a.devices.Run(ctx, a.opts.DeviceReportInterval) })
	}
	if a.topology != nil {
		wg.Go(func() { a.topology.Run(ctx, a.opts.TopologyReportInterval) })
	}
	wg.Go(func() { a.qos.Run(ctx, a.opts.QoSInterval) })
	if a.hooks != nil {
		// After the caches synced: a hook needs the pod the runtime asks about.
		wg.Go(func() { runtimehooks.Serve(ctx, a.hooks, a.opts.RuntimeHooks.Resolved()) })
	}
	<-ctx.Done()
	wg.Wait()
	if a.sysconfig != nil {
		// The QoS loop has stopped: put back the kernel settings as they were (a restarted agent then finds the
		// node's own values).
		if err := a.sysconfig.Restore(context.WithoutCancel(ctx)); err != nil {
			logger.Error(err, "Could not restore the kernel settings")
		}
	}
	servers.wait()
	logger.Info("Stopped")
	return nil
}

// hasCollected reports whether a collection round has produced the node's CPU usage (the second round does: the
// first one only primes the counters).
func (a *Agent) hasCollected() bool {
	_, _, ok := a.cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU})
	return ok
}

// servers are the agent's HTTP endpoints.
type servers struct{ done []chan struct{} }

func (s servers) wait() {
	for _, d := range s.done {
		<-d
	}
}

// startServers serves /metrics and /healthz, /readyz on their addresses until ctx ends.
func (a *Agent) startServers(ctx context.Context) (servers, error) {
	var s servers
	metrics := http.NewServeMux()
	metrics.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{a.registry, a.koordinator}, promhttp.HandlerOpts{Registry: a.registry}))
	// The cgroup settings of a pod of the node, for `koordctl explain pod` (through the apiserver's node proxy).
	metrics.Handle(podcgroups.Path, podcgroups.Handler(a.cgroups, a.informer.Pods))
	health := http.NewServeMux()
	health.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	health.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.informer.HasSynced() || !a.hasCollected() {
			http.Error(w, "node objects not synced or no usage collected yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	for _, ep := range []struct {
		name, addr string
		mux        *http.ServeMux
	}{{"metrics", a.opts.MetricsBindAddress, metrics}, {"health", a.opts.HealthProbeBindAddress, health}} {
		if ep.addr == "0" || ep.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", ep.addr)
		if err != nil {
			return s, fmt.Errorf("%s endpoint %s: %w", ep.name, ep.addr, err)
		}
		srv := &http.Server{Handler: ep.mux, ReadHeaderTimeout: 10 * time.Second}
		done := make(chan struct{})
		s.done = append(s.done, done)
		go func() {
			defer close(done)
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				klog.FromContext(ctx).Error(err, "Endpoint stopped", "endpoint", ep.name)
			}
		}()
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
		}()
	}
	return s, nil
}
