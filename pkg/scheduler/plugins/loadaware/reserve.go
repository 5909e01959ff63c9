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

package loadaware

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Reserve records the pod on the node in the assign cache, so that it counts on the node until the node's
// NodeMetric reports its usage. It always returns Success.
func (p *Plugin) Reserve(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	ps := p.podStateOf(ctx, cycle, pod)
	p.nodes.Assign(nodeName, p.assignedPod(klog.FromContext(ctx), pod, ps.Estimate, p.clock.Now()))
	return nil
}

// Unreserve forgets the pod on the node.
func (p *Plugin) Unreserve(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, nodeName string) {
	p.nodes.RemoveFrom(nodeName, pod.UID)
}

// watchPods keeps the assigned pods in step with the pods bound to nodes, whoever bound them. The scheduler
// starts its informers after building plugins.
func (p *Plugin) watchPods(ctx context.Context, h fwk.Handle) error {
	logger := klog.FromContext(ctx)
	informers := h.SharedInformerFactory()
	if informers == nil {
		return errors.New("the framework handle has no informer factory")
	}
	reg, err := informers.Core().V1().Pods().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod := podOf(obj); pod != nil && pod.Spec.NodeName != "" {
				p.podBound(logger, pod)
			}
		},
		UpdateFunc: func(_, obj any) {
			if pod := podOf(obj); pod != nil && pod.Spec.NodeName != "" {
				p.podBound(logger, pod)
			}
		},
		// Every deleted pod is forgotten, bound or not: a pod a Bind plugin placed without binding it (a
		// Reservation's reserve pod) was recorded by Reserve and is deleted without ever having a node.
		DeleteFunc: func(obj any) {
			if pod := podOf(obj); pod != nil {
				p.nodes.Remove(pod.UID)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	p.podsSynced = reg.HasSynced
	return nil
}

// podBound records a pod bound to a node, or forgets it once it has terminated.
func (p *Plugin) podBound(logger klog.Logger, pod *corev1.Pod) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		p.nodes.Remove(pod.UID)
		return
	}
	p.nodes.Assign(pod.Spec.NodeName, p.assignedPod(logger, pod, p.estimate(logger, pod), scheduledAt(pod)))
}

// scheduledAt is when pod was bound: the time its PodScheduled condition became true, else its creation.
func scheduledAt(pod *corev1.Pod) time.Time {
	if t := conditionTrueSince(pod, corev1.PodScheduled); !t.IsZero() {
		return t
	}
	return pod.CreationTimestamp.Time
}

// podOf returns the pod of an event, tombstones of deleted pods included, or nil.
func podOf(obj any) *corev1.Pod {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o
	case toolscache.DeletedFinalStateUnknown:
		pod, _ := o.Obj.(*corev1.Pod)
		return pod
	}
	return nil
}
