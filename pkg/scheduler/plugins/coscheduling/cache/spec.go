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

package cache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// ID names a gang: the namespace and name of its PodGroup, or of the gang its pods' annotations name.
type ID struct {
	Namespace string
	Name      string
}

// String returns the ID as "namespace/name".
func (id ID) String() string { return id.Namespace + "/" + id.Name }

// compare orders IDs by namespace, then name.
func (id ID) compare(other ID) int {
	if c := strings.Compare(id.Namespace, other.Namespace); c != 0 {
		return c
	}
	return strings.Compare(id.Name, other.Name)
}

// IDOf returns the gang pod belongs to and whether it belongs to one. The gang's name comes from the
// gang.scheduling.koordinator.sh/name annotation, else the pod-group.scheduling.sigs.k8s.io label, else the
// lightweight-coscheduling name; its namespace is the pod's.
func IDOf(pod *corev1.Pod) (ID, bool) {
	name := extension.GetGangName(pod)
	if name == "" {
		return ID{}, false
	}
	return ID{Namespace: pod.Namespace, Name: name}, true
}

// Spec is what a gang asks for.
type Spec struct {
	// MinMember is how many members must be placed together.
	MinMember int
	// TotalMember is how many members the gang has in all; at least MinMember.
	TotalMember int
	// WaitTime is how long members wait in Permit for the rest of the gang.
	WaitTime time.Duration
	// Mode says what a failing member does to the others.
	Mode extension.GangMode
	// MatchPolicy says which members count towards MinMember.
	MatchPolicy extension.GangMatchPolicy
	// Groups are the gangs that must be satisfied together, this one included, sorted.
	Groups []ID
	// FromPodGroup is true when a PodGroup defines the gang, false when its pods' annotations do.
	FromPodGroup bool
	// NetworkTopology asks for the gang to be placed by network topology; nil when it does not.
	NetworkTopology *extension.NetworkTopologySpec
}

// Defaults are the values of a Spec its source leaves out.
type Defaults struct {
	// WaitTime is the wait time of gangs that give none.
	WaitTime time.Duration
	// MatchPolicy is the match policy of gangs that give none.
	MatchPolicy extension.GangMatchPolicy
}

// errNoMinimum says a pod names a gang but not its minimum; it is not an error of the pod when a PodGroup
// defines the gang.
var errNoMinimum = errors.New("no min-available annotation")

// SpecFromPod reads the gang spec from the annotations of pod (the gang.scheduling.koordinator.sh/ keys, or
// the lightweight-coscheduling min-available). It returns an error naming the annotation when one is
// malformed, and errNoMinimum when the pod gives no minimum.
func SpecFromPod(pod *corev1.Pod, d Defaults) (Spec, error) {
	minMember, err := extension.GetGangMinNum(pod)
	if err != nil {
		return Spec{}, err
	}
	if minMember == 0 {
		return Spec{}, errNoMinimum
	}
	id, _ := IDOf(pod)
	s, err := specFromMeta(pod, id, minMember, d)
	if err != nil {
		return Spec{}, err
	}
	if s.WaitTime, err = extension.GetGangWaitingTime(pod); err != nil {
		return Spec{}, err
	}
	if s.WaitTime == 0 {
		s.WaitTime = d.WaitTime
	}
	return s, nil
}

// SpecFromPodGroup reads the gang spec of a PodGroup: spec.minMember and spec.scheduleTimeoutSeconds, and
// the gang annotations (total-number, mode, match-policy, groups) on the PodGroup. It returns an error naming
// the annotation when one is malformed.
func SpecFromPodGroup(pg *v1alpha1.PodGroup, d Defaults) (Spec, error) {
	id := ID{Namespace: pg.Namespace, Name: pg.Name}
	s, err := specFromMeta(pg, id, int(pg.Spec.MinMember), d)
	if err != nil {
		return Spec{}, err
	}
	s.FromPodGroup = true
	s.WaitTime = d.WaitTime
	if t := pg.Spec.ScheduleTimeoutSeconds; t != nil && *t > 0 {
		s.WaitTime = time.Duration(*t) * time.Second
	}
	return s, nil
}

// specFromMeta reads what pods and PodGroups share: total number, mode, match policy and groups.
func specFromMeta(obj metav1.Object, id ID, minMember int, d Defaults) (Spec, error) {
	s := Spec{MinMember: minMember}
	var err error
	if s.TotalMember, err = extension.GetGangTotalNumber(obj); err != nil {
		return Spec{}, err
	}
	switch {
	case s.TotalMember == 0:
		s.TotalMember = minMember
	case s.TotalMember < minMember:
		return Spec{}, &extension.AnnotationError{
			Key:   extension.AnnotationGangTotalNum,
			Value: obj.GetAnnotations()[extension.AnnotationGangTotalNum],
			Err:   fmt.Errorf("total number %d is less than the minimum %d", s.TotalMember, minMember),
		}
	}
	if s.Mode, err = extension.GetGangMode(obj); err != nil {
		return Spec{}, err
	}
	s.MatchPolicy = d.MatchPolicy
	a := obj.GetAnnotations()
	if a[extension.AnnotationGangMatchPolicy] != "" || a[extension.AnnotationAliasGangMatchPolicy] != "" {
		if s.MatchPolicy, err = extension.GetGangMatchPolicy(obj); err != nil {
			return Spec{}, err
		}
	}
	groups, err := extension.GetGangGroups(obj)
	if err != nil {
		return Spec{}, err
	}
	if s.NetworkTopology, err = extension.GetNetworkTopologySpec(obj); err != nil {
		return Spec{}, err
	}
	s.Groups = []ID{id}
	for _, g := range groups {
		ns, name, _ := strings.Cut(g, "/") // GetGangGroups checked the form.
		s.Groups = append(s.Groups, ID{Namespace: ns, Name: name})
	}
	slices.SortFunc(s.Groups, ID.compare)
	s.Groups = slices.Compact(s.Groups)
	return s, nil
}
