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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

func TestNodeChanged(t *testing.T) {
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: "n", Labels: map[string]string{"pool": "a"},
				Annotations: map[string]string{"a": "1", extension.AnnotationColocationExplanation: "{}"},
			},
			Status: corev1.NodeStatus{Capacity: rl("10", "10Gi"), Allocatable: rl("10", "10Gi")},
		}
	}
	tests := map[string]struct {
		change func(n *corev1.Node)
		want   bool
	}{
		"heartbeat only":            {change: func(n *corev1.Node) { n.Status.Conditions = []corev1.NodeCondition{{Type: "Ready"}} }, want: false},
		"explanation only":          {change: func(n *corev1.Node) { n.Annotations[extension.AnnotationColocationExplanation] = "{ }" }, want: false},
		"explanation removed":       {change: func(n *corev1.Node) { delete(n.Annotations, extension.AnnotationColocationExplanation) }, want: false},
		"same quantity, other form": {change: func(n *corev1.Node) { n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("10000m") }, want: false},
		"capacity":                  {change: func(n *corev1.Node) { n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("12") }, want: true},
		"allocatable batch-cpu":     {change: func(n *corev1.Node) { n.Status.Allocatable[extension.BatchCPU] = resource.MustParse("1k") }, want: true},
		"label":                     {change: func(n *corev1.Node) { n.Labels["pool"] = "b" }, want: true},
		"other annotation":          {change: func(n *corev1.Node) { n.Annotations["a"] = "2" }, want: true},
		"annotation added":          {change: func(n *corev1.Node) { n.Annotations["b"] = "" }, want: true},
		"annotation swapped for explanation": {
			change: func(n *corev1.Node) {
				delete(n.Annotations, "a")
				n.Annotations["b"] = "1"
			},
			want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			oldNode, newNode := base(), base()
			tc.change(newNode)
			if got := nodeChanged().Update(event.UpdateEvent{ObjectOld: oldNode, ObjectNew: newNode}); got != tc.want {
				t.Errorf("nodeChanged().Update() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeMetricChanged(t *testing.T) {
	oldNM := &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "1"}}
	sameStatus := oldNM.DeepCopy()
	sameStatus.ResourceVersion = "2"
	sameStatus.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{}
	newStatus := oldNM.DeepCopy()
	newStatus.Status.UpdateTime = &metav1.Time{Time: start}
	p := nodeMetricChanged()
	if p.Update(event.UpdateEvent{ObjectOld: oldNM, ObjectNew: sameStatus}) {
		t.Errorf("a spec-only change passed")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: oldNM, ObjectNew: newStatus}) {
		t.Errorf("a status change did not pass")
	}
	if !p.Create(event.CreateEvent{Object: oldNM}) || !p.Delete(event.DeleteEvent{Object: oldNM}) {
		t.Errorf("creations and deletions must pass")
	}
}

// drain returns the names queued in q.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	var names []string
	for q.Len() > 0 {
		item, _ := q.Get()
		names = append(names, item.Name)
		q.Done(item)
	}
	slices.Sort(names)
	return names
}

func TestPodEventHandler(t *testing.T) {
	pod := func(node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{}},
			Spec:       corev1.PodSpec{NodeName: node},
			Status:     corev1.PodStatus{Phase: phase},
		}
	}
	labelled := func(key, value string) *corev1.Pod {
		p := pod("n1", corev1.PodRunning)
		p.Labels[key] = value
		return p
	}
	tests := map[string]struct {
		send func(ctx *testCtx)
		want []string
	}{
		"create on a node": {send: func(c *testCtx) { c.create(pod("n1", corev1.PodPending)) }, want: []string{"n1"}},
		"create unbound":   {send: func(c *testCtx) { c.create(pod("", corev1.PodPending)) }},
		"binding":          {send: func(c *testCtx) { c.update(pod("", corev1.PodPending), pod("n1", corev1.PodPending)) }, want: []string{"n1"}},
		"phase change":     {send: func(c *testCtx) { c.update(pod("n1", corev1.PodRunning), pod("n1", corev1.PodSucceeded)) }, want: []string{"n1"}},
		"priority class label": {
			send: func(c *testCtx) {
				c.update(pod("n1", corev1.PodRunning), labelled(extension.LabelPodPriorityClass, "koord-batch"))
			},
			want: []string{"n1"},
		},
		"qos label": {
			send: func(c *testCtx) { c.update(pod("n1", corev1.PodRunning), labelled(extension.LabelPodQoS, "BE")) },
			want: []string{"n1"},
		},
		"other label":   {send: func(c *testCtx) { c.update(pod("n1", corev1.PodRunning), labelled("app", "x")) }},
		"moved":         {send: func(c *testCtx) { c.update(pod("n1", corev1.PodRunning), pod("n2", corev1.PodRunning)) }, want: []string{"n1", "n2"}},
		"delete":        {send: func(c *testCtx) { c.delete(pod("n2", corev1.PodRunning)) }, want: []string{"n2"}},
		"not a pod":     {send: func(c *testCtx) { c.create(&corev1.Node{}) }},
		"generic event": {send: func(c *testCtx) { c.generic(pod("n3", corev1.PodRunning)) }, want: []string{"n3"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newTestCtx(t)
			tc.send(c)
			if diff := cmp.Diff(tc.want, drain(c.queue)); diff != "" {
				t.Errorf("queued nodes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestAllNodes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture()
	e := newEnv(t, f, interceptor.Funcs{})
	if err := e.client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other-node"}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range e.reconciler.allNodes(ctx, nil) {
		got = append(got, r.Name)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"other-node", "test-node"}, got); diff != "" {
		t.Errorf("allNodes() (-want,+got):\n%s", diff)
	}
}

func TestPodNodeNameIndex(t *testing.T) {
	if diff := cmp.Diff([]string{"n1"}, podNodeName(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}})); diff != "" {
		t.Errorf("podNodeName() (-want,+got):\n%s", diff)
	}
	if got := podNodeName(&corev1.Pod{}); got != nil {
		t.Errorf("podNodeName() of an unbound pod = %v, want nil", got)
	}
}

// testCtx sends events to podEventHandler and collects what it queues.
type testCtx struct {
	t     *testing.T
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func newTestCtx(t *testing.T) *testCtx {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	return &testCtx{t: t, queue: q}
}

func (c *testCtx) create(obj client.Object) {
	_, ctx := ktesting.NewTestContext(c.t)
	podEventHandler().Create(ctx, event.CreateEvent{Object: obj}, c.queue)
}

func (c *testCtx) update(oldObj, newObj client.Object) {
	_, ctx := ktesting.NewTestContext(c.t)
	podEventHandler().Update(ctx, event.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj}, c.queue)
}

func (c *testCtx) delete(obj client.Object) {
	_, ctx := ktesting.NewTestContext(c.t)
	podEventHandler().Delete(ctx, event.DeleteEvent{Object: obj}, c.queue)
}

func (c *testCtx) generic(obj client.Object) {
	_, ctx := ktesting.NewTestContext(c.t)
	podEventHandler().Generic(ctx, event.GenericEvent{Object: obj}, c.queue)
}
