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

package descheduler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// deschedulerUser is the user koord-descheduler runs as, bound to its generated role only, so that the test
// shows the role is enough.
const deschedulerUser = "koord-descheduler-integration"

// runDescheduler runs koord-descheduler, as its command does, with the configuration in yaml (apiVersion and
// kind added) until the test ends.
func runDescheduler(t *testing.T, yaml string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := lnlWriteFile(path, "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\n"+
		"leaderElection: {leaderElect: false}\nhealthzBindAddress: 127.0.0.1:0\nmetricsBindAddress: \"0\"\n"+yaml); err != nil {
		t.Fatal(err)
	}
	c, err := descheduler.LoadConfig(descheduler.Options{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	user, err := env.UserWithRoles(t.Context(), deschedulerUser, filepath.Join("config", "rbac", "koord-descheduler", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(4)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	mgr, err := descheduler.New(ctx, user, c, clock.RealClock{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("koord-descheduler stopped with: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("koord-descheduler did not stop within 30s")
		}
	})
}

// TestLowNodeLoadMigratesOffHotNode: a node at 90% cpu loses the pod that best removes its excess to a
// PodMigrationJob, which MigrationController carries out (evicting directly here: nothing runs a replacement);
// the cool nodes keep their pods and the round moves no second pod.
func TestLowNodeLoadMigratesOffHotNode(t *testing.T) {
	ctx := t.Context()
	f := newLNLFixture(t)
	f.node("hot", 3, map[string]string{"p3": "3", "p2": "2", "p1": "1"})
	f.node("cool-a", 2, map[string]string{"a1": "1"})
	f.node("cool-b", 3, nil)

	runDescheduler(t, fmt.Sprintf(`profiles:
- name: koord-descheduler
  nodeSelector: {matchLabels: {test: %s}}
  plugins:
    balance:
      enabled: [{name: LowNodeLoad}]
  pluginConfig:
  - name: LowNodeLoad
    args:
      lowThresholds: {cpu: 45, memory: 55}
      highThresholds: {cpu: 75, memory: 80}
      anomalyCondition: {consecutiveAbnormalities: 1}
  - name: MigrationController
    args:
      defaultJobMode: EvictDirectly
      evictionPolicy: Delete
      skipCheckExpectedReplicas: true
      namespaces: {include: [%s]}
`, f.label, f.namespace))

	// Excess 1.5 cores: p2 (2 cores) removes it best.
	var job *schedulingv1alpha1.PodMigrationJob
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		f.finishTerminating()
		jobs := &schedulingv1alpha1.PodMigrationJobList{}
		if err := env.Client.List(ctx, jobs); err != nil {
			return false, err
		}
		for i := range jobs.Items {
			if jobs.Items[i].Spec.PodRef != nil && jobs.Items[i].Spec.PodRef.Namespace == f.namespace {
				job = &jobs.Items[i]
				return job.Status.Phase == schedulingv1alpha1.PodMigrationJobSucceeded, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no Succeeded PodMigrationJob for a pod of the test (last: %+v): %v", job, err)
	}
	if job.Spec.PodRef.Name != "p2" {
		t.Errorf("migrated %s, want p2", job.Spec.PodRef.Name)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: "p2"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("p2 still exists (%v)", err)
	}
	// One round (deschedulingInterval 0): no second job, every other pod stays.
	time.Sleep(2 * time.Second)
	jobs := &schedulingv1alpha1.PodMigrationJobList{}
	if err := env.Client.List(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range jobs.Items {
		if j.Spec.PodRef != nil && j.Spec.PodRef.Namespace == f.namespace {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PodMigrationJobs for the test's pods, want 1", n)
	}
	events := &corev1.EventList{}
	if err := env.Client.List(ctx, events, client.InNamespace(f.namespace)); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events.Items {
		if e.Reason == "LowNodeLoadMigrating" && e.InvolvedObject.Name == "p2" {
			found = true
		}
	}
	if !found {
		t.Error("no LowNodeLoadMigrating event on p2")
	}
}

// finishTerminating removes the test's pods being deleted, as their kubelet would.
func (f *lnlFixture) finishTerminating() {
	pods := &corev1.PodList{}
	if err := env.Client.List(f.t.Context(), pods, client.InNamespace(f.namespace)); err != nil {
		f.t.Fatal(err)
	}
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp != nil {
			_ = env.Client.Delete(f.t.Context(), &pods.Items[i], client.GracePeriodSeconds(0))
		}
	}
}

// lnlFixture holds a test's namespace, its ReplicaSet owning its pods, and nodes labelled with the test's name.
type lnlFixture struct {
	t         *testing.T
	namespace string
	label     string
	owner     metav1.OwnerReference
}

func newLNLFixture(t *testing.T) *lnlFixture {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lnl-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := &lnlFixture{t: t, namespace: ns.Name, label: ns.Name}
	rs := lnlReplicaSet(ns.Name, "web", 4)
	if err := env.Client.Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	f.owner = *metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(f.namespace), client.GracePeriodSeconds(0))
		nodes := &corev1.NodeList{}
		_ = env.Client.List(ctx, nodes, client.MatchingLabels{"test": f.label})
		for i := range nodes.Items {
			_ = env.Client.Delete(ctx, &nodes.Items[i])
			_ = env.Client.Delete(ctx, &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: nodes.Items[i].Name}})
		}
		jobs := &schedulingv1alpha1.PodMigrationJobList{}
		_ = env.Client.List(ctx, jobs)
		for i := range jobs.Items {
			if jobs.Items[i].Spec.PodRef != nil && jobs.Items[i].Spec.PodRef.Namespace == f.namespace {
				_ = env.Client.Delete(ctx, &jobs.Items[i])
			}
		}
		_ = env.Client.Delete(ctx, ns)
	})
	return f
}

// node creates a ready node of 10 cores and 100Gi, its pods (name → cpu cores used) owned by the fixture's
// ReplicaSet, and its NodeMetric: systemCores plus the pods' usage.
func (f *lnlFixture) node(suffix string, systemCores int, pods map[string]string) {
	f.t.Helper()
	ctx := f.t.Context()
	name := f.label + "-" + suffix
	n := utiltesting.MakeNode(name).Label("test", f.label).Obj()
	if err := env.Client.Create(ctx, n); err != nil {
		f.t.Fatal(err)
	}
	n.Status.Allocatable = utiltesting.Resources("cpu", "10", "memory", "100Gi", "pods", "110")
	n.Status.Capacity = n.Status.Allocatable
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, n); err != nil {
		f.t.Fatal(err)
	}
	// The apiserver taints new nodes not-ready; no node lifecycle controller runs here to lift it.
	n.Spec.Taints = nil
	if err := env.Client.Update(ctx, n); err != nil {
		f.t.Fatal(err)
	}
	m := utiltesting.MakeNodeMetric(name).SystemUsage(utiltesting.Resources("cpu", fmt.Sprint(systemCores), "memory", "1Gi"))
	for pod, cores := range pods {
		p := utiltesting.MakePod(pod).Namespace(f.namespace).Node(name).Label("app", "web").Req(utiltesting.Resources("cpu", "100m")).Obj()
		p.OwnerReferences = []metav1.OwnerReference{f.owner}
		p.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox", Resources: p.Spec.Containers[0].Resources}}
		if err := env.Client.Create(ctx, p); err != nil {
			f.t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if err := env.Client.Status().Update(ctx, p); err != nil {
			f.t.Fatal(err)
		}
		m = m.Pod(f.namespace, pod, "", utiltesting.Resources("cpu", cores))
	}
	metric := m.Obj()
	status := *metric.Status.DeepCopy()
	if err := env.Client.Create(ctx, metric); err != nil {
		f.t.Fatal(err)
	}
	metric.Status = status
	metric.Status.UpdateTime = &metav1.Time{Time: time.Now()}
	if err := env.Client.Status().Update(ctx, metric); err != nil {
		f.t.Fatal(err)
	}
}

func lnlWriteFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o600) }

// lnlReplicaSet is a ReplicaSet of replicas pods; nothing runs it, it only owns the test's pods.
func lnlReplicaSet(namespace, name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}
