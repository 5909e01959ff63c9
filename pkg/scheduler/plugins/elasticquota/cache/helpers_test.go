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

package cache

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// newTestManager returns a manager over one node with allocatable total, the quotas and the pods.
func newTestManager(total corev1.ResourceList, quotas []*schedv1alpha1.ElasticQuota, pods []*corev1.Pod, edit func(*Options)) (*Manager, error) {
	opts := Options{
		DefaultQuotaMax:     utiltesting.Resources("cpu", "1000", "memory", "1000Gi"),
		SystemQuotaMax:      utiltesting.Resources("cpu", "1000", "memory", "1000Gi"),
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
			out[s.Name] = s.Runtime.List()
		}
	}
	return out
}
