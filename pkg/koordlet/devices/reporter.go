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

package devices

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
)

// DefaultInterval is how often the devices are discovered again; the Device is written only when it changed.
const DefaultInterval = 10 * time.Second

// managedLabels are the Device labels koordlet owns: set from discovery, removed when discovery has none.
var managedLabels = []string{extension.LabelGPUVendor, extension.LabelGPUModel, extension.LabelGPUDriverVersion}

// NodeGetter gives the agent's node (from its states informer).
type NodeGetter interface {
	Node() *corev1.Node
}

// Reporter keeps the node's Device in line with its sources. Create it with NewReporter.
type Reporter struct {
	client   versioned.Interface
	nodeName string
	sources  []Source
	node     NodeGetter
	clock    clock.PassiveClock

	// last is each source's last good discovery, kept while it fails.
	last map[string]Found
	// logged is, per source, the last problem logged, so that a lasting one is logged once.
	logged map[string]string
}

// NewReporter returns the reporter of node nodeName over sources.
func NewReporter(client versioned.Interface, nodeName string, node NodeGetter, sources ...Source) *Reporter {
	return &Reporter{client: client, nodeName: nodeName, sources: sources, node: node, clock: clock.RealClock{},
		last: map[string]Found{}, logged: map[string]string{}}
}

// Run reports at once and then every interval (DefaultInterval when not positive) until ctx ends.
func (r *Reporter) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	logger := klog.FromContext(ctx).WithValues("node", r.nodeName)
	ctx = klog.NewContext(ctx, logger)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := r.ReportOnce(ctx); err != nil {
			if msg := err.Error(); msg != r.logged[""] {
				logger.Error(err, "Could not report the node's devices; retrying every interval", "interval", interval)
				r.logged[""] = msg
			}
		} else {
			r.logged[""] = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ReportOnce discovers the devices and writes them into the Device named like the node (owned by the node),
// creating it when there is a device to report and updating it when its devices or koordlet's labels
// differ. A source that is unavailable on this node reports nothing (said once in the log); one that fails
// keeps its last good discovery.
func (r *Reporter) ReportOnce(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	var found Found
	found.Labels = map[string]string{}
	for _, s := range r.sources {
		got, err := s.Discover(ctx)
		switch {
		case errors.Is(err, ErrUnavailable):
			if msg := err.Error(); msg != r.logged[s.Name()] {
				logger.Info("A device source is unavailable on this node; it reports no devices", "source", s.Name(), "reason", msg)
				r.logged[s.Name()] = msg
			}
			got = Found{}
		case err != nil:
			if msg := err.Error(); msg != r.logged[s.Name()] {
				logger.Error(err, "Device discovery failed; its last good devices stay reported", "source", s.Name())
				r.logged[s.Name()] = msg
			}
			got = r.last[s.Name()]
		default:
			if r.logged[s.Name()] != "" {
				logger.Info("Device discovery works again", "source", s.Name())
			}
			r.logged[s.Name()] = ""
			r.last[s.Name()] = got
		}
		found.Devices = append(found.Devices, got.Devices...)
		maps.Copy(found.Labels, got.Labels)
	}
	slices.SortStableFunc(found.Devices, func(a, b schedulingv1alpha1.DeviceInfo) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(ptr.Deref(a.Minor, -1), ptr.Deref(b.Minor, -1)))
	})

	devices := r.client.SchedulingV1alpha1().Devices()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := devices.Get(ctx, r.nodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if len(found.Devices) == 0 {
				return nil
			}
			node := r.node.Node()
			if node == nil {
				return fmt.Errorf("node %s is not known yet", r.nodeName)
			}
			created := &schedulingv1alpha1.Device{ObjectMeta: metav1.ObjectMeta{
				Name: r.nodeName,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, BlockOwnerDeletion: ptr.To(false),
				}},
			}}
			r.apply(created, found)
			if _, err := devices.Create(ctx, created, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create the Device: %w", err)
			}
			logger.V(2).Info("Created the Device", "devices", len(found.Devices))
			return nil
		}
		if err != nil {
			return fmt.Errorf("get the Device: %w", err)
		}
		updated := cur.DeepCopy()
		r.apply(updated, found)
		if equality.Semantic.DeepEqual(cur, updated) {
			return nil
		}
		if _, err := devices.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return err
		}
		logger.V(2).Info("Updated the Device", "devices", len(found.Devices), "healthy", healthy(found.Devices))
		return nil
	})
}

// apply writes found into d: its devices (a condition keeps its lastTransitionTime while its status stays)
// and koordlet's labels (others' labels are kept).
func (r *Reporter) apply(d *schedulingv1alpha1.Device, found Found) {
	previous := map[string][]metav1.Condition{}
	for _, old := range d.Spec.Devices {
		previous[string(old.Type)+"/"+old.UUID] = old.Conditions
	}
	devices := make([]schedulingv1alpha1.DeviceInfo, 0, len(found.Devices))
	for _, dev := range found.Devices {
		dev = *dev.DeepCopy()
		for i := range dev.Conditions {
			c := &dev.Conditions[i]
			if old := findCondition(previous[string(dev.Type)+"/"+dev.UUID], c.Type); old != nil && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			} else if c.LastTransitionTime.IsZero() {
				c.LastTransitionTime = metav1.NewTime(r.clock.Now().Truncate(time.Second))
			}
		}
		devices = append(devices, dev)
	}
	d.Spec.Devices = devices
	for _, k := range managedLabels {
		if v, ok := found.Labels[k]; ok {
			if d.Labels == nil {
				d.Labels = map[string]string{}
			}
			d.Labels[k] = v
		} else {
			delete(d.Labels, k)
		}
	}
	for k, v := range found.Labels {
		if !slices.Contains(managedLabels, k) {
			if d.Labels == nil {
				d.Labels = map[string]string{}
			}
			d.Labels[k] = v
		}
	}
}

// findCondition returns the condition of type t in cs, or nil.
func findCondition(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// healthy counts the healthy devices.
func healthy(ds []schedulingv1alpha1.DeviceInfo) int {
	n := 0
	for _, d := range ds {
		if d.Health {
			n++
		}
	}
	return n
}
