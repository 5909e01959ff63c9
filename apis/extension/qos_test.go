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

package extension

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestGetQoSClassByName(t *testing.T) {
	tests := map[string]struct {
		name string
		want QoSClass
	}{
		"LSE":            {name: "LSE", want: QoSLSE},
		"LSR":            {name: "LSR", want: QoSLSR},
		"LS":             {name: "LS", want: QoSLS},
		"BE":             {name: "BE", want: QoSBE},
		"SYSTEM":         {name: "SYSTEM", want: QoSSystem},
		"empty":          {name: "", want: QoSNone},
		"unknown":        {name: "GOLD", want: QoSNone},
		"wrong case":     {name: "ls", want: QoSNone},
		"padded":         {name: " LS", want: QoSNone},
		"kubernetes qos": {name: "Guaranteed", want: QoSNone},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetQoSClassByName(tc.name)); diff != "" {
				t.Errorf("GetQoSClassByName(%q) (-want,+got):\n%s", tc.name, diff)
			}
		})
	}
}

// containerWith returns a container with the given requests and limits.
func containerWith(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// podWithContainers returns a pod running the given containers.
func podWithContainers(labels map[string]string, containers ...corev1.Container) *corev1.Pod {
	pod := podWith(labels, nil)
	pod.Spec.Containers = containers
	return pod
}

func TestGetPodQoSClassRaw(t *testing.T) {
	guaranteed := containerWith(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))
	tests := map[string]struct {
		pod  *corev1.Pod
		want QoSClass
	}{
		"nil pod":       {pod: nil, want: QoSNone},
		"no labels":     {pod: podWithContainers(nil, guaranteed), want: QoSNone},
		"label LS":      {pod: podWithContainers(map[string]string{LabelPodQoS: "LS"}, guaranteed), want: QoSLS},
		"label BE":      {pod: podWith(map[string]string{LabelPodQoS: "BE"}, nil), want: QoSBE},
		"unknown label": {pod: podWithContainers(map[string]string{LabelPodQoS: "GOLD"}, guaranteed), want: QoSNone},
		"annotation is not a label": {
			pod:  podWith(nil, map[string]string{LabelPodQoS: "LS"}),
			want: QoSNone,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPodQoSClassRaw(tc.pod)); diff != "" {
				t.Errorf("GetPodQoSClassRaw() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetPodQoSClassWithDefault(t *testing.T) {
	guaranteed := containerWith(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))
	burstable := containerWith(rl("cpu", "500m"), nil)
	bestEffort := containerWith(nil, nil)
	tests := map[string]struct {
		pod  *corev1.Pod
		want QoSClass
	}{
		"nil pod":                    {pod: nil, want: QoSNone},
		"label wins over guaranteed": {pod: podWithContainers(map[string]string{LabelPodQoS: "BE"}, guaranteed), want: QoSBE},
		"label LSE":                  {pod: podWithContainers(map[string]string{LabelPodQoS: "LSE"}, guaranteed), want: QoSLSE},
		"guaranteed without label":   {pod: podWithContainers(nil, guaranteed), want: QoSLSR},
		"burstable without label":    {pod: podWithContainers(nil, burstable), want: QoSLS},
		"best effort without label":  {pod: podWithContainers(nil, bestEffort), want: QoSBE},
		"unknown label falls back":   {pod: podWithContainers(map[string]string{LabelPodQoS: "GOLD"}, guaranteed), want: QoSLSR},
		"empty label falls back":     {pod: podWithContainers(map[string]string{LabelPodQoS: ""}, burstable), want: QoSLS},
		"no containers":              {pod: podWithContainers(nil), want: QoSBE},
		"status qos class is preferred": {pod: func() *corev1.Pod {
			p := podWithContainers(nil, bestEffort)
			p.Status.QOSClass = corev1.PodQOSGuaranteed
			return p
		}(), want: QoSLSR},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPodQoSClassWithDefault(tc.pod)); diff != "" {
				t.Errorf("GetPodQoSClassWithDefault() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGetPodQoSClassWithKubeQoS(t *testing.T) {
	tests := map[string]struct {
		kubeQoS corev1.PodQOSClass
		want    QoSClass
	}{
		"guaranteed":  {kubeQoS: corev1.PodQOSGuaranteed, want: QoSLSR},
		"burstable":   {kubeQoS: corev1.PodQOSBurstable, want: QoSLS},
		"best effort": {kubeQoS: corev1.PodQOSBestEffort, want: QoSBE},
		"empty":       {kubeQoS: "", want: QoSNone},
		"unknown":     {kubeQoS: "Gold", want: QoSNone},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetPodQoSClassWithKubeQoS(tc.kubeQoS)); diff != "" {
				t.Errorf("GetPodQoSClassWithKubeQoS(%q) (-want,+got):\n%s", tc.kubeQoS, diff)
			}
		})
	}
}

func TestGetKubeQoSClass(t *testing.T) {
	full := rl("cpu", "1", "memory", "1Gi")
	tests := map[string]struct {
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		"no containers": {pod: podWithContainers(nil), want: corev1.PodQOSBestEffort},
		"best effort":   {pod: podWithContainers(nil, containerWith(nil, nil)), want: corev1.PodQOSBestEffort},
		"only extended resources": {
			pod:  podWithContainers(nil, containerWith(rl("nvidia.com/gpu", "1"), rl("nvidia.com/gpu", "1"))),
			want: corev1.PodQOSBestEffort,
		},
		"guaranteed":  {pod: podWithContainers(nil, containerWith(full, full)), want: corev1.PodQOSGuaranteed},
		"limits only": {pod: podWithContainers(nil, containerWith(nil, full)), want: corev1.PodQOSGuaranteed},
		"equal values in other units": {
			pod:  podWithContainers(nil, containerWith(rl("cpu", "1000m", "memory", "1024Mi"), rl("cpu", "1", "memory", "1Gi"))),
			want: corev1.PodQOSGuaranteed,
		},
		"requests below limits": {
			pod:  podWithContainers(nil, containerWith(rl("cpu", "500m", "memory", "1Gi"), full)),
			want: corev1.PodQOSBurstable,
		},
		"requests only": {pod: podWithContainers(nil, containerWith(full, nil)), want: corev1.PodQOSBurstable},
		"cpu only":      {pod: podWithContainers(nil, containerWith(rl("cpu", "1"), rl("cpu", "1"))), want: corev1.PodQOSBurstable},
		"guaranteed and best effort containers": {
			pod:  podWithContainers(nil, containerWith(full, full), containerWith(nil, nil)),
			want: corev1.PodQOSBurstable,
		},
		"two guaranteed containers": {
			pod:  podWithContainers(nil, containerWith(full, full), containerWith(full, full)),
			want: corev1.PodQOSGuaranteed,
		},
		"best effort init container": {
			pod: func() *corev1.Pod {
				p := podWithContainers(nil, containerWith(full, full))
				p.Spec.InitContainers = []corev1.Container{containerWith(nil, nil)}
				return p
			}(),
			want: corev1.PodQOSBurstable,
		},
		"pod-level resources replace container ones": {
			pod: func() *corev1.Pod {
				p := podWithContainers(nil, containerWith(nil, nil))
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: full, Limits: full}
				return p
			}(),
			want: corev1.PodQOSGuaranteed,
		},
		"pod-level resources without cpu or memory are ignored": {
			pod: func() *corev1.Pod {
				p := podWithContainers(nil, containerWith(full, full))
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: rl("hugepages-2Mi", "2Mi")}
				return p
			}(),
			want: corev1.PodQOSGuaranteed,
		},
		"status wins": {
			pod: func() *corev1.Pod {
				p := podWithContainers(nil, containerWith(full, full))
				p.Status.QOSClass = corev1.PodQOSBurstable
				return p
			}(),
			want: corev1.PodQOSBurstable,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GetKubeQoSClass(tc.pod)); diff != "" {
				t.Errorf("GetKubeQoSClass() (-want,+got):\n%s", diff)
			}
		})
	}
}
