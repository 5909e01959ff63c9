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

package plugins

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func TestPodChanges(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
	kube := fake.NewClientset(pod)
	cycle := framework.NewCycleState()
	if PodChangesOf(cycle).Annotate(map[string]string{"a": "1"}) {
		t.Fatal("changes recorded in a cycle without DefaultPreBind")
	}
	c := StartPodChanges(cycle)
	if PodChangesOf(cycle) != c {
		t.Fatal("PodChangesOf does not return the started changes")
	}
	if err := c.Apply(t.Context(), kube, pod); err != nil || len(kube.Actions()) != 0 {
		t.Fatalf("Apply without changes: %v, %d API calls; want none", err, len(kube.Actions()))
	}
	c = StartPodChanges(cycle)
	if !c.Annotate(map[string]string{"a": "1"}) || !c.Label(map[string]string{"l": "x"}) {
		t.Fatal("changes not recorded")
	}
	if err := c.Apply(t.Context(), kube, pod); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().Pods("default").Get(t.Context(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations["a"] != "1" || got.Labels["l"] != "x" {
		t.Errorf("pod metadata %v %v, want the recorded changes", got.Labels, got.Annotations)
	}
	if c.Annotate(map[string]string{"b": "2"}) {
		t.Error("changes recorded after they were applied")
	}
}
