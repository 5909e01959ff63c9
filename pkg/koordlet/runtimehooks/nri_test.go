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

package runtimehooks

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cgroupreconcile"
	"github.com/koord-dev/koord/pkg/koordlet/runtimehooks/nritest"
)

// runtimeProxy stands between koordlet and a runtime: it forwards connections on socket to the runtime's socket,
// and cut closes them all, as the death of the runtime's process would (NRI's adaptation, stopped, keeps its
// external plugins' connections open).
type runtimeProxy struct {
	mu    sync.Mutex
	l     net.Listener
	conns []net.Conn
}

func startProxy(t *testing.T, socket, target string) *runtimeProxy {
	t.Helper()
	p := &runtimeProxy{}
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	p.l = l
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("unix", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

// cut closes the listener and every connection.
func (p *runtimeProxy) cut() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// serve runs Serve until the test ends.
func serve(ctx context.Context, t *testing.T, h *Hooks, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, h, cfg)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// createThroughRuntime asks rt to create container a of the BE pod until the plugin answers (it joins the
// runtime's plugins once synchronized) and returns the adjustment.
func createThroughRuntime(t *testing.T, rt *adaptation.Adaptation) adjusted {
	t.Helper()
	pod := bePod()
	var got adjusted
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		resp, err := rt.CreateContainer(ctx, &adaptation.CreateContainerRequest{Pod: sandbox(pod), Container: container("a", 0)})
		if err != nil {
			return false, err
		}
		got = fromResources(resp.GetAdjust().GetLinux().GetResources())
		return got != (adjusted{}), nil
	})
	if err != nil {
		t.Fatalf("the runtime got no adjustment from koordlet: %v", err)
	}
	return got
}

func testHooks(t *testing.T) (*Hooks, *Metrics) {
	t.Helper()
	fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd)
	m := NewMetrics()
	h := New(cgroupreconcile.New(cgroup.NewManager(fs.Layout()), cgroupreconcile.Features{BatchResource: true, CPUSetAllocator: true}),
		&inputs{node: node(), pods: []*corev1.Pod{bePod()}}, WithMetrics(m))
	return h, m
}

func fastConfig(socket string) Config {
	cfg := DefaultConfig()
	cfg.SocketPath, cfg.Backoff, cfg.BackoffCap = socket, 20*time.Millisecond, 100*time.Millisecond
	return cfg
}

// Over the real NRI protocol: the runtime gets the BE container's batch settings in its CreateContainer
// reply, and after the runtime restarts koordlet registers again.
func TestServeOverNRI(t *testing.T) {
	dir := t.TempDir()
	socket, rtSocket := filepath.Join(dir, "nri.sock"), filepath.Join(dir, "runtime.sock")
	rt := nritest.StartRuntime(t, rtSocket)
	proxy := startProxy(t, socket, rtSocket)
	h, m := testHooks(t)
	_, ctx := ktesting.NewTestContext(t)
	serve(ctx, t, h, fastConfig(socket))

	want := adjusted{Shares: ptr.To[uint64](512), Quota: ptr.To[int64](100000), Memory: ptr.To[int64](1 << 30)}
	if diff := cmp.Diff(want, createThroughRuntime(t, rt)); diff != "" {
		t.Errorf("adjustment through the runtime (-want,+got):\n%s", diff)
	}
	if got := testutil.ToFloat64(m.connected); got != 1 {
		t.Errorf("connected = %v while registered, want 1", got)
	}

	// The runtime restarts: its connections drop, and a new one listens on the same socket.
	rt.Stop()
	proxy.cut()
	_ = os.Remove(rtSocket)
	_ = os.Remove(socket)
	rt = nritest.StartRuntime(t, rtSocket)
	startProxy(t, socket, rtSocket)
	if diff := cmp.Diff(want, createThroughRuntime(t, rt)); diff != "" {
		t.Errorf("adjustment through the restarted runtime (-want,+got):\n%s", diff)
	}
	if got := testutil.ToFloat64(m.calls.WithLabelValues(hookCreateContainer, resultApplied)); got < 2 {
		t.Errorf("applied CreateContainer calls = %v, want at least 2", got)
	}
}

// Without an NRI socket koordlet waits for one, saying so once, and registers when the runtime offers it.
func TestServeWaitsForTheSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "nri.sock")
	h, m := testHooks(t)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	serve(ctx, t, h, fastConfig(socket))
	time.Sleep(300 * time.Millisecond) // several attempts at the missing socket
	if got := testutil.ToFloat64(m.connected); got != 0 {
		t.Errorf("connected = %v without a socket, want 0", got)
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if n := strings.Count(logs, "offers no NRI socket"); n != 1 {
		t.Errorf("the missing socket was logged %d times, want once:\n%s", n, logs)
	}
	rt := nritest.StartRuntime(t, socket)
	if got := createThroughRuntime(t, rt); got.Shares == nil {
		t.Errorf("no batch shares from koordlet once the socket appeared: %+v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	bad := Config{PluginIndex: "7", Backoff: time.Minute, BackoffCap: time.Second, BackoffFactor: 0.5}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error for a config with everything wrong")
	}
	for _, want := range []string{"socket path is empty", "plugin name is empty", `index "7"`, "connect timeout", "backoff 1m0s", "factor 0.5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
