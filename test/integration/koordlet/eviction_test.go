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

package koordlet

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/memoryevict"
)

// TestMemoryEvictionThroughTheEvictionAPI runs the agent with BEMemoryEvict on a node whose memory usage is 85 %
// with memoryEvictThresholdPercent 70, and checks that the BE pod using the most memory, and only it, is evicted
// through the Eviction API, with a Warning Event on it that carries the numbers, and that an LS pod is never a
// candidate.
func TestMemoryEvictionThroughTheEvictionAPI(t *testing.T) {
	const capacity = 10 * gi
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "4", memory: capacity,
		busyCores: 1, memUsed: capacity * 85 / 100, memUsedWithCache: 9 * gi,
		// Eviction starts off, so that the agent has samples of every pod before it may choose.
		slo: slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
			Enable: ptr.To(false), MemoryEvictThresholdPercent: ptr.To[int64](70),
		}},
	})
	big := n.addPod(podConfig{
		name: "be-big", qos: extension.QoSBE, priorityClass: extension.PriorityBatch,
		cpu: 0.2, memory: 2*gi + 256*mi, inactiveFile: 256 * mi,
	})
	small := n.addPod(podConfig{
		name: "be-small", qos: extension.QoSBE, priorityClass: extension.PriorityBatch,
		cpu: 0.2, memory: 512*mi + 64*mi, inactiveFile: 64 * mi,
	})
	// The LS pod uses the most memory and asks to be evicted first: were LS pods candidates, it would go first.
	ls := n.addPod(podConfig{
		name: "ls", qos: extension.QoSLS, priorityClass: extension.PriorityProd,
		annotations: map[string]string{extension.AnnotationPodEvictionPriority: "1"},
		requests:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("3Gi")},
		cpu:         0.3, memory: 3*gi + 128*mi, inactiveFile: 128 * mi,
	})
	startAgent(t, koordletConfig(t), n, "BEMemoryEvict=true")
	n.waitForPodsReported(big, small, ls)

	// Usage 85 % >= 70 %: release down to 70 − 2 = 68 %, i.e. 8.5Gi − 6.8Gi = 1.7Gi. be-big's 2Gi is enough.
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.ResourceUsedThresholdWithBE.Enable = ptr.To(true) })
	eventually(t, "the BE pod with the most memory was not evicted", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(big), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})

	var event corev1.Event
	eventually(t, "no eviction Event on the evicted pod", func(ctx context.Context) (bool, error) {
		events := &corev1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(n.name)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.UID == big.UID && e.Reason == evictor.EventReasonEvicted {
				event = e
				return true, nil
			}
		}
		return false, nil
	})
	type eventSummary struct {
		Type, Reason, Kind, Name, Component, Host string
	}
	want := eventSummary{Type: corev1.EventTypeWarning, Reason: evictor.EventReasonEvicted, Kind: "Pod", Name: big.Name, Component: koordlet.Component, Host: n.name}
	got := eventSummary{Type: event.Type, Reason: event.Reason, Kind: event.InvolvedObject.Kind, Name: event.InvolvedObject.Name,
		Component: event.Source.Component, Host: event.Source.Host}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("eviction Event (-want,+got):\n%s", diff)
	}
	for _, number := range []string{"reason: " + memoryevict.Reason, "85%", "70%"} {
		if !strings.Contains(event.Message, number) {
			t.Errorf("eviction Event message %q does not carry %s", event.Message, number)
		}
	}

	// The evicted pod's memory is freed, as kubelet would do: usage drops to 6.5Gi, 65 %, below the threshold.
	n.host.removeCgroup(n.podDir(big))
	n.host.setMemInfo(capacity, capacity-(9*gi-2*gi), capacity-(capacity*85/100-2*gi))
	// A report whose 10 s average is 6.5Gi was built from samples all taken after the drop: by then the agent has
	// run well past the eviction cool-down (4 s) with usage below the threshold, and must have left the others.
	n.waitForReport("the agent did not see the memory freed", func(s *slov1alpha1.NodeMetricStatus) bool {
		return s.NodeMetric.NodeUsage.ResourceList.Memory().Value() == capacity*85/100-2*gi
	})
	for _, p := range []*corev1.Pod{small, ls} {
		got := &corev1.Pod{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(p), got); err != nil {
			t.Errorf("pod %s: %v", p.Name, err)
		} else if got.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted", p.Name)
		}
	}
	events := &corev1.EventList{}
	if err := env.Client.List(t.Context(), events, client.InNamespace(n.name)); err != nil {
		t.Fatal(err)
	}
	var evicted []string
	for _, e := range events.Items {
		if e.Reason == evictor.EventReasonEvicted {
			evicted = append(evicted, e.InvolvedObject.Name)
		}
	}
	if diff := cmp.Diff([]string{big.Name}, evicted); diff != "" {
		t.Errorf("pods with an eviction Event (-want,+got):\n%s", diff)
	}
	t.Logf("Eviction Event: %s", event.Message)
}
