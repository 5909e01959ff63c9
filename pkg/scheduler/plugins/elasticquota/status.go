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
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// statusInterval is how often the status writer compares the manager's numbers with the ElasticQuota
// objects; a quota is patched at most once per interval, and only when a number changed.
const statusInterval = time.Second

// statusAnnotations are the annotations the status writer owns.
var statusAnnotations = []string{extension.AnnotationRuntime, extension.AnnotationRequest, extension.AnnotationNonPreemptibleUsed}

// runStatusWriter writes status.used and the runtime, request and non-preemptible-used annotations of every
// ElasticQuota object when they change, until ctx ends.
func (p *Plugin) runStatusWriter(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("status")
	ctx = klog.NewContext(ctx, logger)
	p.ensureBuiltinQuotas(ctx)
	plugins.Every(ctx, p.clock, statusInterval, func() { p.writeStatuses(ctx) })
}

// ensureBuiltinQuotas creates the root, system and default quota objects in quotaGroupNamespace when they do
// not exist, as Koordinator does, so that users see the built-in quotas' status. Failures are logged; the
// manager has the built-in quotas either way.
func (p *Plugin) ensureBuiltinQuotas(ctx context.Context) {
	logger := klog.FromContext(ctx)
	ns := p.args.QuotaGroupNamespace
	for _, eq := range []*schedv1alpha1.ElasticQuota{
		{
			ObjectMeta: metav1.ObjectMeta{Name: extension.RootQuotaName, Namespace: ns, Labels: map[string]string{
				extension.LabelQuotaIsParent:     "true",
				extension.LabelAllowLentResource: "false",
			}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: extension.SystemQuotaName, Namespace: ns},
			Spec:       schedv1alpha1.ElasticQuotaSpec{Max: p.args.SystemQuotaGroupMax.DeepCopy()},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: extension.DefaultQuotaName, Namespace: ns},
			Spec:       schedv1alpha1.ElasticQuotaSpec{Max: p.args.DefaultQuotaGroupMax.DeepCopy()},
		},
	} {
		if _, err := p.quotaLister.ElasticQuotas(ns).Get(eq.Name); err == nil {
			continue
		}
		_, err := p.client.SchedulingSigsV1alpha1().ElasticQuotas(ns).Create(ctx, eq, metav1.CreateOptions{})
		switch {
		case err == nil:
			p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerElasticQuota).Inc()
			logger.V(2).Info("Created a built-in ElasticQuota", "elasticQuota", klog.KObj(eq))
		case !apierrors.IsAlreadyExists(err):
			utilruntime.HandleErrorWithLogger(logger, err, "Could not create a built-in ElasticQuota", "elasticQuota", klog.KObj(eq))
		}
	}
}

// writeStatuses patches every quota object whose numbers differ from the manager's, and sets the quotas'
// gauges.
func (p *Plugin) writeStatuses(ctx context.Context) {
	logger := klog.FromContext(ctx)
	statuses := p.manager.Statuses()
	p.setGauges(statuses)
	for _, s := range statuses {
		if s.Namespace == "" {
			continue
		}
		eq, err := p.quotaLister.ElasticQuotas(s.Namespace).Get(s.Name)
		if err != nil {
			// Deleted since: the manager follows soon.
			continue
		}
		if err := p.writeStatus(ctx, eq, s); err != nil {
			utilruntime.HandleErrorWithLogger(logger, err, "Could not write the status of an ElasticQuota", "elasticQuota", klog.KObj(eq))
		}
	}
}

// writeStatus patches eq's annotations and status to s, each only when it differs.
func (p *Plugin) writeStatus(ctx context.Context, eq *schedv1alpha1.ElasticQuota, s cache.Status) error {
	want := &metav1.ObjectMeta{Annotations: map[string]string{}}
	for key, v := range map[string]quantity.Amounts{
		extension.AnnotationRuntime:            s.Runtime,
		extension.AnnotationRequest:            s.Request,
		extension.AnnotationNonPreemptibleUsed: s.NonPreemptibleUsed,
	} {
		if err := extension.SetQuotaResourceList(want, key, v.List()); err != nil {
			return err
		}
	}
	patch := map[string]any{}
	for _, key := range statusAnnotations {
		if eq.Annotations[key] != want.Annotations[key] {
			if v, ok := want.Annotations[key]; ok {
				patch[key] = v
			} else {
				patch[key] = nil
			}
		}
	}
	client := p.client.SchedulingSigsV1alpha1().ElasticQuotas(eq.Namespace)
	if len(patch) > 0 {
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": patch}})
		if err != nil {
			return fmt.Errorf("encode annotations patch: %w", err)
		}
		if _, err := client.Patch(ctx, eq.Name, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patch annotations: %w", err)
		}
		p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerElasticQuota).Inc()
	}
	used := s.Used.List()
	if !equalResources(eq.Status.Used, used) {
		data, err := json.Marshal(map[string]any{"status": map[string]any{"used": used}})
		if err != nil {
			return fmt.Errorf("encode status patch: %w", err)
		}
		if _, err := client.Patch(ctx, eq.Name, types.MergePatchType, data, metav1.PatchOptions{}, "status"); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patch status: %w", err)
		}
		p.metrics.ControllerWrites.WithLabelValues(metrics.ControllerElasticQuota).Inc()
	}
	return nil
}

// equalResources reports whether a and b hold equal quantities, a missing resource counting as 0.
func equalResources(a, b corev1.ResourceList) bool {
	for name, q := range a {
		if other := b[name]; q.Cmp(other) != 0 {
			return false
		}
	}
	for name, q := range b {
		if other := a[name]; q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// setGauges sets the runtime, used and request gauges of every quota, and Koordinator's status gauge, and
// removes those of quotas and resources that are gone. A quota has gauges for every resource its spec or its
// figures name, 0 where a figure lacks it (no pod uses it yet), so that its graphs start at 0.
func (p *Plugin) setGauges(statuses []cache.Status) {
	seen := map[[3]string]bool{}
	seenStatus := map[[6]string]bool{}
	for _, s := range statuses {
		names := map[corev1.ResourceName]bool{}
		for _, a := range []quantity.Amounts{s.Runtime, s.Used, s.Request, s.Min, s.Max} {
			for name := range a {
				names[name] = true
			}
		}
		for typ, amounts := range map[string]quantity.Amounts{"runtime": s.Runtime, "used": s.Used, "request": s.Request} {
			for name := range names {
				key := [3]string{s.Name, string(name), typ}
				seen[key] = true
				p.metrics.QuotaResources.WithLabelValues(key[:]...).Set(float64(amounts[name]))
			}
		}
		for field, amounts := range map[string]quantity.Amounts{
			"runtime": s.Runtime, "request": s.Request, "allocated": s.Used, "non-preemptible-used": s.NonPreemptibleUsed,
			"min": s.Min, "max": s.Max, "guaranteed": s.Guaranteed,
		} {
			for name := range names {
				key := [6]string{s.Name, string(name), s.TreeID, strconv.FormatBool(s.IsParent), s.Parent, field}
				seenStatus[key] = true
				p.metrics.QuotaStatus.WithLabelValues(key[:]...).Set(float64(amounts[name]))
			}
		}
	}
	for key := range p.gauged {
		if !seen[key] {
			p.metrics.QuotaResources.DeleteLabelValues(key[:]...)
		}
	}
	for key := range p.gaugedStatus {
		if !seenStatus[key] {
			p.metrics.QuotaStatus.DeleteLabelValues(key[:]...)
		}
	}
	p.gauged, p.gaugedStatus = seen, seenStatus
}
