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

// Package leadership tells the controllers that run inside koord-scheduler (PodGroup status, ElasticQuota
// status and revocation, the Reservation controller) when their replica leads.
//
// kube-scheduler builds its plugins before leader election, and every replica keeps its informers and the
// plugins' caches warm; only the leader schedules. The plugins' controllers write to the API, so they must
// act only in the leader too: a standby that wrote status from its own cache (which lacks the leader's
// assumed pods) would fight the leader, and two revokers would evict twice. koord-scheduler's command
// observes the leader election's lock (Observe) and tells a Leadership, which the plugins wait on (Run).
// kube-scheduler exits the process when it loses the lease, so leading never ends before the process does.
package leadership

import (
	"context"
	"sync"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// Leadership is closed once the replica leads. The zero value is not usable; a nil *Leadership leads from
// the start, which is what a scheduler without leader election (tests, a single replica with
// --leader-elect=false) wants.
type Leadership struct {
	once    sync.Once
	elected chan struct{}
}

// New returns a Leadership that does not lead yet.
func New() *Leadership {
	return &Leadership{elected: make(chan struct{})}
}

// closed is the channel of a nil Leadership.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Elected is closed once the replica leads.
func (l *Leadership) Elected() <-chan struct{} {
	if l == nil {
		return closed
	}
	return l.elected
}

// Leading reports whether the replica leads.
func (l *Leadership) Leading() bool {
	select {
	case <-l.Elected():
		return true
	default:
		return false
	}
}

// Elect records that the replica leads. It may be called any number of times.
func (l *Leadership) Elect() {
	if l == nil {
		return
	}
	l.once.Do(func() { close(l.elected) })
}

// Run calls start with ctx once the replica leads, unless ctx ends first; it does not wait. name says in the
// log what starts.
func (l *Leadership) Run(ctx context.Context, name string, start func(context.Context)) {
	logger := klog.FromContext(ctx)
	if !l.Leading() {
		logger.V(2).Info("Waiting to lead before starting", "controller", name)
	}
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-l.Elected():
		}
		if ctx.Err() != nil {
			return
		}
		logger.V(2).Info("Leading: starting", "controller", name)
		start(ctx)
	}()
}

// Observe returns lock, which tells l the replica leads once lock has written a leader record naming its own
// identity: the leader elector's Create of a new lease and every Update of one it acquired or renewed,
// coordinated leader election included. Reads never elect: a record read back still names the old holder
// until this replica writes its own.
func (l *Leadership) Observe(lock resourcelock.Interface) resourcelock.Interface {
	return &observedLock{Interface: lock, l: l}
}

// observedLock is a resourcelock.Interface that reports its own successful writes to a Leadership.
type observedLock struct {
	resourcelock.Interface
	l *Leadership
}

// Create creates the leader record and elects the replica when the record names it.
func (o *observedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if err := o.Interface.Create(ctx, ler); err != nil {
		return err
	}
	o.written(ler)
	return nil
}

// Update updates the leader record and elects the replica when the record names it.
func (o *observedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if err := o.Interface.Update(ctx, ler); err != nil {
		return err
	}
	o.written(ler)
	return nil
}

func (o *observedLock) written(ler resourcelock.LeaderElectionRecord) {
	if ler.HolderIdentity != "" && ler.HolderIdentity == o.Identity() {
		o.l.Elect()
	}
}
