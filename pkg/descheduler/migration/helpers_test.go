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

package migration

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/test/testenv"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// defaultArgs returns defaulted MigrationControllerArgs, changed by mutate.
func defaultArgs(mutate ...func(a *config.MigrationControllerArgs)) *config.MigrationControllerArgs {
	a := &config.MigrationControllerArgs{}
	config.SetDefaultsMigrationControllerArgs(a)
	for _, m := range mutate {
		m(a)
	}
	return a
}

// newTestController returns a Controller over a fake client holding objs.
func newTestController(t *testing.T, args *config.MigrationControllerArgs, objs ...client.Object) *Controller {
	t.Helper()
	s, err := testenv.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...)
	for _, i := range indexes {
		b = b.WithIndex(i.obj, i.field, i.extract)
	}
	c := b.Build()
	skip := map[config.EvictionGate]bool{}
	for _, g := range args.SkipEvictionGates {
		skip[g] = true
	}
	return &Controller{
		args: args, skip: skip, client: c, apiReader: c, clock: testingclock.NewFakeClock(testNow),
		recorder: events.NewFakeRecorder(100), logger: logr.Discard(), metrics: NewMetrics(),
		finder: &workloadFinder{c: c}, limits: &limits{args: args, skip: skip}, objects: newObjectLimiter(args),
		passed: map[types.UID]bool{},
	}
}

// podOption changes a test pod.
type podOption func(p *corev1.Pod)

// makePod returns a running, ready pod on node n1 in namespace ns.
func makePod(name string, opts ...podOption) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(testNow)},
		Spec: corev1.PodSpec{
			NodeName: "n1", SchedulerName: "koord-scheduler",
			Containers: []corev1.Container{{Name: "c", Image: "i"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// ownedBy makes the pod controlled by the ReplicaSet rs.
func ownedBy(rs *appsv1.ReplicaSet) podOption {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	}
}

// makeDeployment returns a Deployment of replicas and its ReplicaSet.
func makeDeployment(name string, replicas int32) (*appsv1.Deployment, *appsv1.ReplicaSet) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-deploy-" + name)},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name + "-rs", UID: types.UID("uid-rs-" + name),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)},
	}
	return d, rs
}

func mustParse(s string) resource.Quantity { return resource.MustParse(s) }
