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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// gpuPod is a pod of one container requesting (and limited to) the resources given as name=value pairs.
func gpuPod(resources ...string) *corev1.Pod {
	list := corev1.ResourceList{}
	for _, r := range resources {
		name, v, _ := strings.Cut(r, "=")
		list[corev1.ResourceName(name)] = resource.MustParse(v)
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()},
	}}}}
}

// requests returns the container's requests as name=value strings, and whether its limits are the same.
func requests(pod *corev1.Pod) (map[string]string, bool) {
	r := pod.Spec.Containers[0].Resources
	out := map[string]string{}
	for k, v := range r.Requests {
		out[string(k)] = v.String()
	}
	return out, cmp.Equal(r.Requests, r.Limits, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }))
}

func TestNormalizeDeviceResources(t *testing.T) {
	const (
		gpu    = string(extension.ResourceGPU)
		core   = string(extension.ResourceGPUCore)
		ratio  = string(extension.ResourceGPUMemoryRatio)
		memory = string(extension.ResourceGPUMemory)
		shared = string(extension.ResourceGPUShared)
	)
	tests := map[string]struct {
		pod  *corev1.Pod
		want map[string]string
	}{
		"half a GPU":      {pod: gpuPod(gpu + "=50"), want: map[string]string{core: "50", ratio: "50", shared: "1"}},
		"two whole GPUs":  {pod: gpuPod(gpu + "=200"), want: map[string]string{core: "200", ratio: "200", shared: "2"}},
		"core and memory": {pod: gpuPod(core+"=300", memory+"=8Gi"), want: map[string]string{core: "300", memory: "8Gi", shared: "3"}},
		// The ratio decides over the core.
		"core and ratio":                 {pod: gpuPod(core+"=100", ratio+"=200"), want: map[string]string{core: "100", ratio: "200", shared: "2"}},
		"a share that is not whole GPUs": {pod: gpuPod(core+"=150", ratio+"=150"), want: map[string]string{core: "150", ratio: "150", shared: "1"}},
		"gpu.shared given":               {pod: gpuPod(core+"=100", ratio+"=100", shared+"=2"), want: map[string]string{core: "100", ratio: "100", shared: "2"}},
		"nvidia.com/gpu untouched":       {pod: gpuPod("nvidia.com/gpu=1"), want: map[string]string{"nvidia.com/gpu": "1"}},
		"no GPU":                         {pod: gpuPod("cpu=1"), want: map[string]string{"cpu": "1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			normalizeDeviceResources(tc.pod)
			got, same := requests(tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want,+got):\n%s", diff)
			}
			if !same {
				t.Errorf("limits %v differ from the requests", tc.pod.Spec.Containers[0].Resources.Limits)
			}
		})
	}
}

func TestValidateDeviceResources(t *testing.T) {
	p := "spec.containers[0].resources.requests"
	tests := map[string]struct {
		pod  *corev1.Pod
		want []string
	}{
		"a shared GPU":       {pod: gpuPod("koordinator.sh/gpu-core=50", "koordinator.sh/gpu-memory-ratio=50", "koordinator.sh/gpu.shared=1")},
		"two GPUs shared":    {pod: gpuPod("koordinator.sh/gpu-core=100", "koordinator.sh/gpu-memory=16Gi", "koordinator.sh/gpu.shared=2")},
		"whole GPUs":         {pod: gpuPod("koordinator.sh/gpu-core=200", "koordinator.sh/gpu-memory-ratio=200")},
		"nvidia.com/gpu":     {pod: gpuPod("nvidia.com/gpu=2")},
		"koordinator.sh/gpu": {pod: gpuPod("koordinator.sh/gpu=100")},
		"gpu with gpu.shared": {pod: gpuPod("koordinator.sh/gpu=100", "koordinator.sh/gpu.shared=1"),
			want: []string{p + "[koordinator.sh/gpu.shared]: Forbidden: cannot be requested with koordinator.sh/gpu"}},
		"a share above 100 that is not whole GPUs": {pod: gpuPod("koordinator.sh/gpu=150"),
			want: []string{p + "[koordinator.sh/gpu]: Invalid value: 150: must be at most 100 (a share of one device) or a multiple of 100 (whole devices)"}},
		"a zero gpu.shared": {pod: gpuPod("koordinator.sh/gpu-core=50", "koordinator.sh/gpu-memory-ratio=50", "koordinator.sh/gpu.shared=0"),
			want: []string{p + "[koordinator.sh/gpu.shared]: Invalid value: 0: must be greater than zero"}},
		"shared without memory": {pod: gpuPod("koordinator.sh/gpu-core=50", "koordinator.sh/gpu.shared=1"),
			want: []string{p + "[koordinator.sh/gpu-memory-ratio]: Required value: a request of koordinator.sh/gpu.shared needs koordinator.sh/gpu-memory-ratio or koordinator.sh/gpu-memory"}},
		"shared with both memories": {pod: gpuPod("koordinator.sh/gpu-memory=1Gi", "koordinator.sh/gpu-memory-ratio=50", "koordinator.sh/gpu.shared=1"),
			want: []string{p + "[koordinator.sh/gpu-memory]: Forbidden: cannot be requested with koordinator.sh/gpu-memory-ratio: ask for GPU memory in one of them"}},
		"not divisible by the shared GPUs": {pod: gpuPod("koordinator.sh/gpu-core=101", "koordinator.sh/gpu-memory-ratio=300", "koordinator.sh/gpu.shared=2"),
			want: []string{
				p + "[koordinator.sh/gpu-core]: Invalid value: 101: must be a multiple of koordinator.sh/gpu.shared (2): each shared GPU gets an equal part",
				p + "[koordinator.sh/gpu-memory-ratio]: Invalid value: 300: is more than 100 per GPU over koordinator.sh/gpu.shared (2) GPUs",
			}},
		"nvidia.com/gpu mixed": {pod: gpuPod("nvidia.com/gpu=1", "koordinator.sh/gpu-memory-ratio=50"),
			want: []string{p + "[koordinator.sh/gpu-memory-ratio]: Forbidden: cannot be requested with nvidia.com/gpu: use one or the other"}},
		"a core above 100 that is not whole GPUs": {pod: gpuPod("koordinator.sh/gpu-core=250", "koordinator.sh/gpu-memory-ratio=200"),
			want: []string{p + "[koordinator.sh/gpu-core]: Invalid value: 250: must be at most 100 (a share of one device) or a multiple of 100 (whole devices)"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range validateDeviceResources(tc.pod) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}
