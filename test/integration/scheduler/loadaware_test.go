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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
)

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q), corev1.ResourceMemory: resource.MustParse("100Mi")}
}

// TestLoadAwareScheduling: pods go to the least loaded node and never to the overloaded one; a pod that fits
// nowhere stays pending with the reason in its PodScheduled condition, and schedules as soon as a NodeMetric
// reports room for it.
func TestLoadAwareScheduling(t *testing.T) {
	f := newFixture(t)
	fresh := 5 * time.Second
	cool := f.node("cool", "1", fresh, nil)
	warm := f.node("warm", "4", fresh, nil)
	hot := f.node("hot", "8", fresh, nil)
	startScheduler(t)

	// Each pod is estimated at 850m: 8.5% of a node. The first goes to the coolest node.
	first := f.pod("first", cpu("1"), nil)
	if got := f.boundNode(first); got != cool {
		t.Fatalf("first pod went to %s, want the least loaded node %s", got, cool)
	}
	placed := map[string]int{cool: 1}
	for i := range 3 {
		placed[f.boundNode(f.pod(fmt.Sprintf("more-%d", i), cpu("1"), nil))]++
	}
	if placed[hot] != 0 {
		t.Errorf("pods per node = %v: the node at 80%% cpu got pods", placed)
	}
	if placed[cool] < placed[warm] {
		t.Errorf("pods per node = %v: the node at 10%% cpu got fewer than the one at 40%%", placed)
	}

	// 6 cpus are estimated at 5.1: 51% more than any node can take below 65%. The message names the usage
	// each node would reach; the hot one's is 80% + 51%.
	big := f.pod("big", cpu("6"), nil)
	msg := f.unschedulable(big)
	for _, want := range []string{"0/3 nodes are available", "1 node cpu usage 131 percent > threshold 65 percent"} {
		if !strings.Contains(msg, want) {
			t.Errorf("PodScheduled message %q does not contain %q", msg, want)
		}
	}
	if n := strings.Count(msg, "> threshold 65 percent"); n != 3 {
		t.Errorf("PodScheduled message %q names %d nodes over the cpu threshold, want 3", msg, n)
	}
	// kube-scheduler writes the message into a FailedScheduling Event as a format string: it must come out
	// intact there too.
	f.eventually("no intact FailedScheduling event for the pending pod", func(ctx context.Context) (bool, error) {
		events := &corev1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(f.namespace)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && e.InvolvedObject.Name == big.Name {
				if strings.Contains(e.Message, "%!") {
					return false, fmt.Errorf("event message %q is garbled", e.Message)
				}
				return strings.Contains(e.Message, "1 node cpu usage 131 percent > threshold 65 percent"), nil
			}
		}
		return false, nil
	})

	// The hot node cools down: the pending pod fits there now, and the NodeMetric update requeues it.
	f.report(hot, "0", 0)
	if got := f.boundNode(big); got != hot {
		t.Errorf("pending pod went to %s after %s reported low usage, want %s", got, hot, hot)
	}
}

// TestExpiredNodeMetric: a node whose NodeMetric is stale takes no pods, and says why.
func TestExpiredNodeMetric(t *testing.T) {
	f := newFixture(t)
	stale := f.node("stale", "1", 10*time.Minute, nil)
	startScheduler(t)

	p := f.pod("p", cpu("1"), nil)
	msg := f.unschedulable(p)
	if want := "node metric expired: updated 10m"; !strings.Contains(msg, want) {
		t.Errorf("PodScheduled message %q does not contain %q", msg, want)
	}
	f.report(stale, "1", 0)
	if got := f.boundNode(p); got != stale {
		t.Errorf("pod went to %s, want %s once its NodeMetric is fresh", got, stale)
	}
}

// TestBEPodWithBatchResources: a BE pod that requests only batch resources binds to a node that offers batch
// resources, never to one that offers none.
func TestBEPodWithBatchResources(t *testing.T) {
	ensurePriorityClass(t, extension.PriorityBatch)
	f := newFixture(t)
	fresh := 5 * time.Second
	// The node without batch resources is the less loaded one, so load alone would pick it.
	batch := f.node("batch", "3", fresh, corev1.ResourceList{
		extension.BatchCPU:    resource.MustParse("8000"),
		extension.BatchMemory: resource.MustParse("8Gi"),
	})
	plain := f.node("plain", "1", fresh, nil)
	startScheduler(t)

	batchRequests := corev1.ResourceList{
		extension.BatchCPU:    resource.MustParse("1000"),
		extension.BatchMemory: resource.MustParse("1Gi"),
	}
	for i := range 3 {
		p := f.pod(fmt.Sprintf("be-%d", i), batchRequests, func(p *corev1.Pod) {
			p.Labels = map[string]string{extension.LabelPodQoS: string(extension.QoSBE)}
			p.Spec.PriorityClassName = string(extension.PriorityBatch)
		})
		if got := f.boundNode(p); got != batch {
			t.Errorf("BE pod %s went to %s, want %s, the node offering batch resources (not %s)", p.Name, got, batch, plain)
		}
	}
}
