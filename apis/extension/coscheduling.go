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

package extension

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gang scheduling annotations. The gang helpers read them from pods, and
// from PodGroups where Koordinator puts the same keys.
const (
	// AnnotationGangName is the name of the gang a pod belongs to.
	AnnotationGangName = GangDomainPrefix + "name"
	// AnnotationGangMinNum is the minimum number of gang members that must
	// be schedulable together, a positive integer.
	AnnotationGangMinNum = GangDomainPrefix + "min-available"
	// AnnotationGangWaitTime is how long the gang waits in Permit for its
	// members, a Go duration such as "30s".
	AnnotationGangWaitTime = GangDomainPrefix + "waiting-time"
	// AnnotationGangTotalNum is the total number of gang members, a positive
	// integer; it defaults to the minimum.
	AnnotationGangTotalNum = GangDomainPrefix + "total-number"
	// AnnotationGangMode is what happens to the gang when a member fails to
	// schedule; see GangMode.
	AnnotationGangMode = GangDomainPrefix + "mode"
	// AnnotationGangGroups lists the gangs, as "namespace/name", bound
	// together: none of them binds until all of them can.
	AnnotationGangGroups = GangDomainPrefix + "groups"
	// AnnotationGangMatchPolicy is which members count toward the minimum;
	// see GangMatchPolicy.
	AnnotationGangMatchPolicy = GangDomainPrefix + "match-policy"
	// AnnotationGangTimeout ("true") is set by koord-scheduler when the gang
	// timed out.
	AnnotationGangTimeout = GangDomainPrefix + "timeout"

	// AnnotationBindGangGroupID is the gang group a pod binds with; internal
	// to koord-scheduler.
	AnnotationBindGangGroupID = InternalSchedulingDomainPrefix + "bind-gang-group-id"
	// AnnotationBindGangMemberCount is the number of pods of the gang group
	// that bind together; internal to koord-scheduler.
	AnnotationBindGangMemberCount = InternalSchedulingDomainPrefix + "bind-gang-member-count"
)

// Keys of the scheduler-plugins coscheduling API, accepted for compatibility.
const (
	// LabelPodGroup names the PodGroup a pod belongs to.
	LabelPodGroup = "pod-group.scheduling.sigs.k8s.io"
	// LabelLightweightCoschedulingPodGroupName names the gang of a pod in
	// lightweight coscheduling.
	//
	// Deprecated: use AnnotationGangName.
	LabelLightweightCoschedulingPodGroupName = LabelPodGroup + "/name"
	// LabelLightweightCoschedulingPodGroupMinAvailable is the gang minimum
	// in lightweight coscheduling.
	//
	// Deprecated: use AnnotationGangMinNum.
	LabelLightweightCoschedulingPodGroupMinAvailable = LabelPodGroup + "/min-available"
	// AnnotationAliasGangMatchPolicy is AnnotationGangMatchPolicy under the
	// scheduler-plugins prefix.
	AnnotationAliasGangMatchPolicy = LabelPodGroup + "/match-policy"
)

// GangMode is the value of AnnotationGangMode.
type GangMode string

// Gang modes.
const (
	// GangModeStrict rejects the whole gang when a member fails to
	// schedule. It is the default.
	GangModeStrict GangMode = "Strict"
	// GangModeNonStrict keeps the members that did schedule.
	GangModeNonStrict GangMode = "NonStrict"
)

// GangMatchPolicy is the value of AnnotationGangMatchPolicy.
type GangMatchPolicy string

// Gang match policies.
const (
	// GangMatchPolicyOnceSatisfied counts waiting members until the gang is
	// satisfied once, and then no longer checks it. It is the default.
	GangMatchPolicyOnceSatisfied GangMatchPolicy = "once-satisfied"
	// GangMatchPolicyOnlyWaiting counts only members waiting in Permit.
	GangMatchPolicyOnlyWaiting GangMatchPolicy = "only-waiting"
	// GangMatchPolicyWaitingAndRunning counts waiting and running members.
	GangMatchPolicyWaitingAndRunning GangMatchPolicy = "waiting-and-running"
)

// lookupMeta returns the first non-empty value of key among the annotations
// and then the labels of obj, and whether it was found among the labels.
func lookupMeta(obj metav1.Object, key string) (value string, isLabel, ok bool) {
	if v, ok := lookup(obj.GetAnnotations(), key); ok {
		return v, false, true
	}
	if v, ok := lookup(obj.GetLabels(), key); ok {
		return v, true, true
	}
	return "", false, false
}

// metaError returns err as a *LabelError or an *AnnotationError for key.
func metaError(key, value string, isLabel bool, err error) error {
	if isLabel {
		return &LabelError{Key: key, Value: value, Err: err}
	}
	return &AnnotationError{Key: key, Value: value, Err: err}
}

// GetGangName returns the name of the gang obj belongs to, read from the
// first of these that is set: the AnnotationGangName annotation, the
// LabelPodGroup label, and the LabelLightweightCoschedulingPodGroupName
// annotation or label. It returns "" when none is.
func GetGangName(obj metav1.Object) string {
	if v, ok := lookup(obj.GetAnnotations(), AnnotationGangName); ok {
		return v
	}
	if v, ok := lookup(obj.GetLabels(), LabelPodGroup); ok {
		return v
	}
	v, _, _ := lookupMeta(obj, LabelLightweightCoschedulingPodGroupName)
	return v
}

// GetGangMinNum returns the gang minimum from the AnnotationGangMinNum
// annotation, else from the LabelLightweightCoschedulingPodGroupMinAvailable
// annotation or label. It returns 0 and no error when none is set, and an
// error naming the key when the value is not a positive int32.
func GetGangMinNum(obj metav1.Object) (int, error) {
	if v, ok := lookup(obj.GetAnnotations(), AnnotationGangMinNum); ok {
		return parsePositiveInt(AnnotationGangMinNum, v, false)
	}
	v, isLabel, ok := lookupMeta(obj, LabelLightweightCoschedulingPodGroupMinAvailable)
	if !ok {
		return 0, nil
	}
	return parsePositiveInt(LabelLightweightCoschedulingPodGroupMinAvailable, v, isLabel)
}

// GetGangTotalNumber returns the number of gang members in
// AnnotationGangTotalNum. It returns 0 and no error when the annotation is
// missing (callers default to the gang minimum), and an *AnnotationError
// when it is not a positive int32.
func GetGangTotalNumber(obj metav1.Object) (int, error) {
	v, ok := lookup(obj.GetAnnotations(), AnnotationGangTotalNum)
	if !ok {
		return 0, nil
	}
	return parsePositiveInt(AnnotationGangTotalNum, v, false)
}

// parsePositiveInt parses a base-10 int32 greater than zero.
func parsePositiveInt(key, value string, isLabel bool) (int, error) {
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil || n <= 0 {
		return 0, metaError(key, value, isLabel, fmt.Errorf("%q is not a positive integer", value))
	}
	return int(n), nil
}

// GetGangWaitingTime returns the duration in AnnotationGangWaitTime. It
// returns 0 and no error when the annotation is missing (callers use their
// configured default), and an *AnnotationError when it is not a positive Go
// duration.
func GetGangWaitingTime(obj metav1.Object) (time.Duration, error) {
	v, ok := lookup(obj.GetAnnotations(), AnnotationGangWaitTime)
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, &AnnotationError{Key: AnnotationGangWaitTime, Value: v, Err: err}
	}
	if d <= 0 {
		return 0, &AnnotationError{Key: AnnotationGangWaitTime, Value: v, Err: fmt.Errorf("%q is not a positive duration", v)}
	}
	return d, nil
}

// GetGangMode returns the mode in AnnotationGangMode: GangModeStrict when the
// annotation is missing, an *AnnotationError when it is neither "Strict" nor
// "NonStrict".
func GetGangMode(obj metav1.Object) (GangMode, error) {
	v, ok := lookup(obj.GetAnnotations(), AnnotationGangMode)
	if !ok {
		return GangModeStrict, nil
	}
	switch m := GangMode(v); m {
	case GangModeStrict, GangModeNonStrict:
		return m, nil
	}
	return "", &AnnotationError{Key: AnnotationGangMode, Value: v, Err: fmt.Errorf("unsupported value %q", v)}
}

// GetGangMatchPolicy returns the policy in AnnotationGangMatchPolicy, else in
// AnnotationAliasGangMatchPolicy: GangMatchPolicyOnceSatisfied when neither is
// set, an *AnnotationError when the value is not a known policy.
func GetGangMatchPolicy(obj metav1.Object) (GangMatchPolicy, error) {
	key := AnnotationGangMatchPolicy
	v, ok := lookup(obj.GetAnnotations(), key)
	if !ok {
		key = AnnotationAliasGangMatchPolicy
		if v, ok = lookup(obj.GetAnnotations(), key); !ok {
			return GangMatchPolicyOnceSatisfied, nil
		}
	}
	switch p := GangMatchPolicy(v); p {
	case GangMatchPolicyOnceSatisfied, GangMatchPolicyOnlyWaiting, GangMatchPolicyWaitingAndRunning:
		return p, nil
	}
	return "", &AnnotationError{Key: key, Value: v, Err: fmt.Errorf("unsupported value %q", v)}
}

// GetGangGroups returns the gangs listed in AnnotationGangGroups, a JSON list
// of "namespace/name" strings. It returns nil and no error when the
// annotation is missing, and an *AnnotationError when it is not a JSON list
// of strings or an element is not of the form namespace/name.
func GetGangGroups(obj metav1.Object) ([]string, error) {
	return getStringListAnnotation(obj.GetAnnotations(), AnnotationGangGroups, validateGangGroups)
}

// SetGangGroups stores groups in AnnotationGangGroups on obj, or removes the
// annotation when groups is nil. It writes nothing and returns an
// *AnnotationError when an element is not of the form namespace/name.
func SetGangGroups(obj metav1.Object, groups []string) error {
	return setStringListAnnotation(obj, AnnotationGangGroups, groups, validateGangGroups)
}

// validateGangGroups checks that every group is "namespace/name" with both
// parts non-empty.
func validateGangGroups(groups []string) error {
	var errs []error
	for i, g := range groups {
		ns, name, ok := strings.Cut(g, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, fmt.Errorf("[%d]: %q is not of the form namespace/name", i, g))
		}
	}
	return errors.Join(errs...)
}

// IsGangTimeout reports whether koord-scheduler marked the gang of obj as
// timed out.
func IsGangTimeout(obj metav1.Object) bool {
	return obj.GetAnnotations()[AnnotationGangTimeout] == "true"
}
