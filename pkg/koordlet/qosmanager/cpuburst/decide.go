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

package cpuburst

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// Steps of the CFS quota burst (Koordinator's).
const (
	// ScaleUpFactor multiplies a throttled container's quota.
	ScaleUpFactor = 1.2
	// ScaleDownFactor multiplies a raised quota while the node's shared pool is overloaded.
	ScaleDownFactor = 0.8
	// CoolingRatio: between CoolingRatio × sharePoolThresholdPercent and the threshold the node is cooling,
	// and quotas are not raised further.
	CoolingRatio = 0.9
	// limiterConsumePercent: a container using at least this much of its limit spends burst tokens.
	limiterConsumePercent = 100
	// limiterSavePercent: a container using less than this much of its limit saves burst tokens.
	limiterSavePercent = 60
)

// CPUBurstEnabled reports whether policy sets cfs_burst_us.
func CPUBurstEnabled(policy slov1alpha1.CPUBurstPolicy) bool {
	return policy == slov1alpha1.CPUBurstOnly || policy == slov1alpha1.CPUBurstAuto
}

// CFSQuotaBurstEnabled reports whether policy raises throttled containers' CFS quota.
func CFSQuotaBurstEnabled(policy slov1alpha1.CPUBurstPolicy) bool {
	return policy == slov1alpha1.CFSQuotaBurstOnly || policy == slov1alpha1.CPUBurstAuto
}

// BurstUs returns the cfs_burst_us of a container with a CPU limit of limitMilli milli-cores:
// limit cores × percent/100 × period, or 0 when policy does not burst or there is no limit. The kernel takes
// no burst above the quota, so callers cap it there.
func BurstUs(policy slov1alpha1.CPUBurstPolicy, limitMilli, percent, periodUs int64) int64 {
	if !CPUBurstEnabled(policy) || limitMilli <= 0 {
		return 0
	}
	return limitMilli * percent * periodUs / 100 / 1000
}

// NodeState is how busy the node's shared CPU pool is, for the CFS quota burst.
type NodeState int

const (
	// NodeUnknown: the shared pool's usage is not known; quotas are not raised.
	NodeUnknown NodeState = iota
	// NodeIdle: usage below CoolingRatio × threshold; throttled containers get more quota.
	NodeIdle
	// NodeCooling: usage between CoolingRatio × threshold and the threshold; quotas stay.
	NodeCooling
	// NodeOverloaded: usage at or above the threshold; raised quotas come down.
	NodeOverloaded
)

// String returns the state's name for logs.
func (s NodeState) String() string {
	switch s {
	case NodeIdle:
		return "Idle"
	case NodeCooling:
		return "Cooling"
	case NodeOverloaded:
		return "Overloaded"
	}
	return "Unknown"
}

// SharePoolState returns the node's state from the usage of its shared pool: usage / total against
// thresholdPercent. The shared pool is the node minus the CPUs requested by LSE and LSR pods; its usage is the
// node's minus the LSE, LSR and BE pods' (system usage counts in, to be conservative). total <= 0 counts as
// fully used.
func SharePoolState(usage, total float64, thresholdPercent int64) NodeState {
	ratio := 1.0
	if total > 0 {
		ratio = usage / total
	}
	threshold := float64(thresholdPercent) / 100
	switch {
	case ratio >= threshold:
		return NodeOverloaded
	case ratio >= threshold*CoolingRatio:
		return NodeCooling
	default:
		return NodeIdle
	}
}

// Op is what happens to a container's CFS quota in a round.
type Op int

const (
	// Remain keeps the quota.
	Remain Op = iota
	// ScaleUp multiplies it by ScaleUpFactor.
	ScaleUp
	// ScaleDown multiplies it by ScaleDownFactor.
	ScaleDown
	// Reset sets it back to the container's limit.
	Reset
)

// String returns the operation's name for logs.
func (o Op) String() string {
	return [...]string{"Remain", "ScaleUp", "ScaleDown", "Reset"}[o]
}

// QuotaOp decides a container's quota operation: Reset when the policy does not burst the quota, ScaleDown when
// its burst limiter has run out, ScaleUp when it was throttled since the last round and Remain otherwise; then
// the node's state tempers it: an overloaded node scales down what would stay or grow, a cooling or unknown one
// keeps what would grow.
func QuotaOp(policy slov1alpha1.CPUBurstPolicy, limiterAllows, throttled bool, node NodeState) Op {
	op := Remain
	switch {
	case !CFSQuotaBurstEnabled(policy):
		return Reset
	case !limiterAllows:
		op = ScaleDown
	case throttled:
		op = ScaleUp
	}
	switch node {
	case NodeOverloaded:
		if op == ScaleUp || op == Remain {
			op = ScaleDown
		}
	case NodeCooling, NodeUnknown:
		if op == ScaleUp {
			op = Remain
		}
	}
	return op
}

// TargetQuota applies op to the current quota cur, staying within [base, ceil]: base is the quota of the
// container's limit, ceil that × cfsQuotaBurstPercent/100.
func TargetQuota(op Op, cur, base, ceil int64) int64 {
	target := cur
	switch op {
	case ScaleUp:
		target = int64(float64(cur) * ScaleUpFactor)
	case ScaleDown:
		target = int64(float64(cur) * ScaleDownFactor)
	case Reset:
		target = base
	}
	return max(base, min(target, ceil))
}

// Limiter is the token bucket of cfsQuotaBurstPeriodSeconds: a container may stay above its limit for about that
// long. Tokens are percent-seconds: each second spent at u% ≥ 100% of the limit costs u−100, each second below
// 60% saves 100−u; the bucket holds periodSeconds × (cfsQuotaBurstPercent − 100) either way. It allows bursting
// while it holds tokens. A new bucket starts full.
type Limiter struct {
	capacity float64
	tokens   float64
	last     time.Time
}

// NewLimiter returns a full bucket for the given settings at now.
func NewLimiter(periodSeconds, burstPercent int64, now time.Time) *Limiter {
	c := float64(periodSeconds * (burstPercent - 100))
	return &Limiter{capacity: c, tokens: c, last: now}
}

// Matches reports whether the bucket was made for these settings.
func (l *Limiter) Matches(periodSeconds, burstPercent int64) bool {
	return l.capacity == float64(periodSeconds*(burstPercent-100))
}

// Allow accounts for the time since the last call at usagePercent of the limit and reports whether the
// container may still burst, with the tokens left.
func (l *Limiter) Allow(now time.Time, usagePercent float64) (bool, float64) {
	elapsed := now.Sub(l.last).Seconds()
	if elapsed > 0 {
		switch {
		case usagePercent >= limiterConsumePercent:
			l.tokens -= (usagePercent - 100) * elapsed
		case usagePercent < limiterSavePercent:
			l.tokens += (100 - usagePercent) * elapsed
		}
		l.tokens = max(min(l.tokens, l.capacity), -l.capacity)
		l.last = now
	}
	return l.tokens > 0, l.tokens
}

// PodConfig returns the CPU burst configuration of a pod: the node's, overridden field by field by the pod's
// koordinator.sh/cpuBurst annotation. A malformed annotation is returned as an error with the node's
// configuration, which then applies.
func PodConfig(annotations map[string]string, node *slov1alpha1.CPUBurstConfig) (*slov1alpha1.CPUBurstConfig, error) {
	raw, ok := annotations[extension.AnnotationPodCPUBurst]
	if !ok || raw == "" {
		return node, nil
	}
	pod, err := ParseCPUBurstAnnotation(raw)
	if err != nil {
		return node, err
	}
	return configuration.Merge(node, pod), nil
}

// ParseCPUBurstAnnotation parses the value of the koordinator.sh/cpuBurst annotation: a CPUBurstConfig in JSON
// with known fields only, in the ranges the NodeSLO allows.
func ParseCPUBurstAnnotation(raw string) (*slov1alpha1.CPUBurstConfig, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var cfg slov1alpha1.CPUBurstConfig
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("not a CPU burst configuration: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not a CPU burst configuration: data after the JSON object")
	}
	strategy := &slov1alpha1.CPUBurstStrategy{CPUBurstConfig: cfg}
	if errs := configuration.ValidateCPUBurstStrategy(field.NewPath(extension.AnnotationPodCPUBurst), strategy); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &cfg, nil
}
