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

package testing

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// Now is the time tests' fake clocks start at and builders stamp objects with by default.
var Now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// Resources builds a resource list from "name", "quantity" pairs, e.g. Resources("cpu", "1", "memory", "2Gi").
// It panics on an odd count or a malformed quantity.
func Resources(kv ...string) corev1.ResourceList {
	if len(kv)%2 != 0 {
		panic("Resources wants name, quantity pairs")
	}
	l := make(corev1.ResourceList, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// PodWrapper builds a pod.
type PodWrapper struct{ corev1.Pod }

// MakePod returns a builder of a pod named name in namespace default, with UID name, created at Now, and no
// containers.
func MakePod(name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: metav1.NamespaceDefault, Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(Now),
	}}}
}

// WrapPod returns a builder of a copy of pod.
func WrapPod(pod *corev1.Pod) *PodWrapper { return &PodWrapper{*pod.DeepCopy()} }

// Obj returns the pod.
func (p *PodWrapper) Obj() *corev1.Pod { return &p.Pod }

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(ns string) *PodWrapper {
	p.Pod.Namespace = ns
	return p
}

// UID sets the UID.
func (p *PodWrapper) UID(uid string) *PodWrapper {
	p.Pod.UID = types.UID(uid)
	return p
}

// Label sets a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Pod.Labels == nil {
		p.Pod.Labels = map[string]string{}
	}
	p.Pod.Labels[k] = v
	return p
}

// Labels sets labels; a nil or empty map leaves the pod's as they are.
func (p *PodWrapper) Labels(labels map[string]string) *PodWrapper {
	for k, v := range labels {
		p.Label(k, v)
	}
	return p
}

// Annotation sets an annotation.
func (p *PodWrapper) Annotation(k, v string) *PodWrapper {
	if p.Pod.Annotations == nil {
		p.Pod.Annotations = map[string]string{}
	}
	p.Pod.Annotations[k] = v
	return p
}

// Annotations sets annotations from "key", "value" pairs.
func (p *PodWrapper) Annotations(kv ...string) *PodWrapper {
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotation(kv[i], kv[i+1])
	}
	return p
}

// Created sets the creation time.
func (p *PodWrapper) Created(t time.Time) *PodWrapper {
	p.CreationTimestamp = metav1.NewTime(t)
	return p
}

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper {
	p.Spec.Priority = ptr.To(v)
	return p
}

// QoS sets the koordinator.sh/qosClass label.
func (p *PodWrapper) QoS(qos extension.QoSClass) *PodWrapper {
	return p.Label(extension.LabelPodQoS, string(qos))
}

// Node sets spec.nodeName.
func (p *PodWrapper) Node(node string) *PodWrapper {
	p.Spec.NodeName = node
	return p
}

// Req gives the pod's container "c" the requests, adding the container when the pod has none.
func (p *PodWrapper) Req(requests corev1.ResourceList) *PodWrapper {
	p.container().Resources.Requests = requests
	return p
}

// Lim gives the pod's container "c" the limits, adding the container when the pod has none.
func (p *PodWrapper) Lim(limits corev1.ResourceList) *PodWrapper {
	p.container().Resources.Limits = limits
	return p
}

func (p *PodWrapper) container() *corev1.Container {
	if len(p.Spec.Containers) == 0 {
		p.Spec.Containers = []corev1.Container{{Name: "c"}}
	}
	return &p.Spec.Containers[0]
}

// Phase sets status.phase.
func (p *PodWrapper) Phase(phase corev1.PodPhase) *PodWrapper {
	p.Status.Phase = phase
	return p
}

// Scheduled binds the pod to node with a PodScheduled condition true since at.
func (p *PodWrapper) Scheduled(node string, at time.Time) *PodWrapper {
	p.Spec.NodeName = node
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at),
	})
	return p
}

// NodeWrapper builds a node.
type NodeWrapper struct{ corev1.Node }

// MakeNode returns a builder of a node named name.
func MakeNode(name string) *NodeWrapper {
	return &NodeWrapper{corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *corev1.Node { return &n.Node }

// Allocatable sets the node's capacity and allocatable to l.
func (n *NodeWrapper) Allocatable(l corev1.ResourceList) *NodeWrapper {
	n.Status.Capacity = l
	n.Status.Allocatable = l.DeepCopy()
	return n
}

// Annotation sets an annotation.
func (n *NodeWrapper) Annotation(k, v string) *NodeWrapper {
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[k] = v
	return n
}

// Label sets a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[k] = v
	return n
}

// NodeMetricWrapper builds a NodeMetric.
type NodeMetricWrapper struct{ slov1alpha1.NodeMetric }

// MakeNodeMetric returns a builder of the NodeMetric of node.
func MakeNodeMetric(node string) *NodeMetricWrapper {
	return &NodeMetricWrapper{slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: node}}}
}

// Obj returns the NodeMetric.
func (m *NodeMetricWrapper) Obj() *slov1alpha1.NodeMetric { return &m.NodeMetric }

// ResourceVersion sets the resourceVersion.
func (m *NodeMetricWrapper) ResourceVersion(rv string) *NodeMetricWrapper {
	m.NodeMetric.ResourceVersion = rv
	return m
}

// Updated sets status.updateTime.
func (m *NodeMetricWrapper) Updated(t time.Time) *NodeMetricWrapper {
	m.Status.UpdateTime = &metav1.Time{Time: t}
	return m
}

// NodeUsage sets the node's reported usage.
func (m *NodeMetricWrapper) NodeUsage(usage corev1.ResourceList) *NodeMetricWrapper {
	m.nodeMetric().NodeUsage = slov1alpha1.ResourceMap{ResourceList: usage}
	return m
}

// SystemUsage sets the reported usage not accounted to pods.
func (m *NodeMetricWrapper) SystemUsage(usage corev1.ResourceList) *NodeMetricWrapper {
	m.nodeMetric().SystemUsage = slov1alpha1.ResourceMap{ResourceList: usage}
	return m
}

// Aggregated adds a statistic of node usage over window.
func (m *NodeMetricWrapper) Aggregated(typ extension.AggregationType, window time.Duration, usage corev1.ResourceList) *NodeMetricWrapper {
	nm := m.nodeMetric()
	for i := range nm.AggregatedNodeUsages {
		if agg := &nm.AggregatedNodeUsages[i]; agg.Duration.Duration == window {
			agg.Usage[slov1alpha1.AggregationType(typ)] = slov1alpha1.ResourceMap{ResourceList: usage}
			return m
		}
	}
	nm.AggregatedNodeUsages = append(nm.AggregatedNodeUsages, slov1alpha1.AggregatedUsage{
		Duration: metav1.Duration{Duration: window},
		Usage:    map[slov1alpha1.AggregationType]slov1alpha1.ResourceMap{slov1alpha1.AggregationType(typ): {ResourceList: usage}},
	})
	return m
}

// Pod adds the reported usage of the pod namespace/name of priority class prio.
func (m *NodeMetricWrapper) Pod(namespace, name string, prio extension.PriorityClass, usage corev1.ResourceList) *NodeMetricWrapper {
	m.Status.PodsMetric = append(m.Status.PodsMetric, slov1alpha1.PodMetricInfo{
		Namespace: namespace, Name: name, Priority: string(prio), PodUsage: slov1alpha1.ResourceMap{ResourceList: usage},
	})
	return m
}

// ReportInterval sets spec.metricCollectPolicy.reportIntervalSeconds.
func (m *NodeMetricWrapper) ReportInterval(d time.Duration) *NodeMetricWrapper {
	if m.Spec.CollectPolicy == nil {
		m.Spec.CollectPolicy = &slov1alpha1.NodeMetricCollectPolicy{}
	}
	m.Spec.CollectPolicy.ReportIntervalSeconds = ptr.To(int64(d / time.Second))
	return m
}

func (m *NodeMetricWrapper) nodeMetric() *slov1alpha1.NodeMetricInfo {
	if m.Status.NodeMetric == nil {
		m.Status.NodeMetric = &slov1alpha1.NodeMetricInfo{}
	}
	return m.Status.NodeMetric
}

// ElasticQuotaWrapper builds an ElasticQuota.
type ElasticQuotaWrapper struct{ schedsigsv1alpha1.ElasticQuota }

// MakeElasticQuota returns a builder of an ElasticQuota named name in namespace quotas, with empty labels and
// annotations.
func MakeElasticQuota(name string) *ElasticQuotaWrapper {
	return &ElasticQuotaWrapper{schedsigsv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{
		Namespace: "quotas", Name: name, Labels: map[string]string{}, Annotations: map[string]string{},
	}}}
}

// Obj returns the ElasticQuota.
func (q *ElasticQuotaWrapper) Obj() *schedsigsv1alpha1.ElasticQuota { return &q.ElasticQuota }

// Namespace sets the namespace.
func (q *ElasticQuotaWrapper) Namespace(ns string) *ElasticQuotaWrapper {
	q.ElasticQuota.Namespace = ns
	return q
}

// Min sets spec.min.
func (q *ElasticQuotaWrapper) Min(l corev1.ResourceList) *ElasticQuotaWrapper {
	q.Spec.Min = l
	return q
}

// Max sets spec.max.
func (q *ElasticQuotaWrapper) Max(l corev1.ResourceList) *ElasticQuotaWrapper {
	q.Spec.Max = l
	return q
}

// Parent makes the quota a child of parent; "" leaves it under the root.
func (q *ElasticQuotaWrapper) Parent(parent string) *ElasticQuotaWrapper {
	if parent != "" {
		q.Labels[extension.LabelQuotaParent] = parent
	}
	return q
}

// IsParent marks the quota as a parent quota.
func (q *ElasticQuotaWrapper) IsParent() *ElasticQuotaWrapper {
	q.Labels[extension.LabelQuotaIsParent] = "true"
	return q
}

// NoLending keeps the quota from lending what it does not use.
func (q *ElasticQuotaWrapper) NoLending() *ElasticQuotaWrapper {
	q.Labels[extension.LabelAllowLentResource] = "false"
	return q
}

// Label sets a label.
func (q *ElasticQuotaWrapper) Label(k, v string) *ElasticQuotaWrapper {
	q.Labels[k] = v
	return q
}

// Tree puts the quota in the quota tree id; root makes it the tree's root, sharing total.
func (q *ElasticQuotaWrapper) Tree(id string, root bool, total string) *ElasticQuotaWrapper {
	q.Labels[extension.LabelQuotaTreeID] = id
	if root {
		q.Labels[extension.LabelQuotaIsRoot] = "true"
	}
	if total != "" {
		q.Annotations[extension.AnnotationTotalResource] = total
	}
	return q
}

// Annotation sets an annotation.
func (q *ElasticQuotaWrapper) Annotation(k, v string) *ElasticQuotaWrapper {
	q.Annotations[k] = v
	return q
}

// Gang makes the pod a member of the annotation gang name with minimum minMember (the
// gang.scheduling.koordinator.sh annotations).
func (p *PodWrapper) Gang(name, minMember string) *PodWrapper {
	return p.Annotation(extension.AnnotationGangName, name).Annotation(extension.AnnotationGangMinNum, minMember)
}

// PodGroup makes the pod a member of the PodGroup name (its pod-group.scheduling.sigs.k8s.io label).
func (p *PodWrapper) PodGroup(name string) *PodWrapper {
	return p.Label(schedsigsv1alpha1.PodGroupLabel, name)
}

// PodGroupWrapper builds a PodGroup.
type PodGroupWrapper struct{ schedsigsv1alpha1.PodGroup }

// MakePodGroup returns a builder of a PodGroup named name in namespace default with minMember.
func MakePodGroup(name string, minMember int32) *PodGroupWrapper {
	return &PodGroupWrapper{schedsigsv1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name},
		Spec:       schedsigsv1alpha1.PodGroupSpec{MinMember: minMember},
	}}
}

// Obj returns the PodGroup.
func (g *PodGroupWrapper) Obj() *schedsigsv1alpha1.PodGroup { return &g.PodGroup }

// Created sets the creation time.
func (g *PodGroupWrapper) Created(t time.Time) *PodGroupWrapper {
	g.CreationTimestamp = metav1.NewTime(t)
	return g
}

// Timeout sets spec.scheduleTimeoutSeconds.
func (g *PodGroupWrapper) Timeout(d time.Duration) *PodGroupWrapper {
	g.Spec.ScheduleTimeoutSeconds = ptr.To(int32(d / time.Second))
	return g
}

// Annotations sets annotations from "key", "value" pairs.
func (g *PodGroupWrapper) Annotations(kv ...string) *PodGroupWrapper {
	if len(kv) > 0 && g.PodGroup.Annotations == nil {
		g.PodGroup.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		g.PodGroup.Annotations[kv[i]] = kv[i+1]
	}
	return g
}
