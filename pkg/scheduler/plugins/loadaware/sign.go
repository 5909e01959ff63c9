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

package loadaware

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// signKey names the plugin's fragment of a pod's signature.
const signKey = Name + ".PodState()"

// SignPod signs a pod by what Filter and Score look at: its estimated usage, whether it is koord-prod and
// whether a DaemonSet owns it. Pods with equal signatures get the same results on the same nodes, so the
// scheduler may reuse a previous pod's node ranking for the next one.
func (p *Plugin) SignPod(ctx context.Context, pod *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	sig := p.signatureOf(klog.FromContext(ctx), pod)
	p.signed.Store(&signedPod{podSignature: sig, pod: pod})
	return []fwk.SignFragment{{Key: signKey, Value: sig}}, nil
}
