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

package noderesource

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// start is the fake clock's initial time.
var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rl builds a cpu and memory resource list.
func rl(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// fixture is a node of 100 cores and 120G with reclaim thresholds 65/65 and system usage 7/12G, running podA
// (LS, requests 20/20G, usage 11/11G) and podB (BE, usage 10/10G) and with podC pending (Guaranteed, requests
// 20/40G, usage 22/22G): batch-cpu = 100 − 35 − 7 − 33 = 25 cores = 25000 and batch-memory = 120G − 42G − 12G −
// 33G = 33G. The NodeMetric was updated at start and has no prodReclaimableMetric, which counts as nothing reclaimable: mid resources 0.
type fixture struct {
	node       *corev1.Node
	nodeMetric *slov1alpha1.NodeMetric
	pods       []*corev1.Pod
}

func newFixture() *fixture {
	pod := func(name string, qos extension.QoSClass, phase corev1.PodPhase, requests corev1.ResourceList) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
			Spec:       corev1.PodSpec{NodeName: "test-node", Containers: []corev1.Container{{Name: "c"}}},
			Status:     corev1.PodStatus{Phase: phase},
		}
		if qos != "" {
			p.Labels = map[string]string{extension.LabelPodQoS: string(qos)}
		}
		if requests != nil {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: requests, Limits: requests.DeepCopy()}
		}
		return p
	}
	metric := func(name, cpu, memory string) slov1alpha1.PodMetricInfo {
		return slov1alpha1.PodMetricInfo{Name: name, Namespace: "test", PodUsage: slov1alpha1.ResourceMap{ResourceList: rl(cpu, memory)}}
	}
	elsewhere := pod("podX", extension.QoSLS, corev1.PodRunning, rl("50", "50G"))
	elsewhere.Spec.NodeName = "other-node"
	return &fixture{
		node: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "test-node", Labels: map[string]string{"pool": "a"}},
			Status:     corev1.NodeStatus{Capacity: rl("100", "120G"), Allocatable: rl("100", "120G")},
		},
		nodeMetric: &slov1alpha1.NodeMetric{
			ObjectMeta: metav1.ObjectMeta{Name: "test-node"},
			Status: slov1alpha1.NodeMetricStatus{
				UpdateTime: &metav1.Time{Time: start},
				NodeMetric: &slov1alpha1.NodeMetricInfo{
					NodeUsage:   slov1alpha1.ResourceMap{ResourceList: rl("50", "55G")},
					SystemUsage: slov1alpha1.ResourceMap{ResourceList: rl("7", "12G")},
				},
				PodsMetric: []slov1alpha1.PodMetricInfo{metric("podA", "11", "11G"), metric("podB", "10", "10G"), metric("podC", "22", "22G")},
			},
		},
		pods: []*corev1.Pod{
			pod("podA", extension.QoSLS, corev1.PodRunning, rl("20", "20G")),
			pod("podB", extension.QoSBE, corev1.PodRunning, nil),
			pod("podC", "", corev1.PodPending, rl("20", "40G")),
			// A pod on another node must not count.
			elsewhere,
		},
	}
}

// strategy is the colocation strategy of the fixture.
func strategy(*corev1.Node) configuration.ColocationStrategy {
	return configuration.ColocationStrategy{
		Enable:                        ptr.To(true),
		CPUReclaimThresholdPercent:    ptr.To[int64](65),
		MemoryReclaimThresholdPercent: ptr.To[int64](65),
	}
}

// patchRecord is one patch the reconciler sent.
type patchRecord struct {
	SubResource string
	Patch       string
}

// env is a reconciler on a fake client holding the fixture, with a fake clock.
type env struct {
	client     client.Client
	clock      *clocktesting.FakeClock
	reconciler *Reconciler
	patches    []patchRecord
}

func newEnv(t *testing.T, f *fixture, funcs interceptor.Funcs) *env {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := slov1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	e := &env{clock: clocktesting.NewFakeClock(start)}
	if funcs.Patch == nil {
		funcs.Patch = func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			e.patches = append(e.patches, patchRecord{Patch: string(data)})
			return c.Patch(ctx, obj, patch, opts...)
		}
	}
	if funcs.SubResourcePatch == nil {
		funcs.SubResourcePatch = func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			e.patches = append(e.patches, patchRecord{SubResource: sub, Patch: string(data)})
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}
	}
	b := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&corev1.Node{}, &slov1alpha1.NodeMetric{}).
		WithIndex(&corev1.Pod{}, PodNodeNameIndex, podNodeName).
		WithInterceptorFuncs(funcs)
	if f.node != nil {
		b = b.WithObjects(f.node)
	}
	if f.nodeMetric != nil {
		b = b.WithObjects(f.nodeMetric)
	}
	for _, p := range f.pods {
		b = b.WithObjects(p)
	}
	e.client = b.Build()
	e.reconciler = e.newReconciler()
	return e
}

// newReconciler returns a fresh reconciler on the env's client, as after a manager restart.
func (e *env) newReconciler() *Reconciler {
	return &Reconciler{client: e.client, strategyForNode: strategy, clock: e.clock, metrics: NewMetrics()}
}

// reconcile runs one reconcile of test-node and returns the patches it sent.
func (e *env) reconcile(t *testing.T, ctx context.Context) (ctrl.Result, []patchRecord) {
	t.Helper()
	e.patches = nil
	res, err := e.reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "test-node"}})
	if err != nil {
		t.Fatalf("Reconcile() error: %v", err)
	}
	return res, e.patches
}

// node reads test-node back.
func (e *env) node(t *testing.T, ctx context.Context) *corev1.Node {
	t.Helper()
	node := &corev1.Node{}
	if err := e.client.Get(ctx, types.NamespacedName{Name: "test-node"}, node); err != nil {
		t.Fatalf("get node: %v", err)
	}
	return node
}

// colocationResources returns the batch and mid resources of a status list, as strings.
func colocationResources(list corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for _, name := range []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory, extension.MidCPU, extension.MidMemory} {
		if q, ok := list[name]; ok {
			out[name] = q.String()
		}
	}
	return out
}

const (
	// writeStatusPatch sets batch resources 25000 / 33G and mid resources 0 (no prediction yet).
	writeStatusPatch = `{"status":{"allocatable":{"kubernetes.io/batch-cpu":"25k","kubernetes.io/batch-memory":"33G",` +
		`"kubernetes.io/mid-cpu":"0","kubernetes.io/mid-memory":"0"},"capacity":{"kubernetes.io/batch-cpu":"25k",` +
		`"kubernetes.io/batch-memory":"33G","kubernetes.io/mid-cpu":"0","kubernetes.io/mid-memory":"0"}}}`
	// writeExplanation is the explanation written at start.
	writeExplanation = `{"updateTime":"2026-03-01T12:00:00Z","policy":{"cpu":"usage","memory":"usage"},` +
		`"cpu":{"capacity":"100","reclaimPercent":65,"safetyMargin":"35","nodeReserved":"0","systemUsed":"7",` +
		`"hpRequest":"40","hpUsed":"33","hpMaxUsedReq":"42","batch":"25",` +
		`"prodReclaimable":"0","nodeUnused":"50","unallocated":"53","midUnallocatedPercent":0,"midThresholdCap":"100","mid":"0"},` +
		`"memory":{"capacity":"120G","reclaimPercent":65,"safetyMargin":"42G","nodeReserved":"0","systemUsed":"12G",` +
		`"hpRequest":"60G","hpUsed":"33G","hpMaxUsedReq":"60G","batch":"33G",` +
		`"prodReclaimable":"0","nodeUnused":"65G","unallocated":"48G","midUnallocatedPercent":0,"midThresholdCap":"120G","mid":"0"}}`
)

// metadataPatch is the merge patch of the explanation annotation with value v.
func metadataPatch(t *testing.T, v string) string {
	t.Helper()
	p, err := annotationPatch(extension.AnnotationColocationExplanation, v)
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

func TestReconcileWritesOnceAndIsIdempotent(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	e := newEnv(t, newFixture(), interceptor.Funcs{})

	res, patches := e.reconcile(t, ctx)
	want := []patchRecord{
		{Patch: metadataPatch(t, writeExplanation)},
		{SubResource: "status", Patch: writeStatusPatch},
	}
	if diff := cmp.Diff(want, patches); diff != "" {
		t.Errorf("patches of the first reconcile (-want,+got):\n%s", diff)
	}
	// Requeued for one second after the NodeMetric turns stale.
	if diff := cmp.Diff(ctrl.Result{RequeueAfter: 15*time.Minute + time.Second}, res); diff != "" {
		t.Errorf("result (-want,+got):\n%s", diff)
	}
	node := e.node(t, ctx)
	wantResources := map[corev1.ResourceName]string{extension.BatchCPU: "25k", extension.BatchMemory: "33G", extension.MidCPU: "0", extension.MidMemory: "0"}
	if diff := cmp.Diff(wantResources, colocationResources(node.Status.Capacity)); diff != "" {
		t.Errorf("capacity (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(wantResources, colocationResources(node.Status.Allocatable)); diff != "" {
		t.Errorf("allocatable (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"pool": "a"}, node.Labels); diff != "" {
		t.Errorf("labels must be left alone (-want,+got):\n%s", diff)
	}

	// A minute later, nothing changed: nothing is written.
	e.clock.Step(time.Minute)
	if _, patches := e.reconcile(t, ctx); len(patches) != 0 {
		t.Errorf("second reconcile sent %d patches, want none: %v", len(patches), patches)
	}
	// Nor after a restart of the manager.
	e.reconciler = e.newReconciler()
	if _, patches := e.reconcile(t, ctx); len(patches) != 0 {
		t.Errorf("reconcile after a restart sent %d patches, want none: %v", len(patches), patches)
	}
}

func TestReconcileDecisions(t *testing.T) {
	// written returns the fixture as it is after the first write at start.
	written := func() *fixture {
		f := newFixture()
		for _, list := range []corev1.ResourceList{f.node.Status.Capacity, f.node.Status.Allocatable} {
			list[extension.BatchCPU] = resource.MustParse("25k")
			list[extension.BatchMemory] = resource.MustParse("33G")
			list[extension.MidCPU] = resource.MustParse("0")
			list[extension.MidMemory] = resource.MustParse("0")
		}
		f.node.Annotations = map[string]string{extension.AnnotationColocationExplanation: writeExplanation}
		return f
	}
	removeAll := `{"status":{"allocatable":{"kubernetes.io/batch-cpu":null,"kubernetes.io/batch-memory":null,` +
		`"kubernetes.io/mid-cpu":null,"kubernetes.io/mid-memory":null},"capacity":{"kubernetes.io/batch-cpu":null,` +
		`"kubernetes.io/batch-memory":null,"kubernetes.io/mid-cpu":null,"kubernetes.io/mid-memory":null}}}`
	tests := map[string]struct {
		fixture     func() *fixture
		step        time.Duration
		wantPatches []string // status patch (when any) and the explanation's "degraded" or "updateTime"
		wantResult  ctrl.Result
		wantStatus  map[corev1.ResourceName]string
	}{
		"stale NodeMetric removes the resources without any event": {
			fixture:     written,
			step:        15*time.Minute + time.Second,
			wantPatches: []string{removeAll},
			wantStatus:  map[corev1.ResourceName]string{},
		},
		"missing NodeMetric removes the resources": {
			fixture: func() *fixture {
				f := written()
				f.nodeMetric = nil
				return f
			},
			wantPatches: []string{removeAll},
			wantStatus:  map[corev1.ResourceName]string{},
		},
		"colocation off on a node without resources writes nothing": {
			fixture: func() *fixture {
				f := newFixture()
				f.nodeMetric = nil
				return f
			},
			wantStatus: map[corev1.ResourceName]string{},
		},
		"small change waits for updateTimeThresholdSeconds": {
			// podA uses 2 cores more: batch-cpu 23000, 8% below 25000.
			fixture: func() *fixture {
				f := written()
				f.nodeMetric.Status.PodsMetric[0].PodUsage.ResourceList = rl("13", "11G")
				return f
			},
			step:       time.Minute,
			wantResult: ctrl.Result{RequeueAfter: 4 * time.Minute},
			wantStatus: map[corev1.ResourceName]string{extension.BatchCPU: "25k", extension.BatchMemory: "33G", extension.MidCPU: "0", extension.MidMemory: "0"},
		},
		"small change is written once updateTimeThresholdSeconds passed": {
			fixture: func() *fixture {
				f := written()
				f.nodeMetric.Status.PodsMetric[0].PodUsage.ResourceList = rl("13", "11G")
				return f
			},
			step: 5 * time.Minute,
			wantPatches: []string{`{"status":{"allocatable":{"kubernetes.io/batch-cpu":"23k","kubernetes.io/batch-memory":"33G",` +
				`"kubernetes.io/mid-cpu":"0","kubernetes.io/mid-memory":"0"},"capacity":{"kubernetes.io/batch-cpu":"23k",` +
				`"kubernetes.io/batch-memory":"33G","kubernetes.io/mid-cpu":"0","kubernetes.io/mid-memory":"0"}}}`},
			wantResult: ctrl.Result{RequeueAfter: 10*time.Minute + time.Second},
			wantStatus: map[corev1.ResourceName]string{extension.BatchCPU: "23k", extension.BatchMemory: "33G", extension.MidCPU: "0", extension.MidMemory: "0"},
		},
		"large change is written at once": {
			// podC pending pod uses 10 cores more: batch-cpu 15000.
			fixture: func() *fixture {
				f := written()
				f.nodeMetric.Status.PodsMetric[2].PodUsage.ResourceList = rl("32", "22G")
				return f
			},
			step: time.Minute,
			wantPatches: []string{`{"status":{"allocatable":{"kubernetes.io/batch-cpu":"15k","kubernetes.io/batch-memory":"33G",` +
				`"kubernetes.io/mid-cpu":"0","kubernetes.io/mid-memory":"0"},"capacity":{"kubernetes.io/batch-cpu":"15k",` +
				`"kubernetes.io/batch-memory":"33G","kubernetes.io/mid-cpu":"0","kubernetes.io/mid-memory":"0"}}}`},
			wantResult: ctrl.Result{RequeueAfter: 14*time.Minute + time.Second},
			wantStatus: map[corev1.ResourceName]string{extension.BatchCPU: "15k", extension.BatchMemory: "33G", extension.MidCPU: "0", extension.MidMemory: "0"},
		},
		"explanation that does not match the node is rewritten": {
			fixture: func() *fixture {
				f := written()
				f.node.Status.Capacity[extension.BatchCPU] = resource.MustParse("24k")
				f.node.Status.Allocatable[extension.BatchCPU] = resource.MustParse("24k")
				return f
			},
			step:        time.Minute,
			wantPatches: []string{writeStatusPatch},
			wantResult:  ctrl.Result{RequeueAfter: 14*time.Minute + time.Second},
			wantStatus:  map[corev1.ResourceName]string{extension.BatchCPU: "25k", extension.BatchMemory: "33G", extension.MidCPU: "0", extension.MidMemory: "0"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			e := newEnv(t, tc.fixture(), interceptor.Funcs{})
			e.clock.Step(tc.step)
			res, patches := e.reconcile(t, ctx)
			var gotStatusPatches []string
			for _, p := range patches {
				if p.SubResource == "status" {
					gotStatusPatches = append(gotStatusPatches, p.Patch)
				}
			}
			if diff := cmp.Diff(tc.wantPatches, gotStatusPatches); diff != "" {
				t.Errorf("status patches (-want,+got):\n%s", diff)
			}
			if want := 2 * len(tc.wantPatches); len(patches) != want {
				t.Errorf("sent %d patches, want %d (status and annotation): %v", len(patches), want, patches)
			}
			if diff := cmp.Diff(tc.wantResult, res); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			node := e.node(t, ctx)
			if diff := cmp.Diff(tc.wantStatus, colocationResources(node.Status.Allocatable)); diff != "" {
				t.Errorf("allocatable (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatus, colocationResources(node.Status.Capacity)); diff != "" {
				t.Errorf("capacity (-want,+got):\n%s", diff)
			}
			if len(tc.wantPatches) > 0 {
				expl, err := extension.GetColocationExplanation(node.Annotations)
				if err != nil || expl == nil {
					t.Fatalf("explanation after the write: %v, %v", expl, err)
				}
				if !expl.UpdateTime.Time.Equal(start.Add(tc.step).Truncate(time.Second)) {
					t.Errorf("explanation updateTime = %v, want %v", expl.UpdateTime, start.Add(tc.step))
				}
				if !explains(expl, node) {
					t.Errorf("explanation %+v does not match the node's resources", expl)
				}
			}
		})
	}
}

func TestReconcileErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := map[string]struct {
		funcs   interceptor.Funcs
		wantErr string
	}{
		"NodeMetric read fails": {
			funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*slov1alpha1.NodeMetric); ok {
					return boom
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			wantErr: "get NodeMetric test-node: boom",
		},
		"status patch fails": {
			funcs: interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
				return boom
			}},
			wantErr: "patch status of node test-node: boom",
		},
		"pod list fails": {
			funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return boom
			}},
			wantErr: "list pods on node test-node: boom",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			e := newEnv(t, newFixture(), tc.funcs)
			_, err := e.reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "test-node"}})
			if err == nil || err.Error() != tc.wantErr || !errors.Is(err, boom) {
				t.Errorf("Reconcile() error = %v, want %q wrapping boom", err, tc.wantErr)
			}
		})
	}
}

func TestReconcileMissingNodeForgetsItsMetrics(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	e := newEnv(t, newFixture(), interceptor.Funcs{})
	e.reconcile(t, ctx)
	if n := countSeries(t, e.reconciler.metrics, "test-node"); n == 0 {
		t.Fatalf("no series recorded for test-node")
	}
	if err := e.client.Delete(ctx, e.node(t, ctx)); err != nil {
		t.Fatal(err)
	}
	res, patches := e.reconcile(t, ctx)
	if len(patches) != 0 || res != (ctrl.Result{}) {
		t.Errorf("Reconcile() of a deleted node = %v with patches %v, want nothing", res, patches)
	}
	if n := countSeries(t, e.reconciler.metrics, "test-node"); n != 0 {
		t.Errorf("%d series left for the deleted node, want 0", n)
	}
}

func TestNewReconcilerNeedsAStrategy(t *testing.T) {
	if _, err := NewReconciler(nil, Options{}); err == nil {
		t.Errorf("NewReconciler() without StrategyForNode returned no error")
	}
}

// TestReconcileWaitsForItsOwnWrite: a reconcile that runs before the cache shows the reconciler's own last write
// (the watch's latency) does not compute from the stale node and write it a second time; it tries again shortly,
// and after cacheLagTolerance goes on regardless. A soak of 100 nodes found such a second write.
func TestReconcileWaitsForItsOwnWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	before := f.node.DeepCopy()
	stale := false
	e := newEnv(t, f, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if n, ok := obj.(*corev1.Node); ok && stale {
			before.DeepCopyInto(n)
			return nil
		}
		return c.Get(ctx, key, obj, opts...)
	}})

	if _, patches := e.reconcile(t, ctx); len(patches) != 2 {
		t.Fatalf("first reconcile sent %d patches, want 2: %v", len(patches), patches)
	}
	stale = true
	res, patches := e.reconcile(t, ctx)
	if len(patches) != 0 {
		t.Errorf("reconcile on a cache behind the write sent %d patches, want none: %v", len(patches), patches)
	}
	if diff := cmp.Diff(ctrl.Result{RequeueAfter: cacheLagRequeue}, res); diff != "" {
		t.Errorf("result while the cache lags (-want,+got):\n%s", diff)
	}
	if got := testutil.ToFloat64(e.reconciler.metrics.skips.WithLabelValues(skipAwaitingCache)); got != 1 {
		t.Errorf("AwaitingCache skips = %v, want 1", got)
	}

	// The cache catches up: the write is forgotten, and nothing is written.
	stale = false
	if _, patches := e.reconcile(t, ctx); len(patches) != 0 {
		t.Errorf("reconcile once the cache shows the write sent %d patches, want none: %v", len(patches), patches)
	}
	if len(e.reconciler.writes) != 0 {
		t.Errorf("writes remembered after the cache showed them: %v", e.reconciler.writes)
	}

	// A cache that never shows the write (another writer changed the node) holds the node only for
	// cacheLagTolerance.
	e.clock.Step(20 * time.Minute) // the NodeMetric is stale: the next write removes the resources
	if _, patches := e.reconcile(t, ctx); len(patches) != 2 {
		t.Fatalf("reconcile with a stale NodeMetric sent %d patches, want 2: %v", len(patches), patches)
	}
	before = e.node(t, ctx)
	before.Status.Allocatable[extension.BatchCPU] = resource.MustParse("1k")
	stale = true
	if _, patches := e.reconcile(t, ctx); len(patches) != 0 {
		t.Errorf("reconcile within the tolerance sent %d patches, want none", len(patches))
	}
	e.clock.Step(cacheLagTolerance)
	if _, patches := e.reconcile(t, ctx); len(patches) == 0 {
		t.Error("reconcile past the tolerance wrote nothing; the node would be held by a write the cache never shows")
	}
}
