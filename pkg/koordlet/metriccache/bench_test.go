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

package metriccache

import (
	"fmt"
	"testing"
)

func BenchmarkAppend(b *testing.B) {
	for _, series := range []int{1, 450} {
		b.Run(fmt.Sprintf("series=%d", series), func(b *testing.B) {
			c := New(Options{})
			keys := make([]SeriesKey, series)
			for i := range keys {
				keys[i] = podCPU
				keys[i].ID = fmt.Sprint("pod-", i)
				c.Append(keys[i], at(0), 0)
			}
			i := 1
			b.ReportAllocs()
			for b.Loop() {
				c.Append(keys[i%series], at(i), float64(i%7))
				i++
			}
		})
	}
}

func BenchmarkAggregate(b *testing.B) {
	for _, samples := range []int{300, 1800} {
		b.Run(fmt.Sprintf("samples=%d", samples), func(b *testing.B) {
			c := New(Options{NodeSamples: samples})
			for i := range samples {
				c.Append(nodeCPU, at(i), float64((i*7919)%1000))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := c.Aggregate(nodeCPU, at(-1), at(samples)); !ok {
					b.Fatal("no samples")
				}
			}
		})
	}
}
