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
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

var (
	footprintDuration = flag.Duration("koordlet.duration", 60*time.Second, "How long BenchmarkKoordletFootprint runs the koordlet binary.")
	footprintGates    = flag.String("koordlet.feature-gates", allGates, "The agent's --feature-gates in BenchmarkKoordletFootprint; every strategy by default (then checked to have acted), another value to compare.")
	footprintLog      = flag.String("koordlet.log", "", "Where BenchmarkKoordletFootprint writes the agent's log; a temporary file, removed afterwards, when empty.")
)

const (
	// allGates turns every koordlet feature on.
	allGates      = "AllAlpha=true,AllBeta=true"
	perfNode      = "koord-perf-node"
	perfNamespace = "koordlet-perf"
	// nodeCPUs is the CPU count of the fake node (its /proc/stat and cgroup cpusets).
	nodeCPUs = 16
	// podCount pods of containersPerPod containers each run on the fake node at any time.
	podCount         = 50
	containersPerPod = 3
	// churnEvery is how often one pod is deleted and a new one created.
	churnEvery = 5 * time.Second
	// Fake CPU use, in cores: processes outside pods, each LS container and each BE container.
	systemCores      = 0.5
	lsContainerCores = 0.04
	beContainerCores = 0.02
	// containerMemory is each container's memory use, a quarter of it inactive page cache.
	containerMemory = 64 << 20
	// growthFrom is when the RSS baseline of MiB-rss-growth is taken: after start-up and the first reports.
	growthFrom = 20 * time.Second
	// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ): 100 on Linux.
	userHZ = 100
)

// BenchmarkKoordletFootprint runs the koordlet binary for -koordlet.duration against a real kube-apiserver
// and a fake node: a cgroup v1 tree with an Anolis OS kernel's extra knobs, /proc and a resctrl tree in a
// temporary directory, with 50 pods × 3 containers (a third of the pods BE) whose CPU counters advance every
// second (with pressure files in the hybrid mount's cgroup v2 tree), one pod replaced every 5 s, and a
// NodeMetric reported every 10 s. Every strategy is on: every
// feature gate (AllAlpha, AllBeta), and in the NodeSLO BE suppression (cfsQuota policy), CPU burst, memory
// QoS, group identity and resctrl for every class, the system settings and a host application. Every second it reads the agent's
// utime+stime from /proc/<pid>/stat and its VmRSS from /proc/<pid>/status, and reports
//
//	cores           CPU over the whole run, start-up included
//	cores-steady    CPU after the first 20 s
//	MiB-peak-rss    the largest RSS seen
//	MiB-peak-rss-anon  the largest anonymous part of it (heap, stacks; the rest is the binary's pages)
//	MiB-rss-growth  RSS at the end minus RSS at 20 s: memory under churn should stay flat
//
// The counters advance, and the pods churn, on the benchmark's goroutine between two samples. It fails when
// the agent exits early, logs an error, or does not report the pods and suppress the BE ones. The load
// generator, the apiserver and the benchmark share the machine with the agent; their CPU is not counted.
func BenchmarkKoordletFootprint(b *testing.B) {
	if env == nil {
		b.Fatal("no control plane: run the benchmark through `go test -bench`")
	}
	ctx := b.Context()
	bin := buildKoordlet(b)
	kubeconfig := writeKubeconfig(b, env.Config)
	node := newFakeNode(b)
	createPerfObjects(b)
	for range podCount {
		node.addPod(ctx)
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--node-name=" + perfNode,
		"--cgroup-root=" + node.fs.Root(),
		"--proc-root=" + node.procDir,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
		// The machine's container runtime must not get the benchmark's hooks.
		"--enable-nri-runtime-hook=false",
		// The prediction's checkpoints go to the benchmark's directory, not the host's /prediction-checkpoints.
		"--prediction-checkpoint-filepath=" + b.TempDir(),
		"--resctrl-root=" + node.resctrlDir,
		"--feature-gates=" + *footprintGates,
	}

	var fp footprint
	for b.Loop() {
		fp = runKoordlet(b, bin, args, node)
	}
	b.ReportMetric(fp.cores, "cores")
	b.ReportMetric(fp.coresSteady, "cores-steady")
	b.ReportMetric(fp.peakMiB, "MiB-peak-rss")
	b.ReportMetric(fp.peakAnonMiB, "MiB-peak-rss-anon")
	b.ReportMetric(fp.growthMiB, "MiB-rss-growth")
}

// buildKoordlet builds cmd/koordlet into a temporary directory.
func buildKoordlet(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "koordlet")
	cmd := exec.CommandContext(b.Context(), "go", "build", "-o", bin, "./cmd/koordlet")
	cmd.Dir = env.RepoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/koordlet: %v\n%s", err, out)
	}
	return bin
}

// writeKubeconfig writes a kubeconfig for the control plane's administrator, as cfg reaches it.
func writeKubeconfig(b *testing.B, cfg *rest.Config) string {
	b.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testenv"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["testenv"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "testenv"}
	kc.CurrentContext = "testenv"
	path := filepath.Join(b.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		b.Fatalf("write kubeconfig: %v", err)
	}
	return path
}

// createPerfObjects creates the node, the namespace, the koord-batch priority class, the NodeMetric (reports
// every 10 s) and the NodeSLO (perfNodeSLO).
func createPerfObjects(b *testing.B) {
	b.Helper()
	ctx := b.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: perfNode}}
	objs := []client.Object{
		node,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: perfNamespace}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: string(extension.PriorityBatch)}, Value: extension.PriorityBatchValueMin},
		&slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: perfNode},
			Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{
				ReportIntervalSeconds: ptr.To[int64](10),
			}},
		},
		&slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: perfNode}, Spec: perfNodeSLO()},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(nodeCPUs, resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		b.Fatalf("set the node's status: %v", err)
	}
}

// perfNodeSLO turns every strategy on: BE suppression (cfsQuota policy), CPU burst, memory QoS, group identity
// and resctrl for every class, the system settings, and a latency-sensitive host application.
func perfNodeSLO() slov1alpha1.NodeSLOSpec {
	class := func(groupIdentity int64) *slov1alpha1.ResourceQOS {
		return &slov1alpha1.ResourceQOS{
			CPUQOS: &slov1alpha1.CPUQOSCfg{Enable: ptr.To(true), CPUQOS: slov1alpha1.CPUQOS{GroupIdentity: ptr.To(groupIdentity)}},
			MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
				MinLimitPercent: ptr.To[int64](50), LowLimitPercent: ptr.To[int64](80), ThrottlingPercent: ptr.To[int64](90),
			}},
			ResctrlQOS: &slov1alpha1.ResctrlQOSCfg{Enable: ptr.To(true)},
		}
	}
	return slov1alpha1.NodeSLOSpec{
		ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
			Enable:                      ptr.To(true),
			CPUSuppressPolicy:           slov1alpha1.CPUCfsQuotaPolicy,
			CPUSuppressThresholdPercent: ptr.To[int64](65),
		},
		ResourceQOSStrategy: &slov1alpha1.ResourceQOSStrategy{LSRClass: class(2), LSClass: class(2), BEClass: class(-1)},
		CPUBurstStrategy:    &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstAuto}},
		SystemStrategy:      &slov1alpha1.SystemStrategy{MinFreeKbytesFactor: ptr.To[int64](100), WatermarkScaleFactor: ptr.To[int64](150)},
		HostApplications:    []slov1alpha1.HostApplicationSpec{{Name: "nginx", QoS: string(extension.QoSLS)}},
	}
}

// fakeNode is the fake cgroup tree and /proc of the node, and its pods. Its methods run on the benchmark's
// goroutine only.
type fakeNode struct {
	b  *testing.B
	fs *cgrouptest.FS
	// staging is a second tree where a new pod's cgroups are built before they are moved into fs at once, as
	// the kernel creates a cgroup with all its files: the agent, which learns of the pod from the apiserver
	// first, must never find a pod directory with some of its files still missing.
	staging *cgrouptest.FS
	procDir string
	// resctrlDir is the fake resctrl filesystem: 11 cache ways, two cache and memory domains.
	resctrlDir string
	// busy and idle are the node's cumulative CPU jiffies in /proc/stat.
	busy, idle float64
	last       time.Time
	pods       []*fakePod // oldest first
	created    int
	// trash is where removed cgroup directories are moved before they are deleted; removed counts them.
	trash   string
	removed int
}

// fakePod is a pod on the fake node.
type fakePod struct {
	pod        *corev1.Pod
	dir        string
	usage      time.Duration
	containers []*fakeContainer
}

// fakeContainer is a container of a fakePod that uses cores of CPU.
type fakeContainer struct {
	dir   string
	cores float64
	usage time.Duration
}

func newFakeNode(b *testing.B) *fakeNode {
	cpus := fmt.Sprintf("0-%d", nodeCPUs-1)
	n := &fakeNode{
		b:          b,
		fs:         cgrouptest.NewFS(b, cgroup.V1, cgroup.Cgroupfs, cgrouptest.WithCPUs(cpus), cgrouptest.WithKnobs(cgrouptest.AnolisKnobs)),
		staging:    cgrouptest.NewFS(b, cgroup.V1, cgroup.Cgroupfs, cgrouptest.WithCPUs(cpus), cgrouptest.WithKnobs(cgrouptest.AnolisKnobs)),
		procDir:    filepath.Join(b.TempDir(), "proc"),
		resctrlDir: b.TempDir(),
		last:       time.Now(),
	}
	n.fs.MkDir("/host-latency-sensitive")
	n.fs.MkDir("/host-latency-sensitive/nginx")
	// Next to the fake cgroup tree (every TempDir of b is under one directory), so moving there is a rename.
	n.trash = b.TempDir()
	if err := os.Mkdir(n.procDir, 0o755); err != nil {
		b.Fatal(err)
	}
	meminfo := fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\nBuffers:        0 kB\nCached:         %d kB\n",
		64<<20, 30<<20, 40<<20, 10<<20)
	if err := writeAtomic(filepath.Join(n.procDir, "meminfo"), meminfo); err != nil {
		b.Fatal(err)
	}
	if err := n.writeProcStat(); err != nil {
		b.Fatal(err)
	}
	for dir, files := range map[string]map[string]string{
		filepath.Join(n.procDir, "sys", "vm"):     {"min_free_kbytes": "67584\n", "watermark_scale_factor": "10\n"},
		filepath.Join(n.procDir, "pressure"):      {"cpu": pressure, "memory": pressure, "io": pressure},
		n.resctrlDir:                              {"schemata": "L3:0=7ff;1=7ff\nMB:0=100;1=100\n"},
		filepath.Join(n.resctrlDir, "info", "L3"): {"cbm_mask": "7ff\n", "min_cbm_bits": "1\n", "num_closids": "16\n"},
		filepath.Join(n.resctrlDir, "info", "MB"): {"min_bandwidth": "10\n", "bandwidth_gran": "10\n", "num_closids": "8\n"},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for name, content := range files {
			if err := writeAtomic(filepath.Join(dir, name), content); err != nil {
				b.Fatal(err)
			}
		}
	}
	return n
}

// addPod creates a pod in the apiserver, its cgroups, and reports it running. Every third pod is BE.
func (n *fakeNode) addPod(ctx context.Context) {
	b := n.b
	b.Helper()
	i := n.created
	n.created++
	be := i%3 == 2
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: perfNamespace},
		Spec:       corev1.PodSpec{NodeName: perfNode},
	}
	cores := lsContainerCores
	for c := range containersPerPod {
		ctr := corev1.Container{Name: fmt.Sprintf("c%d", c), Image: "app"}
		if be {
			ctr.Resources.Requests = corev1.ResourceList{extension.BatchCPU: *resource.NewQuantity(100, resource.DecimalSI)}
			ctr.Resources.Limits = corev1.ResourceList{extension.BatchCPU: *resource.NewQuantity(200, resource.DecimalSI)}
		} else {
			ctr.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
			ctr.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, ctr)
	}
	if be {
		pod.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSBE)}
		pod.Spec.PriorityClassName = string(extension.PriorityBatch)
		cores = beContainerCores
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		b.Fatalf("create pod %s: %v", pod.Name, err)
	}

	qos := extension.GetKubeQoSClass(pod)
	fp := &fakePod{pod: pod, dir: n.staging.AddPod(qos, pod.UID)}
	now := metav1.Now()
	for _, ctr := range pod.Spec.Containers {
		id := fmt.Sprintf("containerd://%016x%016x", rand.Uint64(), rand.Uint64())
		dir := n.staging.AddContainer(qos, pod.UID, id)
		n.staging.SetMemory(dir, containerMemory, containerMemory/4)
		fp.containers = append(fp.containers, &fakeContainer{dir: dir, cores: cores})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image, ContainerID: id, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	n.staging.SetMemory(fp.dir, containersPerPod*containerMemory, containersPerPod*containerMemory/4)
	staged, live := n.staging.Layout().ControllerDirs(fp.dir), n.fs.Layout().ControllerDirs(fp.dir)
	for i := range staged {
		if err := os.Rename(staged[i], live[i]); err != nil {
			b.Fatal(err)
		}
	}
	// The pod in the hybrid mount's cgroup v2 tree, where its pressure is.
	if err := os.MkdirAll(n.unifiedDir(fp.dir), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, r := range []string{"cpu", "memory", "io"} {
		if err := writeAtomic(filepath.Join(n.unifiedDir(fp.dir), r+".pressure"), pressure); err != nil {
			b.Fatal(err)
		}
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		b.Fatalf("report pod %s running: %v", pod.Name, err)
	}
	n.pods = append(n.pods, fp)
}

// churn deletes the oldest pod, and its cgroups, and creates a new one.
func (n *fakeNode) churn(ctx context.Context) {
	b := n.b
	b.Helper()
	old := n.pods[0]
	n.pods = n.pods[1:]
	if err := env.Client.Delete(ctx, old.pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		b.Fatalf("delete pod %s: %v", old.pod.Name, err)
	}
	n.removeDir(old.dir)
	n.addPod(ctx)
}

// pressure is the content of every pressure file of the fake node.
const pressure = "some avg10=1.50 avg60=1.20 avg300=1.00 total=1234567\nfull avg10=0.50 avg60=0.40 avg300=0.30 total=234567\n"

// unifiedDir returns the directory of cgroup dir in the hybrid mount's cgroup v2 tree.
func (n *fakeNode) unifiedDir(dir string) string { return filepath.Join(n.fs.Root(), "unified", dir) }

// removeDir removes the cgroup dir, and everything under it, from every controller at once, as the kernel's
// rmdir does: it is first moved out of the tree, then deleted. (Deleting it in place would let the agent
// find the directory with some of its files gone, which a real cgroup never shows.)
func (n *fakeNode) removeDir(dir string) {
	b := n.b
	b.Helper()
	for _, p := range append(n.fs.Layout().ControllerDirs(dir), n.unifiedDir(dir)) {
		n.removed++
		gone := filepath.Join(n.trash, strconv.Itoa(n.removed))
		if err := os.Rename(p, gone); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(gone); err != nil {
			b.Fatal(err)
		}
	}
}

// advance moves every CPU counter on to now: each container by its cores, each pod by the sum of its
// containers, the node by the pods plus the system's use.
func (n *fakeNode) advance(now time.Time) {
	b := n.b
	b.Helper()
	dt := now.Sub(n.last)
	if dt <= 0 {
		return
	}
	n.last = now
	l := n.fs.Layout()
	used := systemCores
	for _, p := range n.pods {
		for _, c := range p.containers {
			d := time.Duration(c.cores * float64(dt))
			c.usage += d
			p.usage += d
			used += c.cores
			if err := writeAtomic(l.KnobPath(c.dir, "cpuacct.usage"), strconv.FormatInt(c.usage.Nanoseconds(), 10)+"\n"); err != nil {
				b.Fatal(err)
			}
		}
		if err := writeAtomic(l.KnobPath(p.dir, "cpuacct.usage"), strconv.FormatInt(p.usage.Nanoseconds(), 10)+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	n.busy += used * userHZ * dt.Seconds()
	n.idle += (nodeCPUs - used) * userHZ * dt.Seconds()
	if err := n.writeProcStat(); err != nil {
		b.Fatal(err)
	}
}

// writeProcStat writes /proc/stat with the node's jiffies, split evenly over its CPUs.
func (n *fakeNode) writeProcStat() error {
	var s strings.Builder
	busy, idle := uint64(n.busy), uint64(n.idle)
	fmt.Fprintf(&s, "cpu  %d 0 0 %d 0 0 0 0 0 0\n", busy, idle)
	for i := range nodeCPUs {
		fmt.Fprintf(&s, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", i, busy/nodeCPUs, idle/nodeCPUs)
	}
	s.WriteString("intr 0\nctxt 0\nbtime 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\n")
	return writeAtomic(filepath.Join(n.procDir, "stat"), s.String())
}

// writeAtomic replaces the file at path with content through a rename, so that the agent never reads a
// half-written counter.
func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// footprint is what one run of the agent cost.
type footprint struct {
	cores, coresSteady, peakMiB, peakAnonMiB, growthMiB float64
}

// procSample is one reading of the agent process: CPU time in USER_HZ ticks and resident memory.
type procSample struct {
	at     time.Time
	ticks  uint64
	rssKiB int64
	// anonKiB is the anonymous part of the resident memory (heap, stacks): rssKiB less the binary's pages.
	anonKiB int64
}

// runKoordlet runs the agent for -koordlet.duration while advancing the fake node's counters and churning
// its pods, sampling the process every second, then checks it did its job and stops it.
func runKoordlet(b *testing.B, bin string, args []string, node *fakeNode) footprint {
	ctx := b.Context()
	logPath := *footprintLog
	if logPath == "" {
		logPath = filepath.Join(b.TempDir(), "koordlet.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = logFile.Close() }() // The child writes it; the log is read for failures only.
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start koordlet: %v", err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() {
		exitErr = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	b.Cleanup(stop)
	pid := cmd.Process.Pid
	failExited := func() {
		b.Fatalf("koordlet exited early: %v\n%s", exitErr, tail(logPath))
	}

	first, err := sampleProcess(pid)
	if err != nil {
		b.Fatal(err)
	}
	samples := []procSample{first}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastChurn := first.at
	for time.Since(first.at) < *footprintDuration {
		select {
		case <-exited:
			failExited()
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		case now := <-tick.C:
			node.advance(now)
			if now.Sub(lastChurn) >= churnEvery {
				node.churn(ctx)
				lastChurn = now
			}
			s, err := sampleProcess(pid)
			if err != nil {
				b.Fatalf("sample koordlet: %v", err)
			}
			samples = append(samples, s)
		}
	}
	checkWorked(b, node, logPath)
	select {
	case <-exited:
		failExited()
	default:
	}
	stop()
	return summarize(samples)
}

// checkWorked fails the benchmark unless the agent reported the pods in the NodeMetric, suppressed the BE pods
// and logged no error: the footprint of an agent that does nothing, or fails, would mean nothing. It waits up
// to 30 s for a report.
func checkWorked(b *testing.B, node *fakeNode, logPath string) {
	b.Helper()
	ctx := b.Context()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var nm slov1alpha1.NodeMetric
		if err := env.Client.Get(ctx, client.ObjectKey{Name: perfNode}, &nm); err != nil {
			b.Fatal(err)
		}
		if n := len(nm.Status.PodsMetric); n >= podCount-containersPerPod {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("koordlet reported %d pods in the NodeMetric; want about %d\n%s", len(nm.Status.PodsMetric), podCount, tail(logPath))
		}
		time.Sleep(500 * time.Millisecond)
	}
	l := node.fs.Layout()
	if q := node.fs.ReadFile(l.QoSDir(corev1.PodQOSBestEffort), "cpu.cfs_quota_us"); q == "-1" {
		b.Fatalf("koordlet did not suppress the BE pods: besteffort cpu.cfs_quota_us is still -1\n%s", tail(logPath))
	}
	if *footprintGates == allGates {
		checkStrategies(b, node, logPath)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(log), "\n") {
		// klog's text header: severity letter, then the date.
		if len(line) > 1 && line[0] == 'E' && line[1] >= '0' && line[1] <= '9' {
			b.Fatalf("koordlet logged an error: %s", line)
		}
	}
}

// checkStrategies fails the benchmark unless the strategies other than suppression acted: group identity on the
// besteffort cgroup and the host application, resctrl's BE group, min_free_kbytes and the pods' memory.min.
func checkStrategies(b *testing.B, node *fakeNode, logPath string) {
	b.Helper()
	l := node.fs.Layout()
	for _, c := range []struct{ what, got, want string }{
		{"the besteffort cgroup's group identity", node.fs.ReadFile(l.QoSDir(corev1.PodQOSBestEffort), "cpu.bvt.warp_ns"), "-1"},
		{"the host application's group identity", node.fs.ReadFile("/host-latency-sensitive/nginx", "cpu.bvt.warp_ns"), "2"},
		{"the BE resctrl group's cache ways (0-30 % of 11)", readLine(filepath.Join(node.resctrlDir, "BE", "schemata")), "L3:0=f;1=f"},
		{"min_free_kbytes (100 × 64 GiB in kB / 10000)", readLine(filepath.Join(node.procDir, "sys", "vm", "min_free_kbytes")), "671088"},
	} {
		if strings.TrimSpace(c.got) != c.want {
			b.Fatalf("%s is %q, want %q\n%s", c.what, strings.TrimSpace(c.got), c.want, tail(logPath))
		}
	}
	if protected := node.fs.ReadFile(l.KubepodsDir(), "memory.min"); strings.TrimSpace(protected) == "0" {
		b.Fatalf("koordlet did not protect the pods' memory: kubepods memory.min is 0\n%s", tail(logPath))
	}
}

// readLine returns the first line of the file at path, "" when it cannot be read.
func readLine(path string) string {
	data, _ := os.ReadFile(path)
	line, _, _ := strings.Cut(string(data), "\n")
	return line
}

// summarize turns the samples into the footprint; see BenchmarkKoordletFootprint. With a run shorter than
// 3 × growthFrom, the steady part starts at a third of it.
func summarize(s []procSample) footprint {
	first, last := s[0], s[len(s)-1]
	from := min(growthFrom, last.at.Sub(first.at)/3)
	base := first
	for _, x := range s {
		if x.at.Sub(first.at) >= from {
			base = x
			break
		}
	}
	cores := func(a, z procSample) float64 {
		if !z.at.After(a.at) {
			return 0
		}
		return float64(z.ticks-a.ticks) / userHZ / z.at.Sub(a.at).Seconds()
	}
	var peak, peakAnon int64
	for _, x := range s {
		peak = max(peak, x.rssKiB)
		peakAnon = max(peakAnon, x.anonKiB)
	}
	return footprint{
		cores:       cores(first, last),
		coresSteady: cores(base, last),
		peakMiB:     float64(peak) / 1024,
		peakAnonMiB: float64(peakAnon) / 1024,
		growthMiB:   float64(last.rssKiB-base.rssKiB) / 1024,
	}
}

// sampleProcess reads utime+stime from /proc/<pid>/stat and VmRSS and RssAnon from /proc/<pid>/status.
func sampleProcess(pid int) (procSample, error) {
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return s, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// Fields after the command name start at field 3 (state); utime is field 14, stime field 15.
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return s, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return s, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	s.ticks = utime + stime
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	kib := func(line, prefix string) (int64, bool, error) {
		v, ok := strings.CutPrefix(line, prefix)
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0, true, fmt.Errorf("/proc/%d/status %s %w", pid, prefix, err)
		}
		return n, true, nil
	}
	var haveRSS, haveAnon bool
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok, err := kib(line, "VmRSS:"); err != nil {
			return s, err
		} else if ok {
			s.rssKiB, haveRSS = v, true
		}
		if v, ok, err := kib(line, "RssAnon:"); err != nil {
			return s, err
		} else if ok {
			s.anonKiB, haveAnon = v, true
		}
	}
	if !haveRSS || !haveAnon {
		return s, fmt.Errorf("/proc/%d/status lacks VmRSS or RssAnon", pid)
	}
	return s, nil
}

// tail returns the last lines of the agent's log, for failure messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
