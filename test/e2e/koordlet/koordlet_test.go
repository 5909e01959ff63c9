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

package koordlet_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
)

const (
	nodeName  = "koord-e2e-node"
	namespace = "koordlet-e2e"
	// aggregateSeconds is the NodeMetric's aggregateDurationSeconds: the reported usage is the average over it.
	aggregateSeconds = 5
	// reportSeconds is the NodeMetric's reportIntervalSeconds.
	reportSeconds = 2
	// collectInterval is the agent's collection interval.
	collectInterval = time.Second
	// thresholdPercent is cpuSuppressThresholdPercent.
	thresholdPercent = 65
	// tracePeriod is how often the test reads the burners' CPU time.
	tracePeriod = 100 * time.Millisecond
	// deadline bounds every wait.
	deadline = 30 * time.Second
)

// testPod is a pod of the test: its API object, its container's ID and cgroup, and its burner.
type testPod struct {
	pod          *corev1.Pod
	containerID  string
	podDir       string
	containerDir string
	series       string // the tracer series of its burner
	wantQoS      extension.QoSClass
	wantPriority extension.PriorityClass
}

// TestKoordletOnRealCgroups runs the agent against real cgroups and real CPU burners: an LS pod (Burstable,
// cpu request 1, limit 2) running one busy thread and a BE pod (koord-batch, batch-cpu request 1 core, limit
// every CPU) running one busy thread per CPU. It checks that the BE pod's cgroups get their batch-cpu
// settings; that (a) the NodeMetric reports each pod's CPU as the kernel counted it for the burner, within
// 10%; that (b) with BE suppression on (cfsQuota policy) the besteffort cgroup gets the quota the spec's
// formula gives from the usage the agent saw, the BE burner is held to it and the LS burner keeps its CPU;
// that turning suppression off lifts the quota and gives the BE pod its batch-cpu limit back; and that the
// agent logged no error throughout.
func TestKoordletOnRealCgroups(t *testing.T) {
	requireWritableCgroupV1(t)
	h := newHierarchy(t)
	cpus := runtime.NumCPU()

	// kubelet's CPU shares: kubepods by the node's allocatable CPU, burstable by the sum of its pods'
	// requests (the LS pod's one core), besteffort the minimum. The test parent stands where kubepods' parent
	// would be and gets the same weight.
	h.write(h.layout.Parent, "cpu.shares", strconv.Itoa(cpus*1024))
	h.write(h.layout.KubepodsDir(), "cpu.shares", strconv.Itoa(cpus*1024))
	h.write(h.layout.QoSDir(corev1.PodQOSBurstable), "cpu.shares", "1024")
	h.write(h.layout.QoSDir(corev1.PodQOSBestEffort), "cpu.shares", "2")

	createClusterObjects(t, cpus)
	ls := &testPod{pod: lsPod(), series: "ls", wantQoS: extension.QoSLS, wantPriority: extension.PriorityProd}
	be := &testPod{pod: bePod(cpus), series: "be", wantQoS: extension.QoSBE, wantPriority: extension.PriorityBatch}
	for _, p := range []*testPod{ls, be} {
		createRunningPod(t, h, p)
	}
	// kubelet's settings of the pods' cgroups: the LS pod's shares and quota from its cpu request and limit,
	// the BestEffort pod the minimum shares (koordlet then applies its batch-cpu request and limit).
	for _, dir := range []string{ls.podDir, ls.containerDir} {
		h.write(dir, "cpu.shares", "1024")
		h.write(dir, "cpu.cfs_quota_us", "200000")
	}
	for _, dir := range []string{be.podDir, be.containerDir} {
		h.write(dir, "cpu.shares", "2")
	}

	lsProc := startBurner(t, 1)
	h.attach(ls.containerDir, lsProc.Process.Pid)
	beProc := startBurner(t, cpus)
	h.attach(be.containerDir, beProc.Process.Pid)
	tr := startTracer(t, tracePeriod, map[string]func() (uint64, error){
		ls.series: func() (uint64, error) { return processCPUTicks(lsProc.Process.Pid) },
		be.series: func() (uint64, error) { return processCPUTicks(beProc.Process.Pid) },
		"idle":    nodeIdleTicks,
	})

	logs := startAgent(t, h.layout.Parent)
	started, err := agentStarted(t, logs)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("BE pod gets its batch-cpu settings", func(t *testing.T) {
		checkBatchSettings(t, h, be, cpus)
	})
	t.Run("reported usage matches the kernel's", func(t *testing.T) {
		checkReportedUsage(t, tr, started, ls, be)
	})
	t.Run("BE suppression by CFS quota", func(t *testing.T) {
		checkSuppression(t, h, tr, logs, ls, be)
	})
	// Suppression lowered the BE pod's quotas below the besteffort cgroup's (cgroup v1 refuses a child quota
	// above its parent's); with the besteffort quota lifted they go back to the batch-cpu limit.
	t.Run("BE pod gets its batch-cpu settings back", func(t *testing.T) {
		checkBatchSettings(t, h, be, cpus)
	})
	// Every write went through on the real kernel: no strategy, collection or report failed.
	for _, e := range logs.Data() {
		if e.Type == ktesting.LogError {
			t.Errorf("koordlet logged an error: %s: %v %v", e.Message, e.Err, e.ParameterKVList)
		}
	}
}

// agentStarted waits for the agent to log that its caches synced and its loops started, and returns when it
// did: the collector's first round, which only primes the counters, follows at once.
func agentStarted(t *testing.T, logs ktesting.Buffer) (time.Time, error) {
	var at time.Time
	err := poll(t.Context(), 50*time.Millisecond, func() (bool, error) {
		for _, e := range logs.Data() {
			if e.Message == "Started" {
				at = e.Timestamp
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return at, fmt.Errorf("koordlet did not log that it started within 30s: %w", err)
	}
	return at, nil
}

// checkBatchSettings waits for the agent to give the BE pod's cgroups the CPU shares of its batch-cpu request
// (1000 milli-cores: 1024) and the CFS quota of its batch-cpu limit (one core per CPU), over kubelet's
// BestEffort settings.
func checkBatchSettings(t *testing.T, h *hierarchy, be *testPod, cpus int) {
	want := fmt.Sprintf("shares 1024, quota %d", cpus*100000)
	for _, dir := range []string{be.podDir, be.containerDir} {
		var got string
		err := poll(t.Context(), 200*time.Millisecond, func() (bool, error) {
			shares, err := h.readInt(dir, "cpu.shares")
			if err != nil {
				return false, err
			}
			quota, err := h.readInt(dir, "cpu.cfs_quota_us")
			if err != nil {
				return false, err
			}
			got = fmt.Sprintf("shares %d, quota %d", shares, quota)
			return got == want, nil
		})
		if err != nil {
			// The besteffort cgroup's quota caps the pod's on cgroup v1: say what it was.
			parent, perr := h.readInt(h.layout.QoSDir(corev1.PodQOSBestEffort), "cpu.cfs_quota_us")
			t.Errorf("%s: %s; want %s (%v); the besteffort cgroup's quota is %d (%v)", dir, got, want, err, parent, perr)
			return
		}
	}
}

// createClusterObjects creates the node (capacity: this machine's CPUs and memory), the test namespace, the
// koord-batch priority class, the node's NodeMetric (what koord-manager would create) and its NodeSLO with
// suppression off. Objects an earlier run in the same process left are reused.
func createClusterObjects(t *testing.T, cpus int) {
	t.Helper()
	ctx := t.Context()
	memory, err := memTotal()
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
	objs := []client.Object{
		node,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: string(extension.PriorityBatch)}, Value: extension.PriorityBatchValueMin},
		&slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: nodeName},
			Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{
				AggregateDurationSeconds: ptr.To[int64](aggregateSeconds),
				ReportIntervalSeconds:    ptr.To[int64](reportSeconds),
			}},
		},
		&slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: nodeName}, Spec: nodeSLOSpec(false)},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(cpus), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatalf("set the node's status: %v", err)
	}
	// A NodeSLO left by an earlier run of the test in this process (-count) may have suppression on.
	setSuppression(t, false)
}

// nodeSLOSpec is the NodeSLO of the test: resourceUsedThresholdWithBE with the cfsQuota policy. The cpuset
// policy never gives BE pods fewer than cpusuppress.MinCPUSetCores (2) CPUs, which on a 2-core machine is no
// suppression at all; the CFS quota can go down to 2% of a CPU.
func nodeSLOSpec(enable bool) slov1alpha1.NodeSLOSpec {
	return slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
		Enable:                      ptr.To(enable),
		CPUSuppressPolicy:           slov1alpha1.CPUCfsQuotaPolicy,
		CPUSuppressThresholdPercent: ptr.To[int64](thresholdPercent),
	}}
}

// memTotal returns MemTotal from /proc/meminfo, in bytes.
func memTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // Read-only: nothing to lose.
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo MemTotal: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("/proc/meminfo has no MemTotal")
}

// lsPod is a Burstable LS pod: cpu request 1, limit 2.
func lsPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ls", Namespace: namespace, Labels: map[string]string{extension.LabelPodQoS: string(extension.QoSLS)}},
		Spec: corev1.PodSpec{
			NodeName: nodeName,
			Containers: []corev1.Container{{Name: "burner", Image: "burner", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			}}},
		},
	}
}

// bePod is a koord-batch BE pod on batch resources only (BestEffort to Kubernetes): batch-cpu request one
// core, limit every CPU of the node, so that only suppression holds its burner back.
func bePod(cpus int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "be", Namespace: namespace, Labels: map[string]string{extension.LabelPodQoS: string(extension.QoSBE)}},
		Spec: corev1.PodSpec{
			NodeName:          nodeName,
			PriorityClassName: string(extension.PriorityBatch),
			Priority:          ptr.To(extension.PriorityBatchValueMin),
			Containers: []corev1.Container{{Name: "burner", Image: "burner", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{extension.BatchCPU: *resource.NewQuantity(1000, resource.DecimalSI)},
				Limits:   corev1.ResourceList{extension.BatchCPU: *resource.NewQuantity(int64(cpus)*1000, resource.DecimalSI)},
			}}},
		},
	}
}

// createRunningPod creates p's pod, its cgroups under the hierarchy (named from the UID the apiserver gave it
// and a random container ID), and reports it running with that container ID, as kubelet would.
func createRunningPod(t *testing.T, h *hierarchy, p *testPod) {
	t.Helper()
	ctx := t.Context()
	if err := env.Client.Create(ctx, p.pod); err != nil {
		t.Fatalf("create pod %s: %v", p.pod.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := env.Client.Delete(ctx, p.pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete pod %s: %v", p.pod.Name, err)
		}
	})
	qos := extension.GetKubeQoSClass(p.pod)
	p.containerID = fmt.Sprintf("containerd://%016x%016x%016x%016x", rand.Uint64(), rand.Uint64(), rand.Uint64(), rand.Uint64())
	p.podDir = h.layout.PodDir(qos, p.pod.UID)
	dir, err := h.layout.ContainerDir(qos, p.pod.UID, p.containerID)
	if err != nil {
		t.Fatal(err)
	}
	p.containerDir = dir
	h.mkdir(p.podDir)
	h.mkdir(p.containerDir)

	now := metav1.Now()
	p.pod.Status.Phase = corev1.PodRunning
	p.pod.Status.StartTime = &now
	p.pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p.pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "burner", Image: "burner", ImageID: "burner", ContainerID: p.containerID,
		Ready: true, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}}
	if err := env.Client.Status().Update(ctx, p.pod); err != nil {
		t.Fatalf("report pod %s running: %v", p.pod.Name, err)
	}
	t.Logf("Pod %s (%s, %s) runs in %s", p.pod.Name, p.wantQoS, qos, p.containerDir)
}

// startAgent runs koordlet in-process against the hierarchy under parent until the test ends, and returns
// the buffer of its log.
func startAgent(t *testing.T, parent string) ktesting.Buffer {
	t.Helper()
	// The agent logs into a buffer only, at V(4) (every cgroup write): streamed into the test's output it would
	// be hundreds of lines, and CI keeps only the ends of a long output. A failed test prints it, condensed.
	logger := ktesting.NewLogger(quietTL{}, ktesting.NewConfig(ktesting.Verbosity(4), ktesting.BufferLogs(true)))
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("The agent's log (the last %d lines, without the per-round lines before them):\n%s", agentLogTail, condensedLog(logs.Data()))
		}
	})
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))
	opts := koordlet.DefaultOptions()
	opts.NodeName = nodeName
	opts.CgroupRoot = cgroupRoot
	opts.KubeletCgroupRoot = parent
	opts.ProcRoot = "/proc"
	opts.CollectInterval = collectInterval
	opts.QoSInterval = collectInterval
	opts.ReportWarmup = time.Second
	// The real-cgroup tests check the reconcile loop; the machine's container runtime must not get their hooks.
	opts.RuntimeHooks.NRI = false
	opts.MetricsBindAddress = "0"
	opts.HealthProbeBindAddress = "0"
	// The prediction's checkpoints go to the test's directory, not the host's /prediction-checkpoints.
	opts.Prediction.CheckpointDir = t.TempDir()
	if err := opts.Validate(); err != nil {
		cancel()
		t.Fatal(err)
	}
	agent, err := koordlet.New(ctx, env.Config, opts)
	if err != nil {
		cancel()
		t.Fatalf("create koordlet: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("koordlet exited with: %v", err)
			}
		case <-time.After(deadline):
			t.Error("koordlet did not stop within 30s")
		}
	})
	return logs
}

// quietTL is a ktesting.TL that drops what it is given: the agent's log is kept in the logger's buffer only.
type quietTL struct{}

func (quietTL) Helper()    {}
func (quietTL) Log(...any) {}

// agentLogTail is how many of the agent's last log lines a failed test prints whole.
const agentLogTail = 60

// perRoundMessages are the agent's log lines repeated every round; condensedLog leaves them out before the
// tail.
var perRoundMessages = map[string]bool{
	"Reported the node metric":      true,
	"Computed the BE CPU allowance": true,
}

// condensedLog formats the agent's log entries: every entry that is not a per-round line, and the last
// agentLogTail entries whole.
func condensedLog(entries ktesting.Log) string {
	var b strings.Builder
	tail := max(len(entries)-agentLogTail, 0)
	for i, e := range entries {
		if i < tail && perRoundMessages[e.Message] {
			continue
		}
		fmt.Fprintf(&b, "%s %s %s", e.Timestamp.Format("15:04:05.000"), e.Type, e.Message)
		if e.Err != nil {
			fmt.Fprintf(&b, " err=%q", e.Err)
		}
		kvs := append(append([]any{}, e.WithKVList...), e.ParameterKVList...)
		for j := 0; j+1 < len(kvs); j += 2 {
			fmt.Fprintf(&b, " %v=%v", kvs[j], kvs[j+1])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkReportedUsage waits for the first NodeMetric report whose window lies entirely after the agent's loops
// started (so both burners ran through it and the collector's first, priming round is before it), and
// compares each pod's reported CPU with the CPU the kernel counted for its burner over that window.
//
// Alignment: the reporter builds the status at an instant `now` and reports, per pod, the average of the
// per-round CPU rates sampled at collection instants t in (now - aggregate, now]; each rate covers the
// collection interval before its t. So the report covers [s, e] with e, the last collection instant, in
// [now - interval, now] and s, the round before the first in the window, in [now - aggregate - interval,
// now - aggregate]. `now` is not known exactly either: updateTime is stored with second precision
// (now in [updateTime, updateTime + 1s)) and the report was written before the test's GET that first saw it.
// The burners' CPU is interpolated from /proc/<pid>/stat read every 100ms; the test computes it for every
// window [s, e] these bounds allow (100ms steps) and requires the reported value within 10% of that range,
// plus 0.01 core for the tick and milli-core resolution. A steady burner gives a narrow range; one whose
// share of the CPU changes (a loaded machine) a wider one, which is exactly the uncertainty of the window.
func checkReportedUsage(t *testing.T, tr *tracer, started time.Time, pods ...*testPod) {
	ctx := t.Context()
	aggregate := aggregateSeconds * time.Second
	earliest := started.Add(aggregate + collectInterval + 2*time.Second)
	var (
		nm        slov1alpha1.NodeMetric
		seenAt    time.Time
		lastState string
	)
	err := poll(ctx, 100*time.Millisecond, func() (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: nodeName}, &nm); err != nil {
			return false, err
		}
		seenAt = time.Now()
		st := nm.Status
		if st.UpdateTime == nil || st.UpdateTime.Time.Before(earliest) {
			lastState = fmt.Sprintf("updateTime %v, waiting for one at or after %s", st.UpdateTime, earliest.Format(time.StampMilli))
			return false, nil
		}
		for _, p := range pods {
			if podMetric(&nm, p.pod) == nil {
				lastState = fmt.Sprintf("report of %s has no metric of pod %s", st.UpdateTime, p.pod.Name)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("no NodeMetric report with both pods after %s: %v; last seen: %s", earliest.Format(time.StampMilli), err, lastState)
	}

	nowLo := nm.Status.UpdateTime.Time
	nowHi := nowLo.Add(time.Second)
	if seenAt.Before(nowHi) {
		nowHi = seenAt
	}
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.series)
	}
	if err := tr.waitPast(nowHi, names...); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		m := podMetric(&nm, p.pod)
		if m.QoS != string(p.wantQoS) || m.Priority != string(p.wantPriority) {
			t.Errorf("pod %s reported with qos %q, priority %q; want %q, %q", p.pod.Name, m.QoS, m.Priority, p.wantQoS, p.wantPriority)
		}
		q, ok := m.PodUsage.ResourceList[corev1.ResourceCPU]
		if !ok {
			t.Errorf("pod %s reported without CPU usage: %v", p.pod.Name, m.PodUsage.ResourceList)
			continue
		}
		reported := float64(q.MilliValue()) / 1000
		lo, hi, err := windowRange(tr, p.series, nowLo, nowHi, aggregate, collectInterval)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Pod %s: reported %.3f cores at %s; the kernel counted %.3f..%.3f cores for its burner over the windows the report may cover",
			p.pod.Name, reported, nm.Status.UpdateTime.Format(time.RFC3339), lo, hi)
		if reported < 0.9*lo-0.01 || reported > 1.1*hi+0.01 {
			t.Errorf("pod %s: reported CPU %.3f cores is not within 10%% of the real %.3f..%.3f cores", p.pod.Name, reported, lo, hi)
		}
	}
}

// podMetric returns the metric of pod in nm, nil if absent.
func podMetric(nm *slov1alpha1.NodeMetric, pod *corev1.Pod) *slov1alpha1.PodMetricInfo {
	for i := range nm.Status.PodsMetric {
		if m := &nm.Status.PodsMetric[i]; m.Namespace == pod.Namespace && m.Name == pod.Name {
			return m
		}
	}
	return nil
}

// windowRange returns the least and the greatest CPU, in cores, of series over the windows [s, e] a report
// built at some instant in [nowLo, nowHi] may cover (see checkReportedUsage), in 100ms steps.
func windowRange(tr *tracer, series string, nowLo, nowHi time.Time, aggregate, interval time.Duration) (lo, hi float64, err error) {
	const step = 100 * time.Millisecond
	lo, hi = math.Inf(1), math.Inf(-1)
	for s := nowLo.Add(-aggregate - interval); !s.After(nowHi.Add(-aggregate)); s = s.Add(step) {
		for e := nowLo.Add(-interval); !e.After(nowHi); e = e.Add(step) {
			if span := e.Sub(s); span < aggregate-interval || span > aggregate+interval {
				continue
			}
			c, err := tr.cores(series, s, e)
			if err != nil {
				return 0, 0, err
			}
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	return lo, hi, nil
}

// window is a span of time and the CPU, in cores, the burners used and the node left idle over it.
type window struct {
	start, end   time.Time
	ls, be, idle float64
}

// measure returns the usage over the window [start, start+d], after waiting for it to pass.
func measure(tr *tracer, ls, be *testPod, d time.Duration) (window, error) {
	w := window{start: time.Now()}
	time.Sleep(d)
	w.end = time.Now()
	if err := tr.waitPast(w.end, ls.series, be.series, "idle"); err != nil {
		return w, err
	}
	var errs [3]error
	w.ls, errs[0] = tr.cores(ls.series, w.start, w.end)
	w.be, errs[1] = tr.cores(be.series, w.start, w.end)
	w.idle, errs[2] = tr.cores("idle", w.start, w.end)
	return w, errors.Join(errs[:]...)
}

// lsAvailable returns the CPU, in cores, the LS burner could have had over w: in each half-second slice, what
// it used plus what the node left idle, at most demand; averaged over the window. Slices matter on a machine
// whose load comes in bursts: CPU left idle in a quiet moment is no help to the burner in a busy one.
func lsAvailable(tr *tracer, ls *testPod, w window, demand float64) (float64, error) {
	const slice = 500 * time.Millisecond
	var sum float64
	for from := w.start; from.Before(w.end); from = from.Add(slice) {
		to := from.Add(slice)
		if to.After(w.end) {
			to = w.end
		}
		if to.Sub(from) < slice/10 {
			break
		}
		used, err := tr.cores(ls.series, from, to)
		if err != nil {
			return 0, err
		}
		idle, err := tr.cores("idle", from, to)
		if err != nil {
			return 0, err
		}
		sum += min(demand, used+idle) * to.Sub(from).Seconds()
	}
	return sum / w.end.Sub(w.start).Seconds(), nil
}

// suppression is one "Suppressed BE CPU" entry of the agent's log: the quota it wrote and the terms it
// computed the allowance from.
type suppression struct {
	value                          string
	allowed, capacity, nonBE       float64
	system, reserved, thresholdPct float64
}

// suppressions returns the agent's log entries for the cfsQuota policy, oldest first.
func suppressions(logs ktesting.Buffer) ([]suppression, error) {
	var out []suppression
	for _, e := range logs.Data() {
		if e.Message != "Suppressed BE CPU" {
			continue
		}
		kv := map[string]any{}
		for i := 0; i+1 < len(e.ParameterKVList); i += 2 {
			if k, ok := e.ParameterKVList[i].(string); ok {
				kv[k] = e.ParameterKVList[i+1]
			}
		}
		if fmt.Sprint(kv["policy"]) != string(slov1alpha1.CPUCfsQuotaPolicy) {
			continue
		}
		var s suppression
		s.value = fmt.Sprint(kv["value"])
		var errs []error
		for key, dst := range map[string]*float64{
			"allowedCores": &s.allowed, "capacityCores": &s.capacity, "nonBEPodsUsageCores": &s.nonBE,
			"systemUsageCores": &s.system, "nodeReservedCores": &s.reserved, "thresholdPercent": &s.thresholdPct,
		} {
			v, err := number(kv[key])
			if err != nil {
				errs = append(errs, fmt.Errorf("log entry %q, key %s: %w", e.Message, key, err))
			}
			*dst = v
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// number converts a logged number to float64.
func number(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case float32:
		return float64(n), nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case int32:
		return float64(n), nil
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// specAllowance is the BE allowance of the spec (koordinator-spec §4.3) from the terms the agent saw, without
// cpuSuppressMinPercent: capacity × threshold% − non-BE pods' usage − max(system usage, node reserved), at
// least 0, in milli-cores.
func specAllowance(s suppression) float64 {
	a := s.capacity*s.thresholdPct/100 - s.nonBE - max(s.system, s.reserved)
	return math.Round(max(a, 0)*1000) / 1000
}

// specQuota is the CFS quota, in µs per periodUs, of an allowance: allowance × period, at least the policy's
// minimum.
func specQuota(allowed float64, periodUs int64) int64 {
	return max(int64(math.Round(allowed*float64(periodUs))), cpusuppress.MinQuotaUs)
}

// checkSuppression turns BE suppression on and checks the besteffort cgroup's CFS quota against the spec's
// formula over the usage the agent saw, the BE burner against that quota and the LS burner against what it
// had before; then turns suppression off and checks the quota is lifted.
//
// The machine may be loaded by other tests meanwhile, so the checks are ones load cannot break: the BE
// burner's usage has an upper bound (the quota) whatever the load; the LS burner is compared with what it
// could have had while BE was suppressed: its own usage in a window just before (its demand under the same
// load), but no more than it used plus what the node left idle, slice by slice (CPU that other processes took
// was never the LS burner's to have). The LS container must also never be throttled: its quota is kubelet's 2
// cores for one busy thread, and nothing in koordlet may lower it (the NodeSLO leaves cpuBurstStrategy at its
// default policy, none).
func checkSuppression(t *testing.T, h *hierarchy, tr *tracer, logs ktesting.Buffer, ls, be *testPod) {
	ctx := t.Context()
	beQoSDir := h.layout.QoSDir(corev1.PodQOSBestEffort)
	lsThrottled := func() (int64, error) { return h.statField(ls.containerDir, "cpu.stat", "nr_throttled") }

	before, err := measure(tr, ls, be, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Before suppression: LS %.3f cores, BE %.3f cores, node idle %.3f cores", before.ls, before.be, before.idle)

	setSuppression(t, true)
	enabled := time.Now()

	// The quota the agent wrote, once it matches the spec's formula over the terms the agent logged with it.
	// (An increase above 10% of the node per round is applied in steps, so a later round may be the one that
	// reaches the formula's value.)
	var (
		quota, period int64
		applied       suppression
		lastState     string
	)
	err = poll(ctx, 200*time.Millisecond, func() (bool, error) {
		q, err := h.readInt(beQoSDir, "cpu.cfs_quota_us")
		if err != nil {
			return false, err
		}
		p, err := h.readInt(beQoSDir, "cpu.cfs_period_us")
		if err != nil {
			return false, err
		}
		entries, err := suppressions(logs)
		if err != nil {
			return false, err
		}
		if q == -1 || len(entries) == 0 {
			lastState = fmt.Sprintf("quota %d, %d suppression log entries", q, len(entries))
			return false, nil
		}
		last := entries[len(entries)-1]
		if want := specQuota(specAllowance(last), p); last.value != fmt.Sprintf("%d/%d", q, p) || q != want {
			lastState = fmt.Sprintf("quota %d/%d; the agent last wrote %s from %+v, the spec's formula gives %d", q, p, last.value, last, want)
			return false, nil
		}
		quota, period, applied = q, p, last
		return true, nil
	})
	if err != nil {
		t.Fatalf("the besteffort cgroup did not get the spec's CFS quota within 30s: %v; last seen: %s", err, lastState)
	}
	allowance := float64(quota) / float64(period)
	t.Logf("Suppression applied %v after it was turned on: quota %d/%d (%.3f cores) from capacity %.0f cores × %.0f%% − "+
		"non-BE pods %.3f − max(system %.3f, reserved %.3f) = %.3f cores",
		time.Since(enabled).Round(time.Millisecond), quota, period, allowance, applied.capacity, applied.thresholdPct,
		applied.nonBE, applied.system, applied.reserved, applied.allowed)
	if applied.capacity != float64(runtime.NumCPU()) || applied.thresholdPct != thresholdPercent {
		t.Errorf("the agent computed with capacity %v and threshold %v%%; want the node's %d CPUs and %d%%",
			applied.capacity, applied.thresholdPct, runtime.NumCPU(), thresholdPercent)
	}
	entries, err := suppressions(logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if math.Abs(e.allowed-specAllowance(e)) > 0.0015 {
			t.Errorf("the agent computed an allowance of %.3f cores from %+v; the spec's formula gives %.3f", e.allowed, e, specAllowance(e))
		}
	}

	// A window in which the quota stayed as it was.
	var after window
	var throttled int64
	err = poll(ctx, 0, func() (bool, error) {
		q0, err := h.readInt(beQoSDir, "cpu.cfs_quota_us")
		if err != nil {
			return false, err
		}
		thr0, err := lsThrottled()
		if err != nil {
			return false, err
		}
		u, err := measure(tr, ls, be, 3*time.Second)
		if err != nil {
			return false, err
		}
		q1, err := h.readInt(beQoSDir, "cpu.cfs_quota_us")
		if err != nil {
			return false, err
		}
		thr1, err := lsThrottled()
		if err != nil {
			return false, err
		}
		if q0 != q1 {
			lastState = fmt.Sprintf("the quota changed from %d to %d during the window", q0, q1)
			return false, nil
		}
		quota, allowance = q1, float64(q1)/float64(period)
		after, throttled = u, thr1-thr0
		return true, nil
	})
	if err != nil {
		t.Fatalf("no window with a steady BE quota within 30s: %v; last seen: %s", err, lastState)
	}
	tolerance := max(0.1*allowance, 0.05)
	t.Logf("Suppressed: LS %.3f cores, BE %.3f cores under a quota of %.3f cores, node idle %.3f cores",
		after.ls, after.be, allowance, after.idle)
	if after.be > allowance+tolerance {
		t.Errorf("BE burner used %.3f cores under a quota of %.3f cores; want at most %.3f", after.be, allowance, allowance+tolerance)
	}
	if before.be > allowance+tolerance {
		t.Logf("BE usage dropped from %.3f to %.3f cores (allowance %.3f)", before.be, after.be, allowance)
	} else {
		t.Logf("BE used only %.3f cores before suppression (a loaded machine), within %.3f of its allowance of %.3f: no drop to show; the bound still holds",
			before.be, tolerance, allowance)
	}
	avail, err := lsAvailable(tr, ls, after, before.ls)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("LS could have had %.3f cores while BE was suppressed (its %.3f cores before, bounded by what it used plus what the node left idle)", avail, before.ls)
	if after.ls < 0.8*avail {
		t.Errorf("LS burner used %.3f cores while suppression was on; want at least 80%% of the %.3f cores it could have had", after.ls, avail)
	}
	if throttled != 0 {
		t.Errorf("the LS container was throttled in %d CFS periods while BE was suppressed", throttled)
	}
	if q, err := h.readInt(ls.containerDir, "cpu.cfs_quota_us"); err != nil || q != 200000 {
		t.Errorf("LS container quota = %d, %v; want kubelet's 200000 untouched", q, err)
	}

	setSuppression(t, false)
	err = poll(ctx, 200*time.Millisecond, func() (bool, error) {
		q, err := h.readInt(beQoSDir, "cpu.cfs_quota_us")
		lastState = fmt.Sprintf("quota %d", q)
		return q == -1, err
	})
	if err != nil {
		t.Errorf("the besteffort quota was not lifted within 30s of turning suppression off: %v; last seen: %s", err, lastState)
	}
}

// setSuppression turns resourceUsedThresholdWithBE of the node's NodeSLO on or off.
func setSuppression(t *testing.T, enable bool) {
	t.Helper()
	ctx := t.Context()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var slo slov1alpha1.NodeSLO
		if err := env.Client.Get(ctx, types.NamespacedName{Name: nodeName}, &slo); err != nil {
			return err
		}
		slo.Spec = nodeSLOSpec(enable)
		return env.Client.Update(ctx, &slo)
	})
	if err != nil {
		t.Fatalf("set resourceUsedThresholdWithBE.enable=%v: %v", enable, err)
	}
}

// poll calls cond every interval (back to back when 0) until it returns true or an error, or the deadline
// passes.
func poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
