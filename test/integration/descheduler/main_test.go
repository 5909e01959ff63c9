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

// Package descheduler holds integration tests of koord-descheduler's MigrationController against a real
// apiserver, with koord-scheduler running in-process to place Reservations. No kubelet or
// kube-controller-manager runs: the tests create the ReplicaSet's pods (and its replacement pod) themselves
// and mark pods ready.
package descheduler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/descheduler/migration"
	"github.com/koord-dev/koord/pkg/scheduler"
	"github.com/koord-dev/koord/test/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env)
}

// waitTimeout bounds every wait; the tests assert what happens, not how fast.
const waitTimeout = 2 * time.Minute

// startScheduler starts koord-scheduler with the shipped configuration until the test ends.
func startScheduler(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	cfg := env.Config
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "scheduler", "koord-scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sc map[string]any
	if err := yaml.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	sc["clientConnection"] = map[string]any{"kubeconfig": kubeconfig, "qps": 500, "burst": 1000}
	out, err := yaml.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	srv, err := scheduler.Start(ctx, scheduler.Args("--config="+path, "--secure-port=0"), scheduler.Plugins()...)
	if err != nil {
		cancel()
		t.Fatalf("start koord-scheduler: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-srv.Done():
		case <-time.After(30 * time.Second):
			t.Error("koord-scheduler did not stop within 30s")
		}
	})
}

// testArgs are the defaulted args with what every test needs: evictions that delete at once (no kubelet
// finishes a graceful deletion), no workload limiter window, and changes by mutate.
func testArgs(mutate ...func(a *config.MigrationControllerArgs)) *config.MigrationControllerArgs {
	a := &config.MigrationControllerArgs{}
	config.SetDefaultsMigrationControllerArgs(a)
	a.DefaultDeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	a.ObjectLimiters = config.ObjectLimiterMap{config.MigrationLimitObjectWorkload: {}}
	a.ArbitrationArgs.Interval = &metav1.Duration{Duration: 100 * time.Millisecond}
	for _, m := range mutate {
		m(a)
	}
	return a
}

// migrationMetrics are the metrics of every MigrationController the tests start, in a registry of their own.
var (
	migrationMetrics  = migration.NewMetrics()
	migrationRegistry = func() *prometheus.Registry {
		r := prometheus.NewRegistry()
		utilruntime.Must(migrationMetrics.Register(r))
		return r
	}()
)

// startController starts a manager with the MigrationController; stop stops it and waits for it.
func startController(t *testing.T, args *config.MigrationControllerArgs) (stop func()) {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.ContentType = runtime.ContentTypeJSON
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Logger:                 ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(5))),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migration.New(mgr, args, migration.Options{Metrics: migrationMetrics}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("manager stopped with: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("manager did not stop within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// fixture is one test's namespace and nodes (labelled test=<namespace>; the test's pods select them).
type fixture struct {
	t  *testing.T
	ns string
	c  client.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "desched-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ns: ns.Name, c: env.Client}
	t.Cleanup(f.cleanUp)
	return f
}

func (f *fixture) cleanUp() {
	ctx := context.Background()
	c := f.c
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := c.List(ctx, jobs); err == nil {
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if j.Spec.PodRef != nil && j.Spec.PodRef.Namespace == f.ns {
				j.Finalizers = nil
				_ = c.Update(ctx, j)
				_ = c.Delete(ctx, j)
			}
		}
	}
	rs := &schedv1alpha1.ReservationList{}
	if err := c.List(ctx, rs); err == nil {
		for i := range rs.Items {
			if t := rs.Items[i].Spec.Template; t != nil && t.Namespace == f.ns {
				_ = c.Delete(ctx, &rs.Items[i])
			}
		}
	}
	_ = c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(f.ns), client.GracePeriodSeconds(0))
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, client.MatchingLabels{"test": f.ns}); err == nil {
		for i := range nodes.Items {
			_ = c.Delete(ctx, &nodes.Items[i])
		}
	}
	_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
}

// node creates a ready node with cpu cpus.
func (f *fixture) node(name, cpu string) string {
	f.t.Helper()
	ctx := f.t.Context()
	name = f.ns + "-" + name
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": f.ns, corev1.LabelHostname: name}}}
	if err := f.c.Create(ctx, n); err != nil {
		f.t.Fatal(err)
	}
	n.Spec.Taints = nil
	if err := f.c.Update(ctx, n); err != nil {
		f.t.Fatal(err)
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	if err := f.c.Status().Update(ctx, n); err != nil {
		f.t.Fatal(err)
	}
	return name
}

// deployment creates a Deployment of replicas and its ReplicaSet (no controller-manager runs).
func (f *fixture) deployment(name string, replicas int32) *appsv1.ReplicaSet {
	f.t.Helper()
	ctx := f.t.Context()
	labels := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: f.podSpec()}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}
	if err := f.c.Create(ctx, d); err != nil {
		f.t.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name + "-rs", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}
	if err := f.c.Create(ctx, rs); err != nil {
		f.t.Fatal(err)
	}
	return rs
}

func (f *fixture) podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		SchedulerName: "koord-scheduler",
		NodeSelector:  map[string]string{"test": f.ns},
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		}}},
	}
}

// pod creates a pod of rs; bound to node when node is not empty (then marked running and ready), else left
// to koord-scheduler.
func (f *fixture) pod(rs *appsv1.ReplicaSet, name, node string) *corev1.Pod {
	f.t.Helper()
	return f.create(rs, name, node, "")
}

// create creates a pod of rs, bound to node when it is not empty, else pending and selecting selectNode when
// that is not empty.
func (f *fixture) create(rs *appsv1.ReplicaSet, name, node, selectNode string) *corev1.Pod {
	f.t.Helper()
	ctx := f.t.Context()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: rs.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec: f.podSpec(),
	}
	p.Spec.NodeName = node
	if selectNode != "" {
		p.Spec.NodeSelector[corev1.LabelHostname] = selectNode
	}
	if err := f.c.Create(ctx, p); err != nil {
		f.t.Fatal(err)
	}
	if node != "" {
		f.markReady(p)
	}
	return p
}

// markReady sets the pod running and ready, as a kubelet would.
func (f *fixture) markReady(p *corev1.Pod) {
	f.t.Helper()
	now := metav1.Now()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}}
	if err := f.c.Status().Update(f.t.Context(), p); err != nil {
		f.t.Fatalf("mark pod %s ready: %v", p.Name, err)
	}
}

// job creates a PodMigrationJob for pod.
func (f *fixture) job(pod *corev1.Pod, mode schedv1alpha1.PodMigrationJobMode) *schedv1alpha1.PodMigrationJob {
	f.t.Helper()
	j := &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{GenerateName: f.ns + "-"},
		Spec: schedv1alpha1.PodMigrationJobSpec{
			Mode:   mode,
			PodRef: &corev1.ObjectReference{Namespace: pod.Namespace, Name: pod.Name},
		},
	}
	if err := f.c.Create(f.t.Context(), j); err != nil {
		f.t.Fatal(err)
	}
	return j
}

// waitJob waits until cond holds for the job and returns it.
func (f *fixture) waitJob(name string, what string, cond func(j *schedv1alpha1.PodMigrationJob) bool) *schedv1alpha1.PodMigrationJob {
	f.t.Helper()
	j := &schedv1alpha1.PodMigrationJob{}
	err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		if err := f.c.Get(ctx, client.ObjectKey{Name: name}, j); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(j), nil
	})
	if err != nil {
		f.t.Fatalf("PodMigrationJob %s never %s: %v; status: %s\n%s", name, what, err, dump(j.Status), f.describe())
	}
	return j
}

// waitFinished waits for the job to end.
func (f *fixture) waitFinished(name string) *schedv1alpha1.PodMigrationJob {
	f.t.Helper()
	return f.waitJob(name, "finished", func(j *schedv1alpha1.PodMigrationJob) bool {
		switch j.Status.Phase {
		case schedv1alpha1.PodMigrationJobSucceeded, schedv1alpha1.PodMigrationJobFailed, schedv1alpha1.PodMigrationJobAborted:
			return len(j.Finalizers) == 0
		}
		return false
	})
}

// waitGone waits until the object is deleted.
func (f *fixture) waitGone(obj client.Object) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		err := f.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		f.t.Fatalf("%T %s never went away: %v\n%s", obj, obj.GetName(), err, f.describe())
	}
}

// replaceWhenGone plays the ReplicaSet controller and the kubelet for pod: once it is gone it creates a
// replacement (that can go only to onNode, unless empty), waits for koord-scheduler to bind it, and marks it
// ready. It returns the replacement.
func (f *fixture) replaceWhenGone(rs *appsv1.ReplicaSet, pod *corev1.Pod, name, onNode string) *corev1.Pod {
	f.t.Helper()
	f.waitGone(pod.DeepCopy())
	p := f.create(rs, name, "", onNode)
	err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, err
		}
		return p.Spec.NodeName != "", nil
	})
	if err != nil {
		f.t.Fatalf("replacement pod %s never scheduled: %v\n%s", name, err, f.describe())
	}
	f.markReady(p)
	return p
}

// noReservations fails the test if a Reservation of the test's namespace exists.
func (f *fixture) noReservations() {
	f.t.Helper()
	list := &schedv1alpha1.ReservationList{}
	if err := f.c.List(f.t.Context(), list); err != nil {
		f.t.Fatal(err)
	}
	for _, r := range list.Items {
		if r.Spec.Template != nil && r.Spec.Template.Namespace == f.ns {
			f.t.Errorf("Reservation %s left behind (phase %s)", r.Name, r.Status.Phase)
		}
	}
}

// describe returns what a failed wait needs to be understood: the test's PodMigrationJobs, Reservations and
// pods, each with its status.
func (f *fixture) describe() string {
	ctx := context.Background()
	var b strings.Builder
	jobs := &schedv1alpha1.PodMigrationJobList{}
	if err := f.c.List(ctx, jobs); err != nil {
		fmt.Fprintf(&b, "list PodMigrationJobs: %v\n", err)
	}
	for _, j := range jobs.Items {
		if j.Spec.PodRef != nil && j.Spec.PodRef.Namespace == f.ns {
			fmt.Fprintf(&b, "PodMigrationJob %s (finalizers %v):\n%s", j.Name, j.Finalizers, dump(map[string]any{"spec": j.Spec, "status": j.Status}))
		}
	}
	reservations := &schedv1alpha1.ReservationList{}
	if err := f.c.List(ctx, reservations); err != nil {
		fmt.Fprintf(&b, "list Reservations: %v\n", err)
	}
	for _, r := range reservations.Items {
		if r.Spec.Template != nil && r.Spec.Template.Namespace == f.ns {
			fmt.Fprintf(&b, "Reservation %s (deleting %v):\n%s", r.Name, r.DeletionTimestamp != nil, dump(r.Status))
		}
	}
	pods := &corev1.PodList{}
	if err := f.c.List(ctx, pods, client.InNamespace(f.ns)); err != nil {
		fmt.Fprintf(&b, "list pods: %v\n", err)
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "Pod %s uid %s node %q phase %s deleting %v labels %v annotations %v conditions %s", p.Name, p.UID, p.Spec.NodeName,
			p.Status.Phase, p.DeletionTimestamp != nil, p.Labels, p.Annotations, dump(p.Status.Conditions))
	}
	return b.String()
}

func dump(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
