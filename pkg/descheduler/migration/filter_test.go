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

package migration

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

func TestRefuse(t *testing.T) {
	d, rs := makeDeployment("web", 3)
	_, rs1 := makeDeployment("single", 1)
	owned := ownedBy(rs)
	skip := func(g config.EvictionGate) func(a *config.MigrationControllerArgs) {
		return func(a *config.MigrationControllerArgs) { a.SkipEvictionGates = []config.EvictionGate{g} }
	}
	withVolume := func(v corev1.VolumeSource) podOption {
		return func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: v}} }
	}
	inProgress := &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Spec:       schedv1alpha1.PodMigrationJobSpec{PodRef: &corev1.ObjectReference{Namespace: "ns", Name: "busy"}},
		Status:     schedv1alpha1.PodMigrationJobStatus{Phase: schedv1alpha1.PodMigrationJobRunning},
	}
	finished := &schedv1alpha1.PodMigrationJob{
		ObjectMeta: metav1.ObjectMeta{Name: "done"},
		Spec:       schedv1alpha1.PodMigrationJobSpec{PodRef: &corev1.ObjectReference{Namespace: "ns", Name: "was-busy"}},
		Status:     schedv1alpha1.PodMigrationJobStatus{Phase: schedv1alpha1.PodMigrationJobSucceeded},
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		args []func(a *config.MigrationControllerArgs)
		want string
	}{
		"deployment pod": {pod: makePod("p", owned)},
		"mirror pod": {pod: makePod("p", owned, func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}), want: "mirror pod"},
		"daemonset pod": {pod: makePod("p", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds", Controller: ptr.To(true)}}
		}), want: "DaemonSet pod"},
		"terminating": {pod: makePod("p", owned, func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(testNow)) }), want: "pod is terminating"},
		"max eviction cost": {pod: makePod("p", owned, func(p *corev1.Pod) {
			p.Annotations = map[string]string{extension.AnnotationEvictionCost: strconv.Itoa(math.MaxInt32)}
		}), want: "eviction cost is the maximum"},
		"namespace not included": {pod: makePod("p", owned), args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
			a.Namespaces = &config.Namespaces{Include: []string{"other"}}
		}}, want: "namespaces: namespace ns is not included"},
		"namespace excluded": {pod: makePod("p", owned), args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
			a.Namespaces = &config.Namespaces{Exclude: []string{"ns"}}
		}}, want: "namespaces: namespace ns is excluded"},
		"namespace excluded, gate skipped": {pod: makePod("p", owned), args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
			a.Namespaces = &config.Namespaces{Exclude: []string{"ns"}}
		}, skip(config.EvictionGateNamespaces)}},
		"label selector": {pod: makePod("p", owned), args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
			a.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
		}}, want: "labelSelector: the pod's labels do not match"},
		"label selector, gate skipped": {pod: makePod("p", owned), args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
			a.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
		}, skip(config.EvictionGateLabelSelector)}},
		"priority at threshold": {pod: makePod("p", owned, func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](100) }),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
				a.PriorityThreshold = &config.PriorityThreshold{Value: ptr.To[int32](100)}
			}}, want: "priorityThreshold: priority 100 is at or above 100"},
		"priority below threshold": {pod: makePod("p", owned, func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](99) }),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
				a.PriorityThreshold = &config.PriorityThreshold{Value: ptr.To[int32](100)}
			}}},
		"priority at threshold, gate skipped": {pod: makePod("p", owned, func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](100) }),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) {
				a.PriorityThreshold = &config.PriorityThreshold{Value: ptr.To[int32](100)}
			}, skip(config.EvictionGatePriorityThreshold)}},
		"system critical": {pod: makePod("p", owned, func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000000000) }),
			want: "systemCritical: the pod is system-critical"},
		"system critical allowed": {pod: makePod("p", owned, func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000000000) }),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.EvictSystemCriticalPods = true }}},
		"system critical, gate skipped": {pod: makePod("p", owned, func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](2000000000) }),
			args: []func(a *config.MigrationControllerArgs){skip(config.EvictionGateSystemCritical)}},
		"bare pod":                   {pod: makePod("p"), want: "barePods: no controller owns the pod"},
		"bare pod, evictAllBarePods": {pod: makePod("p"), args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.EvictAllBarePods = true }}},
		"running bare pod, evictFailedBarePods": {pod: makePod("p"),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.EvictFailedBarePods = true }},
			want: "barePods: no controller owns the pod"},
		"failed bare pod, evictFailedBarePods": {pod: makePod("p", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.EvictFailedBarePods = true }}},
		"bare pod, gate skipped": {pod: makePod("p"), args: []func(a *config.MigrationControllerArgs){skip(config.EvictionGateBarePods)}},
		"local storage": {pod: makePod("p", owned, withVolume(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})),
			want: "localStorage: the pod has local storage"},
		"local storage allowed": {pod: makePod("p", owned, withVolume(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.EvictLocalStoragePods = true }}},
		"local storage, gate skipped": {pod: makePod("p", owned, withVolume(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}})),
			args: []func(a *config.MigrationControllerArgs){skip(config.EvictionGateLocalStorage)}},
		"pvc allowed": {pod: makePod("p", owned, withVolume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}))},
		"pvc, ignorePvcPods": {pod: makePod("p", owned, withVolume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}})),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.IgnorePvcPods = true }},
			want: "pvc: the pod has a PersistentVolumeClaim"},
		"pvc, ignorePvcPods, gate skipped": {pod: makePod("p", owned, withVolume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}})),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.IgnorePvcPods = true }, skip(config.EvictionGatePVC)}},
		"job in progress":      {pod: makePod("busy", owned), want: "PodMigrationJob other is in progress"},
		"finished job ignored": {pod: makePod("was-busy", owned)},
		"single replica": {pod: makePod("p", ownedBy(rs1)),
			want: "expectedReplicas: Deployment ns/single has 1 replicas, maxMigrating 1, maxUnavailable 1"},
		"single replica, skipCheckExpectedReplicas": {pod: makePod("p", ownedBy(rs1)),
			args: []func(a *config.MigrationControllerArgs){func(a *config.MigrationControllerArgs) { a.SkipCheckExpectedReplicas = ptr.To(true) }}},
		"single replica, gate skipped": {pod: makePod("p", ownedBy(rs1)), args: []func(a *config.MigrationControllerArgs){skip(config.EvictionGateExpectedReplicas)}},
	}
	d1, _ := makeDeployment("single", 1)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c := newTestController(t, defaultArgs(tc.args...), []client.Object{d, rs, d1, rs1, inProgress, finished}...)
			if diff := cmp.Diff(tc.want, c.refuse(ctx, tc.pod, "")); diff != "" {
				t.Errorf("refuse (-want,+got):\n%s", diff)
			}
			if got := c.Filter(tc.pod); got != (tc.want == "") {
				t.Errorf("Filter = %v, want %v", got, tc.want == "")
			}
		})
	}
}

func TestPreEvictionFilterNodeFit(t *testing.T) {
	_, rs := makeDeployment("web", 3)
	node := func(name string, cpu string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: mustParse(cpu), corev1.ResourcePods: mustParse("10")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
	}
	pod := makePod("p", ownedBy(rs), func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: mustParse("2")}
	})
	tests := map[string]struct {
		nodes []client.Object
		skip  bool
		want  bool
	}{
		"another node fits":           {nodes: []client.Object{node("n1", "4"), node("n2", "4")}, want: true},
		"no other node":               {nodes: []client.Object{node("n1", "4")}},
		"other node too small":        {nodes: []client.Object{node("n1", "4"), node("n2", "1")}},
		"no other node, gate skipped": {nodes: []client.Object{node("n1", "4")}, skip: true, want: true},
	}
	d, _ := makeDeployment("web", 3)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := defaultArgs(func(a *config.MigrationControllerArgs) {
				a.NodeFit = true
				if tc.skip {
					a.SkipEvictionGates = []config.EvictionGate{config.EvictionGateNodeFit}
				}
			})
			c := newTestController(t, args, append(tc.nodes, d, rs, pod, makePod("q", ownedBy(rs)), makePod("r", ownedBy(rs)))...)
			if got := c.PreEvictionFilter(pod); got != tc.want {
				t.Errorf("PreEvictionFilter = %v, want %v", got, tc.want)
			}
		})
	}
}
