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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koord-dev/koord/apis/extension"
)

func TestValue(t *testing.T) {
	tests := map[string]struct {
		name corev1.ResourceName
		q    string
		want int64
	}{
		"cpu in milli-cores":           {name: corev1.ResourceCPU, q: "1.5", want: 1500},
		"cpu rounds up":                {name: corev1.ResourceCPU, q: "1500500u", want: 1501},
		"memory in bytes":              {name: corev1.ResourceMemory, q: "1Gi", want: 1 << 30},
		"memory rounds up":             {name: corev1.ResourceMemory, q: "1500m", want: 2},
		"batch-cpu counts milli-cores": {name: extension.BatchCPU, q: "2000", want: 2000},
		"huge saturates":               {name: corev1.ResourceMemory, q: "100E", want: math.MaxInt64},
		"huge cpu saturates":           {name: corev1.ResourceCPU, q: "10E", want: math.MaxInt64},
		"negative saturates":           {name: corev1.ResourceMemory, q: "-100E", want: math.MinInt64},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Value(tc.name, resource.MustParse(tc.q)); got != tc.want {
				t.Errorf("Value(%s, %s) = %d, want %d", tc.name, tc.q, got, tc.want)
			}
		})
	}
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	if got := ValueIn(l, corev1.ResourceCPU); got != 2000 {
		t.Errorf("ValueIn(cpu) = %d, want 2000", got)
	}
	if got := ValueIn(l, corev1.ResourceMemory); got != 0 {
		t.Errorf("ValueIn(memory) = %d, want 0", got)
	}
}

func TestFormat(t *testing.T) {
	tests := map[string]struct {
		name corev1.ResourceName
		v    int64
		want string
	}{
		"whole cpus":                  {name: corev1.ResourceCPU, v: 4000, want: "4"},
		"milli-cores":                 {name: corev1.ResourceCPU, v: 1500, want: "1500m"},
		"memory in Gi":                {name: corev1.ResourceMemory, v: 8 << 30, want: "8Gi"},
		"memory in Mi":                {name: corev1.ResourceMemory, v: 1536 << 20, want: "1536Mi"},
		"memory, not whole MiB":       {name: corev1.ResourceMemory, v: 1_500_000_000, want: "1500M"},
		"memory, whole KiB only":      {name: corev1.ResourceMemory, v: 120_000_000_000, want: "120G"},
		"hugepages like memory":       {name: "hugepages-2Mi", v: 4 << 20, want: "4Mi"},
		"ephemeral storage":           {name: corev1.ResourceEphemeralStorage, v: 10 << 30, want: "10Gi"},
		"batch-memory like memory":    {name: extension.BatchMemory, v: 2 << 30, want: "2Gi"},
		"batch-cpu as milli-cores":    {name: extension.BatchCPU, v: 2000, want: "2k"},
		"zero memory":                 {name: corev1.ResourceMemory, v: 0, want: "0"},
		"an extended resource":        {name: "example.com/gpu", v: 2, want: "2"},
		"an extended resource, large": {name: "example.com/gpu", v: 2048, want: "2048"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Format(tc.name, tc.v); got != tc.want {
				t.Errorf("Format(%s, %d) = %q, want %q", tc.name, tc.v, got, tc.want)
			}
			q := Quantity(tc.name, tc.v)
			if back := Value(tc.name, q); back != tc.v {
				t.Errorf("Value(Quantity(%d)) = %d", tc.v, back)
			}
		})
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	tests := map[string]struct {
		got, want int64
	}{
		"add":            {got: Add(2, 3), want: 5},
		"add overflows":  {got: Add(math.MaxInt64, 1), want: math.MaxInt64},
		"add underflows": {got: Add(math.MinInt64, -1), want: math.MinInt64},
		"sub":            {got: Sub(2, 3), want: -1},
		"sub overflows":  {got: Sub(math.MaxInt64, -1), want: math.MaxInt64},
		"sub of min":     {got: Sub(0, math.MinInt64), want: math.MaxInt64},
		"sub underflows": {got: Sub(math.MinInt64, 1), want: math.MinInt64},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %d, want %d", tc.got, tc.want)
			}
		})
	}
}

func TestAmounts(t *testing.T) {
	a := FromList(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi")})
	if diff := cmp.Diff(Amounts{corev1.ResourceCPU: 1500, corev1.ResourceMemory: 1 << 30}, a); diff != "" {
		t.Errorf("FromList (-want,+got):\n%s", diff)
	}
	if got := a.String(); got != "cpu=1500m,memory=1Gi" {
		t.Errorf("String() = %q", got)
	}
	b := a.Clone()
	b.Add(Amounts{corev1.ResourceCPU: math.MaxInt64})
	b.Sub(Amounts{corev1.ResourceMemory: 1 << 30})
	if diff := cmp.Diff(Amounts{corev1.ResourceCPU: math.MaxInt64, corev1.ResourceMemory: 0}, b); diff != "" {
		t.Errorf("after Add and Sub (-want,+got):\n%s", diff)
	}
	if a[corev1.ResourceCPU] != 1500 {
		t.Error("Clone shares the map")
	}
	if !(Amounts{corev1.ResourceCPU: 0}).IsZero() || a.IsZero() {
		t.Error("IsZero")
	}
	if !a.Equal(Amounts{corev1.ResourceCPU: 1500, corev1.ResourceMemory: 1 << 30, "example.com/gpu": 0}) || a.Equal(b) {
		t.Error("Equal")
	}
	if got := a.List(); got.Cpu().String() != "1500m" || got.Memory().String() != "1Gi" {
		t.Errorf("List() = %v", got)
	}
	if Amounts(nil).List() != nil {
		t.Error("List of nil is not nil")
	}
}

func TestVector(t *testing.T) {
	names := Names{corev1.ResourceCPU, corev1.ResourceMemory, extension.BatchCPU}
	v := names.Vector(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), "example.com/gpu": resource.MustParse("1")})
	if diff := cmp.Diff(Vector{2000, 0, 0}, v); diff != "" {
		t.Errorf("Vector (-want,+got):\n%s", diff)
	}
	v.Add(names.VectorOf(map[corev1.ResourceName]int64{corev1.ResourceMemory: 5, extension.BatchCPU: math.MaxInt64}))
	v.Add(Vector{0, 0, 1})
	if diff := cmp.Diff(Vector{2000, 5, math.MaxInt64}, v); diff != "" {
		t.Errorf("after Add (-want,+got):\n%s", diff)
	}
	if names.Index(extension.BatchCPU) != 2 || names.Index("example.com/gpu") != -1 {
		t.Error("Index")
	}
}

func FuzzValueQuantityRoundTrip(f *testing.F) {
	for _, s := range []string{"1", "1500m", "1Gi", "1500M", "100E", "-3", "0.001"} {
		f.Add("memory", s)
		f.Add("cpu", s)
	}
	f.Fuzz(func(t *testing.T, name, s string) {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return
		}
		rn := corev1.ResourceName(name)
		v := Value(rn, q)
		if back := Value(rn, Quantity(rn, v)); back != v {
			t.Errorf("Value(Quantity(Value(%s %s) = %d)) = %d", name, s, v, back)
		}
	})
}

func BenchmarkVectorAdd(b *testing.B) {
	v, o := Vector{1000, 1 << 30}, Vector{850, 200 << 20}
	b.ReportAllocs()
	for b.Loop() {
		v.Add(o)
		v[0], v[1] = 1000, 1<<30
	}
}

func TestPercentOf(t *testing.T) {
	tests := map[string]struct {
		v, percent, want int64
	}{
		"whole":                   {v: 100_000, percent: 35, want: 35_000},
		"truncated":               {v: 3_000, percent: 33, want: 990},
		"near the int64 bound":    {v: math.MaxInt64 / 2, percent: 100, want: math.MaxInt64 / 2},
		"more than the amount":    {v: 10, percent: 150, want: 15},
		"zero percent of nothing": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PercentOf(tc.v, tc.percent); got != tc.want {
				t.Errorf("PercentOf(%d, %d) = %d, want %d", tc.v, tc.percent, got, tc.want)
			}
		})
	}
}
