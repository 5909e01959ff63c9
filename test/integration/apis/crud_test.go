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

package apis

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// statusByKind is a valid status for each kind, written through the status subresource. Kinds whose status
// has no fields (NodeSLO, ClusterColocationProfile) get an empty one: for them the test still checks that the
// subresource exists and that it cannot change the spec.
var statusByKind = map[string]map[string]any{
	"NodeMetric": {
		"updateTime": "2026-11-29T10:00:00Z",
		"nodeMetric": map[string]any{
			"nodeUsage":   map[string]any{"resources": map[string]any{"cpu": "2", "memory": "4Gi"}},
			"systemUsage": map[string]any{"resources": map[string]any{"cpu": "500m", "memory": "1Gi"}},
		},
		"podsMetric": []any{map[string]any{
			"namespace": "default", "name": "web-0", "priority": "koord-prod", "qos": "LS",
			"podUsage": map[string]any{"resources": map[string]any{"cpu": "1", "memory": "2Gi"}},
		}},
	},
	"ClusterNetworkTopology": {
		"detailStatus": []any{
			map[string]any{
				"topologyInfo":       map[string]any{"topologyLayer": "ClusterTopologyLayer", "topologyName": ""},
				"childTopologyLayer": "SpineLayer", "childTopologyNames": []any{"s1"}, "nodeNum": int64(2),
			},
			map[string]any{
				"topologyInfo":       map[string]any{"topologyLayer": "SpineLayer", "topologyName": "s1"},
				"parentTopologyInfo": map[string]any{"topologyLayer": "ClusterTopologyLayer", "topologyName": ""},
				"childTopologyLayer": "NodeTopologyLayer", "nodeNum": int64(2),
			},
		},
	},
	"NodeSLO":                  {},
	"ClusterColocationProfile": {},
	"Reservation": {
		"phase":       "Available",
		"nodeName":    "node-1",
		"allocatable": map[string]any{"cpu": "2", "memory": "4Gi"},
		"conditions": []any{map[string]any{
			"type": "Scheduled", "status": "True", "reason": "Scheduled",
			"lastProbeTime": "2026-11-29T10:00:00Z", "lastTransitionTime": "2026-11-29T10:00:00Z",
		}},
	},
	"Device": {
		"allocations": []any{map[string]any{
			"type":    "gpu",
			"entries": []any{map[string]any{"namespace": "default", "name": "train-0", "uuid": "0f1e2d3c", "minors": []any{int64(0)}}},
		}},
	},
	"PodMigrationJob": {
		"phase":   "Running",
		"status":  "Prepare",
		"reason":  "WaitForReservation",
		"message": "waiting for the reservation to be scheduled",
	},
	"ElasticQuotaProfile": {},
	"ElasticQuota":        {"used": map[string]any{"cpu": "1", "memory": "1Gi"}},
	"PodGroup":            {"phase": "Running", "running": int64(2), "scheduled": int64(2)},
}

// TestCRUDEveryKind creates, reads, updates (spec and status) and deletes one object of every kind Koord
// serves, starting from its sample.
func TestCRUDEveryKind(t *testing.T) {
	ctx := t.Context()
	samples := map[string]*unstructured.Unstructured{}
	for _, m := range readManifests(t, "config/samples/*.yaml") {
		gk := m.obj.GroupVersionKind().GroupKind().String()
		if _, ok := samples[gk]; !ok {
			samples[gk] = m.obj
		}
	}
	for _, crd := range env.CRDs {
		kind := crd.Spec.Names.Kind
		gk := kind + "." + crd.Spec.Group
		t.Run(gk, func(t *testing.T) {
			sample, ok := samples[gk]
			if !ok {
				t.Fatalf("no sample of kind %s in config/samples", gk)
			}
			withSubresource := hasStatusSubresource(crd)
			status, ok := statusByKind[kind]
			if !ok && withSubresource {
				t.Fatalf("the test has no status for kind %s: add one to statusByKind", kind)
			}

			obj := sample.DeepCopy()
			obj.SetName(sample.GetName() + "-crud")
			obj.SetResourceVersion("")
			unstructured.RemoveNestedField(obj.Object, "status")
			ensureNamespace(ctx, t, obj.GetNamespace())

			// Create and read back.
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			got := newLike(obj)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := cmp.Diff(specOf(sample), specOf(got), specDefaultsIgnored()); diff != "" {
				t.Errorf("spec read back differs from the one written (-written +read):\n%s", diff)
			}

			// Update metadata and spec.
			labels := got.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["koord.dev/crud"] = "updated"
			got.SetLabels(labels)
			if err := env.Client.Update(ctx, got); err != nil {
				t.Fatalf("update: %v", err)
			}
			updated := newLike(obj)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), updated); err != nil {
				t.Fatalf("get after update: %v", err)
			}
			if updated.GetLabels()["koord.dev/crud"] != "updated" {
				t.Errorf("label written by update is missing: %v", updated.GetLabels())
			}

			// Update status: the status sticks, and the subresource ignores changes elsewhere. Kinds without a
			// status subresource (the community's NodeResourceTopology, whose content is top-level) skip it.
			if !withSubresource {
				if err := env.Client.Delete(ctx, updated); err != nil {
					t.Fatalf("delete: %v", err)
				}
				return
			}
			specBefore := updated.Object["spec"]
			withStatus := updated.DeepCopy()
			withStatus.Object["status"] = status
			withStatus.SetLabels(map[string]string{"koord.dev/crud": "changed-through-status"})
			if err := env.Client.Status().Update(ctx, withStatus); err != nil {
				t.Fatalf("status update: %v", err)
			}
			afterStatus := newLike(obj)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), afterStatus); err != nil {
				t.Fatalf("get after status update: %v", err)
			}
			if len(status) > 0 {
				if diff := cmp.Diff(status, afterStatus.Object["status"], specDefaultsIgnored()); diff != "" {
					t.Errorf("status read back differs from the one written (-written +read):\n%s", diff)
				}
			}
			if afterStatus.GetLabels()["koord.dev/crud"] != "updated" {
				t.Errorf("status update changed metadata: labels %v", afterStatus.GetLabels())
			}
			if diff := cmp.Diff(specBefore, afterStatus.Object["spec"]); diff != "" {
				t.Errorf("status update changed the spec (-before +after):\n%s", diff)
			}

			// Delete.
			if err := env.Client.Delete(ctx, afterStatus); err != nil {
				t.Fatalf("delete: %v", err)
			}
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), newLike(obj))
			if !apierrors.IsNotFound(err) {
				t.Errorf("get after delete: got %v, want NotFound", err)
			}
		})
	}
}

func newLike(obj *unstructured.Unstructured) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GroupVersionKind())
	return u
}

// specDefaultsIgnored compares what was written with what was read, ignoring fields the apiserver added
// (OpenAPI defaults): only the keys present on the written side are compared.
func specDefaultsIgnored() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		mi, ok := p.Last().(cmp.MapIndex)
		if !ok {
			return false
		}
		vx, _ := mi.Values()
		return !vx.IsValid()
	}, cmp.Ignore())
}

// hasStatusSubresource reports whether the storage version of crd has the status subresource.
func hasStatusSubresource(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return false
}

// specOf returns what a user writes of obj: its spec, or, for kinds without one, every field but the
// metadata, kind and apiVersion.
func specOf(obj *unstructured.Unstructured) any {
	if spec, ok := obj.Object["spec"]; ok {
		return spec
	}
	out := map[string]any{}
	for k, v := range obj.Object {
		switch k {
		case "metadata", "kind", "apiVersion", "status":
		default:
			out[k] = v
		}
	}
	return out
}
