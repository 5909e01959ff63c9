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

package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
)

// agentDegradeTime is degradeTimeMinutes while killAgents runs: the smallest the setting takes, so that the
// fault sees koord-manager take the batch capacity of nodes whose agents are down within minutes instead of the
// default quarter of an hour.
const agentDegradeTime = time.Minute

// killAgents kills the agents of two nodes as kill -9 kills a koordlet, with degradeTimeMinutes at 1 for the
// duration. It checks that their NodeMetrics stop being updated, that koord-manager takes their batch
// capacity once the reports are older than degradeTimeMinutes, and that a BE pod pinned to each stays
// pending; then it starts the agents afresh and checks that they report again, that the capacity comes back
// and that the pinned pods bind. It reports how long each step took.
func killAgents(ctx context.Context) (_ finding, err error) {
	nodes := env.c.NodeNames()
	if len(nodes) < 6 {
		return finding{}, fmt.Errorf("%d nodes, want at least 6", len(nodes))
	}
	// Not the nodes the clock skew fault uses, so that each fault starts from agents it did not touch.
	victims := nodes[4:6]
	restore, err := setDegradeTime(ctx, agentDegradeTime)
	if err != nil {
		return finding{}, err
	}
	defer func() {
		if rerr := restore(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restore the slo-controller-config: %w", rerr))
		}
	}()
	started := false
	defer func() {
		if !started {
			for _, n := range victims {
				env.c.Sim().StartAgent(context.WithoutCancel(ctx), n)
			}
		}
	}()

	start := time.Now()
	for _, n := range victims {
		env.c.Sim().KillAgent(ctx, n)
	}
	// A report on its way to the apiserver when the agent died may still land.
	time.Sleep(2 * time.Second)
	lastReport := map[string]time.Time{}
	for _, n := range victims {
		t, err := reportTime(ctx, n)
		if err != nil {
			return finding{}, err
		}
		lastReport[n] = t
	}

	checks := 0
	var errs []error
	var details []string
	pinned := map[string]string{}
	defer func() {
		for _, pod := range pinned {
			_ = env.kube.CoreV1().Pods(namespace).Delete(context.WithoutCancel(ctx), pod, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
	}()
	for _, n := range victims {
		// The controller acts at the last report plus degradeTimeMinutes; allow for its requeue and one more
		// report interval.
		checks++
		err := waitFor(ctx, agentDegradeTime+time.Minute, "koord-manager taking "+string(extension.BatchCPU)+" of "+n+" with its agent down", func(ctx context.Context) (bool, error) {
			node, err := env.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			q := node.Status.Allocatable[extension.BatchCPU]
			return q.IsZero(), nil
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		details = append(details, fmt.Sprintf("%s without batch capacity %v after the kill", n, time.Since(start).Round(time.Second)))

		checks++
		pod := bePod("agent-down-" + n)
		pod.Spec.Affinity = onNode(n)
		if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			errs = append(errs, err)
			continue
		}
		pinned[n] = pod.Name
		errs = append(errs, waitFor(ctx, 30*time.Second, "koord-scheduler finding no room for a BE pod on "+n, func(ctx context.Context) (bool, error) {
			p, err := env.kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName != "" {
				return false, fmt.Errorf("bound to %s, whose agent is down", p.Spec.NodeName)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					return true, nil
				}
			}
			return false, nil
		}))
	}
	for _, n := range victims {
		checks++
		t, err := reportTime(ctx, n)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !t.Equal(lastReport[n]):
			errs = append(errs, fmt.Errorf("the NodeMetric of %s was updated at %s with its agent down (last report %s)",
				n, t.Format(time.RFC3339), lastReport[n].Format(time.RFC3339)))
		}
	}

	started = true
	restart := time.Now()
	for _, n := range victims {
		env.c.Sim().StartAgent(ctx, n)
	}
	for _, n := range victims {
		checks += 3
		err := waitFor(ctx, time.Minute, "a report of "+n+" after its agent started", func(ctx context.Context) (bool, error) {
			t, err := reportTime(ctx, n)
			return err == nil && t.After(lastReport[n]), err
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reported := time.Since(restart)
		err = waitFor(ctx, time.Minute, string(extension.BatchCPU)+" of "+n+" back", func(ctx context.Context) (bool, error) {
			node, err := env.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			q := node.Status.Allocatable[extension.BatchCPU]
			return !q.IsZero(), nil
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		back := time.Since(restart)
		if name, ok := pinned[n]; ok {
			err = waitFor(ctx, time.Minute, "the BE pod pinned to "+n+" bound", func(ctx context.Context) (bool, error) {
				p, err := env.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
				return err == nil && p.Spec.NodeName == n, err
			})
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		details = append(details, fmt.Sprintf("%s reported %v after the start, batch capacity back after %v, pinned pod bound after %v",
			n, reported.Round(100*time.Millisecond), back.Round(100*time.Millisecond), time.Since(restart).Round(100*time.Millisecond)))
	}
	return finding{checks: checks, detail: strings.Join(details, "; ")}, errors.Join(errs...)
}

// reportTime returns the status.updateTime of node's NodeMetric, zero when it has none.
func reportTime(ctx context.Context, node string) (time.Time, error) {
	nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err
	}
	if nm.Status.UpdateTime == nil {
		return time.Time{}, nil
	}
	return nm.Status.UpdateTime.Time, nil
}

// setDegradeTime sets degradeTimeMinutes in the slo-controller-config's colocation-config to d and returns the
// function that puts the ConfigMap's data back as it was.
func setDegradeTime(ctx context.Context, d time.Duration) (restore func(context.Context) error, err error) {
	cms := env.kube.CoreV1().ConfigMaps(configuration.ConfigNamespace)
	var original map[string]string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, configuration.SLOCtrlConfigMap, metav1.GetOptions{})
		if err != nil {
			return err
		}
		original = maps.Clone(cm.Data)
		colocation, err := configuration.ParseColocationCfg(cm.Data[configuration.ColocationConfigKey])
		if err != nil {
			return fmt.Errorf("%s of %s: %w", configuration.ColocationConfigKey, configuration.SLOCtrlConfigMap, err)
		}
		colocation.DegradeTimeMinutes = ptr.To(int64(d / time.Minute))
		raw, err := json.Marshal(colocation)
		if err != nil {
			return err
		}
		cm.Data[configuration.ColocationConfigKey] = string(raw)
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set degradeTimeMinutes to %v: %w", d, err)
	}
	return func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm, err := cms.Get(ctx, configuration.SLOCtrlConfigMap, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cm.Data = original
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	}, nil
}
