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

package qosmanager_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpuburst"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpuevict"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/memoryevict"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// inputs is a fixed Inputs.
type inputs struct {
	node *corev1.Node
	pods []*corev1.Pod
	slo  *slov1alpha1.NodeSLO
}

func (i *inputs) Node() *corev1.Node            { return i.node }
func (i *inputs) Pods() []*corev1.Pod           { return i.pods }
func (i *inputs) NodeSLO() *slov1alpha1.NodeSLO { return i.slo }

// strategies builds the strategies the way the agent does: one per gate that is on.
func strategies(f features.Koordlet, cg *cgroup.Manager, ev *evictor.Evictor, rec record.EventRecorder) []qosmanager.Strategy {
	reporter := qosmanager.NewAnnotationReporter(rec)
	var out []qosmanager.Strategy
	if f.PodCgroupReconcile {
		out = append(out, cgroupreconcile.New(cg, cgroupreconcile.Features{BatchResource: f.BatchResource, CPUSetAllocator: f.CPUSetAllocator}))
	}
	if f.BECPUSuppress {
		out = append(out, cpusuppress.New(cg))
	}
	if f.CPUBurst {
		out = append(out, cpuburst.New(cg, cpuburst.WithAnnotationReporter(reporter)))
	}
	if g := (memoryevict.Gates{BEMemoryEvict: f.BEMemoryEvict, MemoryAllocatableEvict: f.MemoryAllocatableEvict, MemoryEvict: f.MemoryEvict}); g != (memoryevict.Gates{}) {
		out = append(out, memoryevict.New(ev, memoryevict.WithGates(g), memoryevict.WithAnnotationReporter(reporter)))
	}
	if g := (cpuevict.Gates{BECPUEvict: f.BECPUEvict, CPUAllocatableEvict: f.CPUAllocatableEvict, CPUEvict: f.CPUEvict}); g != (cpuevict.Gates{}) {
		out = append(out, cpuevict.New(cg, ev, cpuevict.WithGates(g), cpuevict.WithAnnotationReporter(reporter)))
	}
	return out
}

func TestStrategiesTogether(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	gate := features.NewKoordletGate()
	if err := gate.Set("AllAlpha=true,AllBeta=true"); err != nil {
		t.Fatal(err)
	}
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	web := qostest.Pod("web", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
		qostest.Container("app", "", qostest.Resources("cpu", "1"), qostest.Resources("cpu", "2")))
	batch := qostest.Pod("batch", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("job", "", qostest.Resources("kubernetes.io/batch-cpu", "1000"),
			qostest.Resources("kubernetes.io/batch-cpu", "2000", "kubernetes.io/batch-memory", "4Gi")))
	fs.AddContainer(corev1.PodQOSBurstable, web.UID, "containerd://app")
	jobDir := fs.AddContainer(corev1.PodQOSBestEffort, batch.UID, "containerd://job")
	beDir := fs.Layout().QoSDir(corev1.PodQOSBestEffort)

	kube := fake.NewClientset(web.DeepCopy(), batch.DeepCopy())
	var evicted []string
	kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" {
			evicted = append(evicted, a.(k8stesting.CreateAction).GetObject().(interface{ GetName() string }).GetName())
			return true, nil, nil
		}
		return false, nil, nil
	})
	rec := record.NewFakeRecorder(10)
	clk := clocktesting.NewFakeClock(qostest.Now)
	ev := evictor.New(kube, rec, evictor.WithClock(clk))

	cache := metriccache.New(metriccache.Options{})
	sample := func(cpu, mem float64) {
		cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), clk.Now(), cpu)
		cache.Append(qosmanager.NodeKey(corev1.ResourceMemory), clk.Now(), mem)
		cache.Append(qosmanager.PodKey(web.UID, corev1.ResourceCPU), clk.Now(), 1.2)
		cache.Append(qosmanager.PodKey(batch.UID, corev1.ResourceCPU), clk.Now(), 0.8)
		cache.Append(qosmanager.PodKey(batch.UID, corev1.ResourceMemory), clk.Now(), 3<<30)
	}
	in := &inputs{node: qostest.Node("8", "16Gi"), pods: []*corev1.Pod{web, batch}}
	mgr := qosmanager.New(strategies(features.ResolveKoordlet(gate), cg, ev, rec), in, cache, qosmanager.WithClock(clk))

	round := func(enable bool, cpu, mem float64) {
		t.Helper()
		clk.Step(time.Second)
		sample(cpu, mem)
		in.slo = qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{Enable: ptr.To(enable)}})
		mgr.RunOnce(ctx)
	}

	// Suppression off: BE keeps every CPU; the batch pod gets its cgroup settings.
	round(false, 2.5, 8<<30)
	if got := fs.ReadFile(beDir, "cpuset.cpus"); got != "0-7" {
		t.Errorf("BE cpuset while suppression is off = %s, want 0-7", got)
	}
	if got := fs.ReadFile(jobDir, "cpu.cfs_quota_us"); got != "200000" {
		t.Errorf("batch container quota = %s, want 200000 from its 2000m batch-cpu limit", got)
	}
	// On: 8 × 65% − 1.2 − max(2.5 − 2, 0) = 3.5 → 4 CPUs. Memory 8Gi of 16Gi is below 70%.
	round(true, 2.5, 8<<30)
	if got := fs.ReadFile(beDir, "cpuset.cpus"); got != "0-3" {
		t.Errorf("BE cpuset with suppression on = %s, want 0-3", got)
	}
	if len(evicted) != 0 {
		t.Errorf("evicted %v below the memory threshold", evicted)
	}
	// Memory at 12Gi = 75%: the batch pod goes through the Eviction API, with an Event.
	round(true, 2.5, 12<<30)
	if fmt.Sprint(evicted) != "[batch]" {
		t.Errorf("evicted %v, want [batch]", evicted)
	}
	select {
	case e := <-rec.Events:
		want := "Warning evictPodSuccess evict Pod:default/batch, reason: " + memoryevict.Reason +
			", message: node memory usage 75% >= threshold 70%, releasing 1.1Gi to reach 68%; pod memory 3Gi"
		if e != want {
			t.Errorf("event = %q, want %q", e, want)
		}
	default:
		t.Errorf("no Event for the eviction")
	}
	// Off again: restored once.
	round(false, 2.5, 8<<30)
	if got := fs.ReadFile(beDir, "cpuset.cpus"); got != "0-7" {
		t.Errorf("BE cpuset after turning suppression off = %s, want 0-7", got)
	}
}

func BenchmarkRound(b *testing.B) {
	for _, pods := range []int{50} {
		b.Run("pods="+strconv.Itoa(pods)+",containers="+strconv.Itoa(3*pods), func(b *testing.B) {
			// The agent's default verbosity, so that debug logging does not count.
			ctx := klog.NewContext(context.Background(), ktesting.NewLogger(b, ktesting.NewConfig(ktesting.Verbosity(2))))
			fs := cgrouptest.NewFS(b, cgroup.V1, cgroup.Cgroupfs)
			cg := cgroup.NewManager(fs.Layout())
			cache := metriccache.New(metriccache.Options{})
			clk := clocktesting.NewFakeClock(qostest.Now)
			in := &inputs{node: qostest.Node("32", "128Gi")}
			for i := range pods {
				name := "p" + strconv.Itoa(i)
				opts := []qostest.PodOption{qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable)}
				if i%2 == 0 {
					opts = []qostest.PodOption{qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort)}
				}
				p := qostest.Pod(name, opts...)
				for c := range 3 {
					id := fmt.Sprintf("containerd://%s-%d", name, c)
					qostest.Container(fmt.Sprintf("c%d", c), id,
						qostest.Resources("cpu", "500m", "kubernetes.io/batch-cpu", "500"),
						qostest.Resources("cpu", "1", "kubernetes.io/batch-cpu", "1000", "kubernetes.io/batch-memory", "1Gi"))(p)
					fs.AddContainer(p.Status.QOSClass, p.UID, id)
				}
				in.pods = append(in.pods, p)
			}
			in.slo = qostest.NodeSLO(slov1alpha1.NodeSLOSpec{
				ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
					Enable: ptr.To(true), CPUEvictBESatisfactionLowerPercent: ptr.To[int64](10), CPUEvictBESatisfactionUpperPercent: ptr.To[int64](20),
				},
				CPUBurstStrategy: &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CPUBurstAuto}},
			})
			all := features.Koordlet{PodCgroupReconcile: true, BatchResource: true, CPUSetAllocator: true, BECPUSuppress: true, CPUBurst: true, BEMemoryEvict: true, BECPUEvict: true}
			ev := evictor.New(fake.NewClientset(), record.NewFakeRecorder(100), evictor.WithClock(clk))
			mgr := qosmanager.New(strategies(all, cg, ev, nil), in, cache, qosmanager.WithClock(clk))
			sample := func() {
				cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), clk.Now(), 10)
				cache.Append(qosmanager.NodeKey(corev1.ResourceMemory), clk.Now(), 32<<30)
				for _, p := range in.pods {
					cache.Append(qosmanager.PodKey(p.UID, corev1.ResourceCPU), clk.Now(), 0.2)
					cache.Append(qosmanager.PodKey(p.UID, corev1.ResourceMemory), clk.Now(), 1<<30)
				}
			}
			sample()
			mgr.RunOnce(ctx)
			b.ReportAllocs()
			for b.Loop() {
				clk.Step(time.Second)
				sample()
				mgr.RunOnce(ctx)
			}
		})
	}
}
