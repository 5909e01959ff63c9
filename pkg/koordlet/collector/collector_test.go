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

package collector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

var combos = []struct {
	v cgroup.Version
	d cgroup.Driver
}{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V1, cgroup.Systemd}, {cgroup.V2, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}}

func comboName(v cgroup.Version, d cgroup.Driver) string { return v.String() + "-" + string(d) }

// lister is a fixed PodLister.
type lister struct{ pods []*corev1.Pod }

func (l *lister) Pods() []*corev1.Pod { return l.pods }

// makePod returns a running pod of QoS class qos with one running container
// per ID.
func makePod(name string, qos corev1.PodQOSClass, containerIDs ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: qos},
	}
	for i, id := range containerIDs {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: fmt.Sprintf("c%d", i), ContainerID: id,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		})
	}
	return p
}

// fakeProc is a fake /proc with stat and meminfo.
type fakeProc struct {
	t    testing.TB
	root string
}

func newFakeProc(t testing.TB) *fakeProc {
	return &fakeProc{t: t, root: t.TempDir()}
}

func (p *fakeProc) write(name, content string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.root, name), []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// stat writes /proc/stat with the aggregate line
// "cpu  user nice system idle iowait irq softirq steal 0 0" and cpus
// per-CPU lines.
func (p *fakeProc) stat(cpus int, ticks [8]uint64) {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu  %d %d %d %d %d %d %d %d 0 0\n", ticks[0], ticks[1], ticks[2], ticks[3], ticks[4], ticks[5], ticks[6], ticks[7])
	for i := range cpus {
		fmt.Fprintf(&b, "cpu%d 1 2 3 4 5 6 7 8 0 0\n", i)
	}
	b.WriteString("intr 123 0 0 0\nctxt 4567\nbtime 1700000000\nprocesses 42\nprocs_running 1\nprocs_blocked 0\nsoftirq 1 2 3\n")
	p.write("stat", b.String())
}

// meminfo writes /proc/meminfo with the given sizes in bytes.
func (p *fakeProc) meminfo(total, free, available int64) {
	p.write("meminfo", fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\nBuffers:          1024 kB\nCached:         2048 kB\n",
		total>>10, free>>10, available>>10))
}

// series returns the latest value of every key in keys that has one, taken
// at want; a sample at another time fails the test.
func series(t *testing.T, cache *metriccache.Cache, at time.Time, keys []metriccache.SeriesKey) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, k := range keys {
		ts, v, ok := cache.Latest(k)
		if !ok {
			continue
		}
		if !ts.Equal(at) {
			t.Errorf("%s: latest sample at %v, want %v", k, ts, at)
		}
		out[k.String()] = v
	}
	return out
}

// allKeys returns every key the collector could write for the node, the
// given pods and containers.
func allKeys(pods []*corev1.Pod) []metriccache.SeriesKey {
	resources := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, metriccache.ResourceMemoryWithPageCache}
	var keys []metriccache.SeriesKey
	for _, r := range resources {
		keys = append(keys, metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: r}, metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: r})
		for _, p := range pods {
			keys = append(keys, metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(p.UID), Resource: r})
			for _, c := range p.Status.ContainerStatuses {
				keys = append(keys, metriccache.SeriesKey{Kind: metriccache.KindContainer, ID: c.ContainerID, Resource: r})
			}
		}
	}
	return keys
}

func TestCollect(t *testing.T) {
	for _, c := range combos {
		t.Run(comboName(c.v, c.d), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			fs := cgrouptest.NewFS(t, c.v, c.d)
			proc := newFakeProc(t)
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			cache := metriccache.New(metriccache.Options{})

			podA := makePod("a", corev1.PodQOSBurstable, "containerd://a1", "containerd://a2")
			podB := makePod("b", corev1.PodQOSBestEffort, "containerd://b1")
			// podC's cgroup does not exist yet (kubelet has not started it):
			// it is skipped without an error.
			podC := makePod("c", corev1.PodQOSGuaranteed, "containerd://c1")
			// podD has finished; its cgroup is gone and it is not collected.
			podD := makePod("d", corev1.PodQOSBurstable)
			podD.Status.Phase = corev1.PodSucceeded
			pods := &lister{pods: []*corev1.Pod{podA, podB, podC, podD}}
			keys := allKeys(pods.pods)

			dirA := fs.AddPod(corev1.PodQOSBurstable, podA.UID)
			dirA1 := fs.AddContainer(corev1.PodQOSBurstable, podA.UID, "containerd://a1")
			dirA2 := fs.AddContainer(corev1.PodQOSBurstable, podA.UID, "containerd://a2")
			dirB := fs.AddPod(corev1.PodQOSBestEffort, podB.UID)
			dirB1 := fs.AddContainer(corev1.PodQOSBestEffort, podB.UID, "containerd://b1")
			col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, pods, collector.WithClock(clk))

			// Round 1 primes the CPU counters; memory is sampled at once.
			proc.stat(4, [8]uint64{1000, 0, 500, 8000, 100, 20, 30, 50})
			proc.meminfo(16*gi, 4*gi, 10*gi)
			fs.SetCPUUsage(dirA, 10*time.Second)
			fs.SetCPUUsage(dirA1, 4*time.Second)
			fs.SetCPUUsage(dirA2, 3*time.Second)
			fs.SetCPUUsage(dirB, 5*time.Second)
			fs.SetCPUUsage(dirB1, 5*time.Second)
			fs.SetMemory(dirA, 300*mi, 100*mi)
			fs.SetMemory(dirA1, 200*mi, 50*mi)
			fs.SetMemory(dirA2, 50*mi, 0)
			fs.SetMemory(dirB, 100*mi, 0)
			fs.SetMemory(dirB1, 100*mi, 0)
			if err := col.Collect(ctx); err != nil {
				t.Fatalf("round 1: %v", err)
			}
			want := map[string]float64{
				"node//memory":                     float64(6 * gi),
				"node//memory-with-page-cache":     float64(12 * gi),
				"system//memory":                   float64(6*gi - 200*mi - 100*mi),
				"system//memory-with-page-cache":   float64(12*gi - 300*mi - 100*mi),
				"pod/uid-a/memory":                 float64(200 * mi),
				"pod/uid-a/memory-with-page-cache": float64(300 * mi),
				"pod/uid-b/memory":                 float64(100 * mi),
				"pod/uid-b/memory-with-page-cache": float64(100 * mi),
				"container/containerd://a1/memory": float64(150 * mi),
				"container/containerd://a2/memory": float64(50 * mi),
				"container/containerd://b1/memory": float64(100 * mi),
			}
			if diff := cmp.Diff(want, series(t, cache, clk.Now(), keys)); diff != "" {
				t.Errorf("round 1 (-want,+got):\n%s", diff)
			}

			// Round 2, 10 s later: 2000 busy ticks of 4000 on 4 CPUs is 2
			// cores; pod and container rates are Δ CPU time / 10 s.
			clk.Step(10 * time.Second)
			proc.stat(4, [8]uint64{2500, 0, 900, 9900, 150, 20, 130, 100})
			fs.SetCPUUsage(dirA, 15*time.Second)
			fs.SetCPUUsage(dirA1, 6500*time.Millisecond)
			fs.SetCPUUsage(dirA2, 4250*time.Millisecond)
			fs.SetCPUUsage(dirB, 7500*time.Millisecond)
			fs.SetCPUUsage(dirB1, 7500*time.Millisecond)
			fs.SetMemory(dirA, 400*mi, 100*mi)
			if err := col.Collect(ctx); err != nil {
				t.Fatalf("round 2: %v", err)
			}
			want = map[string]float64{
				"node//cpu":                        2,
				"node//memory":                     float64(6 * gi),
				"node//memory-with-page-cache":     float64(12 * gi),
				"system//cpu":                      1.25,
				"system//memory":                   float64(6*gi - 300*mi - 100*mi),
				"system//memory-with-page-cache":   float64(12*gi - 400*mi - 100*mi),
				"pod/uid-a/cpu":                    0.5,
				"pod/uid-a/memory":                 float64(300 * mi),
				"pod/uid-a/memory-with-page-cache": float64(400 * mi),
				"pod/uid-b/cpu":                    0.25,
				"pod/uid-b/memory":                 float64(100 * mi),
				"pod/uid-b/memory-with-page-cache": float64(100 * mi),
				"container/containerd://a1/cpu":    0.25,
				"container/containerd://a1/memory": float64(150 * mi),
				"container/containerd://a2/cpu":    0.125,
				"container/containerd://a2/memory": float64(50 * mi),
				"container/containerd://b1/cpu":    0.25,
				"container/containerd://b1/memory": float64(100 * mi),
			}
			if diff := cmp.Diff(want, series(t, cache, clk.Now(), keys)); diff != "" {
				t.Errorf("round 2 (-want,+got):\n%s", diff)
			}

			// Round 3: pod b has finished but is still listed; it is not
			// sampled, and its series stay.
			clk.Step(time.Second)
			podB.Status.Phase = corev1.PodSucceeded
			podB.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
			fs.Remove(dirB)
			if err := col.Collect(ctx); err != nil {
				t.Fatalf("round 3: %v", err)
			}
			for _, k := range allKeys([]*corev1.Pod{podB}) {
				if k.Kind == metriccache.KindPod || k.Kind == metriccache.KindContainer {
					if ts, _, ok := cache.Latest(k); ok && !ts.Before(clk.Now()) {
						t.Errorf("series %s of the finished pod was sampled", k)
					}
				}
			}
			// node 3 + system 3 + pods a, b 3 each + containers a1, a2, b1
			// 2 each.
			if got := cache.Len(); got != 18 {
				t.Errorf("cache has %d series, want 18", got)
			}

			// Round 4: pod b is gone from the node; its series go with it.
			clk.Step(time.Second)
			pods.pods = []*corev1.Pod{podA, podC}
			if err := col.Collect(ctx); err != nil {
				t.Fatalf("round 4: %v", err)
			}
			for _, k := range allKeys([]*corev1.Pod{podB}) {
				if k.Kind == metriccache.KindPod || k.Kind == metriccache.KindContainer {
					if _, _, ok := cache.Latest(k); ok {
						t.Errorf("series %s of the deleted pod is still there", k)
					}
				}
			}
			// node 3 + system 3 + pod a 3 + containers a1, a2 2 each.
			if got := cache.Len(); got != 13 {
				t.Errorf("cache has %d series, want 13", got)
			}
		})
	}
}

func TestCollectEdgeCases(t *testing.T) {
	const cid = "containerd://x1"
	type round struct {
		podUsage, ctrUsage time.Duration
		step               time.Duration
	}
	tests := map[string]struct {
		pod    func() *corev1.Pod
		rounds []round
		// want is the latest pod and container CPU after the last round,
		// absent when there is no sample.
		want    map[string]float64
		wantErr string
	}{
		"counter reset re-primes": {
			pod: func() *corev1.Pod { return makePod("p", corev1.PodQOSBurstable, cid) },
			rounds: []round{
				{podUsage: 10 * time.Second, ctrUsage: 10 * time.Second},
				{podUsage: 2 * time.Second, ctrUsage: 2 * time.Second, step: 10 * time.Second}, // recreated: no sample
			},
			want: map[string]float64{},
		},
		"rate after a reset": {
			pod: func() *corev1.Pod { return makePod("p", corev1.PodQOSBurstable, cid) },
			rounds: []round{
				{podUsage: 10 * time.Second, ctrUsage: 10 * time.Second},
				{podUsage: 2 * time.Second, ctrUsage: 2 * time.Second, step: 10 * time.Second},
				{podUsage: 4500 * time.Millisecond, ctrUsage: 3250 * time.Millisecond, step: 10 * time.Second},
			},
			want: map[string]float64{"pod/uid-p/cpu": 0.25, "container/" + cid + "/cpu": 0.125},
		},
		"clock did not move": {
			pod: func() *corev1.Pod { return makePod("p", corev1.PodQOSBurstable, cid) },
			rounds: []round{
				{podUsage: 10 * time.Second, ctrUsage: 10 * time.Second},
				{podUsage: 11 * time.Second, ctrUsage: 11 * time.Second},
			},
			want: map[string]float64{},
		},
		"terminated container is skipped": {
			pod: func() *corev1.Pod {
				p := makePod("p", corev1.PodQOSBurstable, cid)
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
				return p
			},
			rounds: []round{{podUsage: time.Second, ctrUsage: time.Second}, {podUsage: 2 * time.Second, ctrUsage: 2 * time.Second, step: time.Second}},
			want:   map[string]float64{"pod/uid-p/cpu": 1},
		},
		"container without an ID yet is skipped": {
			pod: func() *corev1.Pod {
				p := makePod("p", corev1.PodQOSBurstable, cid)
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "new"})
				return p
			},
			rounds: []round{{podUsage: time.Second, ctrUsage: time.Second}, {podUsage: 2 * time.Second, ctrUsage: 1500 * time.Millisecond, step: time.Second}},
			want:   map[string]float64{"pod/uid-p/cpu": 1, "container/" + cid + "/cpu": 0.5},
		},
		"init and ephemeral containers are collected": {
			pod: func() *corev1.Pod {
				p := makePod("p", corev1.PodQOSBurstable)
				running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "sidecar", ContainerID: cid, State: running}}
				return p
			},
			rounds: []round{{podUsage: time.Second, ctrUsage: time.Second}, {podUsage: 2 * time.Second, ctrUsage: 1250 * time.Millisecond, step: time.Second}},
			want:   map[string]float64{"pod/uid-p/cpu": 1, "container/" + cid + "/cpu": 0.25},
		},
		"QoS computed when the status has none": {
			pod: func() *corev1.Pod {
				p := makePod("p", "", cid) // no requests: BestEffort
				return p
			},
			rounds: []round{{podUsage: time.Second, ctrUsage: time.Second}, {podUsage: 3 * time.Second, ctrUsage: 2 * time.Second, step: 2 * time.Second}},
			want:   map[string]float64{"pod/uid-p/cpu": 1, "container/" + cid + "/cpu": 0.5},
		},
		"malformed container ID": {
			pod: func() *corev1.Pod {
				p := makePod("p", corev1.PodQOSBurstable, cid)
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
					Name: "bad", ContainerID: "abc", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				})
				return p
			},
			rounds:  []round{{podUsage: time.Second, ctrUsage: time.Second}, {podUsage: 2 * time.Second, ctrUsage: 2 * time.Second, step: time.Second}},
			want:    map[string]float64{"pod/uid-p/cpu": 1, "container/" + cid + "/cpu": 1},
			wantErr: `pod default/p container bad: container ID "abc": want <runtime>://<id>`,
		},
	}
	for name, tc := range tests {
		for _, c := range combos {
			t.Run(name+"/"+comboName(c.v, c.d), func(t *testing.T) {
				_, ctx := ktesting.NewTestContext(t)
				fs := cgrouptest.NewFS(t, c.v, c.d)
				proc := newFakeProc(t)
				proc.stat(2, [8]uint64{1, 0, 0, 1})
				proc.meminfo(gi, gi/2, gi/2)
				clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
				cache := metriccache.New(metriccache.Options{})
				pod := tc.pod()
				qos := pod.Status.QOSClass
				if qos == "" {
					qos = corev1.PodQOSBestEffort
				}
				podDir := fs.AddPod(qos, pod.UID)
				ctrDir := fs.AddContainer(qos, pod.UID, cid)
				col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{pods: []*corev1.Pod{pod}}, collector.WithClock(clk))
				var err error
				for _, r := range tc.rounds {
					clk.Step(r.step)
					fs.SetCPUUsage(podDir, r.podUsage)
					fs.SetCPUUsage(ctrDir, r.ctrUsage)
					err = col.Collect(ctx)
				}
				if tc.wantErr == "" && err != nil {
					t.Errorf("Collect: %v", err)
				}
				if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("Collect = %v, want an error containing %q", err, tc.wantErr)
				}
				got := map[string]float64{}
				for _, k := range []metriccache.SeriesKey{
					{Kind: metriccache.KindPod, ID: string(pod.UID), Resource: corev1.ResourceCPU},
					{Kind: metriccache.KindContainer, ID: cid, Resource: corev1.ResourceCPU},
				} {
					if ts, v, ok := cache.Latest(k); ok && ts.Equal(clk.Now()) {
						got[k.String()] = v
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("CPU after the last round (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

func TestCollectProcErrors(t *testing.T) {
	const goodStat = "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\n"
	const goodMeminfo = "MemTotal: 1048576 kB\nMemFree: 524288 kB\nMemAvailable: 786432 kB\n"
	tests := map[string]struct {
		stat, meminfo string // "-" means the file is missing
		wantErr       string
		// wantMemory says whether node memory is still sampled.
		wantMemory bool
	}{
		"non-numeric tick": {
			stat: "cpu  1 2 x 4 5 6 7 8 0 0\ncpu0 1 2 3 4\n", meminfo: goodMeminfo, wantMemory: true,
			wantErr: `stat: line "cpu  1 2 x 4 5 6 7 8 0 0": field 3: "x" is not a tick count`,
		},
		"negative tick": {
			stat: "cpu  1 -2 3 4\ncpu0 1 2 3 4\n", meminfo: goodMeminfo, wantMemory: true,
			wantErr: `field 2: "-2" is not a tick count`,
		},
		"too few fields": {
			stat: "cpu  1 2 3\ncpu0 1 2 3\n", meminfo: goodMeminfo, wantMemory: true,
			wantErr: "3 fields, want at least user nice system idle",
		},
		"no aggregate line": {stat: "cpu0 1 2 3 4\nintr 1\n", meminfo: goodMeminfo, wantMemory: true, wantErr: "no aggregate cpu line"},
		"no per-CPU lines":  {stat: "cpu  1 2 3 4\nintr 1\n", meminfo: goodMeminfo, wantMemory: true, wantErr: "no per-CPU cpuN lines"},
		"empty stat":        {stat: "", meminfo: goodMeminfo, wantMemory: true, wantErr: "no aggregate cpu line"},
		"stat missing":      {stat: "-", meminfo: goodMeminfo, wantMemory: true, wantErr: "open "},
		"no MemAvailable": {
			stat: goodStat, meminfo: "MemTotal: 1048576 kB\nMemFree: 524288 kB\n", wantErr: "meminfo: no MemAvailable line",
		},
		"bad size": {
			stat: goodStat, meminfo: "MemTotal: lots kB\nMemFree: 1 kB\nMemAvailable: 1 kB\n", wantErr: `meminfo: line "MemTotal: lots kB": "lots" is not a size`,
		},
		"bad unit": {
			stat: goodStat, meminfo: "MemTotal: 5 MB\nMemFree: 1 kB\nMemAvailable: 1 kB\n", wantErr: `line "MemTotal: 5 MB": want a value in kB`,
		},
		"meminfo missing": {stat: goodStat, meminfo: "-", wantErr: "meminfo: no such file or directory"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
			proc := newFakeProc(t)
			for file, content := range map[string]string{"stat": tc.stat, "meminfo": tc.meminfo} {
				if content != "-" {
					proc.write(file, content)
				}
			}
			pod := makePod("p", corev1.PodQOSBurstable)
			fs.SetMemory(fs.AddPod(corev1.PodQOSBurstable, pod.UID), 10*mi, 0)
			cache := metriccache.New(metriccache.Options{})
			col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{pods: []*corev1.Pod{pod}},
				collector.WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
			err := col.Collect(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), proc.root) {
				t.Fatalf("Collect = %v; want an error naming the file under %s and containing %q", err, proc.root, tc.wantErr)
			}
			// Pods are collected whatever happens to the node counters.
			if _, v, ok := cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindPod, ID: string(pod.UID), Resource: corev1.ResourceMemory}); !ok || v != float64(10*mi) {
				t.Errorf("pod memory = %v, %v; want %d", v, ok, 10*mi)
			}
			_, _, gotMemory := cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceMemory})
			_, _, gotSystem := cache.Latest(metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: corev1.ResourceMemory})
			if gotMemory != tc.wantMemory || gotSystem != tc.wantMemory {
				t.Errorf("node memory sampled = %v, system memory sampled = %v; want %v", gotMemory, gotSystem, tc.wantMemory)
			}
		})
	}
}

// TestChurn: pods that come and go leave neither series nor counters
// behind.
func TestChurn(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	proc := newFakeProc(t)
	proc.stat(2, [8]uint64{1, 0, 0, 1})
	proc.meminfo(gi, gi/2, gi/2)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cache := metriccache.New(metriccache.Options{})
	pods := &lister{}
	col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, pods, collector.WithClock(clk))
	for i := range 20 {
		id := fmt.Sprintf("containerd://c%d", i)
		pod := makePod(fmt.Sprintf("p%d", i), corev1.PodQOSBestEffort, id)
		fs.AddContainer(corev1.PodQOSBestEffort, pod.UID, id)
		pods.pods = []*corev1.Pod{pod}
		for range 2 {
			clk.Step(time.Second)
			if err := col.Collect(ctx); err != nil {
				t.Fatal(err)
			}
		}
		fs.Remove(fs.Layout().PodDir(corev1.PodQOSBestEffort, pod.UID))
		// Node and system memory 2 each (the fake ticks do not move, so
		// there is no node CPU), one pod 3, its container 2.
		if got := cache.Len(); got != 9 {
			t.Fatalf("after pod %d: %d series, want 9", i, got)
		}
	}
	pods.pods = nil
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	// Node and system memory, nothing of any pod.
	if got := cache.Len(); got != 4 {
		t.Errorf("after all pods left: %d series, want 4", got)
	}
}

func TestRun(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	proc := newFakeProc(t)
	proc.stat(1, [8]uint64{0, 0, 0, 0})
	proc.meminfo(gi, gi/2, gi/2)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cache := metriccache.New(metriccache.Options{})
	col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{}, collector.WithClock(clk))
	done := make(chan struct{})
	go func() {
		defer close(done)
		col.Run(ctx, 5*time.Second)
	}()
	cpuKey := metriccache.SeriesKey{Kind: metriccache.KindNode, Resource: corev1.ResourceCPU}
	// waitFor polls until cond holds; the deadline only guards against a hang.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	// The first round runs at once, then Run waits for its ticker.
	waitFor("the first round", func() bool { return cache.Len() > 0 && clk.HasWaiters() })
	if _, _, ok := cache.Latest(cpuKey); ok {
		t.Fatalf("node CPU sampled in the first round, which only primes the counters")
	}
	proc.stat(1, [8]uint64{50, 0, 0, 50})
	clk.Step(5 * time.Second)
	waitFor("the second round", func() bool { _, _, ok := cache.Latest(cpuKey); return ok })
	if ts, v, _ := cache.Latest(cpuKey); v != 0.5 || !ts.Equal(clk.Now()) {
		t.Errorf("node CPU = %v at %v, want 0.5 at %v", v, ts, clk.Now())
	}
	cancel()
	<-done
}
