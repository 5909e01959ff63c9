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
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordlet/nodetopology"
	"github.com/koord-dev/koord/pkg/scheduler"
	"github.com/koord-dev/koord/test/testenv"
)

var (
	nodeCount = flag.Int("nodes", 1000, "nodes per measurement")
	podCount  = flag.Int("pods", 5000, "pods per measurement")
	runs      = flag.Int("runs", 1, "measurements of each scheduler; the order alternates from one run to the next")
	timeout   = flag.Duration("bind-timeout", 10*time.Minute, "how long a scheduler may take to bind all pods")
	only      = flag.String("only", "", "measure only these schedulers, comma-separated (koord, koord-numa, koord-jobs, upstream), e.g. to profile one")
	// The counters are cumulative over the process: use with -only and -runs=1 to read one scheduler's.
	warmUp       = flag.Bool("warmup", true, "measure the first scheduler once, unrecorded, before the runs: the process's and the apiserver's first measurement is slower")
	showCounters = flag.Bool("counters", false, "log kube-scheduler's scheduling attempt and opportunistic batching counters after each run")
)

var env *testenv.Environment

// TestMain starts the control plane only for a benchmark run: `go test ./...` runs no benchmark here.
func TestMain(m *testing.M) {
	testenv.MainForBenchmarks(m, &env)
}

// clientQPS is the client rate limit of the schedulers and of the harness, as high as scheduler_perf's.
const clientQPS = 5000

// contender is a scheduler under test.
type contender struct {
	// name labels the results.
	name string
	// schedulerName is the profile the pods ask for.
	schedulerName string
	// config returns the scheduler's configuration file for kubeconfig.
	config func(kubeconfig string) ([]byte, error)
	// registry registers out-of-tree plugins.
	registry func() []app.Option
	// flags come before the measurement's own on the scheduler's command line.
	flags []string
	// bindsCPUs says whether the profile runs NodeNUMAResource: the measurement then checks that every pod
	// that binds CPUs got them (and that none did otherwise).
	bindsCPUs bool
}

// batchJobPlugins are the plugins of the shipped profile for batch and AI jobs; the LoadAwareScheduling
// measurement leaves them out.
var batchJobPlugins = []string{"ElasticQuota", "Coscheduling", "Reservation"}

// nodeNUMAResource is the fine-grained CPU orchestration plugin, which the koord-numa measurement adds alone
// to kube-scheduler's default profile.
const nodeNUMAResource = "NodeNUMAResource"

var contenders = []contender{
	{
		name:          "koord",
		schedulerName: "koord-scheduler",
		config: func(kubeconfig string) ([]byte, error) {
			return shippedConfig(kubeconfig, func(name string) bool { return !slices.Contains(batchJobPlugins, name) })
		},
		registry:  func() []app.Option { return scheduler.Plugins() },
		flags:     scheduler.Args(),
		bindsCPUs: true,
	},
	{
		// koord-numa is kube-scheduler's default profile plus NodeNUMAResource as the shipped profile configures
		// it: what the plugin costs, the LSR pods' CPU binding and resource-status patch included.
		name:          "koord-numa",
		schedulerName: "koord-scheduler",
		config: func(kubeconfig string) ([]byte, error) {
			return shippedConfig(kubeconfig, func(name string) bool { return name == nodeNUMAResource })
		},
		registry:  func() []app.Option { return scheduler.Plugins() },
		flags:     scheduler.Args(),
		bindsCPUs: true,
	},
	{
		// koord-jobs is the whole shipped profile: also ElasticQuota, Coscheduling and Reservation, with the
		// pods in gangs and quotas and some of them owning reservations (see createBatchJobObjects).
		name:          "koord-jobs",
		schedulerName: "koord-scheduler",
		config: func(kubeconfig string) ([]byte, error) {
			return shippedConfig(kubeconfig, func(string) bool { return true })
		},
		registry:  func() []app.Option { return scheduler.Plugins() },
		flags:     scheduler.Args(),
		bindsCPUs: true,
	},
	{
		name:          "upstream",
		schedulerName: corev1.DefaultSchedulerName,
		config: func(kubeconfig string) ([]byte, error) {
			return yaml.Marshal(map[string]any{
				"apiVersion":       "kubescheduler.config.k8s.io/v1",
				"kind":             "KubeSchedulerConfiguration",
				"clientConnection": clientConnection(kubeconfig),
			})
		},
		registry: func() []app.Option { return nil },
		// Feature gates are the process's: restore kube-scheduler's default after koord-scheduler's.
		flags: []string{"--feature-gates=NominatedNodeNameForExpectation=true"},
	},
}

// shippedConfig returns koord-scheduler's shipped configuration for kubeconfig, with only the plugins keep
// accepts left in its profile: the others are taken out of every extension point's enabled list (an
// extension point left with none gets kube-scheduler's default plugins back) and out of pluginConfig.
func shippedConfig(kubeconfig string, keep func(name string) bool) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "scheduler", "koord-scheduler-config.yaml"))
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	dropped := func(entry any) bool {
		m, _ := entry.(map[string]any)
		return !keep(fmt.Sprint(m["name"]))
	}
	profiles, _ := raw["profiles"].([]any)
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		if plugins, ok := profile["plugins"].(map[string]any); ok {
			for _, point := range plugins {
				if p, ok := point.(map[string]any); ok {
					if enabled, ok := p["enabled"].([]any); ok {
						p["enabled"] = slices.DeleteFunc(enabled, dropped)
						// A point whose every enabled plugin went (queueSort) gets kube-scheduler's defaults back.
						if len(p["enabled"].([]any)) == 0 {
							delete(p, "disabled")
						}
					}
				}
			}
		}
		if pc, ok := profile["pluginConfig"].([]any); ok {
			profile["pluginConfig"] = slices.DeleteFunc(pc, dropped)
		}
	}
	raw["clientConnection"] = clientConnection(kubeconfig)
	return yaml.Marshal(raw)
}

func clientConnection(kubeconfig string) map[string]any {
	return map[string]any{"kubeconfig": kubeconfig, "qps": clientQPS, "burst": clientQPS}
}

// measurement is one timed scheduling of all pods.
type measurement struct {
	// total is from starting the scheduler until the last pod was bound.
	total time.Duration
	// steady is from the first pod bound until the last.
	steady time.Duration
	// cpu is the CPU time the process (the scheduler, and the harness watching the pods) used meanwhile.
	// It suffers less than wall time from whatever else runs on the machine.
	cpu time.Duration
}

func (m measurement) podsPerSecond(d time.Duration) float64 { return float64(*podCount) / d.Seconds() }

// rate is pods/s from starting the scheduler until the last pod was bound.
func (m measurement) rate() float64 { return m.podsPerSecond(m.total) }

// cpuPerPod is the CPU time per pod, in milliseconds.
func (m measurement) cpuPerPod() float64 {
	return float64(m.cpu.Microseconds()) / 1000 / float64(*podCount)
}

// BenchmarkSchedulerThroughput times koord-scheduler and upstream kube-scheduler binding the same pods.
func BenchmarkSchedulerThroughput(b *testing.B) {
	// Some of kube-scheduler still logs through klog's global logger (e.g. events it fails to write when it is
	// stopped); keep the benchmark's output to its results.
	klog.SetLogger(logr.Discard())
	defer klog.ClearLogger()
	b.Run(fmt.Sprintf("nodes=%d/pods=%d", *nodeCount, *podCount), func(b *testing.B) {
		h, err := newHarness(b)
		if err != nil {
			b.Fatal(err)
		}
		selected, err := selectedContenders(*only)
		if err != nil {
			b.Fatal(err)
		}
		results := map[string][]measurement{}
		run := 0
		if *warmUp {
			c := selected[0]
			m, err := h.measure(b, c, -1)
			if err != nil {
				b.Fatalf("warm-up with %s: %v", c.name, err)
			}
			b.Logf("warm-up (not recorded): %s %.1f pods/s, %.2f ms CPU/pod", c.name, m.podsPerSecond(m.total), m.cpuPerPod())
		}
		for b.Loop() {
			for range *runs {
				order := slices.Clone(selected)
				if run%2 == 1 {
					slices.Reverse(order)
				}
				// One line per run: testing truncates long benchmark logs.
				line := fmt.Sprintf("run %d:", run)
				for _, c := range order {
					m, err := h.measure(b, c, run)
					if err != nil {
						b.Fatalf("%s, run %d: %v", c.name, run, err)
					}
					results[c.name] = append(results[c.name], m)
					line += fmt.Sprintf("  %s %.1f pods/s (%v; %.1f pods/s after the first binding), %.2f ms CPU/pod;",
						c.name, m.podsPerSecond(m.total), m.total.Round(time.Millisecond), m.podsPerSecond(m.steady), m.cpuPerPod())
				}
				b.Log(line)
				if *showCounters {
					counters, err := schedulerCounters()
					if err != nil {
						b.Fatal(err)
					}
					// On stderr: testing truncates a benchmark's long logs.
					fmt.Fprintln(os.Stderr, counters)
				}
				run++
			}
		}
		summary := fmt.Sprintf("medians over %d runs:", run)
		upstream := median(results["upstream"], measurement.rate)
		for _, c := range contenders {
			ms := results[c.name]
			if len(ms) == 0 {
				continue
			}
			rate, cpu := median(ms, measurement.rate), median(ms, measurement.cpuPerPod)
			b.ReportMetric(rate, c.name+"-pods/s")
			b.ReportMetric(cpu, c.name+"-cpu-ms/pod")
			summary += fmt.Sprintf(" %s %.1f pods/s, %.2f ms CPU/pod;", c.name, rate, cpu)
			if c.name != "upstream" && upstream > 0 {
				b.ReportMetric(rate/upstream, c.name+"/upstream")
				summary += fmt.Sprintf(" %s/upstream %.2f", c.name, rate/upstream)
				// Each run's own ratio too: the two were measured a minute apart, the runs several minutes.
				if ups := results["upstream"]; len(ups) == len(ms) {
					summary += " (by run:"
					for i := range ms {
						summary += fmt.Sprintf(" %.2f", ms[i].rate()/ups[i].rate())
					}
					summary += ")"
				}
				summary += ";"
			}
		}
		b.Log(summary)
	})
}

// selectedContenders returns the contenders named in only (comma-separated), in the order of contenders;
// all of them when only is empty.
func selectedContenders(only string) ([]contender, error) {
	if only == "" {
		return contenders, nil
	}
	names := strings.Split(only, ",")
	for _, name := range names {
		if !slices.ContainsFunc(contenders, func(c contender) bool { return c.name == strings.TrimSpace(name) }) {
			return nil, fmt.Errorf("-only=%s: no scheduler %q", only, name)
		}
	}
	return slices.DeleteFunc(slices.Clone(contenders), func(c contender) bool {
		return !slices.ContainsFunc(names, func(name string) bool { return strings.TrimSpace(name) == c.name })
	}), nil
}

// median returns the median of f over ms.
func median(ms []measurement, f func(measurement) float64) float64 {
	values := make([]float64, 0, len(ms))
	for _, m := range ms {
		values = append(values, f(m))
	}
	slices.Sort(values)
	if n := len(values); n%2 == 1 {
		return values[n/2]
	} else if n > 0 {
		return (values[n/2-1] + values[n/2]) / 2
	}
	return 0
}

// harness creates the inputs of each measurement against the shared apiserver.
type harness struct {
	kube       kubernetes.Interface
	koord      versioned.Interface
	kubeconfig string
	// topology is what koordlet reports in every node's NodeResourceTopology.
	topology *nodetopology.Report
}

func newHarness(b *testing.B) (*harness, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = clientQPS, clientQPS
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	koord, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
	if err := writeKubeconfig(env.Config, kubeconfig); err != nil {
		return nil, err
	}
	// ElasticQuota keeps its built-in quotas there.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "koordinator-system"}}
	if _, err := kube.CoreV1().Namespaces().Create(b.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	topology, err := nodeTopology()
	if err != nil {
		return nil, err
	}
	return &harness{kube: kube, koord: koord, kubeconfig: kubeconfig, topology: topology}, nil
}

// measure creates the nodes, NodeMetrics and pending pods of one measurement, starts the scheduler and
// times it binding every pod, then stops it and deletes what it created.
func (h *harness) measure(b *testing.B, c contender, run int) (measurement, error) {
	ctx := b.Context()
	prefix := fmt.Sprintf("perf-%d-%s", run, c.name)
	if run < 0 {
		prefix = "perf-warmup-" + c.name
	}
	if _, err := h.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix}}, metav1.CreateOptions{}); err != nil {
		return measurement{}, fmt.Errorf("create namespace: %w", err)
	}
	defer h.cleanUp(prefix)
	if err := h.createNodes(ctx, prefix); err != nil {
		return measurement{}, err
	}
	bound, stopWatch, err := h.watchBindings(ctx, prefix)
	if err != nil {
		return measurement{}, err
	}
	defer stopWatch()
	if err := h.createBatchJobObjects(ctx, prefix); err != nil {
		return measurement{}, err
	}
	if err := h.createPods(ctx, prefix, c.schedulerName); err != nil {
		return measurement{}, err
	}

	dir := b.TempDir()
	cfg, err := c.config(h.kubeconfig)
	if err != nil {
		return measurement{}, fmt.Errorf("configuration: %w", err)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return measurement{}, err
	}
	// Both schedulers run silent: logging would be measured too.
	schedCtx, cancel := context.WithCancel(klog.NewContext(ctx, logr.Discard()))
	cpuStart, err := processCPU()
	if err != nil {
		cancel()
		return measurement{}, err
	}
	start := time.Now()
	srv, err := scheduler.Start(schedCtx, append(slices.Clone(c.flags), "--config="+cfgPath, "--secure-port=0"), c.registry()...)
	if err != nil {
		cancel()
		return measurement{}, fmt.Errorf("start %s: %w", c.name, err)
	}
	waitErr := bound.wait(ctx, *timeout)
	cpuEnd, err := processCPU()
	if err != nil {
		cancel()
		return measurement{}, err
	}
	cancel()
	if err := srv.Wait(); err != nil {
		return measurement{}, fmt.Errorf("%s stopped with: %w", c.name, err)
	}
	if waitErr != nil {
		return measurement{}, waitErr
	}
	if err := h.checkCPUBinding(ctx, prefix, c.bindsCPUs); err != nil {
		return measurement{}, fmt.Errorf("%s: %w", c.name, err)
	}
	first, last := bound.times()
	return measurement{total: last.Sub(start), steady: last.Sub(first), cpu: cpuEnd - cpuStart}, nil
}

// processCPU returns the user and system CPU time the process has used.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("read CPU usage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// nodeLabel selects a measurement's nodes; its pods select it too.
const nodeLabel = "perf.koord.dev/run"

// nodeTopology returns what koordlet reports in the NodeResourceTopology of a measurement's node: 2 sockets
// of 8 cores of 2 threads (32 CPUs), one NUMA node of 64Gi per socket, no pods yet.
func nodeTopology() (*nodetopology.Report, error) {
	report, err := nodetopology.Build(nodetopology.Synthetic(2, 8, 2, 64<<30), nil, &corev1.Node{}, nil)
	if err != nil {
		return nil, fmt.Errorf("build the nodes' topology: %w", err)
	}
	return report, nil
}

// createNodes creates the nodes, 32 cpus and 128Gi each, their NodeResourceTopologies (see nodeTopology)
// and their NodeMetrics, fresh, at 30% cpu and 40% memory.
func (h *harness) createNodes(ctx context.Context, prefix string) error {
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	usage := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("9600m"),
		corev1.ResourceMemory: resource.MustParse("51Gi"),
	}
	return parallel(ctx, *nodeCount, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s-node-%d", prefix, i)
		labels := map[string]string{nodeLabel: prefix}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status: corev1.NodeStatus{
				Capacity:    allocatable,
				Allocatable: allocatable,
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
		if _, err := h.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		nrt := &topologyv1alpha1.NodeResourceTopology{
			ObjectMeta:       metav1.ObjectMeta{Name: name, Labels: labels, Annotations: h.topology.Annotations},
			TopologyPolicies: h.topology.TopologyPolicies,
			Zones:            h.topology.Zones,
		}
		if _, err := h.koord.TopologyV1alpha1().NodeResourceTopologies().Create(ctx, nrt, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create NodeResourceTopology %s: %w", name, err)
		}
		nm, err := h.koord.SloV1alpha1().NodeMetrics().Create(ctx, &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create NodeMetric %s: %w", name, err)
		}
		nm.Status = slov1alpha1.NodeMetricStatus{
			UpdateTime: &metav1.Time{Time: time.Now()},
			NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: slov1alpha1.ResourceMap{ResourceList: usage}},
		}
		if _, err := h.koord.SloV1alpha1().NodeMetrics().UpdateStatus(ctx, nm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("report usage of %s: %w", name, err)
		}
		return nil
	})
}

// The batch-job workload, the same for every scheduler (those without the plugins ignore it): pods in gangs
// of gangSize (gang annotations), spread over quotaCount ElasticQuotas (quota label), and the first
// reservationCount pods each owning a Reservation of their size.
const (
	gangSize         = 8
	quotaCount       = 20
	reservationCount = 100
	// reservationOwnerLabel names the Reservation a pod owns.
	reservationOwnerLabel = "perf.koord.dev/reservation"
)

// podRequests are the requests of every pod and reservation, but the pods that bind CPUs.
var podRequests = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("100m"),
	corev1.ResourceMemory: resource.MustParse("200Mi"),
}

// Every cpuBoundEvery-th pod (but the Reservations' owners) is an LSR pod asking cpuBoundRequests: with
// NodeNUMAResource in the profile it gets 2 CPUs of its own, a whole physical core.
const cpuBoundEvery = 10

var cpuBoundRequests = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("2"),
	corev1.ResourceMemory: resource.MustParse("2Gi"),
}

// bindsCPUs reports whether the i-th pod is one of those that bind CPUs.
func bindsCPUs(i int) bool { return i >= reservationCount && i%cpuBoundEvery == cpuBoundEvery-1 }

// notReadyToleration lets pods onto the measurement's nodes: the apiserver taints new nodes not-ready, and no
// node controller runs to lift it.
var notReadyToleration = corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// createBatchJobObjects creates the ElasticQuotas (each with min 1% and max all of the nodes' cpu and memory,
// so that they borrow) and the Reservations of a measurement.
func (h *harness) createBatchJobObjects(ctx context.Context, namespace string) error {
	cpus, memory := int64(32**nodeCount), int64(128**nodeCount)
	for i := range quotaCount {
		eq := &schedv1alpha1.ElasticQuota{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-quota-%d", namespace, i), Namespace: namespace},
			Spec: schedv1alpha1.ElasticQuotaSpec{
				Min: corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpus/100, resource.DecimalSI), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", memory/100))},
				Max: corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpus, resource.DecimalSI), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", memory))},
			},
		}
		if _, err := h.koord.SchedulingSigsV1alpha1().ElasticQuotas(namespace).Create(ctx, eq, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create ElasticQuota %s: %w", eq.Name, err)
		}
	}
	return parallel(ctx, reservationCount, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s-r-%d", namespace, i)
		r := &schedulingv1alpha1.Reservation{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nodeLabel: namespace}},
			Spec: schedulingv1alpha1.ReservationSpec{
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Namespace: namespace},
					Spec: corev1.PodSpec{
						NodeSelector: map[string]string{nodeLabel: namespace},
						Tolerations:  []corev1.Toleration{notReadyToleration},
						Containers: []corev1.Container{{
							Name:      "main",
							Image:     "registry.k8s.io/pause:3.10",
							Resources: corev1.ResourceRequirements{Requests: podRequests},
						}},
					},
				},
				Owners: []schedulingv1alpha1.ReservationOwner{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{reservationOwnerLabel: name}}}},
			},
		}
		if _, err := h.koord.SchedulingV1alpha1().Reservations().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Reservation %s: %w", name, err)
		}
		return nil
	})
}

// createPods creates the pending pods, 100m cpu and 200Mi each but the LSR ones (see bindsCPUs), for
// schedulerName, in their gangs and quotas, the first ones owning the Reservations.
func (h *harness) createPods(ctx context.Context, namespace, schedulerName string) error {
	return parallel(ctx, *podCount, func(ctx context.Context, i int) error {
		labels := map[string]string{extension.LabelQuotaName: fmt.Sprintf("%s-quota-%d", namespace, i%quotaCount)}
		if i < reservationCount {
			labels[reservationOwnerLabel] = fmt.Sprintf("%s-r-%d", namespace, i)
		}
		requests := podRequests
		if bindsCPUs(i) {
			labels[extension.LabelPodQoS] = string(extension.QoSLSR)
			requests = cpuBoundRequests
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:      fmt.Sprintf("pod-%d", i),
				Namespace: namespace,
				Labels:    labels,
				Annotations: map[string]string{
					extension.AnnotationGangName:   fmt.Sprintf("gang-%d", i/gangSize),
					extension.AnnotationGangMinNum: fmt.Sprint(min(gangSize, *podCount-i/gangSize*gangSize)),
				},
			},
			Spec: corev1.PodSpec{
				SchedulerName: schedulerName,
				NodeSelector:  map[string]string{nodeLabel: namespace},
				Tolerations:   []corev1.Toleration{notReadyToleration},
				Containers: []corev1.Container{{
					Name:      "main",
					Image:     "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: requests},
				}},
			},
		}
		if _, err := h.kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", pod.Name, err)
		}
		return nil
	})
}

// checkCPUBinding checks the bound pods of namespace: with bindsCPUs, that every LSR pod got its CPUs in its
// resource-status and that no CPU of a node went to two pods; without, that no pod got any.
func (h *harness) checkCPUBinding(ctx context.Context, namespace string, bindsCPUs bool) error {
	pods, err := h.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	taken := map[string]cpuset.CPUSet{}
	bound := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		status, err := extension.GetResourceStatus(pod.Annotations)
		if err != nil {
			return fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		var cpus cpuset.CPUSet
		if status != nil && status.CPUSet != "" {
			if cpus, err = cpuset.Parse(status.CPUSet); err != nil {
				return fmt.Errorf("pod %s: cpuset %q: %w", pod.Name, status.CPUSet, err)
			}
		}
		lsr := pod.Labels[extension.LabelPodQoS] == string(extension.QoSLSR)
		switch {
		case !bindsCPUs && cpus.Size() > 0:
			return fmt.Errorf("pod %s got CPUs %s from a profile without %s", pod.Name, cpus, nodeNUMAResource)
		case bindsCPUs && lsr && cpus.Size() != int(cpuBoundRequests.Cpu().Value()):
			return fmt.Errorf("LSR pod %s on %s got CPUs %q, want %d", pod.Name, pod.Spec.NodeName, cpus, cpuBoundRequests.Cpu().Value())
		case cpus.Size() > 0:
			if both := taken[pod.Spec.NodeName].Intersection(cpus); both.Size() > 0 {
				return fmt.Errorf("CPUs %s of node %s went to pod %s and another", both, pod.Spec.NodeName, pod.Name)
			}
			taken[pod.Spec.NodeName] = taken[pod.Spec.NodeName].Union(cpus)
			bound++
		}
	}
	if bindsCPUs && bound == 0 {
		return errors.New("no pod bound CPUs")
	}
	return nil
}

// parallel runs fn for 0..n-1 on 32 workers and returns the first error.
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workqueue.ParallelizeUntil(ctx, 32, n, func(i int) {
		if err := fn(ctx, i); err != nil {
			cancel(err)
		}
	})
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// bindings counts the pods of a namespace bound to a node, and when the first and the last were.
type bindings struct {
	count       atomic.Int64
	mu          sync.Mutex
	first, last time.Time
	all         chan struct{}
	closeOnce   sync.Once
}

func (b *bindings) bound(want int64) {
	n := b.count.Add(1)
	now := time.Now()
	b.mu.Lock()
	if b.first.IsZero() {
		b.first = now
	}
	b.last = now
	b.mu.Unlock()
	if n >= want {
		b.closeOnce.Do(func() { close(b.all) })
	}
}

func (b *bindings) times() (first, last time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.first, b.last
}

// wait waits until every pod is bound.
func (b *bindings) wait(ctx context.Context, timeout time.Duration) error {
	select {
	case <-b.all:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%d of %d pods bound after %v", b.count.Load(), *podCount, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchBindings watches the pods of namespace and counts them as they get bound. Call stop when done.
func (h *harness) watchBindings(ctx context.Context, namespace string) (b *bindings, stop func(), err error) {
	b = &bindings{all: make(chan struct{})}
	want := int64(*podCount)
	factory := informers.NewSharedInformerFactoryWithOptions(h.kube, 0, informers.WithNamespace(namespace))
	informer := factory.Core().V1().Pods().Informer()
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				b.bound(want)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Pod)
			n, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 && o.Spec.NodeName == "" && n.Spec.NodeName != "" {
				b.bound(want)
			}
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("watch pods: %w", err)
	}
	watchCtx, cancel := context.WithCancel(ctx)
	factory.Start(watchCtx.Done())
	factory.WaitForCacheSync(watchCtx.Done())
	return b, func() {
		cancel()
		factory.Shutdown()
	}, nil
}

// cleanUp deletes what a measurement created. Pods go at once: no kubelet will confirm their end.
func (h *harness) cleanUp(prefix string) {
	ctx := context.Background()
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	selector := metav1.ListOptions{LabelSelector: nodeLabel + "=" + prefix}
	_ = h.kube.CoreV1().Pods(prefix).DeleteCollection(ctx, now, metav1.ListOptions{})
	_ = h.kube.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
	_ = h.koord.SloV1alpha1().NodeMetrics().DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
	_ = h.koord.TopologyV1alpha1().NodeResourceTopologies().DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
	_ = h.koord.SchedulingV1alpha1().Reservations().DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
	_ = h.koord.SchedulingSigsV1alpha1().ElasticQuotas(prefix).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_ = h.kube.CoreV1().Namespaces().Delete(ctx, prefix, metav1.DeleteOptions{})
	// Deletions are asynchronous only for namespaces; wait until the nodes are gone so that the next
	// scheduler does not see them.
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := h.kube.CoreV1().Nodes().List(ctx, selector)
		return err == nil && len(nodes.Items) == 0, nil
	})
}

// writeKubeconfig writes cfg, as the test's admin, into a kubeconfig file.
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	return clientcmd.WriteToFile(*kc, path)
}
