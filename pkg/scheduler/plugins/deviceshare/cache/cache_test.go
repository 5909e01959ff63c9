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

package cache_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/deviceshare/cache"
)

func gpu(minor int32, pct string, vfs ...string) *extension.DeviceAllocation {
	a := &extension.DeviceAllocation{Minor: minor, Resources: corev1.ResourceList{
		extension.ResourceGPUCore: resource.MustParse(pct), extension.ResourceGPUMemoryRatio: resource.MustParse(pct)}}
	var list []schedulingv1alpha1.VirtualFunction
	for _, vf := range vfs {
		list = append(list, schedulingv1alpha1.VirtualFunction{BusID: vf})
	}
	if len(list) > 0 {
		a.Extension = extension.VFExtension(list)
	}
	return a
}

// usage renders a Usage: used gpu-core per minor, used VFs, and per Reservation the gpu-core it still holds.
type usage struct {
	Used     map[int]int64
	VFs      map[string]bool
	Reserved map[types.UID]map[int]int64
	Free     map[types.UID]map[string]bool
}

func TestUsage(t *testing.T) {
	c := cache.New()
	// Reservation r holds GPU 0 whole and a VF; owner a takes 60 of it and the VF, owner b 60 more (20 of which
	// are its own); pod s, a stranger, 30 of GPU 1.
	c.SetBound("r", cache.Allocation{Node: "n", Reserves: true, Devices: extension.DeviceAllocations{"gpu": {gpu(0, "100", "0000:18:00.2")}}})
	c.SetBound("a", cache.Allocation{Node: "n", Reservation: "r", Devices: extension.DeviceAllocations{"gpu": {gpu(0, "60", "0000:18:00.2")}}})
	c.SetBound("b", cache.Allocation{Node: "n", Reservation: "r", Devices: extension.DeviceAllocations{"gpu": {gpu(0, "60")}}})
	c.SetBound("s", cache.Allocation{Node: "n", Devices: extension.DeviceAllocations{"gpu": {gpu(1, "30")}}})
	render := func(u *cache.Usage) usage {
		out := usage{Used: map[int]int64{}, VFs: u.VFs, Reserved: map[types.UID]map[int]int64{}, Free: map[types.UID]map[string]bool{}}
		for minor, a := range u.Used["gpu"] {
			out.Used[minor] = a[extension.ResourceGPUCore]
		}
		for uid, byType := range u.Reserved {
			out.Reserved[uid] = map[int]int64{}
			for minor, a := range byType["gpu"] {
				out.Reserved[uid][minor] = a[extension.ResourceGPUCore]
			}
			out.Free[uid] = u.ReservedVFs[uid]
		}
		return out
	}
	want := usage{
		// GPU 0: the Reservation's 100 and b's 20 beyond it; a's 60 and b's other 40 are inside it.
		Used: map[int]int64{0: 120, 1: 30}, VFs: map[string]bool{"0000:18:00.2": true},
		Reserved: map[types.UID]map[int]int64{"r": {0: 0}}, Free: map[types.UID]map[string]bool{"r": {}},
	}
	if diff := cmp.Diff(want, render(c.Usage("n", ""))); diff != "" {
		t.Errorf("Usage (-want,+got):\n%s", diff)
	}
	// Without b (being scheduled again), 40 of the Reservation are left for its owners.
	want = usage{Used: map[int]int64{0: 100, 1: 30}, VFs: map[string]bool{"0000:18:00.2": true},
		Reserved: map[types.UID]map[int]int64{"r": {0: 40}}, Free: map[types.UID]map[string]bool{"r": {}}}
	if diff := cmp.Diff(want, render(c.Usage("n", "b"))); diff != "" {
		t.Errorf("Usage without b (-want,+got):\n%s", diff)
	}
}
