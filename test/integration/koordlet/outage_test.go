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

package koordlet

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// tcpProxy forwards TCP connections from a local port to a target address. TLS passes through untouched, so a
// client configuration for the target works against the proxy with only its host changed.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// startProxy listens on a free local port and forwards to target (host:port) until closed; it is closed when
// the test ends.
func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		p.wg.Go(func() { p.pipe(in, out) })
		p.wg.Go(func() { p.pipe(out, in) })
	}
}

// track registers a connection pair, or closes it and reports false when the proxy is closed.
func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// pipe copies from src to dst and then closes both, which ends the other direction too.
func (p *tcpProxy) pipe(dst, src net.Conn) {
	// An error (a reset, or the other direction closing the pair) ends the pair like EOF does.
	_, _ = io.Copy(dst, src)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range []net.Conn{dst, src} {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// close stops accepting (new connections to the port are refused from then on), cuts every open connection and
// waits for the forwarding goroutines. It may be called more than once.
func (p *tcpProxy) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestEnforcementWithoutTheAPIServer runs the agent through a proxy to the apiserver, closes the proxy and checks
// that the agent goes on enforcing the last NodeSLO it saw (repairing a value overwritten meanwhile, even though
// the NodeSLO in the apiserver has changed since); then restarts the agent on a working connection and checks
// that it derives every value again from the cgroups and the API, with no state kept on disk, and reports again.
func TestEnforcementWithoutTheAPIServer(t *testing.T) {
	n := newNode(t, nodeConfig{
		version: cgroup.V1, driver: cgroup.Cgroupfs,
		cpus: 4, allocatableCPU: "3800m", memory: 8 * gi,
		busyCores: 2, memUsed: 3 * gi, memUsedWithCache: 4 * gi,
		// BEAllowed = max(4 × 20% − 0.8 (ls) − max(0.6 system, 0.2 reserved), 4 × 25%) = max(−0.6, 1) = 1 core:
		// the floor decides, so the quota is exactly 100000 µs whatever the samples.
		slo: slov1alpha1.NodeSLOSpec{ResourceUsedThresholdWithBE: &slov1alpha1.ResourceThresholdStrategy{
			Enable:                      ptr.To(true),
			CPUSuppressPolicy:           slov1alpha1.CPUCfsQuotaPolicy,
			CPUSuppressThresholdPercent: ptr.To[int64](20),
			CPUSuppressMinPercent:       ptr.To[int64](25),
		}},
	})
	ls := n.addPod(lsPod("ls", 0.8))
	be := n.addPod(bePod("be", 0.6))
	beQoSDir, bePodDir := n.host.fs.Layout().QoSDir(corev1.PodQOSBestEffort), n.podDir(be)
	// What the agent enforces: the besteffort quota from the NodeSLO, the BE pod's memory limit from its
	// batch-memory limit.
	enforced := []struct{ dir, knob, want, wrong string }{
		{beQoSDir, "cpu.cfs_quota_us", "100000", "-1"},
		{bePodDir, "memory.limit_in_bytes", "1073741824", "9223372036854771712"},
	}
	waitForEnforced := func() {
		t.Helper()
		for _, e := range enforced {
			n.waitForKnob(e.dir, e.knob, e.want)
		}
	}
	breakEnforced := func() {
		t.Helper()
		for _, e := range enforced {
			n.host.fs.WriteFile(e.dir, e.knob, e.wrong+"\n")
		}
	}

	apiserver, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, apiserver.Host)
	cfg := koordletConfig(t)
	cfg.Host = "https://" + proxy.addr()
	first := startAgent(t, cfg, n)
	n.waitForPodsReported(ls, be)
	waitForEnforced()

	proxy.close()
	if conn, err := net.DialTimeout("tcp", proxy.addr(), time.Second); err == nil {
		_ = conn.Close()
		t.Fatal("the closed proxy still accepts connections")
	}
	// The NodeSLO changes while the agent cannot see it: it must keep the last one it saw.
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.ResourceUsedThresholdWithBE.Enable = ptr.To(false) })
	outage := time.Now()
	// Each repair takes a QoS round, so four break-and-repair cycles span at least three QoS intervals (3 s),
	// more than a report interval: the reporter has tried and failed meanwhile, and enforcement went on.
	for range 4 {
		breakEnforced()
		waitForEnforced()
	}
	nm, err := n.nodeMetric(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if nm.Status.UpdateTime.After(outage) {
		t.Errorf("the NodeMetric was reported at %s, after the apiserver became unreachable at %s", nm.Status.UpdateTime, outage)
	}

	first.stop(t)
	n.updateNodeSLO(func(s *slov1alpha1.NodeSLOSpec) { s.ResourceUsedThresholdWithBE.Enable = ptr.To(true) })
	breakEnforced()
	restart := time.Now().Truncate(time.Second)
	startAgent(t, koordletConfig(t), n)
	waitForEnforced()
	n.waitForReport("the restarted agent did not report", func(s *slov1alpha1.NodeMetricStatus) bool {
		return s.UpdateTime.After(restart) && len(s.PodsMetric) == 2
	})
}
