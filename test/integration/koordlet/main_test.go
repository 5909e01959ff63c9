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
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/test/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env)
}

// Timing of the tests. The NodeMetric asks for a 10 s average reported every 2 s, so that reports come quickly
// and a 10 s aggregation window is covered (half of it, the reporter's cold-start rule) within seconds.
const (
	pollInterval       = 100 * time.Millisecond
	pollTimeout        = 30 * time.Second
	aggregateSeconds   = 10
	reportSeconds      = 2
	shortWindow        = 10 * time.Second
	longWindow         = time.Hour
	agentStopTimeout   = 30 * time.Second
	agentReportWarmup  = time.Second
	koordletTestUser   = "koordlet-integration"
	defaultCFSPeriodUs = 100000
)

// eventually polls cond every pollInterval for up to pollTimeout and fails the test with msg when it never
// holds. cond runs on the test goroutine.
func eventually(t *testing.T, msg string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), pollInterval, pollTimeout, true, cond); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
}

var (
	rbacMu     sync.Mutex
	rbacConfig *rest.Config
)

// koordletConfig returns a client configuration that authenticates as a user bound to config/rbac/koordlet,
// koordlet's shipped role, installing the role the first time.
func koordletConfig(t *testing.T) *rest.Config {
	t.Helper()
	rbacMu.Lock()
	defer rbacMu.Unlock()
	if rbacConfig == nil {
		cfg, err := env.UserWithRoles(t.Context(), koordletTestUser, filepath.Join("config", "rbac", "koordlet", "role.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rbacConfig = cfg
	}
	return rest.CopyConfig(rbacConfig)
}

func createIgnoringExisting(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// ensurePriorityClasses creates koord-prod and koord-batch at their default values, so that pods naming them get
// spec.priority from the apiserver's Priority admission, as in a cluster with Koordinator installed.
func ensurePriorityClasses(t *testing.T) {
	t.Helper()
	for name, value := range map[extension.PriorityClass]int32{
		extension.PriorityProd:  extension.PriorityProdValueDefault,
		extension.PriorityBatch: extension.PriorityBatchValueDefault,
	} {
		createIgnoringExisting(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: string(name)}, Value: value})
	}
}

// nodeConfig describes a test node: its capacity as the apiserver knows it, and the fake machine under it.
type nodeConfig struct {
	version cgroup.Version
	driver  cgroup.Driver
	// cpus is the node's CPU capacity, the number of CPUs in /proc/stat and the size of the root cpuset.
	cpus int
	// allocatableCPU is the node's allocatable CPU; capacity minus it is kubelet's reservation.
	allocatableCPU string
	// memory is the node's memory capacity and MemTotal, in bytes (a multiple of 1 KiB).
	memory int64
	// busyCores is the node's CPU usage: the rate at which the busy time of /proc/stat advances.
	busyCores float64
	// memUsed is MemTotal − MemAvailable and memUsedWithCache MemTotal − MemFree, in bytes.
	memUsed, memUsedWithCache int64
	// slo is the spec of the node's NodeSLO.
	slo slov1alpha1.NodeSLOSpec
}

// testNode is a node of one test: the API objects koord-manager and kubelet would create (Node, NodeMetric,
// NodeSLO, a namespace of the same name for its pods) and the fake machine the agent reads.
type testNode struct {
	t    *testing.T
	name string
	host *host
}

// newNode creates a node with its NodeMetric, NodeSLO and namespace, all named after a generated name, and its
// fake machine. They are removed when the test ends.
func newNode(t *testing.T, cfg nodeConfig) *testNode {
	t.Helper()
	ensurePriorityClasses(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "koordlet-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	n := &testNode{t: t, name: ns.Name}
	t.Cleanup(n.cleanUp)

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatalf("create node %s: %v", n.name, err)
	}
	node.Status = corev1.NodeStatus{
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(int64(cfg.cpus), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(cfg.memory, resource.BinarySI),
			corev1.ResourcePods:   resource.MustParse("110"),
		},
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cfg.allocatableCPU),
			corev1.ResourceMemory: *resource.NewQuantity(cfg.memory, resource.BinarySI),
			corev1.ResourcePods:   resource.MustParse("110"),
		},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatalf("set the status of node %s: %v", n.name, err)
	}
	nm := &slov1alpha1.NodeMetric{
		ObjectMeta: metav1.ObjectMeta{Name: n.name},
		Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{
			AggregateDurationSeconds: ptr.To[int64](aggregateSeconds),
			ReportIntervalSeconds:    ptr.To[int64](reportSeconds),
			NodeAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{
				{Duration: shortWindow}, {Duration: longWindow},
			}},
		}},
	}
	if err := env.Client.Create(ctx, nm); err != nil {
		t.Fatalf("create NodeMetric %s: %v", n.name, err)
	}
	slo := &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: n.name}, Spec: cfg.slo}
	if err := env.Client.Create(ctx, slo); err != nil {
		t.Fatalf("create NodeSLO %s: %v", n.name, err)
	}
	n.host = newHost(t, cfg)
	return n
}

// cleanUp removes the node's pods (at once: no kubelet will confirm), Node, NodeMetric, NodeSLO and namespace.
func (n *testNode) cleanUp() {
	ctx := context.Background()
	c := env.Client
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(n.name), client.GracePeriodSeconds(0)); err != nil {
		n.t.Errorf("delete the pods of %s: %v", n.name, err)
	}
	for _, obj := range []client.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}},
		&slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: n.name}},
		&slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: n.name}},
		// Owned by the node, but no garbage collector runs here.
		&topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: n.name}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.name}},
	} {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			n.t.Errorf("delete %T %s: %v", obj, n.name, err)
		}
	}
}

// podConfig describes a pod of a test node and what it uses.
type podConfig struct {
	name string
	// qos is the koordinator.sh/qosClass label.
	qos extension.QoSClass
	// priorityClass is spec.priorityClassName.
	priorityClass extension.PriorityClass
	// requests and limits are those of the pod's single container.
	requests, limits corev1.ResourceList
	annotations      map[string]string
	// cpu is the CPU the pod uses, in cores.
	cpu float64
	// memory is its memory usage including page cache, inactiveFile the inactive file cache in it, in bytes.
	memory, inactiveFile int64
}

// addPod does what the scheduler and kubelet would: it creates the pod bound to the node, creates its cgroups
// (with kubelet's CFS quota for a CPU limit) whose counters then advance at the pod's rate, and reports it
// running with a containerd container. The pod has terminationGracePeriodSeconds 0, so that a deletion (an
// eviction) removes it at once: no kubelet confirms it. It returns the pod as the apiserver has it.
func (n *testNode) addPod(p podConfig) *corev1.Pod {
	n.t.Helper()
	ctx := n.t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   n.name,
			Name:        p.name,
			Labels:      map[string]string{extension.LabelPodQoS: string(p.qos)},
			Annotations: p.annotations,
		},
		Spec: corev1.PodSpec{
			NodeName:                      n.name,
			PriorityClassName:             string(p.priorityClass),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: p.requests, Limits: p.limits},
			}},
		},
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		n.t.Fatalf("create pod %s: %v", p.name, err)
	}
	if pod.Status.QOSClass == "" {
		n.t.Fatalf("the apiserver gave pod %s no QoS class", p.name)
	}
	containerID := "containerd://" + strings.ReplaceAll(string(pod.UID), "-", "")

	qos := pod.Status.QOSClass
	podDir := n.host.fs.AddPod(qos, pod.UID)
	containerDir := n.host.fs.AddContainer(qos, pod.UID, containerID)
	if limit, ok := p.limits[corev1.ResourceCPU]; ok {
		quota := limit.MilliValue() * defaultCFSPeriodUs / 1000
		for _, dir := range []string{podDir, containerDir} {
			n.host.setCFSQuota(dir, quota)
		}
	}
	for _, dir := range []string{podDir, containerDir} {
		n.host.fs.SetMemory(dir, p.memory, p.inactiveFile)
		n.host.addCPU(dir, p.cpu)
	}

	started := metav1.NewTime(time.Now().Truncate(time.Second))
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &started
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:        "main",
		Image:       "registry.k8s.io/pause:3.10",
		ImageID:     "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a",
		ContainerID: containerID,
		Ready:       true,
		Started:     ptr.To(true),
		State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
	}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		n.t.Fatalf("report pod %s running: %v", p.name, err)
	}
	return pod
}

// containerDir returns the cgroup directory of the pod's single container.
func (n *testNode) containerDir(pod *corev1.Pod) string {
	n.t.Helper()
	dir, err := n.host.fs.Layout().ContainerDir(pod.Status.QOSClass, pod.UID, pod.Status.ContainerStatuses[0].ContainerID)
	if err != nil {
		n.t.Fatal(err)
	}
	return dir
}

// podDir returns the cgroup directory of the pod.
func (n *testNode) podDir(pod *corev1.Pod) string {
	return n.host.fs.Layout().PodDir(pod.Status.QOSClass, pod.UID)
}

// updateNodeSLO changes the node's NodeSLO spec with change.
func (n *testNode) updateNodeSLO(change func(*slov1alpha1.NodeSLOSpec)) {
	n.t.Helper()
	ctx := n.t.Context()
	slo := &slov1alpha1.NodeSLO{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, slo); err != nil {
		n.t.Fatalf("get NodeSLO %s: %v", n.name, err)
	}
	change(&slo.Spec)
	if err := env.Client.Update(ctx, slo); err != nil {
		n.t.Fatalf("update NodeSLO %s: %v", n.name, err)
	}
}

// nodeMetric returns the node's NodeMetric.
func (n *testNode) nodeMetric(ctx context.Context) (*slov1alpha1.NodeMetric, error) {
	nm := &slov1alpha1.NodeMetric{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, nm); err != nil {
		return nil, fmt.Errorf("get NodeMetric %s: %w", n.name, err)
	}
	return nm, nil
}

// waitForReport waits for a report that cond accepts and returns it.
func (n *testNode) waitForReport(msg string, cond func(*slov1alpha1.NodeMetricStatus) bool) *slov1alpha1.NodeMetricStatus {
	n.t.Helper()
	var got *slov1alpha1.NodeMetricStatus
	eventually(n.t, msg, func(ctx context.Context) (bool, error) {
		nm, err := n.nodeMetric(ctx)
		if err != nil {
			return false, err
		}
		if nm.Status.UpdateTime == nil || nm.Status.NodeMetric == nil || !cond(&nm.Status) {
			return false, nil
		}
		got = &nm.Status
		return true, nil
	})
	return got
}

// waitForPodsReported waits for a report that has the usage of every one of pods: the agent has samples of all
// of them.
func (n *testNode) waitForPodsReported(pods ...*corev1.Pod) *slov1alpha1.NodeMetricStatus {
	n.t.Helper()
	return n.waitForReport("the agent did not report the usage of every pod", func(s *slov1alpha1.NodeMetricStatus) bool {
		reported := map[string]bool{}
		for _, pm := range s.PodsMetric {
			reported[pm.Namespace+"/"+pm.Name] = true
		}
		for _, p := range pods {
			if !reported[p.Namespace+"/"+p.Name] {
				return false
			}
		}
		return true
	})
}

// waitForKnob waits until the file knob of the cgroup dir holds want, and reports the last value read otherwise.
func (n *testNode) waitForKnob(dir, knob, want string) {
	n.t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(n.t.Context(), pollInterval, pollTimeout, true, func(context.Context) (bool, error) {
		last = n.host.fs.ReadFile(dir, knob)
		return last == want, nil
	})
	if err != nil {
		n.t.Fatalf("%s of %s is %q, want %q: %v", knob, dir, last, want, err)
	}
}

// readKnobInt reads an integer knob; ok is false while the agent is rewriting it (the file is empty between the
// truncation and the write).
func (n *testNode) readKnobInt(dir, knob string) (int64, bool) {
	v, err := strconv.ParseInt(n.host.fs.ReadFile(dir, knob), 10, 64)
	return v, err == nil
}

// runningAgent is a koordlet started by a test.
type runningAgent struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startAgent runs koordlet for the node, reaching the apiserver through cfg, with the extra feature gates
// given ("Name=true"). It is stopped when the test ends, or earlier by stop.
func startAgent(t *testing.T, cfg *rest.Config, n *testNode, gates ...string) *runningAgent {
	t.Helper()
	return startAgentWith(t, cfg, n, nil, gates...)
}

// startAgentWith is startAgent with the options changed by edit (when not nil) after the test's own.
func startAgentWith(t *testing.T, cfg *rest.Config, n *testNode, edit func(*koordlet.Options), gates ...string) *runningAgent {
	t.Helper()
	opts := koordlet.DefaultOptions()
	opts.NodeName = n.name
	opts.CgroupRoot = n.host.fs.Root()
	opts.ProcRoot = n.host.proc
	opts.SysRoot = n.host.sys
	opts.KubeletRootDir = n.host.kubelet
	opts.KubeletConfig = ""
	opts.TopologyReportInterval = time.Second
	opts.ReportWarmup = agentReportWarmup
	opts.MetricsBindAddress = "0"
	opts.HealthProbeBindAddress = "0"
	// The prediction's checkpoints go to the test's directory, not the host's /prediction-checkpoints.
	opts.Prediction.CheckpointDir = t.TempDir()
	// A container runtime of this machine must not get the test's hooks; TestRuntimeHooks gives its own socket.
	opts.RuntimeHooks.NRI = false
	if edit != nil {
		edit(&opts)
	}
	if len(gates) > 0 {
		if err := opts.FeatureGates.Set(strings.Join(gates, ",")); err != nil {
			t.Fatalf("set feature gates %v: %v", gates, err)
		}
	}
	if err := opts.Validate(); err != nil {
		t.Fatalf("invalid koordlet options: %v", err)
	}
	// The agent logs every round at higher verbosities; V(2) keeps a failed test's output readable.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))
	a, err := koordlet.New(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatalf("create koordlet: %v", err)
	}
	ra := &runningAgent{cancel: cancel, done: make(chan error, 1)}
	go func() { ra.done <- a.Run(ctx) }()
	t.Cleanup(func() { ra.stop(t) })
	return ra
}

// stop stops the agent and waits for it to return.
func (ra *runningAgent) stop(t *testing.T) {
	t.Helper()
	ra.once.Do(func() {
		ra.cancel()
		select {
		case err := <-ra.done:
			if err != nil {
				t.Errorf("koordlet exited with: %v", err)
			}
		case <-time.After(agentStopTimeout):
			t.Errorf("koordlet did not stop within %s", agentStopTimeout)
		}
	})
}
