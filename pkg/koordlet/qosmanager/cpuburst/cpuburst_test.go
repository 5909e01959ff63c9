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

package cpuburst

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

var layouts = []struct {
	v cgroup.Version
	d cgroup.Driver
}{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V1, cgroup.Systemd}, {cgroup.V2, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}}

// env is an 8-core node with an LS pod "web" (container "app" limited to 2 cores, container "free" without a
// limit) and a BE pod, on a fake cgroupfs where kubelet has set web's quotas.
type env struct {
	fs        *cgrouptest.FS
	cg        *cgroup.Manager
	cache     *metriccache.Cache
	web, be   *corev1.Pod
	podDir    string
	appDir    string
	freeDir   string
	beCtrDir  string
	strategy  *Strategy
	recorder  *record.FakeRecorder
	now       time.Time
	throttles int64
}

func newEnv(t *testing.T, v cgroup.Version, d cgroup.Driver, webOpts ...qostest.PodOption) *env {
	t.Helper()
	fs := cgrouptest.NewFS(t, v, d)
	e := &env{fs: fs, cg: cgroup.NewManager(fs.Layout()), cache: qostest.Cache(), now: qostest.Now, recorder: record.NewFakeRecorder(10)}
	opts := append([]qostest.PodOption{
		qostest.KubeQoS(corev1.PodQOSBurstable),
		qostest.Container("app", "", qostest.Resources("cpu", "1"), qostest.Resources("cpu", "2")),
		qostest.Container("free", "", qostest.Resources("cpu", "1"), nil),
	}, webOpts...)
	e.web = qostest.Pod("web", opts...)
	e.be = qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("job", "", nil, qostest.Resources("cpu", "2")))
	e.podDir = fs.AddPod(corev1.PodQOSBurstable, e.web.UID)
	e.appDir = fs.AddContainer(corev1.PodQOSBurstable, e.web.UID, "containerd://app")
	e.freeDir = fs.AddContainer(corev1.PodQOSBurstable, e.web.UID, "containerd://free")
	e.beCtrDir = fs.AddContainer(corev1.PodQOSBestEffort, e.be.UID, "containerd://job")
	// kubelet leaves a pod unlimited when one of its containers is; the pod quota is set here anyway, to show
	// that it follows its containers'.
	e.setQuota(e.podDir, 200000)
	e.setQuota(e.appDir, 200000)
	e.setQuota(e.beCtrDir, 200000)
	e.strategy = New(e.cg, WithRecorder(e.recorder))
	return e
}

func (e *env) setQuota(dir string, quota int64) {
	if e.fs.Layout().Version == cgroup.V1 {
		e.fs.WriteFile(dir, "cpu.cfs_quota_us", fmt.Sprint(quota))
	} else {
		e.fs.WriteFile(dir, "cpu.max", fmt.Sprintf("%d 100000", quota))
	}
}

func (e *env) read(t *testing.T, dir string) (quota, burst int64) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	q, _, err := e.cg.CFSQuota(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.cg.CFSBurst(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	return q, b
}

// throttle makes app's cpu.stat show throttling since the last call.
func (e *env) throttle() {
	e.throttles += 10
	e.fs.SetStatField(e.appDir, "cpu.stat", "nr_periods", e.throttles*10)
	e.fs.SetStatField(e.appDir, "cpu.stat", "nr_throttled", e.throttles)
}

// round runs the strategy one second after the last round, with a node CPU sample of nodeUsage cores.
func (e *env) round(t *testing.T, nodeUsage float64, burst *slov1alpha1.CPUBurstStrategy) error {
	t.Helper()
	e.now = e.now.Add(time.Second)
	e.cache.Append(qosmanager.NodeKey(corev1.ResourceCPU), e.now, nodeUsage)
	_, ctx := ktesting.NewTestContext(t)
	st := qostest.State(qostest.Node("8", "16Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{CPUBurstStrategy: burst}), e.cache, e.web, e.be)
	st.Now = e.now
	return e.strategy.Run(ctx, st)
}

type qb struct{ Quota, Burst int64 }

func (e *env) state(t *testing.T) map[string]qb {
	t.Helper()
	out := map[string]qb{}
	for name, dir := range map[string]string{"pod": e.podDir, "app": e.appDir, "free": e.freeDir, "be": e.beCtrDir} {
		q, b := e.read(t, dir)
		out[name] = qb{q, b}
	}
	return out
}

func policy(p slov1alpha1.CPUBurstPolicy, percent int64) *slov1alpha1.CPUBurstStrategy {
	return &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: p, CPUBurstPercent: ptr.To(percent)}}
}

func TestCPUBurstOnly(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d)
			// 2 cores × 50% × 100000 µs = 100000.
			if err := e.round(t, 1, policy(slov1alpha1.CPUBurstOnly, 50)); err != nil {
				t.Fatal(err)
			}
			want := map[string]qb{
				"pod": {200000, 100000}, "app": {200000, 100000}, "free": {-1, 0}, "be": {200000, 0},
			}
			if diff := cmp.Diff(want, e.state(t)); diff != "" {
				t.Errorf("after cpuBurstOnly 50%% (-want,+got):\n%s", diff)
			}
			// The default 1000% would be 2000000 µs, more than the kernel takes above a 200000 µs quota.
			if err := e.round(t, 1, policy(slov1alpha1.CPUBurstOnly, 1000)); err != nil {
				t.Fatal(err)
			}
			want["pod"], want["app"] = qb{200000, 200000}, qb{200000, 200000}
			if diff := cmp.Diff(want, e.state(t)); diff != "" {
				t.Errorf("after cpuBurstOnly 1000%% (-want,+got):\n%s", diff)
			}
			// none: back to 0 once.
			if err := e.round(t, 1, policy(slov1alpha1.CPUBurstNone, 1000)); err != nil {
				t.Fatal(err)
			}
			want["pod"], want["app"] = qb{200000, 0}, qb{200000, 0}
			if diff := cmp.Diff(want, e.state(t)); diff != "" {
				t.Errorf("after none (-want,+got):\n%s", diff)
			}
			knob := "cpu.max.burst"
			if l.v == cgroup.V1 {
				knob = "cpu.cfs_burst_us"
			}
			e.fs.WriteFile(e.appDir, knob, "5000")
			if err := e.round(t, 1, policy(slov1alpha1.CPUBurstNone, 1000)); err != nil {
				t.Fatal(err)
			}
			if e.fs.Changed(e.appDir, knob) {
				t.Errorf("a restored container was written again while burst is off")
			}
		})
	}
}

func TestCFSQuotaBurst(t *testing.T) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("%s/%s", l.v, l.d), func(t *testing.T) {
			e := newEnv(t, l.v, l.d)
			quotaBurst := &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: slov1alpha1.CPUBurstConfig{Policy: slov1alpha1.CFSQuotaBurstOnly}}
			step := func(name string, nodeUsage float64, throttled bool, wantApp, wantPod int64) {
				t.Helper()
				if throttled {
					e.throttle()
				}
				if err := e.round(t, nodeUsage, quotaBurst); err != nil {
					t.Fatal(err)
				}
				s := e.state(t)
				if s["app"].Quota != wantApp || s["pod"].Quota != wantPod {
					t.Errorf("%s: app quota %d, pod quota %d; want %d, %d", name, s["app"].Quota, s["pod"].Quota, wantApp, wantPod)
				}
			}
			// The first round only reads the throttling counters.
			step("first round", 1, true, 200000, 200000)
			// Throttled while the node is 1/8 busy (threshold 50%, cooling from 45%): × 1.2.
			step("throttled, idle node", 1, true, 240000, 240000)
			step("throttled again", 1, true, 288000, 288000)
			step("quiet", 1, false, 288000, 288000)
			step("quiet again", 1, false, 288000, 288000)
			// The node gets busy; the 10 s average follows: (5×1 + 8) / 6 = 2.17 of 8, idle.
			step("throttled, average 27%", 8, true, 345600, 345600)
			// (5 + 16) / 7 = 3: idle, but not throttled.
			step("quiet, average 37.5%", 8, false, 345600, 345600)
			// (5 + 24) / 8 = 3.625 ≥ 3.6: cooling, no more raise.
			step("throttled, average 45.3%", 8, true, 345600, 345600)
			// (5 + 32) / 9 = 4.11 ≥ 4: overloaded, × 0.8.
			step("average 51.4%", 8, false, 276480, 276480)
			step("average 56.3%", 8, false, 221184, 221184)
			// The first sample leaves the window: (4 + 48) / 10 = 5.2; × 0.8 is below the limit's 200000.
			step("average 65%", 8, false, 200000, 200000)
			if got := e.state(t)["free"]; got != (qb{-1, 0}) {
				t.Errorf("the container without a limit = %+v, want untouched", got)
			}
		})
	}
}

func TestAnnotationOverridesAndBadAnnotationIsReported(t *testing.T) {
	e := newEnv(t, cgroup.V1, cgroup.Cgroupfs, qostest.Annotation(extension.AnnotationPodCPUBurst, `{"policy":"cpuBurstOnly","cpuBurstPercent":20}`))
	// The node says none; the pod asks for 20%: 2 cores × 20% × 100000 = 40000.
	if err := e.round(t, 1, policy(slov1alpha1.CPUBurstNone, 1000)); err != nil {
		t.Fatal(err)
	}
	if got := e.state(t)["app"]; got != (qb{200000, 40000}) {
		t.Errorf("app with the annotation = %+v, want burst 40000", got)
	}

	e.web.Annotations[extension.AnnotationPodCPUBurst] = `{"policy":"sometimes"}`
	if err := e.round(t, 1, policy(slov1alpha1.CPUBurstOnly, 50)); err != nil {
		t.Fatal(err)
	}
	if got := e.state(t)["app"]; got != (qb{200000, 100000}) {
		t.Errorf("app with a malformed annotation = %+v, want the node's 50%%: burst 100000", got)
	}
	select {
	case ev := <-e.recorder.Events:
		if !strings.HasPrefix(ev, "Warning InvalidAnnotation annotation koordinator.sh/cpuBurst is ignored") {
			t.Errorf("event = %q", ev)
		}
	default:
		t.Errorf("no event for the malformed annotation")
	}
}
