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

package elasticquota

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
)

// Reserve counts the pod as used in its quota (and the quota's ancestors) until the pod object shows it
// bound. It always returns Success.
func (p *Plugin) Reserve(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) *fwk.Status {
	if extension.IsReservePod(pod) {
		return nil
	}
	p.manager.Reserve(pod)
	return nil
}

// Unreserve undoes Reserve.
func (p *Plugin) Unreserve(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) {
	if extension.IsReservePod(pod) {
		return
	}
	p.manager.Unreserve(pod)
}
