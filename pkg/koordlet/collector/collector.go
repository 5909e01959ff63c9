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

package collector

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/util/sysfile"
)

// DefaultInterval is the collection interval Run uses when given none.
const DefaultInterval = time.Second

// maxRoundErrors bounds how many per-pod errors one round reports.
const maxRoundErrors = 5

// PodLister lists the pods bound to this node. The collector does not
// modify them.
type PodLister interface {
	Pods() []*corev1.Pod
}

// Option configures a Collector.
type Option func(*Collector)

// WithClock sets the clock that timestamps samples and measures the wall
// time between rounds. When it also implements clock.WithTicker, Run ticks
// on it.
func WithClock(c clock.PassiveClock) Option {
	return func(col *Collector) { col.clock = c }
}

// Collector samples usage into a metric cache. Collect and Run may be called
// from several goroutines; rounds do not overlap.
type Collector struct {
	cg       *cgroup.Manager
	procRoot string
	cache    *metriccache.Cache
	lister   PodLister
	hostApps HostAppLister
	clock    clock.PassiveClock
	// psi is whether rounds sample pressure stall information (WithPSI).
	psi     bool
	metrics *Metrics

	mu         sync.Mutex
	round      uint64
	buf        []byte
	node       nodeCounter
	pods       map[types.UID]*counter
	containers map[string]*counter
	// apps are the counters of the host applications, by name.
	apps map[string]*counter
	// nodePSI is the node's pressure sampling state.
	nodePSI nodePSI
}

// nodeCounter is the last /proc/stat reading.
type nodeCounter struct {
	last   cpuTimes
	primed bool
}

// counter is the last CPU time read from one cgroup.
type counter struct {
	dir    string
	usage  time.Duration
	at     time.Time
	primed bool
	// seen is the last round whose pod list had this pod or container.
	seen uint64
	// psi is the pressure sampling state of a pod or host application, when the collector samples it.
	psi *psiState
}

// New returns a Collector that reads cgroups through cg and node counters
// from procRoot (normally /proc, or a host mount), appends samples to cache,
// and takes the node's pods from pods.
func New(cg *cgroup.Manager, procRoot string, cache *metriccache.Cache, pods PodLister, opts ...Option) *Collector {
	c := &Collector{
		cg:         cg,
		procRoot:   procRoot,
		cache:      cache,
		lister:     pods,
		clock:      clock.RealClock{},
		pods:       make(map[types.UID]*counter),
		containers: make(map[string]*counter),
		apps:       make(map[string]*counter),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Run collects a round now and then every interval (DefaultInterval when
// interval is not positive) until ctx is done. A failing round is logged
// when its error differs from the previous round's, so a lasting problem is
// logged once, and its end too.
func (c *Collector) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	logger := klog.FromContext(ctx)
	var tick <-chan time.Time
	if tc, ok := c.clock.(clock.WithTicker); ok {
		t := tc.NewTicker(interval)
		defer t.Stop()
		tick = t.C()
	} else {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	lastErr := ""
	for {
		err := c.Collect(ctx)
		switch {
		case err != nil && err.Error() != lastErr:
			logger.Error(err, "Collection round failed; further identical failures are not logged")
			lastErr = err.Error()
		case err == nil && lastErr != "":
			logger.Info("Collection round succeeded again")
			lastErr = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

// sums are the pod totals of one round, for the system series.
type sums struct {
	cpu, memory, memoryWithCache float64
}

// Collect runs one round. It returns an error when the node counters cannot
// be read or parsed (pods are still collected), and for pods and containers
// whose cgroups fail for another reason than being gone (not started yet,
// or exited: skipped quietly) or lacking a knob (logged once by the cgroup
// manager).
func (c *Collector) Collect(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round++
	now := c.clock.Now()

	nodeCPU, cpuOK, nodeMem, memOK, nodeErr := c.collectNode(now)
	if c.psi {
		nodeErr = errors.Join(nodeErr, c.collectNodePSI(ctx, now))
	}

	var s sums
	var errs []error
	dropped := 0
	for _, pod := range c.lister.Pods() {
		if pod == nil || pod.UID == "" {
			continue
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			c.keep(pod)
			continue
		}
		if err := c.collectPod(ctx, pod, now, &s); err != nil {
			if len(errs) < maxRoundErrors {
				errs = append(errs, err)
			} else {
				dropped++
			}
		}
	}
	if dropped > 0 {
		errs = append(errs, fmt.Errorf("and %d more pod errors", dropped))
	}
	errs = append(errs, c.collectHostApps(ctx, now, &s)...)

	if cpuOK {
		c.cache.Append(key(metriccache.KindSystem, "", corev1.ResourceCPU), now, max(nodeCPU-s.cpu, 0))
	}
	if memOK {
		used, withCache := float64(nodeMem.total-nodeMem.available), float64(nodeMem.total-nodeMem.free)
		c.cache.Append(key(metriccache.KindSystem, "", corev1.ResourceMemory), now, max(used-s.memory, 0))
		c.cache.Append(key(metriccache.KindSystem, "", metriccache.ResourceMemoryWithPageCache), now, max(withCache-s.memoryWithCache, 0))
	}
	c.forget()
	return errors.Join(append([]error{nodeErr}, errs...)...)
}

func key(kind metriccache.Kind, id string, r corev1.ResourceName) metriccache.SeriesKey {
	return metriccache.SeriesKey{Kind: kind, ID: id, Resource: r}
}

// collectNode samples the node's CPU (when a previous reading exists) and
// memory, and says which of the two it sampled.
func (c *Collector) collectNode(now time.Time) (cpu float64, cpuOK bool, mem memInfo, memOK bool, err error) {
	var cpuErr, memErr error
	statPath := filepath.Join(c.procRoot, "stat")
	if c.buf, cpuErr = sysfile.Read(statPath, c.buf[:0]); cpuErr == nil {
		var t cpuTimes
		if t, cpuErr = parseProcStat(c.buf); cpuErr != nil {
			cpuErr = fmt.Errorf("parsing %s: %w", statPath, cpuErr)
		} else if cpu, cpuOK = c.node.rate(t); cpuOK {
			c.cache.Append(key(metriccache.KindNode, "", corev1.ResourceCPU), now, cpu)
		}
	}
	memPath := filepath.Join(c.procRoot, "meminfo")
	if c.buf, memErr = sysfile.Read(memPath, c.buf[:0]); memErr == nil {
		if mem, memErr = parseMeminfo(c.buf); memErr != nil {
			memErr = fmt.Errorf("parsing %s: %w", memPath, memErr)
		} else {
			memOK = true
			c.cache.Append(key(metriccache.KindNode, "", corev1.ResourceMemory), now, float64(mem.total-mem.available))
			c.cache.Append(key(metriccache.KindNode, "", metriccache.ResourceMemoryWithPageCache), now, float64(mem.total-mem.free))
		}
	}
	return cpu, cpuOK, mem, memOK, errors.Join(cpuErr, memErr)
}

// rate returns the node's CPU use in cores since the last reading, and false
// when there is none to compare with (first reading, counters reset or no
// ticks elapsed).
func (n *nodeCounter) rate(t cpuTimes) (float64, bool) {
	last, primed := n.last, n.primed
	n.last, n.primed = t, true
	if !primed || t.total <= last.total || t.busy < last.busy {
		return 0, false
	}
	return float64(t.busy-last.busy) / float64(t.total-last.total) * float64(t.cpus), true
}

// collectPod samples a pod and its containers and adds the pod's usage to s.
func (c *Collector) collectPod(ctx context.Context, pod *corev1.Pod, now time.Time, s *sums) error {
	qos := extension.GetKubeQoSClass(pod)
	uid := string(pod.UID)
	ps := c.pods[pod.UID]
	if ps == nil {
		ps = &counter{dir: c.cg.Layout().PodDir(qos, pod.UID)}
		c.pods[pod.UID] = ps
	}
	ps.seen = c.round
	cpu, cpuOK, err := c.sampleCPU(ctx, ps, now)
	if errors.Is(err, cgroup.ErrNotFound) {
		return nil // not started yet, or gone: nothing to sample
	}
	if err = skipUnsupported(err); err != nil {
		return fmt.Errorf("pod %s: %w", klog.KObj(pod), err)
	}
	if cpuOK {
		c.cache.Append(key(metriccache.KindPod, uid, corev1.ResourceCPU), now, cpu)
		s.cpu += cpu
	}
	mem, err := c.cg.MemoryStats(ctx, ps.dir)
	switch {
	case errors.Is(err, cgroup.ErrNotFound):
		return nil
	case err == nil:
		c.cache.Append(key(metriccache.KindPod, uid, corev1.ResourceMemory), now, float64(mem.WorkingSet))
		c.cache.Append(key(metriccache.KindPod, uid, metriccache.ResourceMemoryWithPageCache), now, float64(mem.Usage))
		s.memory += float64(mem.WorkingSet)
		s.memoryWithCache += float64(mem.Usage)
	case !errors.Is(err, cgroup.ErrNotSupported):
		return fmt.Errorf("pod %s: %w", klog.KObj(pod), err)
	}

	var errs []error
	if c.psi {
		if err := c.collectPSI(ctx, metriccache.KindPod, uid, pod, ps, now); err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range statuses {
			if err := c.collectContainer(ctx, pod, qos, &statuses[i], now); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// collectContainer samples one container of pod. Containers without an ID
// (not created yet) or known to have terminated are skipped.
func (c *Collector) collectContainer(ctx context.Context, pod *corev1.Pod, qos corev1.PodQOSClass, st *corev1.ContainerStatus, now time.Time) error {
	if st.ContainerID == "" || st.State.Terminated != nil {
		return nil
	}
	cs := c.containers[st.ContainerID]
	if cs == nil {
		dir, err := c.cg.Layout().ContainerDir(qos, pod.UID, st.ContainerID)
		if err != nil {
			return fmt.Errorf("pod %s container %s: %w", klog.KObj(pod), st.Name, err)
		}
		cs = &counter{dir: dir}
		c.containers[st.ContainerID] = cs
	}
	cs.seen = c.round
	cpu, cpuOK, err := c.sampleCPU(ctx, cs, now)
	if errors.Is(err, cgroup.ErrNotFound) {
		return nil
	}
	if err = skipUnsupported(err); err != nil {
		return fmt.Errorf("pod %s container %s: %w", klog.KObj(pod), st.Name, err)
	}
	if cpuOK {
		c.cache.Append(key(metriccache.KindContainer, st.ContainerID, corev1.ResourceCPU), now, cpu)
	}
	ws, err := c.cg.MemoryWorkingSet(ctx, cs.dir)
	switch {
	case errors.Is(err, cgroup.ErrNotFound):
	case err == nil:
		c.cache.Append(key(metriccache.KindContainer, st.ContainerID, corev1.ResourceMemory), now, float64(ws))
	case !errors.Is(err, cgroup.ErrNotSupported):
		return fmt.Errorf("pod %s container %s: %w", klog.KObj(pod), st.Name, err)
	}
	return nil
}

// sampleCPU reads the CPU time of a cgroup and returns its use in cores
// since the last reading, with ok false when there is none to compare with.
func (c *Collector) sampleCPU(ctx context.Context, ct *counter, now time.Time) (cores float64, ok bool, err error) {
	usage, err := c.cg.CPUUsage(ctx, ct.dir)
	if err != nil {
		return 0, false, err
	}
	last, at, primed := ct.usage, ct.at, ct.primed
	ct.usage, ct.at, ct.primed = usage, now, true
	if !primed || !now.After(at) || usage < last {
		return 0, false, nil
	}
	return float64(usage-last) / float64(now.Sub(at)), true, nil
}

// skipUnsupported drops ErrNotSupported, which the cgroup manager has logged
// once already.
func skipUnsupported(err error) error {
	if errors.Is(err, cgroup.ErrNotSupported) {
		return nil
	}
	return err
}

// keep marks the counters of a finished pod and its containers as seen
// without sampling them, so their series stay while the pod is listed. Its
// Prometheus gauges go at once.
func (c *Collector) keep(pod *corev1.Pod) {
	if ps := c.pods[pod.UID]; ps != nil {
		ps.seen = c.round
		c.deletePodGauges(string(pod.UID), ps.psi)
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range statuses {
			if cs := c.containers[statuses[i].ContainerID]; cs != nil {
				cs.seen = c.round
			}
		}
	}
}

// forget drops the counters of pods and containers the last round did not
// list, and their series and gauges.
func (c *Collector) forget() {
	dropped := false
	for uid, ps := range c.pods {
		if ps.seen != c.round {
			c.deletePodGauges(string(uid), ps.psi)
			delete(c.pods, uid)
			dropped = true
		}
	}
	for id, cs := range c.containers {
		if cs.seen != c.round {
			delete(c.containers, id)
			dropped = true
		}
	}
	for name, as := range c.apps {
		if as.seen != c.round {
			delete(c.apps, name)
			dropped = true
		}
	}
	if !dropped {
		return
	}
	c.cache.Retain(func(k metriccache.SeriesKey) bool {
		switch k.Kind {
		case metriccache.KindPod:
			_, ok := c.pods[types.UID(k.ID)]
			return ok
		case metriccache.KindContainer:
			_, ok := c.containers[k.ID]
			return ok
		case metriccache.KindHostApp:
			_, ok := c.apps[k.ID]
			return ok
		}
		return true
	})
}
