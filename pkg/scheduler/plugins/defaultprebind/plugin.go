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

// Package defaultprebind is the DefaultPreBind plugin: it writes, in one patch, the labels and annotations the
// other PreBind plugins record for the pod being bound (plugins.PodChanges), as Koordinator's DefaultPreBind
// does. README.md has the details.
package defaultprebind

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// Name is the plugin's name in kube-scheduler's configuration: Koordinator's.
const Name = "DefaultPreBind"

// Plugin applies the pod changes of a binding cycle.
type Plugin struct {
	kube kubernetes.Interface
}

// New builds the plugin. It takes no args.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &Plugin{kube: h.ClientSet()}, nil
}

// Name returns Name.
func (p *Plugin) Name() string { return Name }

// PreBindPreFlight starts the cycle's pod changes, which the PreBind plugins before it in the profile record
// into. It never runs in parallel with them, so that its PreBind comes after theirs.
func (p *Plugin) PreBindPreFlight(_ context.Context, cycle fwk.CycleState, _ *corev1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	plugins.StartPodChanges(cycle)
	return nil, nil
}

// PreBind writes the recorded changes in one patch; Error (the pod is retried) when the patch fails. Plugins
// ordered after it in the profile find the changes applied and write their own.
func (p *Plugin) PreBind(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, _ string) *fwk.Status {
	c := plugins.PodChangesOf(cycle)
	if c == nil {
		return nil
	}
	if err := c.Apply(ctx, p.kube, pod); err != nil {
		return fwk.AsStatus(err)
	}
	return nil
}
