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

package cluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// proxyDialTimeout bounds how long the proxy tries one backend.
const proxyDialTimeout = time.Second

// tcpProxy is the Service in front of koord-manager's replicas in a local cluster: it forwards each connection
// it accepts to the first backend that takes it, trying them in turn from the one after the backend of the
// previous connection, so that connections are spread and a dead replica is passed over.
type tcpProxy struct {
	ln       net.Listener
	backends []string

	mu     sync.Mutex
	next   int
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// startTCPProxy listens on addr and forwards to backends (host:port each) until Close.
func startTCPProxy(addr string, backends []string) (*tcpProxy, error) {
	if len(backends) == 0 {
		return nil, errors.New("proxy: no backends")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &tcpProxy{ln: ln, backends: backends, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(in) {
			_ = in.Close()
			return
		}
		p.wg.Go(func() { p.forward(in) })
	}
}

// forward connects in to a backend and copies both ways until either side closes, and then closes both (the
// webhook traffic is TLS, which ends with the close of one side); when no backend takes the connection, in is
// closed, as a Service without ready endpoints refuses it.
func (p *tcpProxy) forward(in net.Conn) {
	defer p.untrack(in)
	out := p.dial()
	if out == nil {
		return
	}
	defer p.untrack(out)
	if !p.track(out) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	_ = in.Close()
	_ = out.Close()
	<-done
}

// dial returns a connection to the first backend that accepts one, starting after the last one used; nil
// when none does.
func (p *tcpProxy) dial() net.Conn {
	p.mu.Lock()
	start := p.next
	p.mu.Unlock()
	for i := range p.backends {
		k := (start + i) % len(p.backends)
		c, err := net.DialTimeout("tcp", p.backends[k], proxyDialTimeout)
		if err != nil {
			continue
		}
		p.mu.Lock()
		p.next = (k + 1) % len(p.backends)
		p.mu.Unlock()
		return c
	}
	return nil
}

// track remembers c, to be closed by Close; false when the proxy is closed.
func (p *tcpProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it.
func (p *tcpProxy) untrack(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// Close stops listening, closes every connection and waits for the proxy's goroutines.
func (p *tcpProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}
