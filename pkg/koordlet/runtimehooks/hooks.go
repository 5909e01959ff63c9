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

package runtimehooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
)

// FailurePolicy says what the runtime does with a request a hook could not decide.
type FailurePolicy string

const (
	// FailurePolicyIgnore lets the request go on without the hook's changes (the default, as Koordinator's).
	FailurePolicyIgnore FailurePolicy = "Ignore"
	// FailurePolicyFail fails the request: the runtime does not create the container.
	FailurePolicyFail FailurePolicy = "Fail"
)

// ParseFailurePolicy returns the policy named s.
func ParseFailurePolicy(s string) (FailurePolicy, error) {
	switch p := FailurePolicy(s); p {
	case FailurePolicyIgnore, FailurePolicyFail:
		return p, nil
	}
	return "", fmt.Errorf("failure policy %q: want %s or %s", s, FailurePolicyIgnore, FailurePolicyFail)
}

// defaultPeriodUs is the CFS period of a container kubelet gives none (its default).
const defaultPeriodUs = 100000

// DefaultPodWait is how long a hook waits for koordlet to learn of a pod the runtime starts: well within the
// runtime's request timeout (2 s in containerd by default).
const DefaultPodWait = time.Second

// Inputs are what the hooks read of koordlet's state; the statesinformer satisfies it. The objects returned are
// shared and read-only.
type Inputs interface {
	// Node returns the agent's node, or nil until it is known.
	Node() *corev1.Node
	// Pods returns the pods bound to the node that have not terminated.
	Pods() []*corev1.Pod
	// NodeSLO returns the node's NodeSLO, or nil until it is known.
	NodeSLO() *slov1alpha1.NodeSLO
}

// errPodUnknown is a pod the runtime asks about that koordlet has not seen (yet).
var errPodUnknown = errors.New("not known to koordlet yet")

// Hooks answers the runtime's NRI requests with the cgroup reconciler's rules. Create it with New.
type Hooks struct {
	rules       *cgroupreconcile.Strategy
	inputs      Inputs
	kubeletCPUs func() (map[types.UID]cpuset.CPUSet, error)
	policy      FailurePolicy
	devices     Devices
	podWait     time.Duration
	clock       clock.WithTicker
	metrics     *Metrics
	qos         QoS
}

// Option configures Hooks.
type Option func(*Hooks)

// WithFailurePolicy sets the failure policy (FailurePolicyIgnore by default).
func WithFailurePolicy(p FailurePolicy) Option { return func(h *Hooks) { h.policy = p } }

// WithKubeletCPUs sets where the CPUs kubelet's static CPU manager pinned pods to come from; those pods keep
// kubelet's cpusets.
func WithKubeletCPUs(f func() (map[types.UID]cpuset.CPUSet, error)) Option {
	return func(h *Hooks) { h.kubeletCPUs = f }
}

// WithDevices sets how allocated devices reach containers (nothing by default).
func WithDevices(d Devices) Option { return func(h *Hooks) { h.devices = d } }

// WithPodWait sets how long a hook waits for koordlet to learn of a pod (DefaultPodWait).
func WithPodWait(d time.Duration) Option { return func(h *Hooks) { h.podWait = d } }

// WithClock replaces the clock (tests).
func WithClock(c clock.WithTicker) Option { return func(h *Hooks) { h.clock = c } }

// WithMetrics records the hooks' calls in m; without it they go to private, unregistered collectors.
func WithMetrics(m *Metrics) Option { return func(h *Hooks) { h.metrics = m } }

// New returns the hooks deciding with rules and reading the node's pods from inputs.
func New(rules *cgroupreconcile.Strategy, inputs Inputs, opts ...Option) *Hooks {
	h := &Hooks{rules: rules, inputs: inputs, policy: FailurePolicyIgnore, podWait: DefaultPodWait, clock: clock.RealClock{}}
	for _, o := range opts {
		o(h)
	}
	if h.metrics == nil {
		h.metrics = NewMetrics()
	}
	return h
}

// Configure is called when the runtime accepts the plugin; it subscribes to the events the hooks handle.
func (h *Hooks) Configure(ctx context.Context, _, runtime, version string) (api.EventMask, error) {
	klog.FromContext(ctx).Info("Registered with the container runtime over NRI", "runtime", runtime, "version", version)
	return api.MustParseEventMask("RunPodSandbox", "CreateContainer", "UpdateContainer"), nil
}

// RunPodSandbox writes a BE pod's batch settings, an LSE or LSR pod's unset CFS quota, and the pod-level memory
// QoS and group identity (WithQoS), to its cgroup before its containers are created.
func (h *Hooks) RunPodSandbox(ctx context.Context, sb *api.PodSandbox) error {
	start := h.clock.Now()
	pod, err := h.pod(ctx, sb)
	changed := false
	if err == nil {
		err = h.rules.SyncBatchPod(ctx, pod)
		changed = qosmanager.PodQoS(pod) == extension.QoSBE && cgroupreconcile.BatchResources(pod).Pod != (cgroupreconcile.BatchSettings{})
		wrote, qosErr := h.syncPodQoS(ctx, pod)
		unset, quotaErr := h.unsetBoundQuota(ctx, pod)
		changed = changed || wrote || unset
		err = errors.Join(err, qosErr, quotaErr)
	}
	return h.done(ctx, hookRunPodSandbox, start, sb, nil, changed, err)
}

// CreateContainer returns the container's batch settings, cpuset and devices as its adjustment.
func (h *Hooks) CreateContainer(ctx context.Context, sb *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	start := h.clock.Now()
	adjust := &api.ContainerAdjustment{}
	pod, err := h.pod(ctx, sb)
	if err != nil {
		return adjust, nil, h.done(ctx, hookCreateContainer, start, sb, c, false, err)
	}
	s, err := h.settings(ctx, pod, c)
	devices, devErr := h.devices.of(pod)
	if devErr != nil {
		devErr = fmt.Errorf("devices: %w", devErr)
	}
	unified, qosErr := h.containerMemoryQoS(pod, c.GetName())
	if qosErr != nil {
		qosErr = fmt.Errorf("memory QoS: %w", qosErr)
	}
	// Decided in part on an error: what was decided still applies.
	s.adjust(adjust)
	devices.adjust(adjust)
	adjustUnified(adjust, unified)
	changed := !s.empty() || !devices.empty() || len(unified) > 0
	return adjust, nil, h.done(ctx, hookCreateContainer, start, sb, c, changed, errors.Join(err, devErr, qosErr))
}

// UpdateContainer answers kubelet's update of a container with the container's batch settings and cpuset, so
// that the update does not undo them.
func (h *Hooks) UpdateContainer(ctx context.Context, sb *api.PodSandbox, c *api.Container, _ *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	start := h.clock.Now()
	pod, err := h.pod(ctx, sb)
	if err != nil {
		return nil, h.done(ctx, hookUpdateContainer, start, sb, c, false, err)
	}
	s, err := h.settings(ctx, pod, c)
	var updates []*api.ContainerUpdate
	if !s.empty() {
		u := &api.ContainerUpdate{ContainerId: c.GetId()}
		s.update(u)
		updates = append(updates, u)
	}
	return updates, h.done(ctx, hookUpdateContainer, start, sb, c, !s.empty(), err)
}

// done records a hook's call and returns what the runtime gets as its error under the failure policy.
func (h *Hooks) done(ctx context.Context, hook string, start time.Time, sb *api.PodSandbox, c *api.Container, changed bool, err error) error {
	result := resultUnchanged
	switch {
	case err != nil:
		result = resultFailed
	case changed:
		result = resultApplied
	}
	h.metrics.calls.WithLabelValues(hook, result).Inc()
	h.metrics.duration.WithLabelValues(hook).Observe(h.clock.Since(start).Seconds())
	if err == nil {
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("hook", hook, "pod", klog.KRef(sb.GetNamespace(), sb.GetName()))
	if c != nil {
		logger = logger.WithValues("container", c.GetName())
	}
	if h.policy == FailurePolicyFail {
		logger.Error(err, "Runtime hook failed; the runtime fails the request (failure policy Fail)")
		return fmt.Errorf("koordlet %s hook for pod %s/%s: %w", hook, sb.GetNamespace(), sb.GetName(), err)
	}
	logger.Info("Runtime hook could not decide everything; the reconcile loop applies the rest", "err", err)
	return nil
}

// pod returns the pod of sb (the mirror pod of a static pod), waiting up to podWait for koordlet to learn of
// it.
func (h *Hooks) pod(ctx context.Context, sb *api.PodSandbox) (*corev1.Pod, error) {
	uid := types.UID(sb.GetUid())
	deadline := h.clock.Now().Add(h.podWait)
	for {
		for _, p := range h.inputs.Pods() {
			// A static pod runs under its own UID; the apiserver has its mirror pod, which names it.
			if p.UID == uid || p.Annotations[corev1.MirrorPodAnnotationKey] == string(uid) {
				return p, nil
			}
		}
		if !h.clock.Now().Before(deadline) {
			return nil, fmt.Errorf("pod %s/%s (uid %s): %w", sb.GetNamespace(), sb.GetName(), uid, errPodUnknown)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.clock.After(50 * time.Millisecond):
		}
	}
}

// settings decides the cgroup values of the container c of pod. On an error it still returns what it decided.
func (h *Hooks) settings(ctx context.Context, pod *corev1.Pod, c *api.Container) (containerSettings, error) {
	period := int64(defaultPeriodUs)
	if p := c.GetLinux().GetResources().GetCpu().GetPeriod(); p != nil && p.GetValue() > 0 {
		period = int64(p.GetValue())
	}
	var s containerSettings
	batch := h.rules.BatchContainerOf(ctx, pod, c.GetName(), period)
	s.shares, s.quota, s.memory = batch.CPUShares, batch.CFSQuotaUs, batch.MemoryLimit

	if extension.GetKubeQoSClass(pod) == corev1.PodQOSBestEffort {
		// The besteffort cgroups' cpusets belong to BE suppression (on cgroup v1 a container's cpuset outside
		// its parent's would fail its creation).
		return s, nil
	}
	set, err := h.cpuSetOf(ctx, pod)
	if !set.CPUs.IsEmpty() {
		s.cpus = set.CPUs.String()
		if set.Bound {
			s.quota = ptr.To[int64](cgroupreconcile.Unlimited)
		}
	}
	return s, err
}

// cpuSetOf returns the cpuset the cgroup reconciler gives the containers of pod.
func (h *Hooks) cpuSetOf(ctx context.Context, pod *corev1.Pod) (cgroupreconcile.PodCPUSet, error) {
	node := h.inputs.Node()
	if node == nil {
		return cgroupreconcile.PodCPUSet{}, errors.New("the node is not known to koordlet yet: no cpuset decided")
	}
	st := &qosmanager.State{Node: node, Pods: h.inputs.Pods(), Now: h.clock.Now()}
	var errs []error
	if h.kubeletCPUs != nil {
		cpus, err := h.kubeletCPUs()
		if err != nil {
			errs = append(errs, fmt.Errorf("kubelet's CPU manager state: %w", err))
		}
		st.KubeletCPUs = cpus
	}
	set, err := h.rules.CPUSetOf(ctx, st, pod)
	return set, errors.Join(append(errs, err)...)
}

// unsetBoundQuota unsets the CFS quota of the cgroup of a pod bound to CPUs of its own (LSE, LSR), as the
// reconciler does, before its containers are created.
func (h *Hooks) unsetBoundQuota(ctx context.Context, pod *corev1.Pod) (bool, error) {
	if extension.GetKubeQoSClass(pod) == corev1.PodQOSBestEffort {
		return false, nil
	}
	set, err := h.cpuSetOf(ctx, pod)
	if !set.Bound || set.CPUs.IsEmpty() {
		return false, err
	}
	wrote, qerr := h.rules.UnsetPodQuota(ctx, pod)
	return wrote, errors.Join(err, qerr)
}

// containerSettings are the values the hooks give a container; nil or empty ones are left as they are.
type containerSettings struct {
	shares, quota, memory *int64
	cpus                  string
}

func (s containerSettings) empty() bool {
	return s.shares == nil && s.quota == nil && s.memory == nil && s.cpus == ""
}

func (s containerSettings) adjust(a *api.ContainerAdjustment) {
	if s.shares != nil {
		a.SetLinuxCPUShares(uint64(*s.shares))
	}
	if s.quota != nil {
		a.SetLinuxCPUQuota(*s.quota)
	}
	if s.memory != nil {
		a.SetLinuxMemoryLimit(*s.memory)
	}
	if s.cpus != "" {
		a.SetLinuxCPUSetCPUs(s.cpus)
	}
}

func (s containerSettings) update(u *api.ContainerUpdate) {
	if s.shares != nil {
		u.SetLinuxCPUShares(uint64(*s.shares))
	}
	if s.quota != nil {
		u.SetLinuxCPUQuota(*s.quota)
	}
	if s.memory != nil {
		u.SetLinuxMemoryLimit(*s.memory)
	}
	if s.cpus != "" {
		u.SetLinuxCPUSetCPUs(s.cpus)
	}
}
