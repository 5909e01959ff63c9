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

// Package quantity turns resource quantities into the integer units Koord computes with and back, and formats
// them for messages, the same way in every component:
//
//   - cpu is counted in milli-cores; kubernetes.io/batch-cpu and mid-cpu are milli-cores already (a request of
//     "2000" is two cores); every other resource in its base unit (bytes for memory and storage);
//   - conversions round up (as Quantity.Value does) and saturate at the int64 bounds instead of overflowing
//     (the built-in quotas' max is near them), and so do sums;
//   - back into quantities, cpu is a decimal milli-quantity ("500m", "4"); memory-like resources (memory,
//     storage, hugepages-*, and resources whose name ends in "memory", such as batch-memory) are binary when
//     they are a whole number of MiB ("1Gi", "1536Mi") and decimal otherwise ("1500M", "120G"), whichever
//     reads better; the rest is decimal.
//
// Amounts is an amount per resource (a map, as quotas and reservations hold them); Names and Vector are an
// ordered list of resources and one amount per name, for hot paths that index instead of hashing.
package quantity

import (
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koord-dev/koord/apis/extension"
)

// Bounds of a value, as quantities in the base unit and in milli-units.
var (
	maxValue      = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
	minValue      = *resource.NewQuantity(math.MinInt64, resource.DecimalSI)
	maxMilliValue = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	minMilliValue = *resource.NewMilliQuantity(math.MinInt64, resource.DecimalSI)
)

// IsCPU reports whether Value counts resource name in milli-cores: cpu, batch-cpu and mid-cpu.
func IsCPU(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == extension.BatchCPU || name == extension.MidCPU
}

// isMemoryLike reports whether name is counted in bytes and shown in binary units when it can be.
func isMemoryLike(name corev1.ResourceName) bool {
	switch {
	case name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage, name == corev1.ResourceStorage:
		return true
	case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		return true
	}
	return strings.HasSuffix(string(name), "memory")
}

// Value returns q in the unit Koord computes resource name in: milli-cores for cpu, the base unit for every
// other resource; rounded up and saturated at the int64 bounds.
func Value(name corev1.ResourceName, q resource.Quantity) int64 {
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

// ValueIn returns the amount of resource name in l, in the unit of Value; 0 when l has none.
func ValueIn(l corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	return Value(name, q)
}

// Quantity returns v of resource name, in the unit of Value, as a quantity in the format people expect for
// name.
func Quantity(name corev1.ResourceName, v int64) resource.Quantity {
	switch {
	case name == corev1.ResourceCPU:
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case isMemoryLike(name) && v%(1<<20) == 0 && v != 0:
		return *resource.NewQuantity(v, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

// Format renders v of resource name for messages: "500m" or "4" cpu, "8Gi" or "1500M" memory, "2000"
// batch-cpu.
func Format(name corev1.ResourceName, v int64) string {
	q := Quantity(name, v)
	return q.String()
}

// Add returns a+b, saturated at the int64 bounds.
func Add(a, b int64) int64 {
	s := a + b
	if (s^a)&(s^b) < 0 { // Overflow: both operands have the sign the sum lacks.
		if a < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}

// Sub returns a-b, saturated at the int64 bounds.
func Sub(a, b int64) int64 {
	if b == math.MinInt64 {
		return Add(Add(a, math.MaxInt64), 1)
	}
	return Add(a, -b)
}

// PercentOf returns v × percent / 100, truncated, without overflowing for any realistic v: koord-manager's
// share of an amount (and koordctl explain's, which re-evaluates its formulas).
func PercentOf(v, percent int64) int64 {
	return v/100*percent + v%100*percent/100
}
