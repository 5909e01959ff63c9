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

package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// requestKey is one kind of request to the apiserver: who (the user agent's product, e.g. koord-manager), what
// (the verb) and on what (resource, and subresource after a slash, e.g. nodes/status).
type requestKey struct {
	agent, verb, resource string
	// failed marks requests answered with an error (a code of 400 or more).
	failed bool
}

// write reports whether the request changes state.
func (k requestKey) write() bool {
	switch k.verb {
	case "create", "update", "patch", "delete", "deletecollection", "apply":
		return true
	}
	return false
}

// requestCounts counts the requests of each kind.
type requestCounts map[requestKey]int

// countAudit counts the requests of the audit log r (one JSON event per line, as kube-apiserver writes it)
// received in [from, to). It returns the lines it could not decode separately: a line cut by a restart of the
// apiserver is not a reason to lose the rest.
func countAudit(r io.Reader, from, to time.Time) (requestCounts, int, error) {
	counts := requestCounts{}
	bad := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			bad++
			continue
		}
		at := ev.RequestReceivedTimestamp.Time
		if at.Before(from) || !at.Before(to) || ev.Stage != auditv1.StageResponseComplete {
			continue
		}
		k := requestKey{agent: agentOf(ev.UserAgent), verb: ev.Verb, failed: ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400}
		if ref := ev.ObjectRef; ref != nil {
			k.resource = ref.Resource
			if ref.Subresource != "" {
				k.resource += "/" + ref.Subresource
			}
		} else {
			k.resource = ev.RequestURI
		}
		counts[k]++
	}
	return counts, bad, sc.Err()
}

// agentOf returns the product of a user agent ("koord-manager/v0.1.0 (linux/amd64) kubernetes/abc" gives
// koord-manager); kube-controller-manager's controllers keep their own suffix ("kube-controller-manager/v1.37
// ... /generic-garbage-collector") off, so that a component is one row.
func agentOf(userAgent string) string {
	product, _, _ := strings.Cut(userAgent, "/")
	product, _, _ = strings.Cut(product, " ")
	if product == "" {
		return "(none)"
	}
	return product
}

// agentRate is one component's request rates.
type agentRate struct {
	agent         string
	reads, writes float64
	// top are its most frequent writes, most first.
	top []keyRate
}

// keyRate is the rate of one kind of request.
type keyRate struct {
	key   requestKey
	count int
	rate  float64
}

// rates returns each component's reads and writes a second over d, the busiest writer first, with its topN
// most frequent writes.
func (c requestCounts) rates(d time.Duration, topN int) []agentRate {
	byAgent := map[string]*agentRate{}
	// Failed requests count as load like the others.
	all := map[requestKey]int{}
	for k, n := range c {
		k.failed = false
		all[k] += n
	}
	writes := map[string][]keyRate{}
	for k, n := range all {
		a := byAgent[k.agent]
		if a == nil {
			a = &agentRate{agent: k.agent}
			byAgent[k.agent] = a
		}
		r := float64(n) / d.Seconds()
		if k.write() {
			a.writes += r
			writes[k.agent] = append(writes[k.agent], keyRate{key: k, count: n, rate: r})
		} else {
			a.reads += r
		}
	}
	out := make([]agentRate, 0, len(byAgent))
	for _, name := range slices.Sorted(maps.Keys(byAgent)) {
		a := byAgent[name]
		w := writes[name]
		slices.SortFunc(w, func(x, y keyRate) int {
			if x.count != y.count {
				return y.count - x.count
			}
			return strings.Compare(x.key.verb+x.key.resource, y.key.verb+y.key.resource)
		})
		a.top = w[:min(topN, len(w))]
		out = append(out, *a)
	}
	slices.SortStableFunc(out, func(x, y agentRate) int {
		switch {
		case x.writes > y.writes:
			return -1
		case x.writes < y.writes:
			return 1
		}
		return 0
	})
	return out
}

// succeeded returns the successful requests of agent with verb in verbs on resource ("" for any agent).
func (c requestCounts) succeeded(agent, resource string, verbs ...string) int {
	n := 0
	for k, v := range c {
		if !k.failed && (agent == "" || k.agent == agent) && k.resource == resource && slices.Contains(verbs, k.verb) {
			n += v
		}
	}
	return n
}

// memorySeries is the resident memory of one component, sampled over the run.
type memorySeries struct {
	component string
	// samples are bytes, in sampling order.
	samples []uint64
}

// summary returns the first, largest and last sample and the growth: the median of the last quarter of the
// samples over that of the second quarter (the first is warm-up), 1 for flat; 0 with fewer than 4 samples.
func (m memorySeries) summary() (first, peak, last uint64, growth float64) {
	if len(m.samples) == 0 {
		return 0, 0, 0, 0
	}
	first, last, peak = m.samples[0], m.samples[len(m.samples)-1], slices.Max(m.samples)
	q := len(m.samples) / 4
	if q == 0 {
		return first, peak, last, 0
	}
	early := median(m.samples[q : 2*q])
	late := median(m.samples[len(m.samples)-q:])
	if early == 0 {
		return first, peak, last, 0
	}
	return first, peak, last, float64(late) / float64(early)
}

// median returns the median of xs (the lower one of an even count).
func median(xs []uint64) uint64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// percentile returns the p-th percentile (0..100) of sorted durations, by the nearest-rank method: the
// smallest value that at least p percent of them do not exceed.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// mib formats bytes as MiB.
func mib(b uint64) string { return fmt.Sprintf("%.0fMi", float64(b)/(1<<20)) }

// readAuditFrom opens the audit log at path, positioned at offset.
func readAuditFrom(path string, offset int64) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}
