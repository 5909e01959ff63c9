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

package quantity

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Amounts is an amount per resource, in the unit of Value. A missing resource counts as 0.
type Amounts map[corev1.ResourceName]int64

// FromList converts a resource list into Amounts.
func FromList(l corev1.ResourceList) Amounts {
	a := make(Amounts, len(l))
	for name, q := range l {
		a[name] = Value(name, q)
	}
	return a
}

// List converts a back into a resource list; nil stays nil.
func (a Amounts) List() corev1.ResourceList {
	if a == nil {
		return nil
	}
	l := make(corev1.ResourceList, len(a))
	for name, v := range a {
		l[name] = Quantity(name, v)
	}
	return l
}

// Clone returns a copy of a.
func (a Amounts) Clone() Amounts { return maps.Clone(a) }

// Names returns the resources of a, sorted.
func (a Amounts) Names() []corev1.ResourceName { return slices.Sorted(maps.Keys(a)) }

// Add adds b to a, saturating.
func (a Amounts) Add(b Amounts) {
	for name, v := range b {
		a[name] = Add(a[name], v)
	}
}

// Sub subtracts b from a, saturating.
func (a Amounts) Sub(b Amounts) {
	for name, v := range b {
		a[name] = Sub(a[name], v)
	}
}

// IsZero reports whether every amount of a is 0.
func (a Amounts) IsZero() bool {
	for _, v := range a {
		if v != 0 {
			return false
		}
	}
	return true
}

// Equal reports whether a and b hold the same amounts, a missing resource counting as 0.
func (a Amounts) Equal(b Amounts) bool {
	for name, v := range a {
		if b[name] != v {
			return false
		}
	}
	for name, v := range b {
		if a[name] != v {
			return false
		}
	}
	return true
}

// String renders a sorted by resource, such as "cpu=1500m,memory=1Gi".
func (a Amounts) String() string {
	parts := make([]string, 0, len(a))
	for _, name := range a.Names() {
		parts = append(parts, string(name)+"="+Format(name, a[name]))
	}
	return strings.Join(parts, ",")
}
