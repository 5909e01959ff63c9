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

package nodetopology

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
)

// DefaultInterval is how often the report is recomputed; it is written only when it changed.
const DefaultInterval = 30 * time.Second

// Inputs are the node and its pods, from koordlet's states informer.
type Inputs interface {
	Node() *corev1.Node
	Pods() []*corev1.Pod
}

// Source gives the node's topology and kubelet's CPU state.
type Source interface {
	Read() (*Topology, *KubeletCPUState, error)
}

// Paths are where the reporter reads the host: a Source.
type Paths struct {
	// SysRoot is the host's /sys.
	SysRoot string
	// KubeletConfig is kubelet's configuration file ("" for none); KubeletRootDir its root directory, which
	// holds cpu_manager_state.
	KubeletConfig, KubeletRootDir string
}

// Read reads the topology under SysRoot and kubelet's files.
func (p Paths) Read() (*Topology, *KubeletCPUState, error) {
	topo, err := ReadTopology(p.SysRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("read the CPU topology: %w", err)
	}
	kubelet, err := ReadKubeletCPUState(p.KubeletConfig, p.KubeletRootDir)
	if err != nil {
		return nil, nil, err
	}
	return topo, kubelet, nil
}

// Reporter keeps the node's NodeResourceTopology in line with its source.
type Reporter struct {
	client   versioned.Interface
	nodeName string
	source   Source
	in       Inputs
	// logged is the last error logged, so that a lasting problem is logged once.
	logged string
}

// NewReporter returns a reporter of the node nodeName.
func NewReporter(client versioned.Interface, nodeName string, source Source, in Inputs) *Reporter {
	return &Reporter{client: client, nodeName: nodeName, source: source, in: in}
}

// Run reports at once and then every interval (DefaultInterval when not positive) until ctx ends. A failure is
// logged when it differs from the last one; the object keeps its last good content.
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
			if msg := err.Error(); msg != r.logged {
				logger.Error(err, "Could not report the node's NodeResourceTopology; retrying every interval", "interval", interval)
				r.logged = msg
			}
		} else {
			r.logged = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ReportOnce reads the host, builds the report and writes it into the NodeResourceTopology named like the
// node (owned by the node, so that it goes with it), creating it when missing and updating it only when its
// topology policies, zones or koordlet's annotations differ.
func (r *Reporter) ReportOnce(ctx context.Context) error {
	node := r.in.Node()
	if node == nil {
		return fmt.Errorf("node %s is not known yet", r.nodeName)
	}
	topo, kubelet, err := r.source.Read()
	if err != nil {
		return err
	}
	report, buildErr := Build(topo, kubelet, node, r.in.Pods())
	if report == nil {
		return buildErr
	}
	nrts := r.client.TopologyV1alpha1().NodeResourceTopologies()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nrts.Get(ctx, r.nodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			created := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{
				Name: r.nodeName,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, BlockOwnerDeletion: ptr.To(false),
				}},
			}}
			report.apply(created)
			if _, err := nrts.Create(ctx, created, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create the NodeResourceTopology: %w", err)
			}
			klog.FromContext(ctx).V(2).Info("Created the NodeResourceTopology", "zones", len(report.Zones))
			return nil
		}
		if err != nil {
			return fmt.Errorf("get the NodeResourceTopology: %w", err)
		}
		updated := cur.DeepCopy()
		report.apply(updated)
		if equality.Semantic.DeepEqual(cur, updated) {
			return nil
		}
		if _, err := nrts.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return err
		}
		klog.FromContext(ctx).V(3).Info("Updated the NodeResourceTopology", "zones", len(report.Zones))
		return nil
	})
	if err != nil {
		return err
	}
	return buildErr
}

// apply writes the report into nrt: the topology policies, the managed annotations, and the zones (other
// components may add zones or resources of their own: zones koordlet does not report are kept, and so are the
// resources of a reported zone other than cpu and memory).
func (rep *Report) apply(nrt *topologyv1alpha1.NodeResourceTopology) {
	nrt.TopologyPolicies = rep.TopologyPolicies
	if nrt.Annotations == nil {
		nrt.Annotations = map[string]string{}
	}
	for _, k := range managedAnnotations {
		nrt.Annotations[k] = rep.Annotations[k]
	}
	zones := slices.Clone(rep.Zones)
	for _, old := range nrt.Zones {
		i := slices.IndexFunc(zones, func(z topologyv1alpha1.Zone) bool { return z.Name == old.Name })
		if i < 0 {
			if old.Type != ZoneTypeNode {
				zones = append(zones, old)
			}
			continue
		}
		for _, res := range old.Resources {
			if res.Name != string(corev1.ResourceCPU) && res.Name != string(corev1.ResourceMemory) {
				zones[i].Resources = append(zones[i].Resources, res)
			}
		}
	}
	if zones == nil {
		zones = topologyv1alpha1.ZoneList{}
	}
	nrt.Zones = zones
}
