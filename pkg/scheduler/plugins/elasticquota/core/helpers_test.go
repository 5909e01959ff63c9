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

package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// rl builds a resource list from "name=quantity" pairs.
func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// quotaWrapper builds an ElasticQuota.
type quotaWrapper struct{ *schedv1alpha1.ElasticQuota }

func quota(name string) *quotaWrapper {
	return &quotaWrapper{&schedv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "quotas", Labels: map[string]string{}, Annotations: map[string]string{}}}}
}

func (q *quotaWrapper) min(l corev1.ResourceList) *quotaWrapper { q.Spec.Min = l; return q }
func (q *quotaWrapper) max(l corev1.ResourceList) *quotaWrapper { q.Spec.Max = l; return q }
func (q *quotaWrapper) parent(p string) *quotaWrapper {
	q.Labels[extension.LabelQuotaParent] = p
	return q
}
func (q *quotaWrapper) isParent() *quotaWrapper {
	q.Labels[extension.LabelQuotaIsParent] = "true"
	return q
}
func (q *quotaWrapper) noLending() *quotaWrapper {
	q.Labels[extension.LabelAllowLentResource] = "false"
	return q
}
func (q *quotaWrapper) namespace(ns string) *quotaWrapper { q.Namespace = ns; return q }
func (q *quotaWrapper) annotate(k, v string) *quotaWrapper {
	q.Annotations[k] = v
	return q
}
func (q *quotaWrapper) obj() *schedv1alpha1.ElasticQuota { return q.ElasticQuota }

// podWrapper builds a pod.
type podWrapper struct{ *corev1.Pod }

var created = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func pod(name string, requests corev1.ResourceList) *podWrapper {
	return &podWrapper{&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{}, CreationTimestamp: metav1.Time{Time: created}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests}}}},
	}}
}

func (p *podWrapper) inQuota(q string) *podWrapper {
	p.Labels[extension.LabelQuotaName] = q
	return p
}
func (p *podWrapper) ns(ns string) *podWrapper     { p.Namespace = ns; return p }
func (p *podWrapper) on(node string) *podWrapper   { p.Spec.NodeName = node; return p }
func (p *podWrapper) priority(v int32) *podWrapper { p.Spec.Priority = ptr.To(v); return p }
func (p *podWrapper) age(d time.Duration) *podWrapper {
	p.CreationTimestamp = metav1.Time{Time: created.Add(-d)}
	return p
}
func (p *podWrapper) nonPreemptible() *podWrapper {
	p.Labels[extension.LabelPreemptible] = "false"
	return p
}
func (p *podWrapper) obj() *corev1.Pod { return p.Pod }

// newTestManager returns a manager over one node with allocatable total, the quotas and the pods.
func newTestManager(total corev1.ResourceList, quotas []*schedv1alpha1.ElasticQuota, pods []*corev1.Pod, edit func(*Options)) (*Manager, error) {
	opts := Options{
		DefaultQuotaMax:     rl("cpu", "1000", "memory", "1000Gi"),
		SystemQuotaMax:      rl("cpu", "1000", "memory", "1000Gi"),
		EnableMinQuotaScale: true,
		EnableRuntimeQuota:  true,
	}
	if edit != nil {
		edit(&opts)
	}
	m := NewManager(opts)
	m.SetNode("n1", total)
	for _, q := range quotas {
		if err := m.UpdateQuota(q); err != nil {
			return nil, err
		}
	}
	for _, p := range pods {
		m.UpdatePod(p)
	}
	return m, nil
}

// runtimes returns the runtime quota of every quota with one, in resource-list form.
func runtimes(m *Manager) map[string]corev1.ResourceList {
	out := map[string]corev1.ResourceList{}
	for _, s := range m.Statuses() {
		if s.Runtime != nil && s.Name != extension.SystemQuotaName && s.Name != extension.DefaultQuotaName {
			out[s.Name] = s.Runtime.ResourceList()
		}
	}
	return out
}
