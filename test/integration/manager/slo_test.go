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

package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
)

// The tests in this file drive the SLO controllers (nodemetric, nodeslo) through the SLO ConfigMap on the real
// apiserver. Every expected object is written out by hand from the defaults of koordinator-spec.md §4.1:
//
//	colocation-config:         metricAggregateDurationSeconds 300, metricReportIntervalSeconds 60,
//	                           durations 5m/10m/30m, metricMemoryCollectPolicy usageWithoutPageCache
//	resource-threshold-config: enable false, cpuSuppressThresholdPercent 65, cpuSuppressPolicy cpuset,
//	                           memoryEvictThresholdPercent 70, cpuEvictPolicy evictByRealLimit
//	cpu-burst-config:          policy none, cpuBurstPercent 1000, cfsQuotaBurstPercent 300,
//	                           cfsQuotaBurstPeriodSeconds -1, sharePoolThresholdPercent 50

// sloConfigKey locates the SLO ConfigMap. There is one per cluster, so the tests that write it run one after
// another (as every test of the package does) and delete it when they end.
var sloConfigKey = client.ObjectKey{Namespace: configuration.ConfigNamespace, Name: configuration.SLOCtrlConfigMap}

// sloConfigValidHelp is the help text of koord_manager_slo_config_valid, as GatherAndCompare needs it.
const sloConfigValidHelp = "1 when the latest version of the slo-controller-config ConfigMap parsed, validated and is in force; " +
	"0 when it was rejected and the last good version stays in force."

// sloPoolLabel is the node label the node strategies of these tests select on.
const sloPoolLabel = "pool"

// deleteSLOConfig deletes the SLO ConfigMap if it exists.
func deleteSLOConfig(ctx context.Context) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: sloConfigKey.Namespace, Name: sloConfigKey.Name}}
	return client.IgnoreNotFound(env.Client.Delete(ctx, cm))
}

// resetSLOConfig makes the test start without an SLO ConfigMap (the defaults) and deletes the one it leaves behind.
// Call it before startManager, so that the ConfigMap is deleted after the manager has stopped.
func resetSLOConfig(t *testing.T) {
	t.Helper()
	if err := deleteSLOConfig(t.Context()); err != nil {
		t.Fatalf("delete ConfigMap %s: %v", sloConfigKey, err)
	}
	t.Cleanup(func() {
		if err := deleteSLOConfig(context.Background()); err != nil {
			t.Errorf("delete ConfigMap %s: %v", sloConfigKey, err)
		}
	})
}

// writeSLOConfig creates the SLO ConfigMap with data, or replaces the data of the existing one. It returns the
// object as stored, whose resourceVersion identifies this version.
func writeSLOConfig(ctx context.Context, data map[string]string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := env.Client.Get(ctx, sloConfigKey, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: sloConfigKey.Namespace, Name: sloConfigKey.Name}, Data: data}
		return cm, env.Client.Create(ctx, cm)
	}
	if err != nil {
		return nil, err
	}
	cm.Data = data
	return cm, env.Client.Update(ctx, cm)
}

func applySLOConfig(t *testing.T, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := writeSLOConfig(t.Context(), data)
	if err != nil {
		t.Fatalf("write ConfigMap %s: %v", sloConfigKey, err)
	}
	return cm
}

// createSLONode creates a node. When the test ends it deletes the node, then its NodeSLO and NodeMetric (which
// the manager deletes too while it runs), so that no later test sees them.
func createSLONode(t *testing.T, name string, labels, annotations map[string]string) *corev1.Node {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	if err := env.Client.Create(t.Context(), node); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete node %s: %v", name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			gone := true
			for _, obj := range []client.Object{
				&slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: name}},
				&slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: name}},
			} {
				switch err := env.Client.Delete(ctx, obj); {
				case err == nil:
					gone = false
				case !apierrors.IsNotFound(err):
					return false, err
				}
			}
			return gone, nil
		})
		if err != nil {
			t.Errorf("delete NodeSLO and NodeMetric of node %s: %v", name, err)
		}
	})
	return node
}

// setNodeCapacity writes the capacity and allocatable of node's status, as the kubelet would.
func setNodeCapacity(t *testing.T, node *corev1.Node, cpu, memory string) {
	t.Helper()
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	node.Status.Capacity, node.Status.Allocatable = l, l.DeepCopy()
	if err := env.Client.Status().Update(t.Context(), node); err != nil {
		t.Fatalf("update status of node %s: %v", node.Name, err)
	}
}

// reportNodeMetric writes status as the NodeMetric status of node, as the node agent would, and returns the
// NodeMetric as stored.
func reportNodeMetric(t *testing.T, node string, status slov1alpha1.NodeMetricStatus) *slov1alpha1.NodeMetric {
	t.Helper()
	nm := &slov1alpha1.NodeMetric{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: node}, nm); err != nil {
		t.Fatalf("get NodeMetric %s: %v", node, err)
	}
	nm.Status = status
	if err := env.Client.Status().Update(t.Context(), nm); err != nil {
		t.Fatalf("update status of NodeMetric %s: %v", node, err)
	}
	return nm
}

// agentStatus is a NodeMetric status as the node agent reports it: fresh, with the given node usage.
func agentStatus(cpu, memory string) slov1alpha1.NodeMetricStatus {
	return slov1alpha1.NodeMetricStatus{
		// The API stores times to the second.
		UpdateTime: &metav1.Time{Time: time.Now().Truncate(time.Second)},
		NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}},
	}
}

// waitForDiff polls diff every 100ms for up to 30s until it returns "" and fails the test with msg and the last
// difference when it never does. A diff error is returned at once; a NotFound counts as a difference.
func waitForDiff(t *testing.T, msg string, diff func(ctx context.Context) (string, error)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := diff(ctx)
		if apierrors.IsNotFound(err) {
			last = err.Error()
			return false, nil
		}
		if err != nil {
			return false, err
		}
		last = d
		return d == "", nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last difference:\n%s", msg, err, last)
	}
}

// collectPolicy is the NodeMetric collect policy of the §4.1 defaults with the given report interval.
func collectPolicy(reportIntervalSeconds int64) *slov1alpha1.NodeMetricCollectPolicy {
	return &slov1alpha1.NodeMetricCollectPolicy{
		AggregateDurationSeconds: ptr.To[int64](300),
		ReportIntervalSeconds:    ptr.To(reportIntervalSeconds),
		NodeAggregatePolicy: &slov1alpha1.AggregatePolicy{Durations: []metav1.Duration{
			{Duration: 5 * time.Minute}, {Duration: 10 * time.Minute}, {Duration: 30 * time.Minute},
		}},
		NodeMemoryCollectPolicy: ptr.To(slov1alpha1.UsageWithoutPageCache),
	}
}

func waitForCollectPolicy(t *testing.T, node string, want *slov1alpha1.NodeMetricCollectPolicy) {
	t.Helper()
	waitForDiff(t, "NodeMetric "+node+" has not the expected metricCollectPolicy (-want +got)", func(ctx context.Context) (string, error) {
		nm := &slov1alpha1.NodeMetric{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, nm); err != nil {
			return "", err
		}
		return cmp.Diff(want, nm.Spec.CollectPolicy), nil
	})
}

// thresholdStrategy is a resource threshold strategy with the §4.1 defaults (cpuset suppression, eviction by real
// limit) for the fields these tests never set.
func thresholdStrategy(enable bool, cpuSuppressPercent, memoryEvictPercent int64) *slov1alpha1.ResourceThresholdStrategy {
	return &slov1alpha1.ResourceThresholdStrategy{
		Enable:                      ptr.To(enable),
		CPUSuppressThresholdPercent: ptr.To(cpuSuppressPercent),
		CPUSuppressPolicy:           slov1alpha1.CPUSetPolicy,
		MemoryEvictThresholdPercent: ptr.To(memoryEvictPercent),
		CPUEvictPolicy:              slov1alpha1.EvictByRealLimitPolicy,
	}
}

func waitForThresholdStrategy(t *testing.T, node string, want *slov1alpha1.ResourceThresholdStrategy) {
	t.Helper()
	waitForDiff(t, "NodeSLO "+node+" has not the expected resourceUsedThresholdWithBE (-want +got)", func(ctx context.Context) (string, error) {
		slo := &slov1alpha1.NodeSLO{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, slo); err != nil {
			return "", err
		}
		return cmp.Diff(want, slo.Spec.ResourceUsedThresholdWithBE), nil
	})
}

// waitForDeletion waits until obj is gone from the apiserver.
func waitForDeletion(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s was not deleted", obj, obj.GetName()), func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func setLabels(t *testing.T, node *corev1.Node, labels map[string]string) {
	t.Helper()
	patch := client.MergeFrom(node.DeepCopy())
	node.Labels = labels
	if err := env.Client.Patch(t.Context(), node, patch); err != nil {
		t.Fatalf("relabel node %s: %v", node.Name, err)
	}
}

// gatheredValue returns the value of the counter or gauge name (without labels) from controller-runtime's
// registry.
func gatheredValue(t *testing.T, name string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			m := f.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s is not registered, or has labels", name)
	return 0
}

// wantSLOConfigValid checks koord_manager_slo_config_valid.
func wantSLOConfigValid(t *testing.T, want int) {
	t.Helper()
	expected := fmt.Sprintf("# HELP koord_manager_slo_config_valid %s\n# TYPE koord_manager_slo_config_valid gauge\nkoord_manager_slo_config_valid %d\n",
		sloConfigValidHelp, want)
	if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(expected), "koord_manager_slo_config_valid"); err != nil {
		t.Errorf("koord_manager_slo_config_valid: %v", err)
	}
}

// TestNodeMetricFollowsColocationConfig checks the nodemetric controller: each node gets a NodeMetric of its name,
// owned by it, whose metricCollectPolicy is the §4.1 defaults without a ConfigMap, follows colocation-config
// (cluster strategy, node annotation override, deletion of the ConfigMap), never touches the status the node
// agent writes, and goes away with the node.
func TestNodeMetricFollowsColocationConfig(t *testing.T) {
	ensureSystemNamespace(t)
	resetSLOConfig(t)
	startManager(t, testOptions(t))
	ctx := t.Context()

	plain := createSLONode(t, "slo-metric-plain", nil, nil)
	// The annotation overrides the fields it sets, on top of the cluster strategy.
	override := createSLONode(t, "slo-metric-override", nil,
		map[string]string{extension.AnnotationNodeColocationStrategy: `{"metricReportIntervalSeconds":45}`})

	// No ConfigMap: 300 s aggregation, 60 s reports, 5m/10m/30m, usageWithoutPageCache.
	waitForCollectPolicy(t, plain.Name, collectPolicy(60))
	waitForCollectPolicy(t, override.Name, collectPolicy(45))

	nm := &slov1alpha1.NodeMetric{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: plain.Name}, nm); err != nil {
		t.Fatalf("get NodeMetric: %v", err)
	}
	wantOwners := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: plain.Name, UID: plain.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}}
	if diff := cmp.Diff(wantOwners, nm.OwnerReferences); diff != "" {
		t.Errorf("NodeMetric owner references (-want +got):\n%s", diff)
	}

	// The node agent reports; the controller must leave the status alone through every spec change below.
	status := agentStatus("1500m", "3Gi")
	reportNodeMetric(t, plain.Name, status)
	wantStatusKept := func(when string) {
		t.Helper()
		got := &slov1alpha1.NodeMetric{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: plain.Name}, got); err != nil {
			t.Fatalf("get NodeMetric: %v", err)
		}
		if diff := cmp.Diff(status, got.Status); diff != "" {
			t.Errorf("NodeMetric status %s (-want +got):\n%s", when, diff)
		}
	}

	// The cluster strategy sets the report interval to 120 s; the annotation still wins on its node.
	applySLOConfig(t, map[string]string{configuration.ColocationConfigKey: `{"metricReportIntervalSeconds":120}`})
	waitForCollectPolicy(t, plain.Name, collectPolicy(120))
	waitForCollectPolicy(t, override.Name, collectPolicy(45))
	wantStatusKept("after the colocation-config change")

	// A deleted ConfigMap means the defaults again.
	if err := deleteSLOConfig(ctx); err != nil {
		t.Fatalf("delete ConfigMap: %v", err)
	}
	waitForCollectPolicy(t, plain.Name, collectPolicy(60))
	wantStatusKept("after the ConfigMap was deleted")

	// No garbage collector runs here: the controller itself deletes the NodeMetric of a deleted node.
	if err := env.Client.Delete(ctx, plain); err != nil {
		t.Fatalf("delete node: %v", err)
	}
	waitForDeletion(t, &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: plain.Name}})
}

// TestNodeSLORenderingWithNodeStrategies checks the nodeslo controller: a cluster strategy and a node strategy
// selecting pool=gpu render different NodeSLOs on a plain and a labelled node, with the defaults for every field
// and key the ConfigMap leaves out; relabelling switches a node's NodeSLO; deleting the node deletes it.
func TestNodeSLORenderingWithNodeStrategies(t *testing.T) {
	ensureSystemNamespace(t)
	resetSLOConfig(t)
	applySLOConfig(t, map[string]string{configuration.ResourceThresholdConfigKey: `{
		"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 55},
		"nodeStrategies": [{
			"name": "gpu",
			"nodeSelector": {"matchLabels": {"pool": "gpu"}},
			"cpuSuppressThresholdPercent": 45,
			"memoryEvictThresholdPercent": 80
		}]
	}`})
	startManager(t, testOptions(t))
	ctx := t.Context()

	plain := createSLONode(t, "slo-threshold-plain", nil, nil)
	gpu := createSLONode(t, "slo-threshold-gpu", map[string]string{sloPoolLabel: "gpu"}, nil)

	// Plain node: the cluster strategy (enable, 55 %) over the defaults (cpuset, 70 %, evictByRealLimit).
	clusterWant := thresholdStrategy(true, 55, 70)
	// GPU node: enable from the cluster strategy, 45 % and 80 % from the node strategy, the rest defaults.
	gpuWant := thresholdStrategy(true, 45, 80)
	waitForThresholdStrategy(t, plain.Name, clusterWant)
	waitForThresholdStrategy(t, gpu.Name, gpuWant)

	// Keys the ConfigMap does not set render their defaults, on both nodes.
	wantBurst := &slov1alpha1.CPUBurstStrategy{
		CPUBurstConfig: slov1alpha1.CPUBurstConfig{
			Policy: slov1alpha1.CPUBurstNone, CPUBurstPercent: ptr.To[int64](1000),
			CFSQuotaBurstPercent: ptr.To[int64](300), CFSQuotaBurstPeriodSeconds: ptr.To[int64](-1),
		},
		SharePoolThresholdPercent: ptr.To[int64](50),
	}
	for _, name := range []string{plain.Name, gpu.Name} {
		slo := &slov1alpha1.NodeSLO{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, slo); err != nil {
			t.Fatalf("get NodeSLO %s: %v", name, err)
		}
		if diff := cmp.Diff(wantBurst, slo.Spec.CPUBurstStrategy); diff != "" {
			t.Errorf("NodeSLO %s cpuBurstStrategy (-want +got):\n%s", name, diff)
		}
		if len(slo.OwnerReferences) != 1 || slo.OwnerReferences[0].Kind != "Node" || slo.OwnerReferences[0].Name != name {
			t.Errorf("NodeSLO %s owner references = %+v, want its node", name, slo.OwnerReferences)
		}
	}

	// Swap the label: each node switches to the other's strategy.
	setLabels(t, plain, map[string]string{sloPoolLabel: "gpu"})
	setLabels(t, gpu, nil)
	waitForThresholdStrategy(t, plain.Name, gpuWant)
	waitForThresholdStrategy(t, gpu.Name, clusterWant)

	if err := env.Client.Delete(ctx, gpu); err != nil {
		t.Fatalf("delete node: %v", err)
	}
	waitForDeletion(t, &slov1alpha1.NodeSLO{ObjectMeta: metav1.ObjectMeta{Name: gpu.Name}})
}

// TestBrokenSLOConfigKeepsTheLastGoodOne runs the manager without the ConfigMap webhook, so that broken versions
// of the ConfigMap reach the apiserver. Each is reported (a Warning Event naming the key and the field, the
// metrics) and leaves the NodeSLO and NodeMetric written from the last good version untouched; a new node still
// gets the last good configuration. A fixed version is applied again.
func TestBrokenSLOConfigKeepsTheLastGoodOne(t *testing.T) {
	ensureSystemNamespace(t)
	resetSLOConfig(t)
	opts := testOptions(t)
	if err := opts.FeatureGates.Set("ConfigMapValidatingWebhook=false"); err != nil {
		t.Fatalf("turn off the ConfigMap webhook: %v", err)
	}
	applySLOConfig(t, map[string]string{
		configuration.ColocationConfigKey:        `{"metricReportIntervalSeconds":120}`,
		configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":55}}`,
	})
	startManager(t, opts)
	ctx := t.Context()

	// The last good version: 120 s reports, suppression at 55 % over the defaults (cpuset, 70 %).
	goodPolicy, goodThreshold := collectPolicy(120), thresholdStrategy(true, 55, 70)
	node := createSLONode(t, "slo-broken-config", nil, nil)
	waitForCollectPolicy(t, node.Name, goodPolicy)
	waitForThresholdStrategy(t, node.Name, goodThreshold)
	slo, nm := &slov1alpha1.NodeSLO{}, &slov1alpha1.NodeMetric{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: node.Name}, slo); err != nil {
		t.Fatalf("get NodeSLO: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: node.Name}, nm); err != nil {
		t.Fatalf("get NodeMetric: %v", err)
	}

	for i, tc := range []struct {
		name string
		// data changes both keys: one valid change next to the broken one must not be applied either.
		data     map[string]string
		wantNote []string
	}{
		{
			name: "invalid JSON",
			data: map[string]string{
				configuration.ColocationConfigKey:        "{\n  \"metricReportIntervalSeconds\": 30\n  \"enable\": true\n}",
				configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":45}}`,
			},
			// The missing comma: line 3, where the second key starts in column 3.
			wantNote: []string{`colocation-config: line 3, column 3: invalid character '"' after object key:value pair`},
		},
		{
			name: "out-of-range value",
			data: map[string]string{
				configuration.ColocationConfigKey:        `{"metricReportIntervalSeconds":30}`,
				configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":150}}`,
			},
			wantNote: []string{"resource-threshold-config.clusterStrategy.cpuSuppressThresholdPercent: Invalid value: 150: must be between 0 and 100"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rejectedBefore := gatheredValue(t, "koord_manager_slo_config_rejected_total")
			bad := applySLOConfig(t, tc.data)

			// The Event shows that the loader has processed exactly this version.
			var ev *eventsv1.Event
			eventually(t, "no InvalidSLOConfig Event for the broken version", func(ctx context.Context) (bool, error) {
				list := &eventsv1.EventList{}
				if err := env.Client.List(ctx, list, client.InNamespace(sloConfigKey.Namespace)); err != nil {
					return false, err
				}
				for i := range list.Items {
					e := &list.Items[i]
					if e.Reason == sloconfig.ReasonInvalidSLOConfig && e.Regarding.Kind == "ConfigMap" &&
						e.Regarding.Name == sloConfigKey.Name && e.Regarding.ResourceVersion == bad.ResourceVersion {
						ev = e
						return true, nil
					}
				}
				return false, nil
			})
			if ev.Type != corev1.EventTypeWarning {
				t.Errorf("Event type = %q, want %q", ev.Type, corev1.EventTypeWarning)
			}
			for _, want := range tc.wantNote {
				if !strings.Contains(ev.Note, want) {
					t.Errorf("Event note does not contain %q:\n%s", want, ev.Note)
				}
			}
			wantSLOConfigValid(t, 0)
			if got, want := gatheredValue(t, "koord_manager_slo_config_rejected_total"), rejectedBefore+1; got != want {
				t.Errorf("koord_manager_slo_config_rejected_total = %v, want %v", got, want)
			}

			// A node created now gets the last good configuration. Its reconciles are queued after any the
			// broken version could have triggered, so once they are done the existing objects are final.
			probe := createSLONode(t, fmt.Sprintf("slo-broken-config-probe-%d", i), nil, nil)
			waitForCollectPolicy(t, probe.Name, goodPolicy)
			waitForThresholdStrategy(t, probe.Name, goodThreshold)
			for _, obj := range []client.Object{slo, nm} {
				got := obj.DeepCopyObject().(client.Object)
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
					t.Fatalf("get %T: %v", obj, err)
				}
				if got.GetResourceVersion() != obj.GetResourceVersion() {
					t.Errorf("%T %s was rewritten after a broken ConfigMap: resourceVersion %s, was %s",
						obj, obj.GetName(), got.GetResourceVersion(), obj.GetResourceVersion())
				}
			}
		})
	}

	// The fix is applied: 30 s reports, suppression at 45 %.
	applySLOConfig(t, map[string]string{
		configuration.ColocationConfigKey:        `{"metricReportIntervalSeconds":30}`,
		configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":45}}`,
	})
	waitForCollectPolicy(t, node.Name, collectPolicy(30))
	waitForThresholdStrategy(t, node.Name, thresholdStrategy(true, 45, 70))
	wantSLOConfigValid(t, 1)
}

// TestSLOConfigWebhookRejectsInvalidEdits checks the ConfigMap webhook through the apiserver: a ConfigMap that
// does not parse or validate is rejected, on create and on update, with a message naming the key and the field,
// and the stored version stays; a valid edit is admitted.
func TestSLOConfigWebhookRejectsInvalidEdits(t *testing.T) {
	ensureSystemNamespace(t)
	resetSLOConfig(t)
	opts := testOptions(t)
	opts.Controllers = nil
	startManager(t, opts)
	ctx := t.Context()

	newConfigMap := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: sloConfigKey.Namespace, Name: sloConfigKey.Name}, Data: data}
	}
	invalid := map[string]string{configuration.ColocationConfigKey: `{"metricReportIntervalSeconds":0}`}
	const wantInvalid = "colocation-config.metricReportIntervalSeconds: Invalid value: 0: must be greater than or equal to 1"
	// The apiserver loads the webhook configuration asynchronously: wait until a dry run is rejected.
	eventually(t, "the ConfigMap webhook never rejected an invalid ConfigMap", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, newConfigMap(invalid), client.DryRunAll)
		if err == nil {
			return false, nil
		}
		return strings.Contains(err.Error(), wantInvalid), nil
	})
	err := env.Client.Create(ctx, newConfigMap(invalid))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), wantInvalid) {
		t.Errorf("create an invalid ConfigMap: got %v, want Forbidden naming %q", err, wantInvalid)
	}

	valid := map[string]string{
		configuration.ColocationConfigKey:        `{"metricReportIntervalSeconds":120}`,
		configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":55}}`,
	}
	if err := env.Client.Create(ctx, newConfigMap(valid)); err != nil {
		t.Fatalf("create a valid ConfigMap: %v", err)
	}

	for name, tc := range map[string]struct {
		data    map[string]string
		wantMsg string
	}{
		"invalid JSON": {
			data:    map[string]string{configuration.ColocationConfigKey: `{"metricReportIntervalSeconds": 30`},
			wantMsg: "colocation-config: line 1, column 34: unexpected end of JSON input", // the input is 34 bytes long
		},
		"unknown field": {
			data:    map[string]string{configuration.ColocationConfigKey: `{"cpuReclaimThresholdPrecent": 60}`},
			wantMsg: `colocation-config: unknown field "cpuReclaimThresholdPrecent"`,
		},
		"out-of-range cluster value": {
			data:    map[string]string{configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"cpuSuppressThresholdPercent":150}}`},
			wantMsg: "resource-threshold-config.clusterStrategy.cpuSuppressThresholdPercent: Invalid value: 150: must be between 0 and 100",
		},
		"out-of-range node strategy value": {
			data: map[string]string{configuration.ResourceThresholdConfigKey: `{"nodeStrategies":[
				{"name":"gpu","nodeSelector":{"matchLabels":{"pool":"gpu"}},"memoryEvictThresholdPercent":101}]}`},
			wantMsg: "resource-threshold-config.nodeStrategies[0].memoryEvictThresholdPercent: Invalid value: 101: must be between 0 and 100",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := writeSLOConfig(ctx, tc.data)
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("update the ConfigMap: got %v, want Forbidden naming %q", err, tc.wantMsg)
			}
			stored := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, sloConfigKey, stored); err != nil {
				t.Fatalf("get ConfigMap: %v", err)
			}
			if diff := cmp.Diff(valid, stored.Data); diff != "" {
				t.Errorf("stored ConfigMap data after a rejected update (-want +got):\n%s", diff)
			}
		})
	}

	fixed := map[string]string{configuration.ColocationConfigKey: `{"metricReportIntervalSeconds":30}`}
	if _, err := writeSLOConfig(ctx, fixed); err != nil {
		t.Fatalf("update the ConfigMap with a valid version: %v", err)
	}
	stored := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, sloConfigKey, stored); err != nil {
		t.Fatalf("get ConfigMap: %v", err)
	}
	if diff := cmp.Diff(fixed, stored.Data); diff != "" {
		t.Errorf("stored ConfigMap data after a valid update (-want +got):\n%s", diff)
	}
}

// TestManagerRestartChangesNothing restarts koord-manager over nodes whose NodeSLO, NodeMetric and batch resources
// are in place. The new manager must not rewrite any of them: neither with the defaults it holds before it has
// read the ConfigMap, nor with the same values.
func TestManagerRestartChangesNothing(t *testing.T) {
	ensureSystemNamespace(t)
	resetSLOConfig(t)
	applySLOConfig(t, map[string]string{
		// Colocation on, so that the noderesource controller writes batch resources; the gpu pool reports every
		// 30 s, the rest every 120 s.
		configuration.ColocationConfigKey: `{"enable":true,"metricReportIntervalSeconds":120,"nodeConfigs":[
			{"name":"gpu","nodeSelector":{"matchLabels":{"pool":"gpu"}},"metricReportIntervalSeconds":30}]}`,
		configuration.ResourceThresholdConfigKey: `{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":55},"nodeStrategies":[
			{"name":"gpu","nodeSelector":{"matchLabels":{"pool":"gpu"}},"cpuSuppressThresholdPercent":45}]}`,
	})
	opts := testOptions(t)
	first := startManager(t, opts)

	clusterPolicy, gpuPolicy := collectPolicy(120), collectPolicy(30)
	clusterThreshold, gpuThreshold := thresholdStrategy(true, 55, 70), thresholdStrategy(true, 45, 70)
	plain := createSLONode(t, "slo-restart-plain", nil, nil)
	gpu := createSLONode(t, "slo-restart-gpu", map[string]string{sloPoolLabel: "gpu"}, nil)
	for _, n := range []struct {
		node      *corev1.Node
		policy    *slov1alpha1.NodeMetricCollectPolicy
		threshold *slov1alpha1.ResourceThresholdStrategy
	}{{plain, clusterPolicy, clusterThreshold}, {gpu, gpuPolicy, gpuThreshold}} {
		setNodeCapacity(t, n.node, "8", "16Gi")
		waitForCollectPolicy(t, n.node.Name, n.policy)
		waitForThresholdStrategy(t, n.node.Name, n.threshold)
		reportNodeMetric(t, n.node.Name, agentStatus("2", "4Gi"))
	}
	// With a fresh NodeMetric the noderesource controller writes batch resources and then its explanation.
	waitForBatchResources := func(name string) {
		t.Helper()
		eventually(t, "node "+name+" got no batch resources", func(ctx context.Context) (bool, error) {
			node := &corev1.Node{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
				return false, err
			}
			_, hasBatch := node.Status.Allocatable[extension.BatchCPU]
			_, explained := node.Annotations[extension.AnnotationColocationExplanation]
			return hasBatch && explained, nil
		})
	}
	waitForBatchResources(plain.Name)
	waitForBatchResources(gpu.Name)

	resourceVersions := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, name := range []string{plain.Name, gpu.Name} {
			for _, obj := range []client.Object{&corev1.Node{}, &slov1alpha1.NodeSLO{}, &slov1alpha1.NodeMetric{}} {
				if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, obj); err != nil {
					t.Fatalf("get %T %s: %v", obj, name, err)
				}
				out[fmt.Sprintf("%T %s", obj, name)] = obj.GetResourceVersion()
			}
		}
		return out
	}
	before := resourceVersions()

	first.stop(t)
	startManager(t, opts)

	// Show that the new manager has loaded the configuration and worked through every node. A node created now
	// gets its objects only once the configuration is loaded, and loading it queues every node; the events below
	// are queued after that, and each controller works through its queue in order.
	extra := createSLONode(t, "slo-restart-extra", nil, nil)
	setNodeCapacity(t, extra, "8", "16Gi")
	waitForCollectPolicy(t, extra.Name, clusterPolicy)
	waitForThresholdStrategy(t, extra.Name, clusterThreshold)
	reportNodeMetric(t, extra.Name, agentStatus("2", "4Gi")) // noderesource: writes the extra node's batch resources
	waitForBatchResources(extra.Name)
	setLabels(t, extra, map[string]string{sloPoolLabel: "gpu"}) // nodeslo and nodemetric: switch to the gpu pool
	waitForCollectPolicy(t, extra.Name, gpuPolicy)
	waitForThresholdStrategy(t, extra.Name, gpuThreshold)

	if diff := cmp.Diff(before, resourceVersions()); diff != "" {
		t.Errorf("resourceVersions after the restart (-before +after):\n%s", diff)
	}
}
