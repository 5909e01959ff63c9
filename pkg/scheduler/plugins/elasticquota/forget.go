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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// forgetPeriod is how often the quota accounting is compared with the scheduler's pod informer.
const forgetPeriod = 30 * time.Second

// runForgetter compares the quota accounting with the scheduler's pod informer every forgetPeriod until ctx
// ends. Every replica runs it, the standbys too: a standby's accounting is what it starts leading with.
func (p *Plugin) runForgetter(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("forget")
	plugins.Every(ctx, p.clock, forgetPeriod, func() { p.forgetMissing(logger) })
}

// forgetMissing forgets the pods the quotas are still charged for that the scheduler's pod informer has not
// had for a whole period (see cache.Manager.ForgetMissing): their deletion never reached the accounting, which
// would otherwise keep their quotas' used and request too high until koord-scheduler restarts. Each one is
// logged and counted; it should not happen.
func (p *Plugin) forgetMissing(logger klog.Logger) {
	forgotten := p.manager.ForgetMissing(func(pod *corev1.Pod) bool {
		live, err := p.podLister.Pods(pod.Namespace).Get(pod.Name)
		return err == nil && live.UID == pod.UID
	})
	for _, f := range forgotten {
		p.metrics.QuotaForgottenPods.Inc()
		logger.Info("Forgot a pod the scheduler's informer no longer has; it was still charged to its quota",
			"pod", klog.KObj(f.Pod), "uid", f.Pod.UID, "quota", f.Quota, "assigned", f.Assigned)
	}
}
