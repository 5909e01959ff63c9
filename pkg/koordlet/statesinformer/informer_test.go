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

package statesinformer

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	koordfake "github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
)

const node = "n1"

func makeNode(name, rv string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
}

func makePod(ns, name, nodeName string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

func makeNodeSLO(name string, threshold int64) *slov1alpha1.NodeSLO {
	return &slov1alpha1.NodeSLO{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
			MemoryEvictThresholdPercent: ptr.To(threshold),
		}},
	}
}

func makeNodeMetric(name string) *slov1alpha1.NodeMetric {
	return &slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// podNames returns namespace/name of each pod.
func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// sloThreshold returns the memory evict threshold of o, or -1 for a nil NodeSLO.
func sloThreshold(o *slov1alpha1.NodeSLO) int64 {
	if o == nil {
		return -1
	}
	return *o.Spec.ResourceUsedThresholdWithBE.MemoryEvictThresholdPercent
}

// wait blocks until ch fires; the timeout only keeps a broken test from hanging.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no notification for %s", what)
	}
}

// waitUntil polls cond until it holds; the timeout only keeps a broken test from hanging.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// drain empties the pending notifications of ch.
func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

func TestInformerWithFakeClientsets(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer()
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))

	kube := kubefake.NewClientset(
		makeNode(node, ""), makeNode("n2", ""),
		makePod("default", "running", node, corev1.PodRunning),
		makePod("default", "done", node, corev1.PodSucceeded),
		makePod("default", "failed", node, corev1.PodFailed),
		makePod("other", "pending", node, corev1.PodPending),
		makePod("default", "elsewhere", "n2", corev1.PodRunning),
	)
	koord := koordfake.NewSimpleClientset(
		makeNodeSLO(node, 70), makeNodeSLO("n2", 10),
		makeNodeMetric(node), makeNodeMetric("n2"),
	)
	s := New(kube, koord, node)
	if s.HasSynced() {
		t.Error("HasSynced before Run = true, want false")
	}
	podsCh, sloCh, metricCh := s.Subscribe(KindPods), s.Subscribe(KindNodeSLO), s.Subscribe(KindNodeMetric)
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	if !s.WaitForCacheSync(ctx) {
		t.Fatal("informer did not sync")
	}

	// The fake clientsets ignore field selectors: everything below that is of another node was filtered by the
	// event handlers.
	type state struct {
		Node       string
		Pods       []string
		NodeSLO    int64
		NodeMetric string
	}
	get := func() state {
		st := state{Pods: podNames(s.Pods()), NodeSLO: sloThreshold(s.NodeSLO())}
		if n := s.Node(); n != nil {
			st.Node = n.Name
		}
		if m := s.NodeMetric(); m != nil {
			st.NodeMetric = m.Name
		}
		return st
	}
	want := state{Node: node, Pods: []string{"default/running", "other/pending"}, NodeSLO: 70, NodeMetric: node}
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Fatalf("state after sync (-want,+got):\n%s", diff)
	}
	drain(podsCh)
	drain(sloCh)
	drain(metricCh)

	// A pod of another node is ignored; one of ours shows up. Events of one informer arrive in order, so once
	// "new" is there, "foreign" has been handled.
	mustCreatePod := func(p *corev1.Pod) {
		t.Helper()
		if _, err := kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mustCreatePod(makePod("default", "foreign", "n2", corev1.PodRunning))
	mustCreatePod(makePod("default", "new", node, corev1.PodRunning))
	waitUntil(t, "pod default/new", func() bool { return len(s.Pods()) == 3 })
	want.Pods = []string{"default/new", "default/running", "other/pending"}
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("state after pod creations (-want,+got):\n%s", diff)
	}
	wait(t, podsCh, "pods")

	// A pod that terminates leaves Pods.
	done := makePod("default", "running", node, corev1.PodSucceeded)
	if _, err := kube.CoreV1().Pods("default").Update(ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "pod default/running to terminate", func() bool { return len(s.Pods()) == 2 })
	want.Pods = []string{"default/new", "other/pending"}
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("state after a pod terminated (-want,+got):\n%s", diff)
	}

	// An update of another node's NodeSLO is ignored, then ours is picked up.
	if _, err := koord.SloV1alpha1().NodeSLOs().Update(ctx, makeNodeSLO("n2", 11), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := koord.SloV1alpha1().NodeSLOs().Update(ctx, makeNodeSLO(node, 80), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(t, sloCh, "NodeSLO")
	want.NodeSLO = 80
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("state after the NodeSLO update (-want,+got):\n%s", diff)
	}

	// Deleting the NodeSLO keeps the last one and says so.
	if err := koord.SloV1alpha1().NodeSLOs().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the NodeSLO deletion log", func() bool {
		return strings.Contains(logs.String(), "NodeSLO was deleted, keeping the last one seen")
	})
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("state after the NodeSLO deletion (-want,+got):\n%s", diff)
	}

	// Deleting the NodeMetric forgets it.
	if err := koord.SloV1alpha1().NodeMetrics().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(t, metricCh, "NodeMetric")
	want.NodeMetric = ""
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("state after the NodeMetric deletion (-want,+got):\n%s", diff)
	}

	// Deleting a pod forgets it.
	if err := kube.CoreV1().Pods("other").Delete(ctx, "pending", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "pod other/pending to go", func() bool { return len(s.Pods()) == 1 })
	want.Pods = []string{"default/new"}
	if diff := cmp.Diff(want, get()); diff != "" {
		t.Errorf("state after the pod deletion (-want,+got):\n%s", diff)
	}
}

func TestHandlers(t *testing.T) {
	type state struct {
		Node       string
		Pods       []string
		NodeSLO    int64
		NodeMetric bool
		Notified   []Kind
	}
	tests := map[string]struct {
		events func(s *Informer, logger klog.Logger)
		want   state
	}{
		"foreign-objects-ignored": {
			events: func(s *Informer, logger klog.Logger) {
				s.setNode(logger, makeNode("n2", "1"))
				s.setPod(logger, makePod("default", "a", "n2", corev1.PodRunning))
				s.setNodeSLO(logger, makeNodeSLO("n2", 10))
				s.setNodeMetric(logger, makeNodeMetric("n2"))
				s.deleteNodeMetric(logger, "n2")
			},
			want: state{NodeSLO: -1},
		},
		"own-objects-recorded": {
			events: func(s *Informer, logger klog.Logger) {
				s.setNode(logger, makeNode(node, "1"))
				s.setPod(logger, makePod("default", "b", node, corev1.PodRunning))
				s.setPod(logger, makePod("default", "a", node, corev1.PodPending))
				s.setPod(logger, makePod("default", "c", node, corev1.PodFailed))
				s.setNodeSLO(logger, makeNodeSLO(node, 70))
				s.setNodeMetric(logger, makeNodeMetric(node))
			},
			want: state{
				Node: node, Pods: []string{"default/a", "default/b"}, NodeSLO: 70, NodeMetric: true,
				Notified: []Kind{KindNode, KindPods, KindNodeSLO, KindNodeMetric},
			},
		},
		"pod-moved-to-another-node-dropped": {
			events: func(s *Informer, logger klog.Logger) {
				s.setPod(logger, makePod("default", "a", node, corev1.PodRunning))
				s.setPod(logger, makePod("default", "a", "n2", corev1.PodRunning))
			},
			want: state{NodeSLO: -1, Notified: []Kind{KindPods}},
		},
		"deletions": {
			events: func(s *Informer, logger klog.Logger) {
				s.setNode(logger, makeNode(node, "1"))
				s.setPod(logger, makePod("default", "a", node, corev1.PodRunning))
				s.setNodeSLO(logger, makeNodeSLO(node, 70))
				s.setNodeMetric(logger, makeNodeMetric(node))
				s.deleteNode(logger, node)
				s.deletePod(logger, "default/a")
				s.deleteNodeSLO(logger, node)
				s.deleteNodeMetric(logger, node)
			},
			want: state{
				Node: node, NodeSLO: 70,
				Notified: []Kind{KindNode, KindPods, KindNodeSLO, KindNodeMetric},
			},
		},
		"unknown-deletions-ignored": {
			events: func(s *Informer, logger klog.Logger) {
				s.deletePod(logger, "default/none")
				s.deleteNodeMetric(logger, node)
				s.deleteNodeSLO(logger, node)
			},
			want: state{NodeSLO: -1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			s := New(kubefake.NewClientset(), koordfake.NewSimpleClientset(), node)
			kinds := []Kind{KindNode, KindPods, KindNodeSLO, KindNodeMetric}
			chans := map[Kind]<-chan struct{}{}
			for _, k := range kinds {
				chans[k] = s.Subscribe(k)
			}
			tc.events(s, logger)
			got := state{Pods: podNames(s.Pods()), NodeSLO: sloThreshold(s.NodeSLO()), NodeMetric: s.NodeMetric() != nil}
			if n := s.Node(); n != nil {
				got.Node = n.Name
			}
			for _, k := range kinds {
				select {
				case <-chans[k]:
					got.Notified = append(got.Notified, k)
				default:
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("state (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSubscribeCoalesces(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	s := New(kubefake.NewClientset(), koordfake.NewSimpleClientset(), node)
	a, b := s.Subscribe(KindNode), s.Subscribe(KindNode)
	for i, rv := range []string{"1", "2", "2", "3"} {
		n := makeNode(node, rv)
		n.Labels = map[string]string{"i": string(rune('0' + i))}
		s.setNode(logger, n)
	}
	var got []int
	for _, ch := range []<-chan struct{}{a, b} {
		n := 0
		for done := false; !done; {
			select {
			case <-ch:
				n++
			default:
				done = true
			}
		}
		got = append(got, n)
	}
	if diff := cmp.Diff([]int{1, 1}, got); diff != "" {
		t.Errorf("pending notifications per subscriber (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff("3", s.Node().ResourceVersion); diff != "" {
		t.Errorf("node resource version (-want,+got):\n%s", diff)
	}
	// Identical resource version: no notification.
	s.setNode(logger, makeNode(node, "3"))
	select {
	case <-a:
		t.Error("a replay of the same resource version notified")
	default:
	}
}

func TestRunTwice(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	s := New(kubefake.NewClientset(), koordfake.NewSimpleClientset(), node)
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	if !s.WaitForCacheSync(ctx) {
		t.Fatal("informer did not sync")
	}
	// The second call returns at once instead of starting more informers (or the test would hang here).
	s.Run(ctx)
	if !s.HasSynced() {
		t.Error("HasSynced after a second Run = false, want true")
	}
	cancel()
	wg.Wait()
}
