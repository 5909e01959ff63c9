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

package scheduler

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
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
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler"
	"github.com/koord-dev/koord/test/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env)
}

// schedulerName is the profile of the shipped configuration.
const schedulerName = "koord-scheduler"

// schedulerUser is the user koord-scheduler runs as: bound to its shipped role and kube-scheduler's built-in
// ones, as its service account is in a cluster, so that the tests show the shipped role is enough.
const schedulerUser = "koord-scheduler-integration"

// startScheduler starts koord-scheduler with the shipped configuration and role against the test apiserver.
// It stops when the test ends. args override fields of plugins' args, by plugin name.
func startScheduler(t *testing.T, args ...pluginArgs) (stop func()) {
	t.Helper()
	return startSchedulerWith(t, filepath.Join(env.RepoRoot, "config", "scheduler", "koord-scheduler-config.yaml"), args...)
}

// startSchedulerWith is startScheduler with the configuration file at config. The scheduler stops when the
// test ends, or earlier when stop is called.
func startSchedulerWith(t *testing.T, config string, args ...pluginArgs) (stop func()) {
	t.Helper()
	user, err := env.UserWithRoles(t.Context(), schedulerUser, filepath.Join("config", "rbac", "koord-scheduler", "role.yaml"),
		"system:kube-scheduler", "system:volume-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(user, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cfg, err := configFor(config, kubeconfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	// The scheduler logs a lot at the test logger's default verbosity; V(2) keeps a failed test readable.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	srv, err := scheduler.Start(ctx, scheduler.Args("--config="+cfgPath, "--secure-port=0"), scheduler.Plugins()...)
	if err != nil {
		cancel()
		t.Fatalf("start koord-scheduler: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-srv.Done():
				if err := srv.Wait(); err != nil {
					t.Errorf("koord-scheduler stopped with: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("koord-scheduler did not stop within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// pluginArgs are fields of a plugin's args in a KubeSchedulerConfiguration.
type pluginArgs struct {
	plugin string
	fields map[string]any
}

// configFor returns the configuration file at path with the client connection pointed at kubeconfig and the
// fields of args set in its first profile's pluginConfig.
func configFor(path, kubeconfig string, args ...pluginArgs) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig, "qps": 500, "burst": 1000}
	if len(args) > 0 {
		profile := cfg["profiles"].([]any)[0].(map[string]any)
		pluginConfig, _ := profile["pluginConfig"].([]any)
	next:
		for _, a := range args {
			for _, pc := range pluginConfig {
				if pc := pc.(map[string]any); pc["name"] == a.plugin {
					maps.Copy(pc["args"].(map[string]any), a.fields)
					continue next
				}
			}
			pluginConfig = append(pluginConfig, map[string]any{"name": a.plugin, "args": a.fields})
		}
		profile["pluginConfig"] = pluginConfig
	}
	return yaml.Marshal(cfg)
}

// writeKubeconfig writes cfg, with its credentials, into a kubeconfig file.
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
		Username:              cfg.Username,
		Password:              cfg.Password,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	return clientcmd.WriteToFile(*kc, path)
}

// fixture holds the objects of one test: its namespace, and nodes labelled with the test's name so that its
// pods, which select that label, land on nothing else.
type fixture struct {
	t         *testing.T
	namespace string
	label     string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sched-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	f := &fixture{t: t, namespace: ns.Name, label: ns.Name}
	t.Cleanup(f.cleanUp)
	return f
}

// cleanUp removes the test's pods (at once: no kubelet will confirm), nodes and NodeMetrics.
func (f *fixture) cleanUp() {
	ctx := context.Background()
	c := env.Client
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(f.namespace), client.GracePeriodSeconds(0)); err != nil {
		f.t.Errorf("delete pods: %v", err)
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, client.MatchingLabels{"test": f.label}); err != nil {
		f.t.Errorf("list nodes: %v", err)
	}
	for _, n := range nodes.Items {
		for _, obj := range []client.Object{&n, &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}} {
			if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				f.t.Errorf("delete %s: %v", n.Name, err)
			}
		}
	}
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.namespace}}); err != nil {
		f.t.Errorf("delete namespace: %v", err)
	}
}

// node creates a node with 10 cpus and 10Gi allocatable plus extra, and a NodeMetric reporting cpuUsage
// cpus used, updated age ago. It returns the node's name.
func (f *fixture) node(name string, cpuUsage string, age time.Duration, extra corev1.ResourceList) string {
	f.t.Helper()
	name = f.namespace + "-" + name
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("10"),
		corev1.ResourceMemory: resource.MustParse("10Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for k, v := range extra {
		allocatable[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": f.label}}}
	ctx := f.t.Context()
	if err := env.Client.Create(ctx, n); err != nil {
		f.t.Fatalf("create node %s: %v", name, err)
	}
	// The apiserver taints new nodes not-ready (TaintNodesByCondition); no node controller is here to lift it.
	n.Spec.Taints = nil
	if err := env.Client.Update(ctx, n); err != nil {
		f.t.Fatalf("untaint node %s: %v", name, err)
	}
	n.Status = corev1.NodeStatus{
		Capacity:    allocatable,
		Allocatable: allocatable,
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}
	if err := env.Client.Status().Update(ctx, n); err != nil {
		f.t.Fatalf("set status of node %s: %v", name, err)
	}
	nm := &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(ctx, nm); err != nil {
		f.t.Fatalf("create NodeMetric %s: %v", name, err)
	}
	f.report(name, cpuUsage, age)
	return name
}

// report updates the NodeMetric of node to cpuUsage cpus and 1Gi used, updated age ago.
func (f *fixture) report(node, cpuUsage string, age time.Duration) {
	f.t.Helper()
	ctx := f.t.Context()
	nm := &slov1alpha1.NodeMetric{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, nm); err != nil {
		f.t.Fatalf("get NodeMetric %s: %v", node, err)
	}
	nm.Status = slov1alpha1.NodeMetricStatus{
		UpdateTime: &metav1.Time{Time: time.Now().Add(-age)},
		NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpuUsage),
			corev1.ResourceMemory: resource.MustParse("1Gi"),
		}}},
	}
	if err := env.Client.Status().Update(ctx, nm); err != nil {
		f.t.Fatalf("report usage of %s: %v", node, err)
	}
}

// pod creates a pod for koord-scheduler on the test's nodes with the given requests (also its limits).
func (f *fixture) pod(name string, requests corev1.ResourceList, edit func(*corev1.Pod)) *corev1.Pod {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace},
		Spec: corev1.PodSpec{
			SchedulerName: schedulerName,
			NodeSelector:  map[string]string{"test": f.label},
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests},
			}},
		},
	}
	if edit != nil {
		edit(p)
	}
	if err := env.Client.Create(f.t.Context(), p); err != nil {
		f.t.Fatalf("create pod %s: %v", name, err)
	}
	return p
}

// boundNode waits until pod is bound and returns its node.
func (f *fixture) boundNode(p *corev1.Pod) string {
	f.t.Helper()
	var node string
	f.eventually(fmt.Sprintf("pod %s was not bound", p.Name), func(ctx context.Context) (bool, error) {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return false, err
		}
		node = got.Spec.NodeName
		return node != "", nil
	})
	return node
}

// unschedulable waits until the scheduler marks pod unschedulable and returns the condition's message.
func (f *fixture) unschedulable(p *corev1.Pod) string {
	f.t.Helper()
	var msg string
	f.eventually(fmt.Sprintf("pod %s was not marked unschedulable", p.Name), func(ctx context.Context) (bool, error) {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return false, err
		}
		if got.Spec.NodeName != "" {
			return false, fmt.Errorf("pod %s was bound to %s", p.Name, got.Spec.NodeName)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				msg = c.Message
				return true, nil
			}
		}
		return false, nil
	})
	return msg
}

// eventually polls cond every 100ms for up to 30s and fails the test with msg when it never holds.
func (f *fixture) eventually(msg string, cond func(ctx context.Context) (bool, error)) {
	f.t.Helper()
	if err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, 30*time.Second, true, cond); err != nil {
		f.t.Fatalf("%s: %v", msg, err)
	}
}

// counter returns the value of koord-scheduler's counter name with the labels (name, value pairs), as its
// /metrics endpoint serves it (kube-scheduler's legacy registry; the scheduler runs in this process); 0 while
// the counter has no such series.
func counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// ensurePriorityClass creates Koordinator's PriorityClass pc unless it exists.
func ensurePriorityClass(t *testing.T, pc extension.PriorityClass) {
	t.Helper()
	lo, _, _ := pc.Range()
	obj := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: string(pc)}, Value: lo, PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)}
	if err := env.Client.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create PriorityClass %s: %v", pc, err)
	}
}
