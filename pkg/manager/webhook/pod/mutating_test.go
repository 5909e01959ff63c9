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
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
)

// quantityComparer compares quantities by value.
var quantityComparer = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// basePod is a Burstable pod with init and regular containers and an overhead.
func basePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name:      "init",
				Resources: corev1.ResourceRequirements{Requests: rl("cpu", "500m", "memory", "128Mi"), Limits: rl("cpu", "1", "memory", "256Mi")},
			}},
			Containers: []corev1.Container{
				{Name: "main", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("cpu", "2", "memory", "2Gi")}},
				{Name: "sidecar", Resources: corev1.ResourceRequirements{Limits: rl("cpu", "100m", "memory", "64Mi")}},
				{Name: "logger", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "50m")}},
			},
			Overhead: rl("cpu", "100m", "memory", "10Mi"),
		},
	}
}

// withPod returns basePod changed by fn.
func withPod(fn func(*corev1.Pod)) *corev1.Pod {
	pod := basePod()
	fn(pod)
	return pod
}

// profile returns a ClusterColocationProfile named name with spec.
func profile(name string, spec configv1alpha1.ClusterColocationProfileSpec) *configv1alpha1.ClusterColocationProfile {
	return &configv1alpha1.ClusterColocationProfile{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// selectApp selects the pods of basePod.
var selectApp = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

// batchResources is basePod's resources in their koord-batch form.
func batchResources(pod *corev1.Pod) {
	pod.Spec.InitContainers[0].Resources = corev1.ResourceRequirements{
		Requests: rl(string(extension.BatchCPU), "500", string(extension.BatchMemory), "128Mi"),
		Limits:   rl(string(extension.BatchCPU), "1000", string(extension.BatchMemory), "256Mi"),
	}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: rl(string(extension.BatchCPU), "1000", string(extension.BatchMemory), "1Gi"),
		Limits:   rl(string(extension.BatchCPU), "2000", string(extension.BatchMemory), "2Gi"),
	}
	pod.Spec.Containers[1].Resources = corev1.ResourceRequirements{
		Requests: rl(string(extension.BatchCPU), "100", string(extension.BatchMemory), "64Mi"),
		Limits:   rl(string(extension.BatchCPU), "100", string(extension.BatchMemory), "64Mi"),
	}
	pod.Spec.Containers[2].Resources = corev1.ResourceRequirements{Requests: rl(string(extension.BatchCPU), "50")}
	pod.Spec.Overhead = rl(string(extension.BatchCPU), "100", string(extension.BatchMemory), "10Mi")
}

// batchSpec is the extended resource spec of basePod in its koord-batch form.
const batchSpec = `{"containers":{` +
	`"logger":{"requests":{"kubernetes.io/batch-cpu":"50"}},` +
	`"main":{"limits":{"kubernetes.io/batch-cpu":"2k","kubernetes.io/batch-memory":"2Gi"},"requests":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":"1Gi"}},` +
	`"sidecar":{"limits":{"kubernetes.io/batch-cpu":"100","kubernetes.io/batch-memory":"64Mi"},"requests":{"kubernetes.io/batch-cpu":"100","kubernetes.io/batch-memory":"64Mi"}}}}`

func TestMutatingHandler(t *testing.T) {
	never := corev1.PreemptNever
	lower := corev1.PreemptLowerPriority
	tests := map[string]struct {
		objs    []client.Object
		pod     *corev1.Pod
		op      admissionv1.Operation
		random  int
		wantPod *corev1.Pod // nil: no patch
		// wantProfiles is the koord.dev/colocation-profiles annotation wantPod gets besides what it lists.
		wantProfiles string
		wantDeny     string
	}{
		"no profile leaves the pod alone": {
			pod: basePod(),
		},
		"a reserve pod is left alone whatever profile matches it": {
			objs: []client.Object{profile("batch", configv1alpha1.ClusterColocationProfileSpec{
				Selector: selectApp, QoSClass: "BE", PriorityClassName: "koord-batch", SchedulerName: "koord-scheduler",
			})},
			pod: withPod(func(pod *corev1.Pod) {
				pod.Labels[extension.LabelReservePod] = "true"
				pod.Labels[extension.LabelReservationName] = "r1"
			}),
		},
		"batch profile sets QoS, priority, scheduler and batch resources": {
			wantProfiles: "batch",
			objs: []client.Object{profile("batch", configv1alpha1.ClusterColocationProfileSpec{
				Selector:            selectApp,
				QoSClass:            "BE",
				PriorityClassName:   "koord-batch",
				KoordinatorPriority: ptr.To[int32](1111),
				SchedulerName:       "koord-scheduler",
				Labels:              map[string]string{"team": "a"},
				Annotations:         map[string]string{"note": "x"},
			})},
			pod: basePod(),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Labels = map[string]string{"app": "web", "team": "a", extension.LabelPodQoS: "BE", extension.LabelPodPriority: "1111"}
				pod.Annotations = map[string]string{"note": "x", extension.AnnotationExtendedResourceSpec: batchSpec}
				pod.Spec.SchedulerName = "koord-scheduler"
				pod.Spec.PriorityClassName = "koord-batch"
				pod.Spec.Priority = ptr.To[int32](5000)
				pod.Spec.PreemptionPolicy = &never
				batchResources(pod)
			}),
		},
		"mid profile sets mid resources and no extended resource spec": {
			wantProfiles: "mid",
			objs:         []client.Object{profile("mid", configv1alpha1.ClusterColocationProfileSpec{QoSClass: "LS", PriorityClassName: "koord-mid"})},
			pod: withPod(func(pod *corev1.Pod) {
				pod.Spec.InitContainers = nil
				pod.Spec.Containers = pod.Spec.Containers[:1]
				pod.Spec.Overhead = nil
			}),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Labels[extension.LabelPodQoS] = "LS"
				pod.Spec.PriorityClassName = "koord-mid"
				pod.Spec.Priority = ptr.To[int32](7000)
				pod.Spec.PreemptionPolicy = &lower
				pod.Spec.InitContainers = nil
				pod.Spec.Containers = pod.Spec.Containers[:1]
				pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: rl(string(extension.MidCPU), "1000", string(extension.MidMemory), "1Gi"),
					Limits:   rl(string(extension.MidCPU), "2000", string(extension.MidMemory), "2Gi"),
				}
				pod.Spec.Overhead = nil
			}),
		},
		"free profile keeps cpu and memory": {
			wantProfiles: "free",
			objs:         []client.Object{profile("free", configv1alpha1.ClusterColocationProfileSpec{QoSClass: "BE", PriorityClassName: "koord-free"})},
			pod:          basePod(),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Labels[extension.LabelPodQoS] = "BE"
				pod.Spec.PriorityClassName = "koord-free"
				pod.Spec.Priority = ptr.To[int32](3000)
				pod.Spec.PreemptionPolicy = &lower
			}),
		},
		"skip-update-resources keeps cpu and memory": {
			wantProfiles: "batch",
			objs: []client.Object{func() client.Object {
				p := profile("batch", configv1alpha1.ClusterColocationProfileSpec{QoSClass: "BE", PriorityClassName: "koord-batch"})
				p.Annotations = map[string]string{extension.AnnotationSkipUpdateResources: "true"}
				return p
			}()},
			pod: basePod(),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Labels[extension.LabelPodQoS] = "BE"
				pod.Spec.PriorityClassName = "koord-batch"
				pod.Spec.Priority = ptr.To[int32](5000)
				pod.Spec.PreemptionPolicy = &never
			}),
		},
		"selector that does not match": {
			objs: []client.Object{profile("batch", configv1alpha1.ClusterColocationProfileSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				QoSClass: "BE",
			})},
			pod: basePod(),
		},
		"invalid selector is no match": {
			objs: []client.Object{profile("batch", configv1alpha1.ClusterColocationProfileSpec{
				Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}},
				QoSClass: "BE",
			})},
			pod: basePod(),
		},
		"namespace selector that matches": {
			wantProfiles: "ls",
			objs: []client.Object{
				namespace("team", map[string]string{"colocation": "on"}),
				profile("ls", configv1alpha1.ClusterColocationProfileSpec{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}},
					QoSClass:          "LS",
				}),
			},
			pod:     basePod(),
			wantPod: withPod(func(pod *corev1.Pod) { pod.Labels[extension.LabelPodQoS] = "LS" }),
		},
		"namespace selector that does not match": {
			objs: []client.Object{
				namespace("team", map[string]string{"colocation": "off"}),
				profile("ls", configv1alpha1.ClusterColocationProfileSpec{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}},
					QoSClass:          "LS",
				}),
			},
			pod: basePod(),
		},
		"unreadable namespace is no match": {
			objs: []client.Object{profile("ls", configv1alpha1.ClusterColocationProfileSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"colocation": "on"}},
				QoSClass:          "LS",
			})},
			pod: basePod(),
		},
		"empty namespace selector matches without reading the namespace": {
			wantProfiles: "ls",
			objs: []client.Object{profile("ls", configv1alpha1.ClusterColocationProfileSpec{
				NamespaceSelector: &metav1.LabelSelector{},
				QoSClass:          "LS",
			})},
			pod:     basePod(),
			wantPod: withPod(func(pod *corev1.Pod) { pod.Labels[extension.LabelPodQoS] = "LS" }),
		},
		"probability 0 skips the profile but the pod is still translated": {
			objs: []client.Object{profile("never", configv1alpha1.ClusterColocationProfileSpec{
				Probability: ptr.To(intstr.FromInt32(0)),
				Labels:      map[string]string{"x": "y"},
			})},
			pod: withPod(func(pod *corev1.Pod) { pod.Spec.Priority = ptr.To[int32](5500) }),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Spec.Priority = ptr.To[int32](5500)
				pod.Annotations = map[string]string{extension.AnnotationExtendedResourceSpec: batchSpec}
				batchResources(pod)
			}),
		},
		"probability applies below the random number": {
			wantProfiles: "half",
			objs: []client.Object{profile("half", configv1alpha1.ClusterColocationProfileSpec{
				Probability: ptr.To(intstr.FromString("50%")),
				Labels:      map[string]string{"x": "y"},
			})},
			random:  49,
			pod:     basePod(),
			wantPod: withPod(func(pod *corev1.Pod) { pod.Labels["x"] = "y" }),
		},
		"probability skips at the random number": {
			objs: []client.Object{profile("half", configv1alpha1.ClusterColocationProfileSpec{
				Probability: ptr.To(intstr.FromInt32(50)),
				Labels:      map[string]string{"x": "y"},
			})},
			random: 50,
			pod:    basePod(),
		},
		"invalid probability skips the profile": {
			objs: []client.Object{profile("bad", configv1alpha1.ClusterColocationProfileSpec{
				Probability: ptr.To(intstr.FromString("half")),
				Labels:      map[string]string{"x": "y"},
			})},
			pod: basePod(),
		},
		"later profile wins": {
			wantProfiles: "a,b",
			objs: []client.Object{
				profile("b", configv1alpha1.ClusterColocationProfileSpec{Labels: map[string]string{"tier": "b"}}),
				profile("a", configv1alpha1.ClusterColocationProfileSpec{Labels: map[string]string{"tier": "a", "first": "a"}}),
			},
			pod:     basePod(),
			wantPod: withPod(func(pod *corev1.Pod) { pod.Labels["tier"], pod.Labels["first"] = "b", "a" }),
		},
		"key mappings and label suffixes": {
			wantProfiles: "map",
			objs: []client.Object{profile("map", configv1alpha1.ClusterColocationProfileSpec{
				LabelKeysMapping:      map[string]string{"app": "app-copy", "missing": "empty"},
				AnnotationKeysMapping: map[string]string{"src": "dst"},
				LabelSuffixes:         map[string]string{"app": "-be", "absent": "-x"},
			})},
			pod: withPod(func(pod *corev1.Pod) { pod.Annotations = map[string]string{"src": "v"} }),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Labels = map[string]string{"app": "web-be", "app-copy": "web", "empty": ""}
				pod.Annotations = map[string]string{"src": "v", "dst": "v"}
			}),
		},
		"patch is applied last": {
			wantProfiles: "patch",
			objs: []client.Object{profile("patch", configv1alpha1.ClusterColocationProfileSpec{
				Labels: map[string]string{"patched": "false"},
				Patch: runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"patched":"true"}},` +
					`"spec":{"tolerations":[{"key":"colocation","operator":"Exists"}],"containers":[{"name":"main","env":[{"name":"E","value":"1"}]}]}}`)},
			})},
			pod: basePod(),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Labels["patched"] = "true"
				pod.Spec.Tolerations = []corev1.Toleration{{Key: "colocation", Operator: corev1.TolerationOpExists}}
				pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "E", Value: "1"}}
			}),
		},
		"missing PriorityClass denies the pod": {
			objs:     []client.Object{profile("gold", configv1alpha1.ClusterColocationProfileSpec{PriorityClassName: "koord-gold"})},
			pod:      basePod(),
			wantDeny: `ClusterColocationProfile "gold": spec.priorityClassName: Not found: "koord-gold"`,
		},
		"patch that does not apply denies the pod": {
			objs: []client.Object{profile("broken", configv1alpha1.ClusterColocationProfileSpec{
				Patch: runtime.RawExtension{Raw: []byte(`{"spec":{"containers":{"name":"main"}}}`)},
			})},
			pod:      basePod(),
			wantDeny: `ClusterColocationProfile "broken": spec.patch: Invalid value`,
		},
		"update mutates nothing": {
			objs: []client.Object{profile("batch", configv1alpha1.ClusterColocationProfileSpec{QoSClass: "BE", PriorityClassName: "koord-batch"})},
			op:   admissionv1.Update,
			pod:  basePod(),
		},
		"kube-system is left alone": {
			objs: []client.Object{profile("batch", configv1alpha1.ClusterColocationProfileSpec{QoSClass: "BE", PriorityClassName: "koord-batch"})},
			pod:  withPod(func(pod *corev1.Pod) { pod.Namespace = metav1.NamespaceSystem }),
		},
		"batch resources without a profile get the extended resource spec": {
			pod: withPod(batchResources),
			wantPod: withPod(func(pod *corev1.Pod) {
				batchResources(pod)
				pod.Annotations = map[string]string{extension.AnnotationExtendedResourceSpec: batchSpec}
			}),
		},
		"stale extended resource spec becomes empty": {
			pod: withPod(func(pod *corev1.Pod) {
				pod.Annotations = map[string]string{extension.AnnotationExtendedResourceSpec: batchSpec}
			}),
			wantPod: withPod(func(pod *corev1.Pod) {
				pod.Annotations = map[string]string{extension.AnnotationExtendedResourceSpec: "{}"}
			}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			reader := newReader(append(priorityClasses(), tc.objs...)...)
			handler := NewMutatingWebhook(reader, admission.NewDecoder(testScheme), WithRandom(func() int { return tc.random })).Handler
			op := tc.op
			if op == "" {
				op = admissionv1.Create
			}
			req := request(t, op, tc.pod, nil)
			resp := handler.Handle(ctx, req)
			if tc.wantDeny != "" {
				if resp.Allowed || !strings.HasPrefix(resp.Result.Message, tc.wantDeny) {
					t.Fatalf("response allowed=%v message %q, want a denial starting with %q", resp.Allowed, resp.Result.Message, tc.wantDeny)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("pod denied: %v", resp.Result)
			}
			if tc.wantPod == nil {
				if len(resp.Patches) != 0 {
					t.Fatalf("got patch %v, want none", resp.Patches)
				}
				return
			}
			if tc.wantProfiles != "" {
				tc.wantPod.Annotations = merge(tc.wantPod.Annotations, map[string]string{extension.AnnotationColocationProfiles: tc.wantProfiles})
			}
			mutated := applyResponse(t, req.Object.Raw, resp)
			if diff := cmp.Diff(tc.wantPod, decodePod(t, mutated), quantityComparer); diff != "" {
				t.Errorf("mutated pod (-want,+got):\n%s", diff)
			}
			req.Object.Raw = mutated
			if again := handler.Handle(ctx, req); !again.Allowed || len(again.Patches) != 0 {
				t.Errorf("mutating the mutated pod: allowed=%v patches %v, want no patch", again.Allowed, again.Patches)
			}
		})
	}
}

func TestMutatingHandlerErrors(t *testing.T) {
	listErr := errors.New("cache not started")
	tests := map[string]struct {
		reader   client.Reader
		raw      []byte
		wantCode int32
	}{
		"object that is not a pod": {
			reader:   newReader(),
			raw:      []byte(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":"none"}}`),
			wantCode: http.StatusBadRequest,
		},
		"profiles cannot be listed": {
			reader: interceptor.NewClient(newReader(), interceptor.Funcs{
				List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return listErr },
			}),
			raw:      encode(t, basePod()),
			wantCode: http.StatusInternalServerError,
		},
		"PriorityClass cannot be read": {
			reader: interceptor.NewClient(newReader(profile("p", configv1alpha1.ClusterColocationProfileSpec{PriorityClassName: "koord-batch"})), interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return listErr
				},
			}),
			raw:      encode(t, basePod()),
			wantCode: http.StatusInternalServerError,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			handler := NewMutatingWebhook(tc.reader, admission.NewDecoder(testScheme)).Handler
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Namespace: "team", Object: runtime.RawExtension{Raw: tc.raw},
			}}
			resp := handler.Handle(ctx, req)
			if diff := cmp.Diff(tc.wantCode, resp.Result.Code); diff != "" || resp.Allowed {
				t.Errorf("allowed=%v, code (-want,+got):\n%s", resp.Allowed, diff)
			}
		})
	}
}

// TestMutatingHandlerAudit checks that a mutation is logged with the profiles applied and the changes.
func TestMutatingHandlerAudit(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(2)))
	ctx := klog.NewContext(t.Context(), logger)
	reader := newReader(profile("be", configv1alpha1.ClusterColocationProfileSpec{QoSClass: "BE"}))
	handler := NewMutatingWebhook(reader, admission.NewDecoder(testScheme)).Handler
	if resp := handler.Handle(ctx, request(t, admissionv1.Create, basePod(), nil)); !resp.Allowed {
		t.Fatalf("pod denied: %v", resp.Result)
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	for _, want := range []string{`Mutated pod`, `pod="team/web"`, `profiles=["be"]`, `add /metadata/labels/koordinator.sh~1qosClass`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log %q does not contain %q", logs, want)
		}
	}
}
