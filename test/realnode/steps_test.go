//go:build realnode

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

package realnode

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordctl/explain"
	"github.com/koord-dev/koord/pkg/koordlet/nodetopology"
	"github.com/koord-dev/koord/test/realnode/node"
)

const koordNamespace = "koordinator-system"

func testInstall(t *testing.T) {
	helm(t, append([]string{"install", "koord", filepath.Join(env.root, "charts", "koord"), "-n", "default",
		"--wait", "--timeout", "5m"}, installValues()...)...)
	ctx := t.Context()
	for _, name := range []string{"koord-manager", "koord-scheduler", "koord-descheduler"} {
		d, err := env.kube.AppsV1().Deployments(koordNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.AvailableReplicas != 1 {
			t.Errorf("Deployment %s: %d of 1 replicas available", name, d.Status.AvailableReplicas)
		}
	}
	ds, err := env.kube.AppsV1().DaemonSets(koordNamespace).Get(ctx, "koordlet", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Status.NumberReady != 1 {
		t.Errorf("DaemonSet koordlet: %d of 1 ready", ds.Status.NumberReady)
	}
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testNodeTopology: koordlet in its pod (the chart's mounts) reports the NodeResourceTopology of the node, and
// its CPU topology and NUMA zones are this machine's as /sys gives them.
func testNodeTopology(t *testing.T) {
	want, err := nodetopology.ReadTopology("/sys")
	if err != nil {
		t.Fatal(err)
	}
	var nrt *topologyv1alpha1.NodeResourceTopology
	err = wait.PollUntilContextTimeout(t.Context(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := env.koord.TopologyV1alpha1().NodeResourceTopologies().Get(ctx, node.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		nrt = got
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("no NodeResourceTopology of node %s: %v", node.Name, err)
	}
	topo, err := extension.GetCPUTopology(nrt.Annotations)
	if err != nil || topo == nil {
		t.Fatalf("cpu-topology annotation %q: %v", nrt.Annotations[extension.AnnotationNodeCPUTopology], err)
	}
	if diff := cmp.Diff(want.CPUs, topo.Detail); diff != "" {
		t.Errorf("reported CPU topology differs from /sys (-sys,+reported):\n%s", diff)
	}
	if len(nrt.Zones) != len(want.NUMANodes) {
		t.Fatalf("%d zones, /sys has %d NUMA nodes", len(nrt.Zones), len(want.NUMANodes))
	}
	for i, n := range want.NUMANodes {
		z := nrt.Zones[i]
		var cpu int64
		for _, r := range z.Resources {
			if r.Name == string(corev1.ResourceCPU) {
				cpu = r.Capacity.Value()
			}
		}
		if z.Name != fmt.Sprintf("node-%d", n.ID) || cpu != int64(n.CPUs.Size()) {
			t.Errorf("zone %d: %s with %d cpus; /sys has node %d with %d", i, z.Name, cpu, n.ID, n.CPUs.Size())
		}
	}
}

// testNVMLLoader: koordlet's image runs its cgo build on the C runtime it carries, and koordlet tries to load
// the NVIDIA driver's NVML library; this node has none, which koordlet says once. A static koordlet (built
// without cgo) says it cannot load NVML at all, and one whose image lacks the C runtime does not start.
func testNVMLLoader(t *testing.T) {
	eventually(t, time.Minute, "koordlet saying NVML is not installed", func(ctx context.Context) (bool, string) {
		pods, err := env.kube.CoreV1().Pods(koordNamespace).List(ctx, metav1.ListOptions{LabelSelector: "koord-app=koordlet"})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprintf("koordlet pods: %v", err)
		}
		raw, err := env.kube.CoreV1().Pods(koordNamespace).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		for line := range strings.Lines(string(raw)) {
			if strings.Contains(line, "A device source is unavailable") && strings.Contains(line, `source="nvml"`) {
				return strings.Contains(line, "libnvidia-ml.so.1") && strings.Contains(line, "not installed"), line
			}
		}
		return false, "no log line about the nvml source yet"
	})
}

// burner returns a pod running the burner with threads busy threads.
func burner(name string, threads int, requests, limits corev1.ResourceList, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{
				Name: "burner", Image: burnerImage, ImagePullPolicy: corev1.PullNever,
				Args:      []string{"--threads=" + strconv.Itoa(threads)},
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
			}},
		},
	}
}

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// createRunning creates pod and waits until it runs, returning it as it is then.
func createRunning(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	if _, err := env.kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return createdRunning(t, pod)
}

// lsBurner is the LS pod: one busy thread in a Guaranteed pod of one core.
var lsBurner *corev1.Pod

func testReportedUsage(t *testing.T) {
	lsBurner = createRunning(t, burner("ls-burner", 1, resources("cpu", "1", "memory", "64Mi"), resources("cpu", "1", "memory", "64Mi"), nil))
	dir := podCgroup(lsBurner)
	// What the kernel accounted to the pod's cgroup while the last report's window was open is what the
	// report must say, within 15%.
	eventually(t, 2*time.Minute, "NodeMetric's usage of ls-burner close to its cgroup's", func(ctx context.Context) (bool, string) {
		measured, err := cpuRate(dir, 5*time.Second)
		if err != nil {
			return false, err.Error()
		}
		nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if nm.Status.PodsMetric == nil {
			return false, "no podsMetric yet"
		}
		for _, p := range nm.Status.PodsMetric {
			if p.Name != lsBurner.Name || p.Namespace != namespace {
				continue
			}
			q := p.PodUsage.ResourceList[corev1.ResourceCPU]
			reported := float64(q.MilliValue()) / 1000
			state := fmt.Sprintf("reported %.3f cores, cgroup %.3f cores", reported, measured)
			t.Log(state)
			return measured > 0.5 && math.Abs(reported-measured) <= 0.15*measured, state
		}
		return false, "ls-burner not in podsMetric"
	})
}

func testColocationOn(t *testing.T) {
	helm(t, append([]string{"upgrade", "koord", filepath.Join(env.root, "charts", "koord"), "-n", "default",
		"--wait", "--timeout", "5m", "--set", "colocation.enable=true"}, installValues()...)...)
	eventually(t, 2*time.Minute, "batch-cpu and batch-memory on the node", func(ctx context.Context) (bool, string) {
		n, err := env.kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cpu, mem := n.Status.Allocatable[extension.BatchCPU], n.Status.Allocatable[extension.BatchMemory]
		return cpu.MilliValue() >= 600 && mem.Value() > 0, fmt.Sprintf("batch-cpu %s, batch-memory %s", cpu.String(), mem.String())
	})
}

// beBurner is the BE pod the profile makes.
var beBurner *corev1.Pod

func testBEPod(t *testing.T) {
	ctx := t.Context()
	profile := &configv1alpha1.ClusterColocationProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "realnode-batch"},
		Spec: configv1alpha1.ClusterColocationProfileSpec{
			Selector:          &metav1.LabelSelector{MatchLabels: map[string]string{"koord.dev/realnode": "batch"}},
			QoSClass:          string(extension.QoSBE),
			PriorityClassName: "koord-batch",
			SchedulerName:     "koord-scheduler",
		},
	}
	if _, err := env.koord.ConfigV1alpha1().ClusterColocationProfiles().Create(ctx, profile, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The webhook may take a moment to see the profile; pods created before it does stay LS and are retried.
	var created *corev1.Pod
	eventually(t, time.Minute, "a pod mutated by the profile", func(ctx context.Context) (bool, string) {
		p := burner("be-burner", 2, resources("cpu", "500m", "memory", "128Mi"), resources("cpu", "1", "memory", "256Mi"),
			map[string]string{"koord.dev/realnode": "batch"})
		got, err := env.kube.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		if got.Spec.SchedulerName == "koord-scheduler" {
			created = got
			return true, ""
		}
		_ = env.kube.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		waitGone(ctx, namespace, p.Name)
		return false, fmt.Sprintf("scheduler %q, labels %v", got.Spec.SchedulerName, got.Labels)
	})
	c := created.Spec.Containers[0]
	if created.Labels[extension.LabelPodQoS] != string(extension.QoSBE) || created.Spec.PriorityClassName != "koord-batch" {
		t.Errorf("mutated pod: QoS %q, priority class %q; want BE and koord-batch", created.Labels[extension.LabelPodQoS], created.Spec.PriorityClassName)
	}
	bcpu, bmem := c.Resources.Requests[extension.BatchCPU], c.Resources.Limits[extension.BatchMemory]
	if bcpu.Value() != 500 || bmem.Value() != 256<<20 {
		t.Errorf("mutated requests/limits %v / %v; want batch-cpu 500 and batch-memory 256Mi", c.Resources.Requests, c.Resources.Limits)
	}
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		t.Errorf("the mutated pod still requests cpu: %v", c.Resources.Requests)
	}
	beBurner = createdRunning(t, created)
	if beBurner.Spec.NodeName != node.Name {
		t.Fatalf("be-burner on node %q", beBurner.Spec.NodeName)
	}
	dir := podCgroupIn("cpu", beBurner)
	memDir := podCgroupIn("memory", beBurner)
	eventually(t, time.Minute, "the BE pod's cgroup settings from its batch resources", func(context.Context) (bool, string) {
		shares, err1 := readInt(filepath.Join(dir, "cpu.shares"))
		quota, err2 := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
		limit, err3 := readInt(filepath.Join(memDir, "memory.limit_in_bytes"))
		state := fmt.Sprintf("cpu.shares %d (%v), cpu.cfs_quota_us %d (%v), memory.limit_in_bytes %d (%v)", shares, err1, quota, err2, limit, err3)
		return shares == 512 && quota == 100000 && limit == 256<<20, state
	})

	// koordctl explain pod shows the same, from the node's koordlet through the apiserver's node proxy.
	e := &explain.Explainer{Kube: env.kube, Koord: env.koord, KoordletPort: explain.DefaultKoordletPort}
	eventually(t, time.Minute, "explain pod showing the BE pod's cgroups as koordlet reads them", func(ctx context.Context) (bool, string) {
		x, err := e.Pod(ctx, namespace, beBurner.Name)
		if err != nil {
			return false, err.Error()
		}
		if x.Cgroups == nil {
			return false, x.CgroupsUnavailable
		}
		pc := x.Cgroups.Pod
		state := fmt.Sprintf("qos %s, pod cgroup %+v, %d containers", x.Cgroups.QoSClass, pc, len(x.Cgroups.Containers))
		return x.Cgroups.QoSClass == string(extension.QoSBE) && ptr.Deref(pc.CPUShares, 0) == 512 && ptr.Deref(pc.CFSQuotaUs, 0) == 100000 &&
			ptr.Deref(pc.MemoryLimitBytes, 0) == 256<<20 && len(x.Cgroups.Containers) == 1, state
	})
}

// testQuotaAtStart runs a BE container that reads its own CFS quota at its first instruction: with koordlet
// registered with containerd over NRI, the quota from its batch-cpu limit (1 CPU, 100 ms a 100 ms period) is
// there before the process starts. Without the hook, kubelet's BestEffort container starts unlimited (-1) and
// the reconcile loop writes the quota a round later.
func testQuotaAtStart(t *testing.T) {
	ctx := t.Context()
	// A BE pod as a ClusterColocationProfile would make it, written so.
	p := burner("be-quota-at-start", 1,
		resources(string(extension.BatchCPU), "500", string(extension.BatchMemory), "64Mi"),
		resources(string(extension.BatchCPU), "1000", string(extension.BatchMemory), "128Mi"),
		map[string]string{extension.LabelPodQoS: string(extension.QoSBE)})
	p.Spec.SchedulerName = "koord-scheduler"
	p.Spec.PriorityClassName = "koord-batch"
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	p.Spec.Containers[0].Args = []string{"--report-quota"}
	if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = env.kube.CoreV1().Pods(namespace).Delete(context.WithoutCancel(ctx), p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}()
	var message string
	eventually(t, 2*time.Minute, "the container reporting its quota and exiting", func(ctx context.Context) (bool, string) {
		got, err := env.kube.CoreV1().Pods(namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cs := range got.Status.ContainerStatuses {
			if term := cs.State.Terminated; term != nil {
				message = term.Message
				return true, ""
			}
		}
		return false, fmt.Sprintf("phase %s, statuses %v", got.Status.Phase, got.Status.ContainerStatuses)
	})
	if want := "cpu.cfs_quota_us 100000"; message != want {
		t.Errorf("the BE container started with %q, want %q (koordlet's NRI hook gives it its quota at creation)", message, want)
	}
}

// createdRunning waits until the created pod runs.
func createdRunning(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	eventually(t, 2*time.Minute, "pod "+pod.Name+" running", func(ctx context.Context) (bool, string) {
		p, err := env.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got = p
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %s, node %q, conditions %v", p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
	})
	return got
}

func waitGone(ctx context.Context, ns, name string) {
	for range 100 {
		if _, err := env.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func testSuppression(t *testing.T) {
	beQoS := qosCgroup("cpu", corev1.PodQOSBestEffort)
	before := usages(t)
	t.Logf("before suppression: LS %.3f cores, BE %.3f cores", before.ls, before.be)
	// After installValues, whose sloControllerConfig it adds to.
	helm(t, append(append([]string{"upgrade", "koord", filepath.Join(env.root, "charts", "koord"), "-n", "default",
		"--wait", "--timeout", "5m"}, installValues()...), "--set", "colocation.enable=true", "--set-json",
		`sloControllerConfig.resource-threshold-config={"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":65,"cpuSuppressPolicy":"cfsQuota"}}`)...)
	eventually(t, time.Minute, "the besteffort cgroup's CFS quota lowered", func(context.Context) (bool, string) {
		q, err := readInt(filepath.Join(beQoS, "cpu.cfs_quota_us"))
		return err == nil && q > 0 && q < 100000, fmt.Sprintf("cpu.cfs_quota_us %d (%v)", q, err)
	})
	q, _ := readInt(filepath.Join(beQoS, "cpu.cfs_quota_us"))
	p, _ := readInt(filepath.Join(beQoS, "cpu.cfs_period_us"))
	allowance := float64(q) / float64(p)
	var after usage
	eventually(t, time.Minute, "the BE burner held to the quota while the LS burner keeps its core", func(context.Context) (bool, string) {
		after = usages(t)
		state := fmt.Sprintf("quota %.3f cores; LS %.3f cores, BE %.3f cores", allowance, after.ls, after.be)
		return after.be <= allowance*1.2+0.05 && after.be < before.be && after.ls >= 0.85, state
	})
	t.Logf("suppressed: besteffort quota %d/%d (%.3f cores); LS %.3f cores, BE %.3f cores", q, p, allowance, after.ls, after.be)
}

type usage struct{ ls, be float64 }

// usages measures both burners' CPU over two seconds, from their cgroups.
func usages(t *testing.T) usage {
	t.Helper()
	var u usage
	var err error
	done := make(chan error, 1)
	go func() {
		var err error
		u.be, err = cpuRate(podCgroup(beBurner), 2*time.Second)
		done <- err
	}()
	if u.ls, err = cpuRate(podCgroup(lsBurner), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return u
}

func testUninstall(t *testing.T) {
	ctx := t.Context()
	for _, p := range []string{"ls-burner", "be-burner"} {
		_ = env.kube.CoreV1().Pods(namespace).Delete(ctx, p, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
	_ = env.koord.ConfigV1alpha1().ClusterColocationProfiles().Delete(ctx, "realnode-batch", metav1.DeleteOptions{})
	if err := env.kube.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	helm(t, "uninstall", "koord", "-n", "default", "--wait", "--timeout", "5m")
	eventually(t, 3*time.Minute, "Koord gone", func(ctx context.Context) (bool, string) {
		var left []string
		if _, err := env.kube.CoreV1().Namespaces().Get(ctx, koordNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "namespace "+koordNamespace)
		}
		if _, err := env.kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "namespace "+namespace)
		}
		if m, _ := env.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{}); m != nil && len(m.Items) > 0 {
			left = append(left, "mutating webhook configuration "+m.Items[0].Name)
		}
		if v, _ := env.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{}); v != nil && len(v.Items) > 0 {
			left = append(left, "validating webhook configuration "+v.Items[0].Name)
		}
		if pcs, _ := env.kube.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{}); pcs != nil {
			for _, pc := range pcs.Items {
				if strings.HasPrefix(pc.Name, "koord-") {
					left = append(left, "priority class "+pc.Name)
				}
			}
		}
		if _, err := env.koord.SloV1alpha1().NodeMetrics().List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "the NodeMetric CRD")
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
}

// The cgroup layout of kubelet's cgroupfs driver (v1: a hierarchy per controller; v2: one).
func cgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

func qosCgroup(controller string, qos corev1.PodQOSClass) string {
	base := filepath.Join("/sys/fs/cgroup", controller, "kubepods")
	if cgroupV2() {
		base = "/sys/fs/cgroup/kubepods"
	}
	switch qos {
	case corev1.PodQOSBestEffort:
		return filepath.Join(base, "besteffort")
	case corev1.PodQOSBurstable:
		return filepath.Join(base, "burstable")
	}
	return base
}

func podCgroupIn(controller string, pod *corev1.Pod) string {
	return filepath.Join(qosCgroup(controller, pod.Status.QOSClass), "pod"+string(pod.UID))
}

// podCgroup is the pod's CPU accounting cgroup (cpuacct on v1).
func podCgroup(pod *corev1.Pod) string { return podCgroupIn("cpuacct", pod) }

// cpuRate measures the cores the cgroup used over window.
func cpuRate(dir string, window time.Duration) (float64, error) {
	read := func() (float64, error) {
		if cgroupV2() {
			data, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
			if err != nil {
				return 0, err
			}
			for _, l := range strings.Split(string(data), "\n") {
				if f := strings.Fields(l); len(f) == 2 && f[0] == "usage_usec" {
					v, err := strconv.ParseFloat(f[1], 64)
					return v * 1e3, err
				}
			}
			return 0, fmt.Errorf("%s/cpu.stat has no usage_usec", dir)
		}
		v, err := readInt(filepath.Join(dir, "cpuacct.usage"))
		return float64(v), err
	}
	a, err := read()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	time.Sleep(window)
	b, err := read()
	if err != nil {
		return 0, err
	}
	return (b - a) / float64(time.Since(start).Nanoseconds()), nil
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// testCPUIdle turns koordlet's CoreSched gate on and the coreSched CPU QoS policy with schedIdle for the BE
// class: the besteffort cgroup gets cpu.idle 1 (this kernel has cgroup idle on v1; it has no core scheduling,
// which koordlet says once), and 0 again once resource-qos-config no longer enables it.
func testCPUIdle(t *testing.T) {
	idle := filepath.Join(qosCgroup("cpu", corev1.PodQOSBestEffort), "cpu.idle")
	upgrade := func(extra ...string) {
		helm(t, append(append([]string{"upgrade", "koord", filepath.Join(env.root, "charts", "koord"), "-n", "default",
			"--wait", "--timeout", "5m"}, installValues()...), append([]string{"--set", "colocation.enable=true",
			"--set", "koordlet.features=CoreSched=true"}, extra...)...)...)
	}
	waitIdle := func(want int64) {
		eventually(t, time.Minute, fmt.Sprintf("cpu.idle %d on the besteffort cgroup", want), func(context.Context) (bool, string) {
			v, err := readInt(idle)
			return err == nil && v == want, fmt.Sprintf("%s = %d (%v)", idle, v, err)
		})
	}
	upgrade("--set-json", `sloControllerConfig.resource-qos-config={"clusterStrategy":{"policies":{"cpuPolicy":"coreSched"},"beClass":{"cpuQOS":{"enable":true,"schedIdle":1}}}}`)
	waitIdle(1)
	upgrade()
	waitIdle(0)
}

// testPodPressure turns koordlet's PSICollector gate on and reads its metrics on the node's address: the LS
// burner's CPU pressure is there, read from the pod's cgroup in the cgroup v2 hierarchy that runc and kubelet
// keep beside the v1 controllers (a hybrid mount, as on this machine).
func testPodPressure(t *testing.T) {
	helm(t, append(append([]string{"upgrade", "koord", filepath.Join(env.root, "charts", "koord"), "-n", "default",
		"--wait", "--timeout", "5m"}, installValues()...), "--set", "colocation.enable=true", "--set", "koordlet.features=PSICollector=true")...)
	url := "http://" + net.JoinHostPort(env.node.IP.String(), "9316") + "/metrics"
	eventually(t, time.Minute, "the LS burner's CPU pressure in koordlet's metrics", func(ctx context.Context) (bool, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err.Error()
		}
		for line := range strings.SplitSeq(string(body), "\n") {
			if !strings.HasPrefix(line, "koord_koordlet_pod_psi{") || !strings.Contains(line, `pod_name="`+lsBurner.Name+`"`) ||
				!strings.Contains(line, `psi_resource_type="cpu"`) || !strings.Contains(line, `psi_degree="some"`) {
				continue
			}
			fields := strings.Fields(line)
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			return err == nil && v >= 0 && v <= 100, line
		}
		return false, fmt.Sprintf("no koord_koordlet_pod_psi of %s's cpu in %d bytes of metrics", lsBurner.Name, len(body))
	})
}
