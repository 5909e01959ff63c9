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

package demo

import (
	"math"
	"time"
)

// Sample is the state of the running cluster at one moment of the scenario. CPU is in cores.
type Sample struct {
	// Elapsed is the simulated time since the scenario's start.
	Elapsed time.Duration
	// SimTime is the simulated time of the node agents' snapshot.
	SimTime time.Time
	// Nodes is the number of nodes the agents simulated.
	Nodes int
	// CPUCapacity is the CPU capacity of those nodes.
	CPUCapacity float64
	// NodeCPU is the nodes' CPU usage: every pod plus the system, as of each node's last round.
	NodeCPU float64
	// LSCPU is the usage of the pods that are not BE, koord-mid pods included.
	LSCPU float64
	// MidUsedCPU is the usage of the koord-mid pods (part of LSCPU).
	MidUsedCPU float64
	// BECPU is the usage of the BE pods, after suppression.
	BECPU float64
	// BEDemandCPU is what the BE pods' profiles asked for, before suppression.
	BEDemandCPU float64
	// BatchCPU is kubernetes.io/batch-cpu in each node's status.allocatable, in the report's node order; NaN
	// for a node without it.
	BatchCPU []float64
	// MidCPU is kubernetes.io/mid-cpu in each node's status.allocatable, in the report's node order; NaN for a
	// node without it.
	MidCPU []float64
	// NodeUtil is each node's CPU usage in percent of its capacity, in the report's node order; NaN for a node
	// the agents do not simulate.
	NodeUtil []float64
	// Migrations counts the PodMigrationJobs of the scenario's pods seen so far; MigrationsSucceeded and
	// MigrationsFailed those of them that ended Succeeded, and Failed or Aborted.
	Migrations, MigrationsSucceeded, MigrationsFailed int
	// FailedMigrations says, for each PodMigrationJob counted in MigrationsFailed, its name, phase, reason and
	// message, sorted by name.
	FailedMigrations []string
	// LSRunning counts the Running pods that are neither BE nor koord-mid.
	LSRunning int
	// MidRunning, MidPending and MidCompleted count the koord-mid pods (not BE) running, not running yet, and
	// completed so far.
	MidRunning, MidPending, MidCompleted int
	// BERunning counts the Running BE pods.
	BERunning int
	// BEPending counts the BE pods not running yet.
	BEPending int
	// BECompleted counts the BE pods that completed so far.
	BECompleted int
	// Suppressed, Evictions and LSBreaches are the agents' counters since the previous sample: moments (a
	// simulated second of one node) with BE CPU suppressed, BE pods evicted, and moments with the LS pods'
	// usage above the node's threshold.
	Suppressed, Evictions, LSBreaches int64
}

// UtilWith returns the cluster's CPU utilization with colocation, in percent: every pod and the system.
func (s *Sample) UtilWith() float64 { return percent(s.NodeCPU, s.CPUCapacity) }

// UtilWithout returns what the utilization would be without colocation, in percent: the same minus the BE and
// koord-mid pods' usage, i.e. the prod pods and the system.
func (s *Sample) UtilWithout() float64 { return percent(s.NodeCPU-s.BECPU-s.MidUsedCPU, s.CPUCapacity) }

// ProdCPU returns the usage of the pods that are neither BE nor koord-mid.
func (s *Sample) ProdCPU() float64 { return s.LSCPU - s.MidUsedCPU }

// BatchCPUTotal returns the sum of the nodes' batch-cpu allocatable, in cores.
func (s *Sample) BatchCPUTotal() float64 { return sum(s.BatchCPU) }

// MidCPUTotal returns the sum of the nodes' mid-cpu allocatable, in cores.
func (s *Sample) MidCPUTotal() float64 { return sum(s.MidCPU) }

// sum adds the values that are not NaN.
func sum(values []float64) float64 {
	t := 0.0
	for _, v := range values {
		if !math.IsNaN(v) {
			t += v
		}
	}
	return t
}

// HottestNode returns the highest NodeUtil, NaN when there is none.
func (s *Sample) HottestNode() float64 { return extreme(s.NodeUtil, math.Max) }

// CoolestNode returns the lowest NodeUtil, NaN when there is none.
func (s *Sample) CoolestNode() float64 { return extreme(s.NodeUtil, math.Min) }

// extreme folds the values that are not NaN with pick (math.Max or math.Min); NaN when there is none.
func extreme(values []float64, pick func(a, b float64) float64) float64 {
	v := math.NaN()
	for _, u := range values {
		switch {
		case math.IsNaN(u):
		case math.IsNaN(v):
			v = u
		default:
			v = pick(v, u)
		}
	}
	return v
}

// NodeSpread returns the population standard deviation of NodeUtil, in percentage points: how unevenly the
// nodes are loaded. NaN when there is no node.
func (s *Sample) NodeSpread() float64 {
	var sum, n float64
	for _, u := range s.NodeUtil {
		if !math.IsNaN(u) {
			sum += u
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	mean, sq := sum/n, 0.0
	for _, u := range s.NodeUtil {
		if !math.IsNaN(u) {
			sq += (u - mean) * (u - mean)
		}
	}
	return math.Sqrt(sq / n)
}

// percent returns part of whole in percent; NaN when whole is not above zero.
func percent(part, whole float64) float64 {
	if !(whole > 0) {
		return math.NaN()
	}
	return 100 * part / whole
}

// Summary is what a run shows in numbers: all derived from its samples.
type Summary struct {
	// Samples is the number of samples.
	Samples int
	// Simulated is the simulated time covered.
	Simulated time.Duration
	// AvgUtilWith and AvgUtilWithout are the mean CPU utilization with and without colocation, in percent.
	AvgUtilWith, AvgUtilWithout float64
	// PeakUtilWith and PeakUtilWithout are their highest values.
	PeakUtilWith, PeakUtilWithout float64
	// Gain is AvgUtilWith − AvgUtilWithout, in percentage points; MidGain the part of it the koord-mid pods
	// used, the rest the BE pods'.
	Gain, MidGain float64
	// BECPUHours is the CPU the BE pods used, in core-hours of simulated time.
	BECPUHours float64
	// AvgBatchCPU is the mean batch-cpu the nodes offered, in cores, and BatchCPUHours its integral in
	// core-hours.
	AvgBatchCPU, BatchCPUHours float64
	// BECompleted counts the BE pods that completed; PeakBERunning and PeakBEPending are the most BE pods
	// running and pending at a sample.
	BECompleted, PeakBERunning, PeakBEPending int
	// AvgMidCPU is the mean mid-cpu the nodes offered, in cores, and MidCPUHours its integral in core-hours;
	// MidUsedCPUHours is the CPU the koord-mid pods used, in core-hours.
	AvgMidCPU, MidCPUHours, MidUsedCPUHours float64
	// MidCompleted counts the koord-mid pods that completed; PeakMidRunning and PeakMidPending are the most
	// running and pending at a sample.
	MidCompleted, PeakMidRunning, PeakMidPending int
	// SuppressedMoments, Evictions and LSBreaches are the counters over the run.
	SuppressedMoments, Evictions, LSBreaches int64
	// FirstSpread and LastSpread are NodeSpread at the first and the last sample; FirstHottest and LastHottest
	// HottestNode there.
	FirstSpread, LastSpread, FirstHottest, LastHottest float64
	// Migrations, MigrationsSucceeded and MigrationsFailed are the PodMigrationJobs over the run;
	// FailedMigrations says why each of the failed ones ended.
	Migrations, MigrationsSucceeded, MigrationsFailed int
	FailedMigrations                                  []string
}

// Summarize computes the summary of samples. Integrals weigh each sample by the time to the next one (the
// last by the time from the previous one).
func Summarize(samples []Sample) Summary {
	var s Summary
	s.Samples = len(samples)
	if len(samples) == 0 {
		return s
	}
	first, last := &samples[0], &samples[len(samples)-1]
	s.Simulated = last.Elapsed
	s.FirstSpread, s.LastSpread = first.NodeSpread(), last.NodeSpread()
	s.FirstHottest, s.LastHottest = first.HottestNode(), last.HottestNode()
	s.Migrations, s.MigrationsSucceeded, s.MigrationsFailed = last.Migrations, last.MigrationsSucceeded, last.MigrationsFailed
	s.FailedMigrations = last.FailedMigrations
	s.PeakUtilWith, s.PeakUtilWithout = math.Inf(-1), math.Inf(-1)
	var n int
	for i := range samples {
		sm := &samples[i]
		with, without := sm.UtilWith(), sm.UtilWithout()
		if !math.IsNaN(with) {
			n++
			s.AvgUtilWith += with
			s.AvgUtilWithout += without
			s.MidGain += percent(sm.MidUsedCPU, sm.CPUCapacity)
			s.PeakUtilWith = max(s.PeakUtilWith, with)
			s.PeakUtilWithout = max(s.PeakUtilWithout, without)
		}
		s.AvgBatchCPU += sm.BatchCPUTotal()
		hours := weight(samples, i).Hours()
		s.BECPUHours += sm.BECPU * hours
		s.BatchCPUHours += sm.BatchCPUTotal() * hours
		s.AvgMidCPU += sm.MidCPUTotal()
		s.MidCPUHours += sm.MidCPUTotal() * hours
		s.MidUsedCPUHours += sm.MidUsedCPU * hours
		s.MidCompleted = max(s.MidCompleted, sm.MidCompleted)
		s.PeakMidRunning = max(s.PeakMidRunning, sm.MidRunning)
		s.PeakMidPending = max(s.PeakMidPending, sm.MidPending)
		s.BECompleted = max(s.BECompleted, sm.BECompleted)
		s.PeakBERunning = max(s.PeakBERunning, sm.BERunning)
		s.PeakBEPending = max(s.PeakBEPending, sm.BEPending)
		s.SuppressedMoments += sm.Suppressed
		s.Evictions += sm.Evictions
		s.LSBreaches += sm.LSBreaches
	}
	if n > 0 {
		s.AvgUtilWith /= float64(n)
		s.AvgUtilWithout /= float64(n)
		s.MidGain /= float64(n)
		s.Gain = s.AvgUtilWith - s.AvgUtilWithout
	} else {
		s.AvgUtilWith, s.AvgUtilWithout, s.PeakUtilWith, s.PeakUtilWithout = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		s.MidGain = math.NaN()
	}
	s.AvgBatchCPU /= float64(len(samples))
	s.AvgMidCPU /= float64(len(samples))
	return s
}

// weight is the simulated time sample i stands for: until the next sample, or since the previous for the last.
func weight(samples []Sample, i int) time.Duration {
	switch {
	case i+1 < len(samples):
		return samples[i+1].Elapsed - samples[i].Elapsed
	case i > 0:
		return samples[i].Elapsed - samples[i-1].Elapsed
	default:
		return 0
	}
}
