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

package reliability

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/prometheus/procfs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/sim"
)

// The soak's settings. make test runs the defaults, a minute on the suite's eight nodes; make soak runs it
// for hours of simulated time on a hundred.
var (
	soakDuration = flag.Duration("soak", time.Minute, "how long TestSoak's churn runs")
	soakRate     = flag.Float64("soak-rate", 2, "pods TestSoak creates a second, LS and BE in turn")
	soakLifetime = flag.Duration("soak-lifetime", 30*time.Second, "how long each of TestSoak's pods lives")
	soakNodes    = flag.Int("soak-nodes", 8, "nodes of the suite's cluster")
	soakDays     = flag.Float64("soak-days", 0, "simulated days the node agents live through during -soak (sets the cluster's speed); 0: real time")
)

// Bounds the soak holds the components to.
const (
	// maxNodeMetricWritesPerInterval bounds the NodeMetric status writes of a node per report interval: one,
	// and a little for the interval's edges.
	maxNodeMetricWritesPerInterval = 1.2
	// maxMemoryGrowth bounds the growth of a component's memory over a soak of at least growthCheckedAfter:
	// the median of the last quarter of the samples over that of the second.
	maxMemoryGrowth    = 1.5
	growthCheckedAfter = 10 * time.Minute
)

// speedForSoak returns the cluster's speed for -soak-days, or 0 to keep the default.
func speedForSoak() float64 {
	if *soakDays <= 0 {
		return 0
	}
	return *soakDays * 24 * float64(time.Hour) / float64(*soakDuration)
}

// latencies records, for each pod of the soak, when it was created and how long until the scheduler bound it.
type latencies struct {
	mu      sync.Mutex
	created map[string]time.Time
	bound   map[string]time.Duration
}

func (l *latencies) create(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.created[name] = time.Now()
}

// forget drops a pod that was not created.
func (l *latencies) forget(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.created, name)
}

func (l *latencies) observe(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	start, ok := l.created[pod.Name]
	if _, seen := l.bound[pod.Name]; ok && !seen {
		l.bound[pod.Name] = time.Since(start)
	}
}

// resourceChanges counts the changes of the nodes' capacity or allocatable (koord-manager's batch, mid and
// device resources), as a node informer sees them.
type resourceChanges struct {
	mu sync.Mutex
	n  int
}

func (b *resourceChanges) observe(old, cur *corev1.Node) {
	// Semantic equality compares quantities by value: "1k" and "1000" are the same.
	if equality.Semantic.DeepEqual(old.Status.Allocatable, cur.Status.Allocatable) && equality.Semantic.DeepEqual(old.Status.Capacity, cur.Status.Capacity) {
		return
	}
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
}

// sampleMemory samples the resident memory of every process of the cluster and of this one (the node agents
// run in it) every interval until ctx ends.
func sampleMemory(ctx context.Context, interval time.Duration) map[string]*memorySeries {
	series := map[string]*memorySeries{}
	sample := func() {
		pids := env.c.PIDs()
		pids[sim.Component+" (test process)"] = os.Getpid()
		for name, pid := range pids {
			p, err := procfs.NewProc(pid)
			if err != nil {
				continue
			}
			st, err := p.Stat()
			if err != nil {
				continue
			}
			s := series[name]
			if s == nil {
				s = &memorySeries{component: name}
				series[name] = s
			}
			s.samples = append(s.samples, uint64(st.ResidentMemory()))
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sample()
		select {
		case <-ctx.Done():
			return series
		case <-t.C:
		}
	}
}

// soakPod returns the i-th pod of the soak: LS pods (Prod, 500m and 512Mi) and BE pods on batch resources in turn.
func soakPod(i int) *corev1.Pod {
	if i%2 == 1 {
		p := bePod(fmt.Sprintf("soak-be-%d", i))
		p.Labels["app"] = "soak"
		return p
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("soak-ls-%d", i),
			Labels: map[string]string{"app": "soak", extension.LabelPodQoS: string(extension.QoSLS)}},
		Spec: corev1.PodSpec{
			SchedulerName: "koord-scheduler",
			Containers: []corev1.Container{{Name: "web", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			}}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}

// TestSoak churns pods (-soak-rate a second, each living -soak-lifetime) for -soak, and reports the memory of
// every component over the run, the apiserver requests of each component from the audit log, and the time from
// a pod's creation to its binding. It holds the node agents to one NodeMetric write per node and report
// interval, koord-manager to node status writes that change the nodes' resources, every pod to be bound, and,
// over a soak of at least 10 minutes, every component's memory to stay flat.
func TestSoak(t *testing.T) {
	ctx := t.Context()
	audit := env.auditLog
	offset := int64(0)
	if info, err := os.Stat(audit); err == nil {
		offset = info.Size()
	}

	lat := &latencies{created: map[string]time.Time{}, bound: map[string]time.Duration{}}
	changes := &resourceChanges{}
	factory := informers.NewSharedInformerFactoryWithOptions(env.kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=soak" }))
	podInformer := factory.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { lat.observe(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { lat.observe(obj.(*corev1.Pod)) },
	}); err != nil {
		t.Fatal(err)
	}
	nodeFactory := informers.NewSharedInformerFactory(env.kube, 0)
	if _, err := nodeFactory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) { changes.observe(old.(*corev1.Node), cur.(*corev1.Node)) },
	}); err != nil {
		t.Fatal(err)
	}
	informerCtx, stopInformers := context.WithCancel(ctx)
	defer func() {
		stopInformers()
		factory.Shutdown()
		nodeFactory.Shutdown()
	}()
	factory.Start(informerCtx.Done())
	nodeFactory.Start(informerCtx.Done())
	factory.WaitForCacheSync(ctx.Done())
	nodeFactory.WaitForCacheSync(ctx.Done())

	memCtx, stopMemory := context.WithCancel(ctx)
	memDone := make(chan map[string]*memorySeries, 1)
	go func() { memDone <- sampleMemory(memCtx, max(*soakDuration/40, 5*time.Second)) }()

	start := time.Now()
	load := &churn{}
	churnCtx, stopChurn := context.WithTimeout(ctx, *soakDuration)
	interval := time.Duration(float64(time.Second) / *soakRate)
	tick := time.NewTicker(interval)
	for i := 0; churnCtx.Err() == nil; i++ {
		// The create has the test's context: one cut short by the end of the churn would be neither made nor
		// a failure of the cluster's.
		pod := soakPod(i)
		lat.create(pod.Name)
		if err := load.create(ctx, pod); err != nil {
			lat.forget(pod.Name)
			load.failed.Add(1)
		} else {
			load.deleteLater(ctx, *soakLifetime, pod.Name)
		}
		select {
		case <-churnCtx.Done():
		case <-tick.C:
		}
	}
	tick.Stop()
	stopChurn()
	end := time.Now()
	load.wg.Wait()
	stopMemory()
	memory := <-memDone

	f, err := readAuditFrom(audit, offset)
	if err != nil {
		t.Fatalf("open the audit log: %v", err)
	}
	counts, badLines, err := countAudit(f, start, end)
	_ = f.Close()
	if err != nil {
		t.Fatalf("read the audit log: %v", err)
	}
	if badLines > 0 {
		t.Logf("%d lines of the audit log did not decode (cut by an apiserver restart)", badLines)
	}

	// Judge.
	d := end.Sub(start)
	nodes := len(env.c.NodeNames())
	nmWrites := counts.succeeded(sim.Component, "nodemetrics/status", "update", "patch")
	perInterval := float64(nmWrites) / (float64(nodes) * d.Seconds() / reportInterval.Seconds())
	if perInterval > maxNodeMetricWritesPerInterval {
		t.Errorf("the node agents wrote %d NodeMetric statuses in %v: %.2f per node and report interval (%v), want at most %.1f",
			nmWrites, d.Round(time.Second), perInterval, reportInterval, maxNodeMetricWritesPerInterval)
	}
	managerNodeWrites := counts.succeeded("koord-manager", "nodes/status", "update", "patch")
	changes.mu.Lock()
	batchChangeCount := changes.n
	changes.mu.Unlock()
	if managerNodeWrites > batchChangeCount {
		t.Errorf("koord-manager wrote node status %d times, but the nodes' resources changed %d times: %d writes changed nothing",
			managerNodeWrites, batchChangeCount, managerNodeWrites-batchChangeCount)
	}
	lat.mu.Lock()
	var waits []time.Duration
	var unbound []string
	for name := range lat.created {
		if w, ok := lat.bound[name]; ok {
			waits = append(waits, w)
		} else {
			unbound = append(unbound, name)
		}
	}
	lat.mu.Unlock()
	slices.Sort(waits)
	slices.Sort(unbound)
	if len(unbound) > 0 {
		t.Errorf("%d of %d pods were never bound: %v", len(unbound), len(waits)+len(unbound), unbound[:min(10, len(unbound))])
	}
	if d >= growthCheckedAfter {
		for _, s := range memory {
			if _, _, _, growth := s.summary(); growth > maxMemoryGrowth {
				t.Errorf("%s's memory grew %.2f times over the soak (samples %v)", s.component, growth, s.samples)
			}
		}
	}

	report := soakReport(d, nodes, memory, counts, waits, len(unbound), load, nmWrites, perInterval, managerNodeWrites, batchChangeCount)
	t.Log("\n" + report)
	if path := reportPath(); path != "" {
		appendReport(t, path, report)
	}
}

// soakReport renders the soak's figures.
func soakReport(d time.Duration, nodes int, memory map[string]*memorySeries, counts requestCounts, waits []time.Duration, unbound int,
	load *churn, nmWrites int, perInterval float64, managerNodeWrites, batchChanges int) string {
	var b strings.Builder
	speed := speedForSoak()
	simulated := d
	if speed > 0 {
		simulated = time.Duration(float64(d) * speed)
	}
	fmt.Fprintf(&b, "SOAK: %v on %d nodes (%v simulated for the node agents), %.1f pods/s living %v: %d created, %d deleted, %d requests failed\n\n",
		d.Round(time.Second), nodes, simulated.Round(time.Minute), *soakRate, *soakLifetime, load.created.Load(), load.deleted.Load(), load.failed.Load())

	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tRSS FIRST\tRSS PEAK\tRSS LAST\tGROWTH\tSAMPLES")
	for _, name := range slices.Sorted(maps.Keys(memory)) {
		first, peak, last, growth := memory[name].summary()
		g := "-"
		if growth > 0 {
			g = fmt.Sprintf("%.2f", growth)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", name, mib(first), mib(peak), mib(last), g, len(memory[name].samples))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CLIENT\tREADS/S\tWRITES/S\tMOST FREQUENT WRITES (a second)")
	for _, a := range counts.rates(d, 3) {
		var top []string
		for _, k := range a.top {
			top = append(top, fmt.Sprintf("%s %s %.2f", k.key.verb, k.key.resource, k.rate))
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\n", a.agent, a.reads, a.writes, strings.Join(top, ", "))
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "\nNodeMetric status writes: %d, %.2f per node and report interval (%v)\n", nmWrites, perInterval, reportInterval)
	fmt.Fprintf(&b, "koord-manager node status writes: %d, changes of the nodes' resources seen: %d\n", managerNodeWrites, batchChanges)
	fmt.Fprintf(&b, "creation to binding: %d pods bound, %d not; p50 %v, p90 %v, p99 %v, max %v\n", len(waits), unbound,
		percentile(waits, 50).Round(time.Millisecond), percentile(waits, 90).Round(time.Millisecond),
		percentile(waits, 99).Round(time.Millisecond), percentile(waits, 100).Round(time.Millisecond))
	return b.String()
}
