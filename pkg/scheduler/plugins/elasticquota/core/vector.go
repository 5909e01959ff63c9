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

package core

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Vector is an amount of resources by name: cpu in milli-cores, every other resource in its base unit. Sums
// saturate at math.MaxInt64 instead of overflowing, since the built-in quotas' max is near it.
type Vector map[corev1.ResourceName]int64

// VectorOf converts a resource list into a Vector, saturating quantities that do not fit an int64.
func VectorOf(l corev1.ResourceList) Vector {
	v := make(Vector, len(l))
	for name, q := range l {
		v[name] = quantityValue(name, q)
	}
	return v
}

// Bounds of a Vector value, as quantities in the base unit and in milli-units.
var (
	maxValue      = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
	minValue      = *resource.NewQuantity(math.MinInt64, resource.DecimalSI)
	maxMilliValue = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	minMilliValue = *resource.NewMilliQuantity(math.MinInt64, resource.DecimalSI)
)

// quantityValue is q in the Vector unit of name, milli-cores for cpu and the base unit otherwise, rounded
// up and saturated at the int64 bounds.
func quantityValue(name corev1.ResourceName, q resource.Quantity) int64 {
	scale, hi, lo := resource.Scale(0), maxValue, minValue
	if name == corev1.ResourceCPU {
		scale, hi, lo = resource.Milli, maxMilliValue, minMilliValue
	}
	switch {
	case q.Cmp(hi) >= 0:
		return math.MaxInt64
	case q.Cmp(lo) <= 0:
		return math.MinInt64
	}
	return q.ScaledValue(scale)
}

// ResourceList converts v back into a resource list.
func (v Vector) ResourceList() corev1.ResourceList {
	if v == nil {
		return nil
	}
	l := make(corev1.ResourceList, len(v))
	for name, value := range v {
		l[name] = quantityOf(name, value)
	}
	return l
}

// quantityOf is value, in the Vector unit of name, as a quantity in the format users expect for name.
func quantityOf(name corev1.ResourceName, value int64) resource.Quantity {
	switch {
	case name == corev1.ResourceCPU:
		return *resource.NewMilliQuantity(value, resource.DecimalSI)
	case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		return *resource.NewQuantity(value, resource.BinarySI)
	default:
		return *resource.NewQuantity(value, resource.DecimalSI)
	}
}

// Format renders value of resource name for messages, e.g. "4" or "500m" cpu, "8Gi" memory.
func Format(name corev1.ResourceName, value int64) string {
	q := quantityOf(name, value)
	return q.String()
}

// Clone returns a copy of v.
func (v Vector) Clone() Vector {
	return maps.Clone(v)
}

// Names returns the resource names of v, sorted.
func (v Vector) Names() []corev1.ResourceName {
	return slices.Sorted(maps.Keys(v))
}

// Add adds d to v, saturating.
func (v Vector) Add(d Vector) {
	for name, value := range d {
		v[name] = addSat(v[name], value)
	}
}

// Sub subtracts d from v, saturating.
func (v Vector) Sub(d Vector) {
	for name, value := range d {
		v[name] = addSat(v[name], negSat(value))
	}
}

// IsZero reports whether every value of v is 0.
func (v Vector) IsZero() bool {
	for _, value := range v {
		if value != 0 {
			return false
		}
	}
	return true
}

// Equal reports whether v and o hold the same values, a missing name counting as 0.
func (v Vector) Equal(o Vector) bool {
	for name, value := range v {
		if o[name] != value {
			return false
		}
	}
	for name, value := range o {
		if v[name] != value {
			return false
		}
	}
	return true
}

// addSat returns a+b, saturated at the int64 bounds.
func addSat(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return math.MaxInt64
	}
	if a < 0 && b < 0 && s >= 0 {
		return math.MinInt64
	}
	return s
}

// negSat returns -a, saturated.
func negSat(a int64) int64 {
	if a == math.MinInt64 {
		return math.MaxInt64
	}
	return -a
}

// mulDiv returns floor(a*b/c) for non-negative a, b and positive c with a <= c or b <= c, so that the result
// fits an int64, computed on 128 bits so that large memory amounts lose no precision.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// mulMod returns a*b mod c for non-negative a, b and positive c with a <= c or b <= c.
func mulMod(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	_, r := bits.Div64(hi, lo, uint64(c))
	return int64(r)
}
