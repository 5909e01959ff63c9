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

package elasticquota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/crdinformers"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// watchQuotas feeds ElasticQuotas to the manager, from the plugin's informer and from the queueing hint (see
// plugins.Feed), and waits until the manager has every quota.
func (p *Plugin) watchQuotas(ctx context.Context, h fwk.Handle, informers *crdinformers.Shared) error {
	logger := klog.FromContext(ctx)
	p.quotas = plugins.NewFeed(
		func(eq *schedv1alpha1.ElasticQuota) { p.quotaParsed(logger, eq, p.manager.UpdateQuota(eq)) },
		func(eq *schedv1alpha1.ElasticQuota) {
			p.manager.DeleteQuota(eq.Name)
			p.quotaParsed(logger, eq, nil)
		},
	)
	factory, err := informers.Factory(h)
	if err != nil {
		return err
	}
	informer := factory.SchedulingSigs().V1alpha1().ElasticQuotas()
	p.quotaLister = informer.Lister()
	reg, err := informer.Informer().AddEventHandler(p.quotas.Handler(logger))
	if err != nil {
		return fmt.Errorf("watch ElasticQuotas: %w", err)
	}
	return informers.Sync(ctx, reg)
}

// quotaParsed reports an ElasticQuota the manager rejected, in the log and as a Warning event on the object,
// once per distinct error: the plugin's own status patches bring the same object back every second.
func (p *Plugin) quotaParsed(logger klog.Logger, eq *schedv1alpha1.ElasticQuota, err error) {
	p.invalidMu.Lock()
	defer p.invalidMu.Unlock()
	if err == nil {
		delete(p.invalid, eq.Name)
		return
	}
	if p.invalid[eq.Name] == err.Error() {
		return
	}
	p.invalid[eq.Name] = err.Error()
	utilruntime.HandleErrorWithLogger(logger, err, "Ignored an invalid ElasticQuota, its last good configuration stays", "elasticQuota", klog.KObj(eq))
	if rec := p.handle.EventRecorder(); rec != nil {
		rec.Eventf(eq, nil, corev1.EventTypeWarning, ReasonInvalidElasticQuota, "Parse", "Ignored, the last good configuration stays: %v", err)
	}
}

// watchPodsAndNodes feeds pods (pending and assigned) and nodes to the manager. The scheduler starts its
// informers after building plugins.
func (p *Plugin) watchPodsAndNodes(h fwk.Handle) error {
	kube, err := plugins.KubeInformers(h)
	if err != nil {
		return err
	}
	p.podLister = kube.Core().V1().Pods().Lister()
	// Reserve pods are the Reservation plugin's, never charged to a quota.
	err = p.synced.Watch("pods", kube.Core().V1().Pods().Informer(), plugins.Handlers(
		func(pod *corev1.Pod) {
			if !extension.IsReservePod(pod) {
				p.manager.UpdatePod(pod)
			}
		},
		func(pod *corev1.Pod) { p.manager.DeletePod(pod.UID) },
	))
	if err != nil {
		return err
	}
	return p.synced.Watch("nodes", kube.Core().V1().Nodes().Informer(), plugins.Handlers(
		func(node *corev1.Node) { p.manager.SetNode(node.Name, node.Status.Allocatable) },
		func(node *corev1.Node) { p.manager.DeleteNode(node.Name) },
	))
}
