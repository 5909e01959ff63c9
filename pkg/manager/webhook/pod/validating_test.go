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
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koord-dev/koord/apis/extension"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// koordPod returns a single-container pod with QoS class qos (none when empty), priority priority (unset when
// 0) and the given requests and limits.
func koordPod(qos string, priority int32, requests, limits corev1.ResourceList) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team", Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
		}}},
	}
	if qos != "" {
		pod.Labels[extension.LabelPodQoS] = qos
	}
	if priority != 0 {
		pod.Spec.Priority = ptr.To(priority)
	}
	return pod
}

// annotated returns pod with the annotation key set to value.
func annotated(pod *corev1.Pod, key, value string) *corev1.Pod {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[key] = value
	return pod
}

// labelled returns pod with the label key set to value.
func labelled(pod *corev1.Pod, key, value string) *corev1.Pod {
	pod.Labels[key] = value
	return pod
}

func TestValidatingHandler(t *testing.T) {
	cpu2 := rl("cpu", "2", "memory", "1Gi")
	batch := rl(string(extension.BatchCPU), "1000", string(extension.BatchMemory), "1Gi")
	mid := rl(string(extension.MidCPU), "1000")
	tests := map[string]struct {
		op      admissionv1.Operation
		pod     *corev1.Pod
		old     *corev1.Pod
		wantMsg string // "" means allowed
	}{
		"pod without Koordinator labels": {
			pod: koordPod("", 0, cpu2, nil),
		},
		"BE batch pod": {
			pod: koordPod("BE", 5000, batch, batch),
		},
		"LSR pod with whole, fixed CPUs": {
			pod: koordPod("LSR", 9000, cpu2, cpu2),
		},
		"LSE pod whose request defaults to its limit": {
			pod: koordPod("LSE", 9500, nil, cpu2),
		},
		"LSE pod without priority": {
			pod: koordPod("LSE", 0, cpu2, cpu2),
		},
		"mid pod with mid resources": {
			pod: koordPod("LS", 7000, mid, mid),
		},
		"zero batch resources do not count": {
			pod: koordPod("LS", 0, rl(string(extension.BatchCPU), "0"), nil),
		},
		"reserve-pod annotation": {
			pod:     annotated(koordPod("", 0, nil, nil), extension.AnnotationReservePod, "true"),
			wantMsg: "metadata.annotations[scheduling.koordinator.sh/reserve-pod]: Forbidden: is reserved for the pods koord-scheduler makes from Reservations and cannot be set on a pod",
		},
		"a pod charged to a leaf quota": {
			pod: labelled(koordPod("", 0, nil, nil), extension.LabelQuotaName, "leaf"),
		},
		"a pod charged to a quota that does not exist goes to the default quota": {
			pod: labelled(koordPod("", 0, nil, nil), extension.LabelQuotaName, "nowhere"),
		},
		"a pod charged to a parent quota": {
			pod:     labelled(koordPod("", 0, nil, nil), extension.LabelQuotaName, "team"),
			wantMsg: `metadata.labels[quota.scheduling.koordinator.sh/name]: Forbidden: quota "team" is a parent quota: only quotas without children take pods`,
		},
		"an update that keeps a parent quota's label is let through": {
			op:  admissionv1.Update,
			old: labelled(koordPod("", 0, nil, nil), extension.LabelQuotaName, "team"),
			pod: labelled(koordPod("", 0, nil, nil), extension.LabelQuotaName, "team"),
		},
		"a reserve pod of koord-scheduler is not validated": {
			pod: reservePod(koordPod("ls", 0, nil, nil)),
		},
		"labels do not turn a pod into a reserve pod on update": {
			op:      admissionv1.Update,
			old:     koordPod("", 0, nil, nil),
			pod:     reservePod(labelled(koordPod("", 0, nil, nil), extension.LabelPodPriority, "high")),
			wantMsg: `metadata.labels[koordinator.sh/priority]: Invalid value: "high": "high" is not an int32: invalid syntax`,
		},
		"unknown QoS class": {
			pod:     koordPod("ls", 0, nil, nil),
			wantMsg: `metadata.labels[koordinator.sh/qosClass]: Unsupported value: "ls": supported values: "LSE", "LSR", "LS", "BE", "SYSTEM"`,
		},
		"malformed sub-priority": {
			pod:     labelled(koordPod("", 0, nil, nil), extension.LabelPodPriority, "high"),
			wantMsg: `metadata.labels[koordinator.sh/priority]: Invalid value: "high": "high" is not an int32: invalid syntax`,
		},
		"malformed resource-spec": {
			pod:     annotated(koordPod("", 0, nil, nil), extension.AnnotationResourceSpec, "{"),
			wantMsg: "metadata.annotations[scheduling.koordinator.sh/resource-spec]: Invalid value: unexpected end of JSON input",
		},
		"malformed resource-status": {
			pod:     annotated(koordPod("", 0, nil, nil), extension.AnnotationResourceStatus, `{"cpuset":"a-b"}`),
			wantMsg: `metadata.annotations[scheduling.koordinator.sh/resource-status]: Invalid value: `,
		},
		"malformed device-allocated": {
			pod:     annotated(koordPod("", 0, nil, nil), extension.AnnotationDeviceAllocated, `[]`),
			wantMsg: `metadata.annotations[scheduling.koordinator.sh/device-allocated]: Invalid value: `,
		},
		"malformed reservation-affinity": {
			pod:     annotated(koordPod("", 0, nil, nil), extension.AnnotationReservationAffinity, `"r1"`),
			wantMsg: `metadata.annotations[scheduling.koordinator.sh/reservation-affinity]: Invalid value: `,
		},
		"malformed extended-resource-spec": {
			pod:     annotated(koordPod("", 0, nil, nil), extension.AnnotationExtendedResourceSpec, `{"containers":[]}`),
			wantMsg: `metadata.annotations[node.koordinator.sh/extended-resource-spec]: Invalid value: `,
		},
		"malformed gang annotations": {
			pod: annotated(annotated(annotated(annotated(koordPod("", 0, nil, nil),
				extension.AnnotationGangMinNum, "0"),
				extension.AnnotationGangWaitTime, "soon"),
				extension.AnnotationGangMode, "Loose"),
				extension.AnnotationGangGroups, `["a"]`),
			wantMsg: `[metadata.annotations[gang.scheduling.koordinator.sh/min-available]: Invalid value: "0" is not a positive integer, ` +
				`metadata.annotations[gang.scheduling.koordinator.sh/waiting-time]: Invalid value: time: invalid duration "soon", ` +
				`metadata.annotations[gang.scheduling.koordinator.sh/mode]: Invalid value: unsupported value "Loose", ` +
				`metadata.annotations[gang.scheduling.koordinator.sh/groups]: Invalid value: [0]: "a" is not of the form namespace/name]`,
		},
		"batch resources without QoS class": {
			pod:     koordPod("", 5000, batch, nil),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Required value: must be BE because spec.containers[0].resources.requests[kubernetes.io/batch-cpu] is set",
		},
		"batch resources in an LS pod": {
			pod:     koordPod("LS", 5000, nil, rl(string(extension.KoordBatchMemory), "1Gi")),
			wantMsg: `metadata.labels[koordinator.sh/qosClass]: Invalid value: "LS": must be BE because spec.containers[0].resources.limits[koordinator.sh/batch-memory] is set`,
		},
		"mid resources in a prod pod": {
			pod:     koordPod("LS", 9000, mid, nil),
			wantMsg: "spec.containers[0].resources.requests[kubernetes.io/mid-cpu]: Forbidden: can only be requested by a koord-mid pod (spec.priority from 7000 to 7999, or label koordinator.sh/priority-class=koord-mid), not by a pod of priority class koord-prod",
		},
		"BE with prod": {
			pod:     koordPod("BE", 9000, nil, nil),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Forbidden: koordinator.sh/qosClass=BE and priorityClass=koord-prod cannot be used in combination",
		},
		"BE without priority class": {
			pod:     koordPod("BE", 0, nil, nil),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Forbidden: koordinator.sh/qosClass=BE and priorityClass=none cannot be used in combination",
		},
		"LSR with batch": {
			pod:     koordPod("LSR", 5000, cpu2, cpu2),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Forbidden: koordinator.sh/qosClass=LSR and priorityClass=koord-batch cannot be used in combination",
		},
		"LSR without priority class": {
			pod:     koordPod("LSR", 0, cpu2, cpu2),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Forbidden: koordinator.sh/qosClass=LSR and priorityClass=none cannot be used in combination",
		},
		"LSE with mid from the priority-class label": {
			pod:     labelled(koordPod("LSE", 9000, cpu2, cpu2), extension.LabelPodPriorityClass, "koord-mid"),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Forbidden: koordinator.sh/qosClass=LSE and priorityClass=koord-mid cannot be used in combination",
		},
		"LSR with fractional CPUs": {
			pod:     koordPod("LSR", 9000, rl("cpu", "1500m"), rl("cpu", "1500m")),
			wantMsg: `spec.containers[0].resources.requests[cpu]: Invalid value: "1500m": must be a whole number of CPUs in an LSR pod`,
		},
		"LSR with request below limit": {
			pod:     koordPod("LSR", 9000, rl("cpu", "1"), rl("cpu", "2")),
			wantMsg: `spec.containers[0].resources.limits[cpu]: Invalid value: "2": must equal the cpu request (1) in an LSR pod`,
		},
		"LSE without limit": {
			pod:     koordPod("LSE", 9000, rl("cpu", "1"), nil),
			wantMsg: "spec.containers[0].resources.limits[cpu]: Required value: must equal the cpu request (1) in an LSE pod",
		},
		"LSR without CPUs": {
			pod:     koordPod("LSR", 9000, rl("memory", "1Gi"), nil),
			wantMsg: "spec.containers[0].resources.requests[cpu]: Required value: an LSR pod must request a whole number of CPUs in every container",
		},
		"QoS class cannot change": {
			op:      admissionv1.Update,
			old:     koordPod("LS", 0, nil, nil),
			pod:     koordPod("SYSTEM", 0, nil, nil),
			wantMsg: `metadata.labels[koordinator.sh/qosClass]: Invalid value: "SYSTEM": field is immutable`,
		},
		"QoS class cannot be removed": {
			op:      admissionv1.Update,
			old:     koordPod("LS", 0, nil, nil),
			pod:     koordPod("", 0, nil, nil),
			wantMsg: `metadata.labels[koordinator.sh/qosClass]: Invalid value: "": field is immutable`,
		},
		"QoS class may be added before binding": {
			op:  admissionv1.Update,
			old: koordPod("", 5000, nil, nil),
			pod: koordPod("BE", 5000, nil, nil),
		},
		"sub-priority may be added before binding": {
			op:  admissionv1.Update,
			old: koordPod("LS", 9000, nil, nil),
			pod: labelled(koordPod("LS", 9000, nil, nil), extension.LabelPodPriority, "1"),
		},
		"QoS class cannot be added once bound": {
			op:      admissionv1.Update,
			old:     bound(koordPod("", 5000, nil, nil)),
			pod:     bound(koordPod("BE", 5000, nil, nil)),
			wantMsg: `metadata.labels[koordinator.sh/qosClass]: Invalid value: "BE": field is immutable`,
		},
		"an added QoS class must still fit the priority": {
			op:      admissionv1.Update,
			old:     koordPod("", 9000, nil, nil),
			pod:     koordPod("BE", 9000, nil, nil),
			wantMsg: "metadata.labels[koordinator.sh/qosClass]: Forbidden: koordinator.sh/qosClass=BE and priorityClass=koord-prod cannot be used in combination",
		},
		"priority class cannot change": {
			op:      admissionv1.Update,
			old:     koordPod("LS", 9000, nil, nil),
			pod:     labelled(koordPod("LS", 9000, nil, nil), extension.LabelPodPriorityClass, "koord-free"),
			wantMsg: `metadata.labels[koordinator.sh/priority-class]: Invalid value: "koord-free": field is immutable`,
		},
		"sub-priority cannot change": {
			op:      admissionv1.Update,
			old:     labelled(koordPod("LS", 9000, nil, nil), extension.LabelPodPriority, "1"),
			pod:     labelled(koordPod("LS", 9000, nil, nil), extension.LabelPodPriority, "2"),
			wantMsg: `metadata.labels[koordinator.sh/priority]: Invalid value: "2": field is immutable`,
		},
		"update keeps an old problem": {
			op:  admissionv1.Update,
			old: koordPod("LSR", 5000, cpu2, cpu2),
			pod: labelled(koordPod("LSR", 5000, cpu2, cpu2), "app", "web"),
		},
		"update adds a problem": {
			op:      admissionv1.Update,
			old:     koordPod("LSR", 5000, cpu2, cpu2),
			pod:     annotated(koordPod("LSR", 5000, cpu2, cpu2), extension.AnnotationGangMode, "Loose"),
			wantMsg: `metadata.annotations[gang.scheduling.koordinator.sh/mode]: Invalid value: unsupported value "Loose"`,
		},
		"kube-system is left alone": {
			pod: func() *corev1.Pod {
				pod := koordPod("BE", 9000, nil, nil)
				pod.Namespace = metav1.NamespaceSystem
				return pod
			}(),
		},
		"delete is not checked": {
			op:  admissionv1.Delete,
			pod: koordPod("BE", 9000, nil, nil),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			op := tc.op
			if op == "" {
				op = admissionv1.Create
			}
			reader := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(quotaTree()...).Build()
			handler := NewValidatingWebhook(reader, admission.NewDecoder(testScheme)).Handler
			resp := handler.Handle(ctx, request(t, op, tc.pod, tc.old))
			if tc.wantMsg == "" {
				if !resp.Allowed {
					t.Fatalf("pod denied: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("pod allowed, want denial %q", tc.wantMsg)
			}
			got := resp.Result.Message
			if len(tc.wantMsg) < len(got) && tc.wantMsg[len(tc.wantMsg)-1] == ' ' {
				got = got[:len(tc.wantMsg)] // the parser's own wording follows
			}
			if diff := cmp.Diff(tc.wantMsg, got); diff != "" {
				t.Errorf("message (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(int32(http.StatusForbidden), resp.Result.Code); diff != "" {
				t.Errorf("code (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidatingHandlerDecodeError(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	handler := NewValidatingWebhook(nil, admission.NewDecoder(testScheme)).Handler
	resp := handler.Handle(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: "team", Object: runtime.RawExtension{Raw: []byte("{")},
	}})
	if diff := cmp.Diff(int32(http.StatusBadRequest), resp.Result.Code); diff != "" || resp.Allowed {
		t.Errorf("allowed=%v, code (-want,+got):\n%s", resp.Allowed, diff)
	}
}

func bound(p *corev1.Pod) *corev1.Pod {
	p.Spec.NodeName = "node-1"
	return p
}

// reservePod labels pod as koord-scheduler labels the pods it places Reservations with.
func reservePod(pod *corev1.Pod) *corev1.Pod {
	return labelled(labelled(pod, extension.LabelReservePod, "true"), extension.LabelReservationName, "r1")
}

// quotaTree is a parent quota team with a child leaf.
func quotaTree() []client.Object {
	return []client.Object{
		&schedulingsigsv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "q", Name: "team", Labels: map[string]string{extension.LabelQuotaIsParent: "true"}}},
		&schedulingsigsv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "q", Name: "leaf", Labels: map[string]string{extension.LabelQuotaParent: "team"}}},
	}
}
