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

package reservation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// fixture is the plugin built by its factory in a plugintest.Env holding the reservations, nodes and pods;
// its controller is not started, tests call reconcile themselves.
type fixture struct {
	*plugintest.Env
	plugin *Plugin
}

// newFixture builds the plugin over the reservations, nodes and pods (with a snapshot of them) and waits until
// it has seen them; nil args are the defaults.
func newFixture(t testing.TB, args *config.ReservationArgs, resvs []*schedv1alpha1.Reservation, nodes []*corev1.Node, pods []*corev1.Pod) *fixture {
	t.Helper()
	if args == nil {
		args = plugintest.Args[config.ReservationArgs, configv1.ReservationArgs](t, nil)
	}
	env := plugintest.New(t, plugintest.WithObjectsOf(resvs), plugintest.WithObjectsOf(nodes), plugintest.WithObjectsOf(pods),
		plugintest.WithSnapshot(pods, nodes))
	p := plugintest.Plugin[*Plugin](t, env, newFactory(env.CRDs, false, plugins.WithClock(env.Clock)), args)
	return &fixture{Env: env, plugin: p}
}

// byLabel is an owner entry selecting pods with label app=value.
func byLabel(value string) schedv1alpha1.ReservationOwner {
	return schedv1alpha1.ReservationOwner{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}}}
}

// reservation is a Reservation (UID = name) created at now, reserving requests for the owners; node "" leaves
// it Pending, else it is Available there with allocatable = requests.
func reservation(name, node string, requests corev1.ResourceList, owners ...schedv1alpha1.ReservationOwner) *schedv1alpha1.Reservation {
	r := &schedv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(utiltesting.Now), ResourceVersion: "1"},
		Spec: schedv1alpha1.ReservationSpec{
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name:      "c",
				Resources: corev1.ResourceRequirements{Requests: requests},
			}}}},
			Owners: owners,
			TTL:    &metav1.Duration{Duration: 24 * time.Hour},
		},
		Status: schedv1alpha1.ReservationStatus{Phase: schedv1alpha1.ReservationPending},
	}
	if node != "" {
		r.Status.Phase = schedv1alpha1.ReservationAvailable
		r.Status.NodeName = node
		r.Status.Allocatable = requests
	}
	return r
}

// edited returns r after edit.
func edited(r *schedv1alpha1.Reservation, edit func(*schedv1alpha1.Reservation)) *schedv1alpha1.Reservation {
	edit(r)
	return r
}

// multiUse makes r allocatable by several owners.
func multiUse(r *schedv1alpha1.Reservation) { r.Spec.AllocateOnce = ptr.To(false) }

// cycle runs PreFilter for pod and returns the cycle state, the result and the status.
func (f *fixture) cycle(pod *corev1.Pod) (fwk.CycleState, *fwk.PreFilterResult, *fwk.Status) {
	cs := framework.NewCycleState()
	res, s := f.plugin.PreFilter(f.Ctx, cs, pod, nil)
	return cs, res, s
}
