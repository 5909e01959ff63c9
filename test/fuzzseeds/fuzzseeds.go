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

// Package fuzzseeds holds the seed corpora of the fuzz targets of Koordinator's annotations and labels
// (apis/extension): valid values, values at the edges and malformed ones. The fuzz targets start from them, and
// the reliability suite writes each of them through the apiserver onto real objects, where the webhooks and
// the components must judge them without crashing. The package has no imports, so that the tests of the
// packages it serves can use it.
package fuzzseeds

// CPUSet are cpuset strings ("0-3,8").
var CPUSet = []string{"", "0", "0-3,8", "8,0-1", "0-3,2-5", " 1 ", "3-1", "0,,1", "-1", "+1", "1-2-3", "65535", "65536", "0-65535", "007", "0-7:2", "a"}

// PodSubPriority are values of the koordinator.sh/priority label.
var PodSubPriority = []string{"", "0", "1234", "-5", "2147483647", "2147483648", "-2147483648", "0x10", "1.5", "high", "+7", " 1"}

// ResourceSpec are values of scheduling.koordinator.sh/resource-spec.
var ResourceSpec = []string{
	"", "{}", "null", `{"preferredCPUBindPolicy":"FullPCPUs"}`,
	`{"requiredCPUBindPolicy":"SpreadByPCPUs","preferredCPUExclusivePolicy":"NUMANodeLevel"}`,
	`{"preferredCPUBindPolicy":"Pack"}`, `{"preferredCPUBindPolicy":1}`, "x", "[]", `{"PREFERREDCPUBINDPOLICY":"Default"}`,
}

// ResourceStatus are values of scheduling.koordinator.sh/resource-status.
var ResourceStatus = []string{
	"", "{}", `{"cpuset":"0-3,8"}`, `{"cpuset":"3-1"}`,
	`{"numaNodeResources":[{"node":0,"resources":{"cpu":"4","memory":"8Gi"}},{"node":1}]}`,
	`{"numaNodeResources":[]}`, `{"numaNodeResources":[{"node":-1}]}`, `{"numaNodeResources":[{"node":0,"resources":{"cpu":"1e-10"}}]}`,
	`{"cpuset":[0]}`, `{"cpuset":"0-3"`,
}

// DeviceAllocations are values of scheduling.koordinator.sh/device-allocated.
var DeviceAllocations = []string{
	"", "null", "{}", `{"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":100}}]}`,
	`{"rdma":[{"minor":1,"id":"0000:09:00.0","resources":{},"extension":{ "vfs" : [ {"minor":3} ] }}]}`,
	`{"fpga":[{"minor":2,"extension":null}]}`, `{"gpu":[null]}`, `{"":[]}`, `{"gpu":[{"minor":"0"}]}`, `[]`, `{"gpu":`,
}

// ReservationAffinity are values of scheduling.koordinator.sh/reservation-affinity.
var ReservationAffinity = []string{
	"", "{}", `{"name":"r1"}`, `{"reservationSelector":{"app":"demo"}}`,
	`{"requiredDuringSchedulingIgnoredDuringExecution":{"reservationSelectorTerms":[{"matchExpressions":[{"key":"app","operator":"In","values":["a"]}]}]}}`,
	`{"requiredDuringSchedulingIgnoredDuringExecution":{}}`,
	`{"tolerations":[{"key":"k","operator":"Equal","value":"v","effect":"NoSchedule","tolerationSeconds":30}]}`,
	`{"tolerations":[{"operator":"Contains"}]}`, `{"reservationSelector":["app"]}`, `{name:"r1"}`,
}

// ReservationAllocated are values of scheduling.koordinator.sh/reservation-allocated.
var ReservationAllocated = []string{"", "{}", `{"name":"r1","uid":"u1"}`, `{"name":"r1"}`, `{"uid":7}`, `{name:"r1"}`}

// CustomUsageThresholds are values of scheduling.koordinator.sh/usage-thresholds on nodes.
var CustomUsageThresholds = []string{
	"", "{}", `{"usageThresholds":{"cpu":65,"memory":95}}`, `{"prodUsageThresholds":{"cpu":0}}`,
	`{"aggregatedUsage":{"usageThresholds":{"cpu":100},"usageAggregationType":"p95","usageAggregatedDuration":"5m"}}`,
	`{"aggregatedUsage":{}}`, `{"usageThresholds":{"cpu":101}}`, `{"usageThresholds":{"cpu":65.5}}`,
	`{"aggregatedUsage":{"usageAggregatedDuration":"1.5h"}}`, `{"aggregatedUsage":{"usageAggregationType":"max"}}`, `{`,
}

// NodeReservation are values of node.koordinator.sh/reservation.
var NodeReservation = []string{
	"", "{}", `{"resources":{"cpu":"5"}}`, `{"reservedCPUs":"0-3","applyPolicy":"ReservedCPUsOnly"}`,
	`{"reservedCPUs":"0-"}`, `{"applyPolicy":"Never"}`, `{"reservedCPUs":0}`, `{"resources":{"cpu":"0.0001"}}`,
}

// ExtendedResourceSpec are values of node.koordinator.sh/extended-resource-spec on pods.
var ExtendedResourceSpec = []string{
	"", "{}", `{"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"2k"},"requests":{"kubernetes.io/batch-cpu":1000}}}}`,
	`{"containers":{"c":{}}}`, `{"containers":[]}`, `{"containers":{"c":{"limits":{"cpu":"lots"}}}}`,
}

// GangMinNum are values of gang.scheduling.koordinator.sh/min-available.
var GangMinNum = []string{"", "1", "3", "2147483647", "2147483648", "0", "-1", "three", "1.5", "+2", "0x10"}

// GangTotalNumber are values of gang.scheduling.koordinator.sh/total-number.
var GangTotalNumber = []string{"", "8", "0", "-3", " 8", "08"}

// GangWaitingTime are values of gang.scheduling.koordinator.sh/waiting-time.
var GangWaitingTime = []string{"", "30s", "1h30m", "1.5m", "300ms", "1ns", "30", "-5s", "0s", "soon", "9999999999h"}

// GangMode are values of gang.scheduling.koordinator.sh/mode.
var GangMode = []string{"", "Strict", "NonStrict", "strict", "Lenient"}

// GangMatchPolicy are values of gang.scheduling.koordinator.sh/match-policy.
var GangMatchPolicy = []string{"", "once-satisfied", "only-waiting", "waiting-and-running", "all", "Only-Waiting"}

// GangGroups are values of gang.scheduling.koordinator.sh/groups.
var GangGroups = []string{"", "[]", "null", `["ns/a","ns/b"]`, `["a"]`, `["x/y/z"]`, `"ns/a"`, `[1]`, `["ns/a"`}

// QuotaResourceList are values of the resource-list annotations of ElasticQuotas (shared-weight, runtime,
// request, ...).
var QuotaResourceList = []string{
	"", "{}", "null", `{"cpu":"4","memory":"8Gi"}`, `{"kubernetes.io/batch-cpu":2000}`, `{"cpu":"1.5"}`,
	`{"cpu":"-1"}`, `{"cpu":"1e3"}`, `{"cpu":"0.0000000001"}`, `{"cpu":`, `["cpu"]`, `{"cpu":"x"}`,
}

// QuotaNamespaces are values of quota.scheduling.koordinator.sh/namespaces.
var QuotaNamespaces = []string{"", "[]", `["ns1","team-b"]`, `["Bad_NS"]`, `[""]`, `[team-a]`, `"ns1"`}
