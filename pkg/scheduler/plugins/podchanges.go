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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"
)

// podChangesKey keys the PodChanges of the pod being bound in the CycleState.
const podChangesKey fwk.StateKey = "DefaultPreBind"

// PodChanges collects the labels and annotations PreBind plugins put on the pod being bound, so that the
// DefaultPreBind plugin writes them in one patch, as Koordinator's DefaultPreBind does. It exists only in
// profiles that enable DefaultPreBind (its PreBindPreFlight creates it); a plugin that finds none, or finds it
// applied already (DefaultPreBind ordered before it), writes its changes itself.
type PodChanges struct {
	mu          sync.Mutex
	applied     bool
	labels      map[string]string
	annotations map[string]string
}

// Clone returns the changes themselves: one binding cycle shares them.
func (c *PodChanges) Clone() fwk.StateData { return c }

// StartPodChanges puts an empty PodChanges into the cycle.
func StartPodChanges(cycle fwk.CycleState) *PodChanges {
	c := &PodChanges{labels: map[string]string{}, annotations: map[string]string{}}
	cycle.Write(podChangesKey, c)
	return c
}

// PodChangesOf returns the cycle's PodChanges, nil when the profile has no DefaultPreBind.
func PodChangesOf(cycle fwk.CycleState) *PodChanges {
	if cycle == nil {
		return nil
	}
	v, err := cycle.Read(podChangesKey)
	if err != nil {
		return nil
	}
	c, _ := v.(*PodChanges)
	return c
}

// Annotate records annotations for the pod. It returns false when c is nil or was applied already: the
// caller then writes them itself.
func (c *PodChanges) Annotate(annotations map[string]string) bool {
	return c.record(func() { maps.Copy(c.annotations, annotations) })
}

// Label records labels for the pod, like Annotate.
func (c *PodChanges) Label(labels map[string]string) bool {
	return c.record(func() { maps.Copy(c.labels, labels) })
}

// record runs add under the lock unless c is nil or applied, and reports whether it ran.
func (c *PodChanges) record(add func()) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.applied {
		return false
	}
	add()
	return true
}

// Apply writes the recorded changes to pod in one merge patch and marks them applied; nothing when none were
// recorded.
func (c *PodChanges) Apply(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod) error {
	c.mu.Lock()
	c.applied = true
	labels, annotations := maps.Clone(c.labels), maps.Clone(c.annotations)
	c.mu.Unlock()
	if len(labels) == 0 && len(annotations) == 0 {
		return nil
	}
	return PatchPodMetadata(ctx, kube, pod, labels, annotations)
}

// PatchPodMetadata merges labels and annotations into pod's with one merge patch.
func PatchPodMetadata(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod, labels, annotations map[string]string) error {
	meta := map[string]any{}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return fmt.Errorf("encode pod patch: %w", err)
	}
	if _, err := kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
