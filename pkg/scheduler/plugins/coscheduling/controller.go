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

package coscheduling

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// itemKind is what a work item asks for.
type itemKind int

const (
	// podGroupStatus writes the status of a PodGroup.
	podGroupStatus itemKind = iota
	// podTimeout marks a pod with the gang timeout annotation.
	podTimeout
)

// workItem is one write the workers make.
type workItem struct {
	kind            itemKind
	namespace, name string
}

// work processes work items until the queue shuts down. A failed write is retried with backoff.
func (p *Plugin) work(ctx context.Context) {
	for p.processNext(ctx) {
	}
}

// processNext processes one work item; false once the queue shut down.
func (p *Plugin) processNext(ctx context.Context) bool {
	item, shutdown := p.queue.Get()
	if shutdown {
		return false
	}
	defer p.queue.Done(item)
	var err error
	switch item.kind {
	case podGroupStatus:
		err = p.writePodGroupStatus(ctx, item.namespace, item.name)
	case podTimeout:
		err = p.markTimeout(ctx, item.namespace, item.name)
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Requeued a failed Coscheduling write", "object", klog.KRef(item.namespace, item.name))
		p.queue.AddRateLimited(item)
		return true
	}
	p.queue.Forget(item)
	return true
}

// writePodGroupStatus patches the status of a PodGroup to what its members say, when it differs.
func (p *Plugin) writePodGroupStatus(ctx context.Context, namespace, name string) error {
	pg, err := p.podGroupLister.PodGroups(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PodGroup: %w", err)
	}
	counts, _ := p.cache.Counts(cache.ID{Namespace: namespace, Name: name})
	status := cache.PodGroupStatus(pg, counts, metav1.NewTime(p.clock.Now()))
	if equality.Semantic.DeepEqual(pg.Status, status) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"phase":             status.Phase,
		"scheduled":         status.Scheduled,
		"running":           status.Running,
		"scheduleStartTime": status.ScheduleStartTime,
	}})
	if err != nil {
		return fmt.Errorf("encode PodGroup status: %w", err)
	}
	_, err = p.client.SchedulingSigsV1alpha1().PodGroups(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patch status of PodGroup %s/%s: %w", namespace, name, err)
	}
	p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerPodGroup).Inc()
	klog.FromContext(ctx).V(3).Info("Updated PodGroup status", "podGroup", klog.KRef(namespace, name), "phase", status.Phase, "scheduled", status.Scheduled, "running", status.Running)
	return nil
}

// timeoutPatch sets the gang timeout annotation.
var timeoutPatch = []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, extension.AnnotationGangTimeout))

// markTimeout annotates a pod whose gang timed out, unless it is marked already or gone.
func (p *Plugin) markTimeout(ctx context.Context, namespace, name string) error {
	pod, err := p.handle.SharedInformerFactory().Core().V1().Pods().Lister().Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod: %w", err)
	}
	if extension.IsGangTimeout(pod) {
		return nil
	}
	_, err = p.handle.ClientSet().CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, timeoutPatch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mark pod %s/%s as timed out: %w", namespace, name, err)
	}
	p.metrics.GangTimeouts.Inc()
	p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerPodGroup).Inc()
	klog.FromContext(ctx).V(3).Info("Marked pod of a timed-out gang", "pod", klog.KRef(namespace, name))
	return nil
}
