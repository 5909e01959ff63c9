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
	"math"

	corev1 "k8s.io/api/core/v1"
)

// Names is an ordered list of resources; a Vector over it holds one amount per name, in the same order.
type Names []corev1.ResourceName

// Vector holds one amount per resource of a Names, in the unit of Value.
type Vector []int64

// Index returns the position of name in n, or -1.
func (n Names) Index(name corev1.ResourceName) int {
	for i, x := range n {
		if x == name {
			return i
		}
	}
	return -1
}

// Vector returns the amounts of l for n's resources; resources missing from l are 0.
func (n Names) Vector(l corev1.ResourceList) Vector {
	v := make(Vector, len(n))
	for i, name := range n {
		if q, ok := l[name]; ok {
			v[i] = Value(name, q)
		}
	}
	return v
}

// VectorOf returns the values of m for n's resources; resources missing from m are 0, and names of m outside
// n are ignored.
func (n Names) VectorOf(m map[corev1.ResourceName]int64) Vector {
	v := make(Vector, len(n))
	for i, name := range n {
		v[i] = m[name]
	}
	return v
}

// Add adds o to v element-wise, saturating. Both have the same length. It is on LoadAwareScheduling's path
// for every node of every cycle, hence the single overflow test per element.
func (v Vector) Add(o Vector) {
	o = o[:len(v)]
	for i, x := range o {
		s := v[i] + x
		if (s^v[i])&(s^x) < 0 { // Overflow: both operands have the sign the sum lacks.
			s = math.MaxInt64
			if x < 0 {
				s = math.MinInt64
			}
		}
		v[i] = s
	}
}
