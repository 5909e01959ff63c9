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

package pod

import (
	"encoding/json"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/randfill"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
)

// fuzzProfiles exercise every step of the mutation on the pods the fuzzer builds.
func fuzzProfiles() []client.Object {
	return []client.Object{
		profile("a-everyone", configv1alpha1.ClusterColocationProfileSpec{
			Labels:                map[string]string{"colocation": "on"},
			Annotations:           map[string]string{"colocation": "on"},
			LabelKeysMapping:      map[string]string{"app": "app-orig"},
			AnnotationKeysMapping: map[string]string{"note": "note-orig"},
			LabelSuffixes:         map[string]string{"app": "-co"},
		}),
		profile("b-batch", configv1alpha1.ClusterColocationProfileSpec{
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"batch"}},
			}},
			Probability:         ptr.To(intstr.FromString("50%")),
			QoSClass:            "BE",
			PriorityClassName:   "koord-batch",
			KoordinatorPriority: ptr.To[int32](7),
			SchedulerName:       "koord-scheduler",
			Patch:               runtime.RawExtension{Raw: []byte(`{"spec":{"tolerations":[{"key":"colocation","operator":"Exists"}]}}`)},
		}),
		profile("c-mid", configv1alpha1.ClusterColocationProfileSpec{
			Selector:          &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "mid"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}},
			QoSClass:          "LS",
			PriorityClassName: "koord-mid",
		}),
	}
}

// fuzzSeeds are raw pod objects: valid pods, edge cases and garbage.
var fuzzSeeds = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"team","labels":{"tier":"batch","app":"web"}},` +
		`"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"2"}}}],"overhead":{"cpu":"100m"}}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"m","namespace":"team","labels":{"tier":"mid"}},` +
		`"spec":{"initContainers":[{"name":"i","resources":{"limits":{"memory":"1Gi"}}}],"containers":[{"name":"c","resources":{"limits":{"cpu":"0.0001"}}}]}}`,
	`{"metadata":{"labels":{"app":"x-co","app-orig":"y","koordinator.sh/qosClass":"BE"},"annotations":{"node.koordinator.sh/extended-resource-spec":"[]"}},` +
		`"spec":{"priority":5500,"containers":[{"name":"c","resources":{"requests":{"cpu":"1e3","kubernetes.io/batch-cpu":"5"}}},{"name":"c"}]}}`,
	`{"metadata":{"annotations":{"gang.scheduling.koordinator.sh/min-available":"-1","scheduling.koordinator.sh/resource-spec":"{"}},` +
		`"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"-1","memory":"9223372036854775807"}}}]}}`,
	`{"status":{"qosClass":"BestEffort"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`,
	`{}`, `null`, `[]`, `{`, `"pod"`, `{"spec":{"containers":"none"}}`, `{"metadata":{"labels":null},"spec":null}`,
}

// FuzzPodMutateAndValidate feeds the pod handlers arbitrary objects: the input both as raw JSON and as the seed
// of a random pod. Nothing may panic, an allowed mutation's patch must apply to the object, and mutating the
// result again must produce no patch.
func FuzzPodMutateAndValidate(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add([]byte(seed))
	}
	decoder := admission.NewDecoder(testScheme)
	reader := newReader(append(append(priorityClasses(), namespace("team", map[string]string{"colocation": "on"})), fuzzProfiles()...)...)
	mutating := NewMutatingWebhook(reader, decoder, WithRandom(func() int { return 0 })).Handler
	validating := NewValidatingWebhook(nil, decoder).Handler
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := logr.NewContext(t.Context(), logr.Discard()) // the handlers log every mutation at V(2)
		inputs := [][]byte{data}
		if raw, err := json.Marshal(randomPod(data)); err == nil {
			inputs = append(inputs, raw)
		}
		for _, raw := range inputs {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Namespace: "team", Object: runtime.RawExtension{Raw: raw},
			}}
			mutating.Handle(ctx, req)
			validating.Handle(ctx, req)

			// The apiserver sends canonical JSON; check idempotence on that form.
			pod := &corev1.Pod{}
			if err := decoder.DecodeRaw(req.Object, pod); err != nil {
				continue
			}
			canonical, err := json.Marshal(pod)
			if err != nil {
				t.Fatalf("encoding decoded pod: %v", err)
			}
			req.Object.Raw = canonical
			resp := mutating.Handle(ctx, req)
			if !resp.Allowed {
				continue
			}
			mutated := applyResponse(t, canonical, resp)
			req.Object.Raw = mutated
			if again := mutating.Handle(ctx, req); !again.Allowed || len(again.Patches) != 0 {
				t.Fatalf("mutating %s\nthen %s\nagain: allowed=%v patches %v", canonical, mutated, again.Allowed, again.Patches)
			}
			validating.Handle(ctx, req)
			update := req
			update.Operation = admissionv1.Update
			update.OldObject = runtime.RawExtension{Raw: canonical}
			validating.Handle(ctx, update)
		}
	})
}

// randomPod builds a pod from data with randfill, steering labels, annotations, priorities and resources
// towards the values the handlers look at.
func randomPod(data []byte) *corev1.Pod {
	pick := func(c randfill.Continue, values ...string) string { return values[c.Intn(len(values))] }
	pod := &corev1.Pod{}
	randfill.NewFromGoFuzz(data).NilChance(0.3).NumElements(0, 3).MaxDepth(6).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = resource.MustParse(pick(c, "0", "1", "500m", "1.5", "0.0001", "2Gi", "1e3", "-1", "9223372036854775807"))
		},
		func(l *corev1.ResourceList, c randfill.Continue) {
			*l = corev1.ResourceList{}
			for range c.Intn(4) {
				var q resource.Quantity
				c.Fill(&q)
				(*l)[corev1.ResourceName(pick(c, "cpu", "memory", string(extension.BatchCPU), string(extension.BatchMemory),
					string(extension.MidCPU), string(extension.KoordBatchCPU), "nvidia.com/gpu"))] = q
			}
		},
		func(s *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*s = intstr.FromInt32(c.Int31n(100))
			} else {
				*s = intstr.FromString(pick(c, "50%", "http", ""))
			}
		},
		func(t *metav1.TypeMeta, c randfill.Continue) {
			if c.Bool() {
				t.APIVersion, t.Kind = "v1", "Pod"
			}
		},
		func(t *metav1.Time, _ randfill.Continue) { *t = metav1.Time{} },
		func(t *metav1.MicroTime, _ randfill.Continue) { *t = metav1.MicroTime{} },
		func(f *metav1.FieldsV1, _ randfill.Continue) { f.SetRawBytes(nil) },
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name, m.Namespace = pick(c, "p", ""), pick(c, "team", "")
			m.Labels = map[string]string{}
			for range c.Intn(5) {
				switch key := pick(c, "app", "tier", "app-orig", extension.LabelPodQoS, extension.LabelPodPriorityClass, extension.LabelPodPriority); key {
				case "tier":
					m.Labels[key] = pick(c, "batch", "mid", "prod")
				case extension.LabelPodQoS:
					m.Labels[key] = pick(c, "LSE", "LSR", "LS", "BE", "SYSTEM", "ls")
				case extension.LabelPodPriorityClass:
					m.Labels[key] = pick(c, "koord-prod", "koord-mid", "koord-batch", "koord-free", "gold")
				case extension.LabelPodPriority:
					m.Labels[key] = pick(c, "1", "-5", "high")
				default:
					m.Labels[key] = pick(c, "web", "web-co", "", "x-co-co")
				}
			}
			m.Annotations = map[string]string{}
			for range c.Intn(4) {
				key := pick(c, "note", extension.AnnotationReservePod, extension.AnnotationExtendedResourceSpec, extension.AnnotationResourceSpec,
					extension.AnnotationDeviceAllocated, extension.AnnotationGangMinNum, extension.AnnotationGangGroups)
				m.Annotations[key] = pick(c, "", "{}", "[]", "{", "3", `["ns/a"]`, `{"containers":{"c":{"requests":{"kubernetes.io/batch-cpu":"1"}}}}`)
			}
		},
		func(s *corev1.PodSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if c.Bool() {
				s.Priority = ptr.To(pick32(c, 0, 3500, 5000, 7000, 9000, 2000000000))
			}
		},
	).Fill(pod)
	return pod
}

// pick32 returns one of values.
func pick32(c randfill.Continue, values ...int32) int32 { return values[c.Intn(len(values))] }
