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
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// FuzzUpdateQuota feeds quotas with arbitrary parent labels and shared-weight, guaranteed and namespaces
// annotations to a manager: it must never panic, a rejected quota must keep its last good configuration, and
// the runtime quotas must stay within the quotas' max and never be negative.
func FuzzUpdateQuota(f *testing.F) {
	for _, s := range []struct{ parent, weight, guaranteed, namespaces string }{
		{"", "", "", ""},
		{"p", `{"cpu":"1"}`, `{"cpu":"2"}`, `["ns1"]`},
		{"a", `{"cpu":"-1"}`, "", ""},
		{"b", "{", "[", `["Bad"]`},
		{"missing", `{"cpu":"1e30"}`, `{"memory":"1Ei"}`, "null"},
	} {
		f.Add(s.parent, s.weight, s.guaranteed, s.namespaces)
	}
	f.Fuzz(func(t *testing.T, parent, weight, guaranteed, namespaces string) {
		m, err := newTestManager(utiltesting.Resources("cpu", "40", "memory", "40Gi"), nil, []*corev1.Pod{
			utiltesting.MakePod("a1").Req(utiltesting.Resources("cpu", "30")).Label(extension.LabelQuotaName, "a").Node("n1").Obj(),
			utiltesting.MakePod("b1").Req(utiltesting.Resources("cpu", "30", "memory", "1Gi")).Label(extension.LabelQuotaName, "b").Obj(),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.UpdateQuota(utiltesting.MakeElasticQuota("p").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).IsParent().Obj()); err != nil {
			t.Fatal(err)
		}
		if err := m.UpdateQuota(utiltesting.MakeElasticQuota("a").Min(utiltesting.Resources("cpu", "10")).Max(utiltesting.Resources("cpu", "40")).Parent("p").Obj()); err != nil {
			t.Fatal(err)
		}
		q := utiltesting.MakeElasticQuota("b").Min(utiltesting.Resources("cpu", "5")).Max(utiltesting.Resources("cpu", "40", "memory", "10Gi")).Parent(parent)
		for key, v := range map[string]string{extension.AnnotationSharedWeight: weight, extension.AnnotationGuaranteed: guaranteed, extension.AnnotationQuotaNamespaces: namespaces} {
			if v != "" {
				q.Annotation(key, v)
			}
		}
		updateErr := m.UpdateQuota(q.Obj())
		for _, s := range m.Statuses() {
			n := m.quotas[s.Name]
			for name, v := range s.Runtime {
				if v < 0 || v > n.Max[name] {
					t.Errorf("quota %s %s runtime %d outside [0, max %d]", s.Name, name, v, n.Max[name])
				}
			}
		}
		if _, err := m.Admission("b", true); err == nil && updateErr != nil {
			t.Errorf("quota b was rejected (%v) but is in the manager", updateErr)
		}
		_ = m.RevokeVictims("a")
		_ = m.OverUsed()
	})
}
