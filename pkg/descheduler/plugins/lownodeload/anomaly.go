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

package lownodeload

import (
	"sync"
	"time"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// detector counts the rounds in a row a node was hot or normal. A node becomes anomalous (its pods may move)
// once it was hot ConsecutiveAbnormalities rounds in a row; it is normal again after ConsecutiveNormalities
// normal rounds in a row, when Timeout has passed since it became anomalous, or when it is found cool.
type detector struct {
	anomalous        bool
	abnormal, normal uint32
	since            time.Time
	lastSeen         time.Time
}

// mark records one round's finding and returns whether the node is anomalous afterwards.
func (d *detector) mark(hot bool, c *config.LoadAnomalyCondition, now time.Time) bool {
	d.lastSeen = now
	if d.anomalous && c.Timeout != nil && now.Sub(d.since) >= c.Timeout.Duration {
		d.reset()
	}
	if hot {
		d.abnormal++
		d.normal = 0
	} else {
		d.normal++
		d.abnormal = 0
	}
	switch {
	case !d.anomalous && d.abnormal >= c.ConsecutiveAbnormalities:
		d.anomalous, d.since = true, now
		d.abnormal, d.normal = 0, 0
	case d.anomalous && d.normal >= c.ConsecutiveNormalities:
		d.reset()
	}
	return d.anomalous
}

func (d *detector) reset() {
	d.anomalous = false
	d.abnormal, d.normal = 0, 0
}

// detectors holds a detector per node, forgetting those not looked at for longer than ttl.
type detectors struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[string]*detector
}

func newDetectors(ttl time.Duration) *detectors {
	return &detectors{ttl: ttl, m: map[string]*detector{}}
}

// mark records a finding for a node; see detector.mark.
func (ds *detectors) mark(node string, hot bool, c *config.LoadAnomalyCondition, now time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d := ds.m[node]
	if d == nil || now.Sub(d.lastSeen) > ds.ttl {
		d = &detector{}
		ds.m[node] = d
	}
	return d.mark(hot, c, now)
}

// reset makes a node normal with its counts cleared, if it has a detector.
func (ds *detectors) reset(node string) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if d := ds.m[node]; d != nil {
		d.reset()
	}
}

// gc forgets the detectors not looked at for longer than the ttl.
func (ds *detectors) gc(now time.Time) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for name, d := range ds.m {
		if now.Sub(d.lastSeen) > ds.ttl {
			delete(ds.m, name)
		}
	}
}
