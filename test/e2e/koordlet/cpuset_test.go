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

package koordlet_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	topologyv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/topology/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/nodetopology"
)

// TestCPUSetsOnRealCgroups: on real cgroups, the agent pins an LSR pod's container to the CPU its
// resource-status names (last CPU of the machine) and lifts its CFS quota, keeps an LS pod's container off it,
// and reports the machine's topology, as /sys gives it, with the shared pools without that CPU.
func TestCPUSetsOnRealCgroups(t *testing.T) {
	requireWritableCgroupV1(t)
	cpus := runtime.NumCPU()
	if cpus < 2 {
		t.Skipf("binding a CPU and keeping another for the shared pool needs 2 CPUs; the machine has %d", cpus)
	}
	h := newHierarchy(t)
	createClusterObjects(t, cpus)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		nrt := &topologyv1alpha1.NodeResourceTopology{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
		if err := env.Client.Delete(ctx, nrt); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the NodeResourceTopology: %v", err)
		}
	})
	bound := cpus - 1
	one := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	lsr := &testPod{pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lsr-cpuset", Namespace: namespace,
			Labels:      map[string]string{extension.LabelPodQoS: string(extension.QoSLSR)},
			Annotations: map[string]string{extension.AnnotationResourceStatus: fmt.Sprintf(`{"cpuset":"%d"}`, bound)}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "burner", Image: "burner",
			Resources: corev1.ResourceRequirements{Requests: one, Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}},
	}}
	ls := &testPod{pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ls-cpuset", Namespace: namespace, Labels: map[string]string{extension.LabelPodQoS: string(extension.QoSLS)}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "burner", Image: "burner",
			Resources: corev1.ResourceRequirements{Requests: one}}}},
	}}
	for _, p := range []*testPod{lsr, ls} {
		createRunningPod(t, h, p)
	}
	for _, dir := range []string{lsr.podDir, lsr.containerDir} {
		h.write(dir, "cpu.cfs_quota_us", "200000")
	}
	startAgent(t, h.layout.Parent)

	shared := fmt.Sprintf("0-%d", bound-1)
	if bound == 1 {
		shared = "0"
	}
	want := map[string]string{"lsr cpuset": fmt.Sprint(bound), "lsr quota": "-1", "lsr pod quota": "-1", "ls cpuset": shared}
	var got map[string]string
	err := poll(t.Context(), 200*time.Millisecond, func() (bool, error) {
		got = map[string]string{}
		for key, read := range map[string]func() (string, error){
			"lsr cpuset":    func() (string, error) { return h.read(lsr.containerDir, "cpuset.cpus") },
			"lsr quota":     func() (string, error) { return h.read(lsr.containerDir, "cpu.cfs_quota_us") },
			"lsr pod quota": func() (string, error) { return h.read(lsr.podDir, "cpu.cfs_quota_us") },
			"ls cpuset":     func() (string, error) { return h.read(ls.containerDir, "cpuset.cpus") },
		} {
			v, err := read()
			if err != nil {
				return false, err
			}
			got[key] = v
		}
		return cmp.Equal(want, got), nil
	})
	if err != nil {
		t.Errorf("cgroups (-want,+got): %s (%v)", cmp.Diff(want, got), err)
	}

	sys, err := nodetopology.ReadTopology("/sys")
	if err != nil {
		t.Fatal(err)
	}
	var nrt topologyv1alpha1.NodeResourceTopology
	err = poll(t.Context(), 200*time.Millisecond, func() (bool, error) {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: nodeName}, &nrt); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		pools, err := extension.GetCPUSharedPools(nrt.Annotations, extension.AnnotationNodeCPUSharedPools)
		return err == nil && len(pools) > 0 && pools[0].CPUSet == shared, nil
	})
	if err != nil {
		t.Fatalf("the NodeResourceTopology's LS pool never left out CPU %d: %v; annotations %v", bound, err, nrt.Annotations)
	}
	topo, err := extension.GetCPUTopology(nrt.Annotations)
	if err != nil || topo == nil {
		t.Fatalf("cpu-topology: %v", err)
	}
	if diff := cmp.Diff(sys.CPUs, topo.Detail); diff != "" {
		t.Errorf("reported CPU topology differs from /sys (-sys,+reported):\n%s", diff)
	}
}
