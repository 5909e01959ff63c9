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

package memoryqos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// anolisKnobs are the files an Anolis OS kernel adds to every memory cgroup, with their defaults.
var anolisKnobs = map[string]string{
	"memory.wmark_ratio": "0", "memory.wmark_scale_factor": "50", "memory.wmark_min_adj": "0",
	"memory.priority": "0", "memory.use_priority_oom": "0", "memory.oom.group": "0",
}

// memoryFiles reads the memory QoS files of dir.
func memoryFiles(fs *cgrouptest.FS, dir string, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = strings.TrimSpace(fs.ReadFile(dir, n))
	}
	return out
}

func TestStrategyAppliesAndRevertsOnCgroupV2(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	cg := cgroup.NewManager(fs.Layout(), cgroup.WithPageSize(4096))
	ls := lsPod("1Gi", "2Gi")
	be := qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("main", "", qostest.Resources("kubernetes.io/batch-memory", "1Gi"), qostest.Resources("kubernetes.io/batch-memory", "2Gi")))
	dirs := map[string]string{}
	for _, p := range []*corev1.Pod{ls, be} {
		kube := extension.GetKubeQoSClass(p)
		dirs[p.Name+"/pod"] = fs.AddPod(kube, p.UID)
		dirs[p.Name+"/main"] = fs.AddContainer(kube, p.UID, p.Status.ContainerStatuses[0].ContainerID)
	}
	for _, kube := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		dirs[string(kube)] = fs.Layout().QoSDir(kube)
	}
	for _, d := range dirs {
		for n, v := range anolisKnobs {
			fs.WriteFile(d, n, v)
		}
	}
	s := New(cg)
	_, ctx := ktesting.NewTestContext(t)
	run := func(spec slov1alpha1.NodeSLOSpec) {
		t.Helper()
		if err := s.Run(ctx, qostest.State(qostest.Node("8", "8Gi"), qostest.NodeSLO(spec), qostest.Cache(), ls, be)); err != nil {
			t.Fatal(err)
		}
	}
	on := &slov1alpha1.ResourceQOSStrategy{
		LSClass: &slov1alpha1.ResourceQOS{MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
			MinLimitPercent: ptr.To[int64](50), LowLimitPercent: ptr.To[int64](100), ThrottlingPercent: ptr.To[int64](50),
		}}},
		BEClass: &slov1alpha1.ResourceQOS{MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
			ThrottlingPercent: ptr.To[int64](80), OomKillGroup: ptr.To[int64](1),
		}}},
	}
	run(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: on})

	names := []string{"memory.min", "memory.low", "memory.high", "memory.wmark_ratio", "memory.wmark_scale_factor", "memory.wmark_min_adj", "memory.oom.group"}
	got := map[string]map[string]string{}
	for k, d := range dirs {
		got[k] = memoryFiles(fs, d, names...)
	}
	// LS: 512Mi min, 1Gi low, high at 1Gi + 50 % of 1Gi; the recommended watermarks (95, 20, -25) of the
	// defaults. BE: no protection, high at 1Gi + 80 % of 1Gi rounded down to a page, the BE watermarks (min adj 50) and oom.group.
	// kubepods sums every pod's protection, burstable its LS pod's.
	want := map[string]map[string]string{
		"ls/pod":     {"memory.min": "536870912", "memory.low": "1073741824", "memory.high": "max", "memory.wmark_ratio": "95", "memory.wmark_scale_factor": "20", "memory.wmark_min_adj": "-25", "memory.oom.group": "0"},
		"ls/main":    {"memory.min": "536870912", "memory.low": "1073741824", "memory.high": "1610612736", "memory.wmark_ratio": "95", "memory.wmark_scale_factor": "20", "memory.wmark_min_adj": "-25", "memory.oom.group": "0"},
		"be/pod":     {"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.wmark_ratio": "95", "memory.wmark_scale_factor": "20", "memory.wmark_min_adj": "50", "memory.oom.group": "1"},
		"be/main":    {"memory.min": "0", "memory.low": "0", "memory.high": "1932734464", "memory.wmark_ratio": "95", "memory.wmark_scale_factor": "20", "memory.wmark_min_adj": "50", "memory.oom.group": "1"},
		"Guaranteed": {"memory.min": "536870912", "memory.low": "1073741824", "memory.high": "max", "memory.wmark_ratio": "0", "memory.wmark_scale_factor": "50", "memory.wmark_min_adj": "0", "memory.oom.group": "0"},
		"Burstable":  {"memory.min": "536870912", "memory.low": "1073741824", "memory.high": "max", "memory.wmark_ratio": "0", "memory.wmark_scale_factor": "50", "memory.wmark_min_adj": "0", "memory.oom.group": "0"},
		"BestEffort": {"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.wmark_ratio": "0", "memory.wmark_scale_factor": "50", "memory.wmark_min_adj": "0", "memory.oom.group": "1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("memory QoS files (-want +got):\n%s", diff)
	}

	// Turning both classes off writes the none values everywhere.
	run(slov1alpha1.NodeSLOSpec{})
	for k, d := range dirs {
		got := memoryFiles(fs, d, names...)
		want := map[string]string{"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.wmark_ratio": "0", "memory.wmark_scale_factor": "50", "memory.wmark_min_adj": "0", "memory.oom.group": "0"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after memory QoS is turned off (-want +got):\n%s", k, diff)
		}
	}
}

func TestStrategySkipsKnobsTheKernelLacks(t *testing.T) {
	// Mainline cgroup v1 has no memory.min, low, high nor the Anolis knobs: nothing is written, no error.
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	cg := cgroup.NewManager(fs.Layout())
	ls := lsPod("1Gi", "2Gi")
	fs.AddPod(corev1.PodQOSBurstable, ls.UID)
	fs.AddContainer(corev1.PodQOSBurstable, ls.UID, ls.Status.ContainerStatuses[0].ContainerID)
	strategy := &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true)}}}
	_, ctx := ktesting.NewTestContext(t)
	if err := New(cg).Run(ctx, qostest.State(qostest.Node("8", "8Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: strategy}), qostest.Cache(), ls)); err != nil {
		t.Fatalf("Run on a kernel without the knobs: %v", err)
	}
}

func TestStrategyRefusesAnInvalidNodeSLO(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	ls := lsPod("1Gi", "2Gi")
	dir := fs.AddPod(corev1.PodQOSBurstable, ls.UID)
	fs.WriteFile(dir, "memory.min", "4096")
	strategy := &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
		MinLimitPercent: ptr.To[int64](150),
	}}}}
	_, ctx := ktesting.NewTestContext(t)
	err := New(cgroup.NewManager(fs.Layout())).Run(ctx, qostest.State(qostest.Node("8", "8Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: strategy}), qostest.Cache(), ls))
	if err == nil || !strings.Contains(err.Error(), "minLimitPercent") {
		t.Fatalf("Run = %v, want an error naming minLimitPercent", err)
	}
	if got := strings.TrimSpace(fs.ReadFile(dir, "memory.min")); got != "4096" {
		t.Errorf("memory.min = %s after an invalid NodeSLO, want it kept at 4096", got)
	}
}

func TestMalformedAnnotationIsReportedOnce(t *testing.T) {
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	ls := lsPod("1Gi", "2Gi")
	ls.Annotations = map[string]string{extension.AnnotationPodMemoryQoS: `{"policy":"sometimes"}`}
	dir := fs.AddPod(corev1.PodQOSBurstable, ls.UID)
	rec := record.NewFakeRecorder(10)
	s := New(cgroup.NewManager(fs.Layout()), WithAnnotationReporter(qosmanager.NewAnnotationReporter(rec)))
	strategy := &slov1alpha1.ResourceQOSStrategy{LSClass: &slov1alpha1.ResourceQOS{MemoryQOS: &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
		MinLimitPercent: ptr.To[int64](100),
	}}}}
	_, ctx := ktesting.NewTestContext(t)
	for range 2 {
		if err := s.Run(ctx, qostest.State(qostest.Node("8", "8Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: strategy}), qostest.Cache(), ls)); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.Events) != 1 {
		t.Fatalf("%d events, want 1", len(rec.Events))
	}
	if e := <-rec.Events; !strings.Contains(e, "InvalidAnnotation") || !strings.Contains(e, `policy "sometimes"`) {
		t.Errorf("event %q, want InvalidAnnotation naming the policy", e)
	}
	// The pod gets its class's values.
	if got := strings.TrimSpace(fs.ReadFile(dir, "memory.min")); got != "1073741824" {
		t.Errorf("memory.min = %s, want the class's 1Gi", got)
	}
}
