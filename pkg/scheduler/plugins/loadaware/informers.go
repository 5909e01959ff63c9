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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// watchNodeMetrics feeds NodeMetrics to the node states, from the plugin's informer and from the queueing
// hint (see plugins.Feed), and waits until the states have every NodeMetric.
func (p *Plugin) watchNodeMetrics(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	p.nodeMetrics = plugins.NewFeed(p.nodes.UpdateNodeMetric, p.nodes.DeleteNodeMetric)
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	reg, err := factory.Slo().V1alpha1().NodeMetrics().Informer().AddEventHandler(p.nodeMetrics.Handler(klog.FromContext(ctx)))
	if err != nil {
		return fmt.Errorf("watch NodeMetrics: %w", err)
	}
	return informers.Sync(ctx, reg)
}

// watchPods keeps the assigned pods in step with the pods bound to nodes, whoever bound them. Every deleted
// pod is forgotten, bound or not: a pod a Bind plugin placed without binding it (a Reservation's reserve pod)
// was recorded by Reserve and is deleted without ever having a node.
func (p *Plugin) watchPods(ctx context.Context, h fwk.Handle) error {
	kube, err := plugins.KubeInformers(h)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	return p.synced.Watch("pods", kube.Core().V1().Pods().Informer(), plugins.Handlers(
		func(pod *corev1.Pod) {
			if pod.Spec.NodeName != "" {
				p.podBound(logger, pod)
			}
		},
		func(pod *corev1.Pod) { p.nodes.Remove(pod.UID) },
	))
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
