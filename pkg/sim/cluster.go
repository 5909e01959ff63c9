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

package sim

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	sloinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/reporter"
)

// Component is the simulated agents' name in Events and the user agent.
const Component = "koord-sim"

// DefaultNodeSelector selects the nodes KWOK fakes, by their type=kwok label.
var DefaultNodeSelector = labels.SelectorFromSet(labels.Set{"type": "kwok"})

// Defaults of Options.
const (
	// DefaultRoundInterval is how often, in simulated time, a node's round runs: it counts the moments since
	// the last round, applies memory eviction and reports when a report is due.
	DefaultRoundInterval = 10 * time.Second
	// DefaultRetention is how long, in simulated time, a stopped pod stays in its node's model, so that the
	// windows that saw it keep its usage. It should cover the longest aggregation window (30m by default).
	DefaultRetention = time.Hour
	// DefaultWorkers is how many node rounds run at once.
	DefaultWorkers = 8
	// DefaultQPS is the client QPS NewClusterForConfig sets.
	DefaultQPS = 200
	// DefaultBurst is the client burst NewClusterForConfig sets.
	DefaultBurst = 400
	// DefaultSystemCPUPercent is the share of a node's CPU capacity used outside pods by default.
	DefaultSystemCPUPercent = 5
	// DefaultSystemMemory is the memory, in bytes, a node uses outside pods by default (1Gi).
	DefaultSystemMemory = 1 << 30
	// maxCountedMoments bounds the moments one round counts, should the clock jump far ahead.
	maxCountedMoments = 100000
)

// SystemUsage is what a simulated node uses outside pods (daemons and kernel), constantly.
type SystemUsage struct {
	// CPUPercent is the CPU used, in percent of the node's capacity.
	CPUPercent float64
	// Memory is the memory used, in bytes.
	Memory int64
}

// Options configure a Cluster. Durations are in simulated time. Zero values take the defaults, except for
// Features (all off) and History (none).
type Options struct {
	// NodeSelector selects the nodes to simulate; DefaultNodeSelector when nil.
	NodeSelector labels.Selector
	// Features are the koordlet gates the simulated agents follow: BECPUSuppress enables the CPU suppression
	// rule and BEMemoryEvict, MemoryAllocatableEvict and MemoryEvict the memory evictions (all still need
	// resourceUsedThresholdWithBE enabled in the node's NodeSLO). Resolve them from a koordlet gate set
	// (features.ResolveKoordlet) as koordlet does.
	Features features.Koordlet
	// CollectInterval is the step between samples of the usage model; DefaultCollectInterval when zero.
	CollectInterval time.Duration
	// MaxPoints is the most samples one aggregate is computed from; DefaultMaxPoints when zero.
	MaxPoints int
	// RoundInterval is how often each node's round runs; DefaultRoundInterval when zero.
	RoundInterval time.Duration
	// WarmUp is how long after a node is first seen its first report is due; reporter.DefaultWarmUp when zero.
	WarmUp time.Duration
	// History pretends each node's agent (and the pods running when it is first seen) started this long before
	// the node was first seen, so that its aggregates are complete at once; zero for none.
	History time.Duration
	// Retention is how long a stopped pod stays in its node's model; DefaultRetention when zero.
	Retention time.Duration
	// System is the usage outside pods; DefaultSystemCPUPercent and DefaultSystemMemory when nil.
	System *SystemUsage
	// Workers is how many node rounds run at once; DefaultWorkers when zero.
	Workers int
	// QPS and Burst are the client limits NewClusterForConfig sets; DefaultQPS and DefaultBurst when zero.
	QPS float32
	// Burst is the client burst; see QPS.
	Burst int
	// Recorder records the Events of every node (evictions, malformed annotations); when nil, Run records them
	// through the Kubernetes client with source component Component and the node as host.
	Recorder record.EventRecorder
	// Prediction are the settings of each node's peak prediction (koordlet's --prediction-* flags), in simulated
	// time; Koordinator's defaults when nil. The models live in memory: CheckpointDir is not used.
	Prediction *prediction.Config
	// Metrics are the collectors to count into; private ones when nil.
	Metrics *Metrics
}

// Validate returns an error naming every option that is out of range.
func (o Options) Validate() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"collectInterval", o.CollectInterval}, {"roundInterval", o.RoundInterval}, {"warmUp", o.WarmUp},
		{"history", o.History}, {"retention", o.Retention},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("simulation option %s is %v, want 0 (default) or more", d.name, d.v))
		}
	}
	for _, n := range []struct {
		name string
		v    float64
	}{
		{"maxPoints", float64(o.MaxPoints)}, {"workers", float64(o.Workers)}, {"qps", float64(o.QPS)},
		{"burst", float64(o.Burst)},
	} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("simulation option %s is %v, want 0 (default) or more", n.name, n.v))
		}
	}
	if p := o.Prediction; p != nil {
		if err := p.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation option prediction: %w", err))
		}
	}
	if s := o.System; s != nil {
		if !(s.CPUPercent >= 0 && s.CPUPercent <= 100) {
			errs = append(errs, fmt.Errorf("simulation option system.cpuPercent is %v, want 0 to 100", s.CPUPercent))
		}
		if s.Memory < 0 {
			errs = append(errs, fmt.Errorf("simulation option system.memory is %d, want 0 or more bytes", s.Memory))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	set := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	set(&o.CollectInterval, DefaultCollectInterval)
	set(&o.RoundInterval, DefaultRoundInterval)
	set(&o.WarmUp, reporter.DefaultWarmUp)
	set(&o.Retention, DefaultRetention)
	if o.NodeSelector == nil {
		o.NodeSelector = DefaultNodeSelector
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	if o.System == nil {
		o.System = &SystemUsage{CPUPercent: DefaultSystemCPUPercent, Memory: DefaultSystemMemory}
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.QPS == 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.Prediction == nil {
		p := prediction.DefaultConfig()
		o.Prediction = &p
	}
	return o
}

// Cluster runs the simulated agents of every selected node from shared informers (one each for Nodes, bound
// Pods, NodeSLOs and NodeMetrics). A single scheduling loop keeps the nodes in a heap ordered by when their
// next round is due and hands due nodes to a fixed pool of workers, so the cost per node is its state and its
// rounds, not goroutines or timers. Create it with NewCluster and start it with Run.
type Cluster struct {
	kube  kubernetes.Interface
	koord versioned.Interface
	clock *Clock
	opts  Options

	nodeInformer       cache.TypedSharedIndexInformer[*corev1.Node]
	podInformer        cache.TypedSharedIndexInformer[*corev1.Pod]
	nodeSLOInformer    cache.TypedSharedIndexInformer[*slov1alpha1.NodeSLO]
	nodeMetricInformer cache.TypedSharedIndexInformer[*slov1alpha1.NodeMetric]

	mu       sync.Mutex
	started  bool
	recorder func(node string) record.EventRecorder
	nodes    map[string]*simNode
	queue    nodeQueue
	// gone sums the counters of nodes no longer simulated, so that totals never go down.
	gone Counters
	// wake tells the scheduling loop that the head of the queue may have changed.
	wake chan struct{}
	// skews are the clock skews of the nodes' wall clocks (SetClockSkew), by node name, in nanoseconds.
	skews map[string]*atomic.Int64
	// killed are the nodes whose agents KillAgent stopped, until StartAgent starts them again.
	killed map[string]bool
	// predictionMetrics are the collectors every node's prediction records into: one set for all nodes, so
	// that a node costs no collectors of its own; they are not registered (their gauges hold whichever node
	// predicted last).
	predictionMetrics *prediction.Metrics
}

// podNodeIndex is the pod informer's index by spec.nodeName.
const podNodeIndex = "nodeName"

// NewCluster returns a Cluster that reads and writes through kube and koord on the simulated time of clk. It
// returns the error of opts.Validate.
func NewCluster(kube kubernetes.Interface, koord versioned.Interface, clk *Clock, opts Options) (*Cluster, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	c := &Cluster{
		kube:   kube,
		koord:  koord,
		clock:  clk,
		opts:   opts,
		nodes:  map[string]*simNode{},
		skews:  map[string]*atomic.Int64{},
		killed: map[string]bool{},
		wake:   make(chan struct{}, 1),

		predictionMetrics: prediction.NewMetrics(),
	}
	opts.Metrics.agent.setSource(c.Snapshot)
	selector := opts.NodeSelector.String()
	c.nodeInformer = coreinformers.NewTypedFilteredNodeInformer(kube, 0, nil, func(o *metav1.ListOptions) {
		o.LabelSelector = selector
	})
	c.podInformer = coreinformers.NewTypedFilteredPodInformer(kube, metav1.NamespaceAll, 0, coreinformers.PodIndexers{
		podNodeIndex: func(p *corev1.Pod) ([]string, error) {
			if p.Spec.NodeName == "" {
				return nil, nil
			}
			return []string{p.Spec.NodeName}, nil
		},
	}, func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" })
	c.nodeSLOInformer = sloinformers.NewTypedFilteredNodeSLOInformer(koord, 0, nil, nil)
	c.nodeMetricInformer = sloinformers.NewTypedFilteredNodeMetricInformer(koord, 0, nil, nil)
	return c, nil
}

// NewClusterForConfig builds the clients from cfg with opts.QPS and opts.Burst and user agent Component, and
// returns NewCluster of them.
func NewClusterForConfig(cfg *rest.Config, clk *Clock, opts Options) (*Cluster, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	d := opts.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = d.QPS, d.Burst
	// The node agents are a client of their own whichever program runs them: "koord-sim/<version> (<os>/<arch>)
	// kubernetes/<commit>", as a koordlet is "koordlet/...", so that the apiserver's audit log and metrics tell
	// their requests apart.
	_, version, _ := strings.Cut(rest.DefaultKubernetesUserAgent(), "/")
	cfg.UserAgent = Component + "/" + version
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	koord, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("koord client: %w", err)
	}
	return NewCluster(kube, koord, clk, opts)
}

// Run starts the informers, waits for their caches, and then runs the agents of the selected nodes until ctx
// is done. It returns an error when called twice or when ctx ends before the caches sync.
func (c *Cluster) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("simulated cluster already started")
	}
	c.started = true
	c.mu.Unlock()

	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if err := c.start(ctx, &wg); err != nil {
		return err
	}
	logger.Info("Started the simulated node agents", "nodeSelector", c.opts.NodeSelector.String(),
		"speed", c.clock.Speed(), "workers", c.opts.Workers, "roundInterval", c.opts.RoundInterval,
		"cpuSuppress", c.opts.Features.BECPUSuppress, "memoryEvict", c.opts.Features.BEMemoryEvict)

	work := make(chan *simNode)
	for range c.opts.Workers {
		wg.Go(func() {
			for n := range work {
				c.requeue(n, n.round(ctx))
			}
		})
	}
	c.schedule(ctx, work)
	close(work)
	logger.Info("Stopped the simulated node agents")
	return nil
}

// start sets up the Event recorders and the handlers, starts the informers in wg, and waits for their caches
// to sync. The informers and the Event broadcaster stop when ctx is done.
func (c *Cluster) start(ctx context.Context, wg *sync.WaitGroup) error {
	logger := klog.FromContext(ctx)
	if c.opts.Recorder != nil {
		c.recorder = func(string) record.EventRecorder { return c.opts.Recorder }
	} else {
		events := record.NewBroadcaster(record.WithContext(ctx))
		events.StartStructuredLogging(3)
		events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.kube.CoreV1().Events("")})
		wg.Go(func() {
			<-ctx.Done()
			events.Shutdown()
		})
		c.recorder = func(node string) record.EventRecorder {
			return events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component, Host: node})
		}
	}
	if err := c.addHandlers(logger); err != nil {
		return err
	}
	for _, inf := range []cache.SharedIndexInformer{c.nodeInformer, c.podInformer, c.nodeSLOInformer, c.nodeMetricInformer} {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.nodeInformer.HasSynced, c.podInformer.HasSynced,
		c.nodeSLOInformer.HasSynced, c.nodeMetricInformer.HasSynced) {
		return errors.New("simulated cluster: caches did not sync before shutdown")
	}
	return nil
}

// addHandlers registers the event handlers: nodes entering or leaving the selection, and NodeMetrics created
// for nodes waiting to report.
func (c *Cluster) addHandlers(logger klog.Logger) error {
	opts := cache.HandlerOptions{Logger: &logger}
	for _, inf := range []cache.SharedIndexInformer{c.nodeInformer, c.podInformer, c.nodeSLOInformer, c.nodeMetricInformer} {
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return fmt.Errorf("set informer transform: %w", err)
		}
	}
	_, err := c.nodeInformer.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc:    func(n *corev1.Node) { c.nodeChanged(logger, n) },
		UpdateFunc: func(_, n *corev1.Node) { c.nodeChanged(logger, n) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Node]) { c.removeNode(logger, d.GetName()) },
	}, opts)
	if err != nil {
		return fmt.Errorf("add node handler: %w", err)
	}
	_, err = c.nodeMetricInformer.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*slov1alpha1.NodeMetric]{
		AddFunc: func(nm *slov1alpha1.NodeMetric) { c.poke(nm.Name) },
	}, opts)
	if err != nil {
		return fmt.Errorf("add nodemetric handler: %w", err)
	}
	return nil
}

// nodeChanged starts simulating a node that matches the selector and stops one that no longer does (the
// selector is checked here too, since a watch may not apply it).
func (c *Cluster) nodeChanged(logger klog.Logger, n *corev1.Node) {
	if !c.opts.NodeSelector.Matches(labels.Set(n.Labels)) {
		c.removeNode(logger, n.Name)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.nodes[n.Name]; ok || c.killed[n.Name] {
		return
	}
	c.addNode(logger, n.Name, c.opts.History)
}

// addNode starts the agent of node name, pretending it has run for history; c.mu must be held.
func (c *Cluster) addNode(logger klog.Logger, name string, history time.Duration) {
	now := c.clock.Now()
	sn := c.newNode(name, now, history)
	c.nodes[name] = sn
	sn.due = now
	heap.Push(&c.queue, sn)
	c.opts.Metrics.nodes.Set(float64(len(c.nodes)))
	c.signal()
	logger.V(2).Info("Started simulating a node agent", "node", name)
}

// removeNode stops simulating a node; its counters go to the totals of gone nodes.
func (c *Cluster) removeNode(logger klog.Logger, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropNode(logger, name)
}

// KillAgent stops the agent of node as kill -9 stops a koordlet: what it held in memory (its usage samples and
// aggregates, its prediction models, its next report) is gone and nothing is written on its way out, so the
// node's NodeMetric stays as last reported and ages. The agent stays down, whatever happens to the node, until
// StartAgent. Killing an agent that is not running (an unknown node, or one killed already) only keeps it down.
func (c *Cluster) KillAgent(ctx context.Context, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killed[node] = true
	c.dropNode(klog.FromContext(ctx), node)
}

// StartAgent starts the agent of node that KillAgent killed, as a koordlet starting afresh: it has no history
// (Options.History does not apply), collects from now on and reports after the warm-up. It does nothing for a
// node whose agent was not killed, and for one no longer selected it only lifts the kill.
func (c *Cluster) StartAgent(ctx context.Context, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.killed[node] {
		return
	}
	delete(c.killed, node)
	obj, ok, err := c.nodeInformer.GetIndexer().GetByKey(node)
	if err != nil || !ok || !c.opts.NodeSelector.Matches(labels.Set(obj.(*corev1.Node).Labels)) {
		return
	}
	c.addNode(klog.FromContext(ctx), node, 0)
}

// dropNode stops simulating a node; its counters go to the totals of gone nodes. c.mu must be held.
func (c *Cluster) dropNode(logger klog.Logger, name string) {
	n, ok := c.nodes[name]
	if !ok {
		return
	}
	delete(c.nodes, name)
	n.removed = true
	if n.index >= 0 {
		heap.Remove(&c.queue, n.index)
	}
	n.mu.Lock()
	c.gone.add(n.stats.Counters)
	n.mu.Unlock()
	c.opts.Metrics.nodes.Set(float64(len(c.nodes)))
	logger.V(2).Info("Stopped simulating a node agent", "node", name)
}

// poke makes a queued node's round due now, e.g. when its NodeMetric appears.
func (c *Cluster) poke(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[name]
	if !ok || n.index < 0 {
		return
	}
	n.due = c.clock.Now()
	heap.Fix(&c.queue, n.index)
	c.signal()
}

// signal wakes the scheduling loop; c.mu must be held.
func (c *Cluster) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// requeue puts a node back in the queue after its round, due at next, unless it was removed meanwhile.
func (c *Cluster) requeue(n *simNode, next time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.removed {
		return
	}
	n.due = next
	heap.Push(&c.queue, n)
	c.signal()
}

// schedule hands due nodes to work, in the order they are due, and sleeps on the simulated clock until the
// next one is, until ctx is done.
func (c *Cluster) schedule(ctx context.Context, work chan<- *simNode) {
	for {
		c.mu.Lock()
		var due *simNode
		wait := time.Duration(-1)
		if len(c.queue) > 0 {
			now := c.clock.Now()
			if d := c.queue[0].due.Sub(now); d > 0 {
				wait = d
			} else {
				due = heap.Pop(&c.queue).(*simNode)
				c.opts.Metrics.lag.Observe(-d.Seconds())
			}
		}
		c.mu.Unlock()
		if due != nil {
			select {
			case work <- due:
				continue
			case <-ctx.Done():
				return
			}
		}
		var timeout <-chan time.Time
		var t interface{ Stop() bool }
		if wait > 0 {
			tm := c.clock.NewTimer(wait)
			t, timeout = tm, tm.C()
		}
		select {
		case <-ctx.Done():
		case <-c.wake:
		case <-timeout:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// Counters are what the simulated agents did, in moments (one per collection interval) and events.
type Counters struct {
	// SuppressedMoments counts the moments at which BE pods' CPU was suppressed.
	SuppressedMoments int64
	// LSThresholdBreaches counts the moments at which the non-BE pods' CPU usage exceeded
	// cpuSuppressThresholdPercent of the node's capacity.
	LSThresholdBreaches int64
	// Evictions counts the BE pods evicted.
	Evictions int64
	// Reports counts the NodeMetric reports written.
	Reports int64
	// ReportErrors counts the reports that failed.
	ReportErrors int64
}

func (c *Counters) add(o Counters) {
	c.SuppressedMoments += o.SuppressedMoments
	c.LSThresholdBreaches += o.LSThresholdBreaches
	c.Evictions += o.Evictions
	c.Reports += o.Reports
	c.ReportErrors += o.ReportErrors
}

// NodeSnapshot is the state of one simulated node as of its last round.
type NodeSnapshot struct {
	// Name is the node's name.
	Name string
	// Counters are the node's counters since it was first simulated.
	Counters
	// CPUCapacity is the node's CPU capacity in cores.
	CPUCapacity float64
	// MemoryCapacity is the node's memory capacity in bytes.
	MemoryCapacity float64
	// Last is the model's state at the node's last round; zero before it.
	Last Moment
	// LastPods is the usage of each pod running at Last, by namespace and name.
	LastPods []PodUsage
	// SuppressionPolicy is the BE CPU suppression policy in force at Last; empty while suppression is off.
	SuppressionPolicy slov1alpha1.CPUSuppressPolicy
	// LastReport is when its NodeMetric was last written; zero before.
	LastReport time.Time
}

// SetClockSkew sets how far the wall clock of node's agent is off: its reports' status.updateTime is written
// skew ahead of the real time (behind for a negative skew), as by a koordlet on a node whose clock drifted.
// Simulated time is unaffected. It may be called before the node appears and while the agents run; 0 sets the
// clock right again.
func (c *Cluster) SetClockSkew(node string, skew time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skew(node).Store(int64(skew))
}

// skew returns the clock skew of node, creating it (0) when unknown; c.mu must be held.
func (c *Cluster) skew(node string) *atomic.Int64 {
	s, ok := c.skews[node]
	if !ok {
		s = new(atomic.Int64)
		c.skews[node] = s
	}
	return s
}

// Snapshot is the state of every simulated node, for reports such as the demo's.
type Snapshot struct {
	// Time is the simulated time of the snapshot.
	Time time.Time
	// Nodes are the nodes simulated now, by name.
	Nodes []NodeSnapshot
	// Total sums the counters of every node ever simulated, including those gone.
	Total Counters
}

// Snapshot returns the state of every simulated node.
func (c *Cluster) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Snapshot{Time: c.clock.Now(), Nodes: make([]NodeSnapshot, 0, len(c.nodes)), Total: c.gone}
	for _, n := range c.nodes {
		n.mu.Lock()
		st := n.stats
		n.mu.Unlock()
		st.Name = n.name
		s.Total.add(st.Counters)
		s.Nodes = append(s.Nodes, st)
	}
	slices.SortFunc(s.Nodes, func(a, b NodeSnapshot) int { return cmp.Compare(a.Name, b.Name) })
	return s
}

// nodeQueue is a min-heap of nodes by due time; it keeps each node's index.
type nodeQueue []*simNode

func (q nodeQueue) Len() int { return len(q) }

func (q nodeQueue) Less(i, j int) bool {
	if !q[i].due.Equal(q[j].due) {
		return q[i].due.Before(q[j].due)
	}
	return q[i].name < q[j].name
}

func (q nodeQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

func (q *nodeQueue) Push(x any) {
	n := x.(*simNode)
	n.index = len(*q)
	*q = append(*q, n)
}

func (q *nodeQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	n.index = -1
	return n
}

// stripManagedFields drops the managed fields of cached objects, which the agents never read.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}
