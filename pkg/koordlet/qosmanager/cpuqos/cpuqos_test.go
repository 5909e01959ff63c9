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

package cpuqos

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// enable turns the cpuQOS of the classes on in a copy of the defaults, with policy and changes applied.
func enable(policy slov1alpha1.CPUQOSPolicy, change func(s *slov1alpha1.ResourceQOSStrategy), classes ...extension.QoSClass) *slov1alpha1.ResourceQOSStrategy {
	s := configuration.DefaultResourceQOSStrategy()
	s.Policies.CPUPolicy = ptr.To(policy)
	for _, c := range classes {
		qosmanager.ClassResourceQOS(s, c).CPUQOS.Enable = ptr.To(true)
	}
	if change != nil {
		change(s)
	}
	return s
}

func TestNewRule(t *testing.T) {
	beIdle := func(s *slov1alpha1.ResourceQOSStrategy) {
		s.BEClass.CPUQOS.SchedIdle = ptr.To[int64](1)
		s.LSClass.CPUQOS.CoreExpeller = ptr.To(true)
	}
	tests := map[string]struct {
		strategy *slov1alpha1.ResourceQOSStrategy
		want     Rule
	}{
		"defaults: every class off": {
			strategy: configuration.DefaultResourceQOSStrategy(),
			want: Rule{Policy: slov1alpha1.CPUQOSPolicyGroupIdentity,
				Classes:  map[extension.QoSClass]ClassParams{extension.QoSLSE: {}, extension.QoSLSR: {}, extension.QoSLS: {}, extension.QoSBE: {}},
				KubePods: map[corev1.PodQOSClass]ClassParams{corev1.PodQOSGuaranteed: {}, corev1.PodQOSBurstable: {}, corev1.PodQOSBestEffort: {}}},
		},
		"group identity for LS and BE": {
			strategy: enable(slov1alpha1.CPUQOSPolicyGroupIdentity, nil, extension.QoSLS, extension.QoSBE),
			want: Rule{Policy: slov1alpha1.CPUQOSPolicyGroupIdentity,
				Classes: map[extension.QoSClass]ClassParams{extension.QoSLSE: {}, extension.QoSLSR: {},
					extension.QoSLS: {Enabled: true, GroupIdentity: 2}, extension.QoSBE: {Enabled: true, GroupIdentity: -1}},
				KubePods: map[corev1.PodQOSClass]ClassParams{corev1.PodQOSGuaranteed: {Enabled: true, GroupIdentity: 2},
					corev1.PodQOSBurstable: {Enabled: true, GroupIdentity: 2}, corev1.PodQOSBestEffort: {Enabled: true, GroupIdentity: -1}}},
		},
		"core scheduling: BE idle, LS expeller; group identity values unused": {
			strategy: enable(slov1alpha1.CPUQOSPolicyCoreSched, beIdle, extension.QoSLSR, extension.QoSLS, extension.QoSBE),
			want: Rule{Policy: slov1alpha1.CPUQOSPolicyCoreSched,
				Classes: map[extension.QoSClass]ClassParams{extension.QoSLSE: {Enabled: true}, extension.QoSLSR: {Enabled: true},
					extension.QoSLS: {Enabled: true, Expeller: true}, extension.QoSBE: {Enabled: true, Idle: 1}},
				KubePods: map[corev1.PodQOSClass]ClassParams{corev1.PodQOSGuaranteed: {Enabled: true},
					corev1.PodQOSBurstable: {Enabled: true, Expeller: true}, corev1.PodQOSBestEffort: {Enabled: true, Idle: 1}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NewRule(tc.strategy)); diff != "" {
				t.Errorf("NewRule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCoreSchedGroup(t *testing.T) {
	rule := NewRule(enable(slov1alpha1.CPUQOSPolicyCoreSched, func(s *slov1alpha1.ResourceQOSStrategy) {
		s.LSRClass.CPUQOS.CoreExpeller = ptr.To(true)
	}, extension.QoSLSR, extension.QoSLS))
	pod := func(qos extension.QoSClass, labels ...string) *corev1.Pod {
		opts := []qostest.PodOption{qostest.QoS(qos)}
		for i := 0; i+1 < len(labels); i += 2 {
			opts = append(opts, qostest.Label(labels[i], labels[i+1]))
		}
		return qostest.Pod("p", opts...)
	}
	tests := map[string]struct {
		pod       *corev1.Pod
		wantGroup string
		wantOK    bool
	}{
		"LS without a label: the group \"\"": {pod: pod(extension.QoSLS), wantGroup: "", wantOK: true},
		"LS with a group id":                 {pod: pod(extension.QoSLS, slov1alpha1.LabelCoreSchedGroupID, "g1"), wantGroup: "g1", wantOK: true},
		"LS exclusive: its UID":              {pod: pod(extension.QoSLS, slov1alpha1.LabelCoreSchedPolicy, "exclusive"), wantGroup: "uid-p", wantOK: true},
		"LS policy none":                     {pod: pod(extension.QoSLS, slov1alpha1.LabelCoreSchedPolicy, "none")},
		"LSR expeller":                       {pod: pod(extension.QoSLSR, slov1alpha1.LabelCoreSchedGroupID, "g1"), wantGroup: "g1" + ExpellerSuffix, wantOK: true},
		"BE class off":                       {pod: pod(extension.QoSBE)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			group, ok := rule.CoreSchedGroup(tc.pod)
			if group != tc.wantGroup || ok != tc.wantOK {
				t.Errorf("CoreSchedGroup = %q, %v; want %q, %v", group, ok, tc.wantGroup, tc.wantOK)
			}
		})
	}
}

// fakeCoreSched keeps cookies by process.
type fakeCoreSched struct {
	unsupported error
	cookies     map[int]uint64
	next        uint64
	calls       []string
}

func (f *fakeCoreSched) Supported() error { return f.unsupported }

func (f *fakeCoreSched) Cookie(pid int) (uint64, error) {
	c, ok := f.cookies[pid]
	if !ok {
		return 0, errors.New("no such process")
	}
	return c, nil
}

func (f *fakeCoreSched) Create(pid int) error {
	f.next++
	f.cookies[pid] = f.next
	f.calls = append(f.calls, "create")
	return nil
}

func (f *fakeCoreSched) Assign(from int, to []int) error {
	for _, pid := range to {
		f.cookies[pid] = f.cookies[from]
	}
	f.calls = append(f.calls, "assign")
	return nil
}

func (f *fakeCoreSched) Clear(pids []int) error {
	for _, pid := range pids {
		f.cookies[pid] = 0
	}
	f.calls = append(f.calls, "clear")
	return nil
}

func TestSyncCookies(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	// Processes 1-3 in group a, 4-5 in b, 6 to clear. Process 2 and 4 already share cookie 7 (b's by majority
	// is a tie, a came first and keeps 7); 6 has cookie 9.
	cs := &fakeCoreSched{cookies: map[int]uint64{1: 0, 2: 7, 3: 0, 4: 7, 5: 0, 6: 9}, next: 100}
	err := syncCookies(ctx, cs, []cookieGroup{{name: "a", pids: []int{1, 2, 3}}, {name: "b", pids: []int{4, 5, 99}}}, []int{6})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]uint64{1: 7, 2: 7, 3: 7, 4: 101, 5: 101, 6: 0}
	if diff := cmp.Diff(want, cs.cookies); diff != "" {
		t.Errorf("cookies (-want +got):\n%s", diff)
	}
	// A second round changes nothing.
	cs.calls = nil
	if err := syncCookies(ctx, cs, []cookieGroup{{name: "a", pids: []int{1, 2, 3}}, {name: "b", pids: []int{4, 5}}}, []int{6}); err != nil {
		t.Fatal(err)
	}
	if len(cs.calls) != 0 {
		t.Errorf("second round called %v, want nothing", cs.calls)
	}
}

// node is a fake node with an Anolis-like kernel: cpu.bvt.warp_ns in every cpu cgroup, and the group identity
// sysctl.
type node struct {
	fs   *cgrouptest.FS
	proc string
	ls   *corev1.Pod
	be   *corev1.Pod
	dirs map[string]string
}

func newNode(t *testing.T, bvt bool) *node {
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	n := &node{fs: fs, proc: t.TempDir(), dirs: map[string]string{}}
	n.ls = qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable), qostest.Container("main", "", nil, nil))
	n.be = qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort), qostest.Container("main", "", nil, nil))
	for _, kube := range kubeQoSClasses {
		n.dirs[string(kube)] = fs.Layout().QoSDir(kube)
	}
	for _, p := range []*corev1.Pod{n.ls, n.be} {
		kube := extension.GetKubeQoSClass(p)
		n.dirs[p.Name] = fs.AddPod(kube, p.UID)
		fs.AddContainer(kube, p.UID, p.Status.ContainerStatuses[0].ContainerID)
	}
	fs.MkDir("/host-latency-sensitive")
	fs.MkDir("/host-latency-sensitive/nginx")
	n.dirs["nginx"] = "/host-latency-sensitive/nginx"
	if bvt {
		for _, d := range append(slices.Collect(mapsValues(n.dirs)), "/") {
			fs.WriteFile(d, "cpu.bvt.warp_ns", "0")
		}
		if err := os.MkdirAll(filepath.Join(n.proc, "sys", "kernel"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(n.proc, "sys", "kernel", "sched_group_identity_enabled"), []byte("0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func mapsValues(m map[string]string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

func (n *node) read(knob string) map[string]string {
	out := map[string]string{}
	for k, d := range n.dirs {
		out[k] = strings.TrimSpace(n.fs.ReadFile(d, knob))
	}
	return out
}

func (n *node) state(strategy *slov1alpha1.ResourceQOSStrategy) *qosmanager.State {
	spec := slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: strategy,
		HostApplications: []slov1alpha1.HostApplicationSpec{{Name: "nginx", QoS: string(extension.QoSLS)}}}
	return qostest.State(qostest.Node("8", "8Gi"), qostest.NodeSLO(spec), qostest.Cache(), n.ls, n.be)
}

func TestGroupIdentityAppliedAndReverted(t *testing.T) {
	n := newNode(t, true)
	_, ctx := ktesting.NewTestContext(t)
	rec := record.NewFakeRecorder(10)
	s := New(cgroup.NewManager(n.fs.Layout()), Features{GroupIdentity: true, CoreSched: true}, n.proc,
		WithCoreScheduler(&fakeCoreSched{unsupported: errors.New("no SMT")}), WithAnnotationReporter(qosmanager.NewAnnotationReporter(rec)))

	if err := s.Run(ctx, n.state(enable(slov1alpha1.CPUQOSPolicyGroupIdentity, nil, extension.QoSLS, extension.QoSBE))); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Guaranteed": "0", "Burstable": "2", "BestEffort": "-1", "ls": "2", "be": "-1", "nginx": "2"}
	if diff := cmp.Diff(want, n.read("cpu.bvt.warp_ns")); diff != "" {
		t.Errorf("cpu.bvt.warp_ns (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(n.proc, "sys", "kernel", "sched_group_identity_enabled")); string(b) != "1" {
		t.Errorf("sched_group_identity_enabled = %q, want 1", b)
	}

	// The pod annotation overrides its class; a malformed one is reported and ignored.
	n.ls.Annotations = map[string]string{extension.AnnotationPodCPUQoS: `{"groupIdentity":1}`}
	n.be.Annotations = map[string]string{extension.AnnotationPodCPUQoS: `{"groupIdentity":5}`}
	if err := s.Run(ctx, n.state(enable(slov1alpha1.CPUQOSPolicyGroupIdentity, nil, extension.QoSLS, extension.QoSBE))); err != nil {
		t.Fatal(err)
	}
	if got := n.read("cpu.bvt.warp_ns"); got["ls"] != "1" || got["be"] != "-1" {
		t.Errorf("cpu.bvt.warp_ns of ls, be = %s, %s; want 1 from the annotation, -1 from the class", got["ls"], got["be"])
	}
	if len(rec.Events) != 1 || !strings.Contains(<-rec.Events, "groupIdentity 5") {
		t.Errorf("want one event naming groupIdentity 5")
	}

	// Switching to coreSched reverts every cpu.bvt.warp_ns.
	if err := s.Run(ctx, n.state(enable(slov1alpha1.CPUQOSPolicyCoreSched, nil, extension.QoSLS, extension.QoSBE))); err != nil {
		t.Fatal(err)
	}
	for k, v := range n.read("cpu.bvt.warp_ns") {
		if v != "0" {
			t.Errorf("cpu.bvt.warp_ns of %s = %s after the policy changed, want 0", k, v)
		}
	}
}

func TestCPUIdleAppliedAndReverted(t *testing.T) {
	n := newNode(t, false)
	_, ctx := ktesting.NewTestContext(t)
	cs := &fakeCoreSched{cookies: map[int]uint64{}}
	s := New(cgroup.NewManager(n.fs.Layout()), Features{GroupIdentity: true, CoreSched: true}, n.proc, WithCoreScheduler(cs))
	n.fs.WriteFile(n.dirs["nginx"], "cpu.idle", "0")
	idle := func(s *slov1alpha1.ResourceQOSStrategy) { s.BEClass.CPUQOS.SchedIdle = ptr.To[int64](1) }
	strategy := enable(slov1alpha1.CPUQOSPolicyCoreSched, idle, extension.QoSLS, extension.QoSBE)
	strategy.LSClass.CPUQOS.SchedIdle = ptr.To[int64](0)
	// A BE host application is idle too.
	st := n.state(strategy)
	st.NodeSLO.Spec.HostApplications = []slov1alpha1.HostApplicationSpec{{Name: "nginx", QoS: string(extension.QoSBE),
		CgroupPath: &slov1alpha1.CgroupPath{RelativePath: "host-latency-sensitive/nginx"}}}
	// Processes of the pods' containers, for the cookies.
	for _, p := range []*corev1.Pod{n.ls, n.be} {
		dir, err := n.fs.Layout().ContainerDir(extension.GetKubeQoSClass(p), p.UID, p.Status.ContainerStatuses[0].ContainerID)
		if err != nil {
			t.Fatal(err)
		}
		pid := map[string]string{"ls": "10", "be": "20"}[p.Name]
		n.fs.WriteFile(dir, "cgroup.procs", pid+"\n")
	}
	cs.cookies[10], cs.cookies[20] = 0, 0
	if err := s.Run(ctx, st); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Guaranteed": "0", "Burstable": "0", "BestEffort": "1", "ls": "0", "be": "0", "nginx": "1"}
	if diff := cmp.Diff(want, n.read("cpu.idle")); diff != "" {
		t.Errorf("cpu.idle (-want +got):\n%s", diff)
	}
	// LS and BE pods are both in the group "" and share one cookie.
	if cs.cookies[10] == 0 || cs.cookies[10] != cs.cookies[20] {
		t.Errorf("cookies of the LS and BE processes = %d, %d; want one non-zero cookie", cs.cookies[10], cs.cookies[20])
	}

	// Turning the classes off reverts cpu.idle and clears the cookies.
	st.NodeSLO.Spec.ResourceQOSStrategy = enable(slov1alpha1.CPUQOSPolicyCoreSched, idle)
	if err := s.Run(ctx, st); err != nil {
		t.Fatal(err)
	}
	for k, v := range n.read("cpu.idle") {
		if v != "0" {
			t.Errorf("cpu.idle of %s = %s after the classes were turned off, want 0", k, v)
		}
	}
	if cs.cookies[10] != 0 || cs.cookies[20] != 0 {
		t.Errorf("cookies = %d, %d after the classes were turned off, want 0", cs.cookies[10], cs.cookies[20])
	}
}

func TestUnsupportedKernelIsQuiet(t *testing.T) {
	// No cpu.bvt.warp_ns, no cpu.idle, no core scheduling: no error, nothing written.
	n := newNode(t, false)
	for _, d := range n.dirs {
		n.fs.RemoveFile(d, "cpu.idle")
	}
	n.fs.RemoveFile("/", "cpu.idle")
	_, ctx := ktesting.NewTestContext(t)
	s := New(cgroup.NewManager(n.fs.Layout()), Features{GroupIdentity: true, CoreSched: true}, n.proc,
		WithCoreScheduler(&fakeCoreSched{unsupported: errors.New("the kernel has no core scheduling")}))
	for _, policy := range []slov1alpha1.CPUQOSPolicy{slov1alpha1.CPUQOSPolicyGroupIdentity, slov1alpha1.CPUQOSPolicyCoreSched} {
		if err := s.Run(ctx, n.state(enable(policy, nil, extension.QoSLS, extension.QoSBE))); err != nil {
			t.Errorf("%s on a kernel without it: %v", policy, err)
		}
	}
	if len(s.said) != 3 {
		t.Errorf("said %v, want groupIdentity, cpu.idle and coreSched once each", s.said)
	}
}
