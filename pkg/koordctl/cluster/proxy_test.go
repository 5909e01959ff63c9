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
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// namedBackend answers every line with its name, until closed.
func namedBackend(t *testing.T, name string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					if _, err := io.WriteString(c, name+"\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln
}

// ask sends a line through a new connection to addr and returns the answer, or "" when the connection is
// closed without one.
func ask(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "who\n"); err != nil {
		return ""
	}
	answer, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return ""
	}
	return answer[:len(answer)-1]
}

func TestTCPProxy(t *testing.T) {
	a, b := namedBackend(t, "a"), namedBackend(t, "b")
	defer func() { _ = b.Close() }()
	p, err := startTCPProxy("127.0.0.1:0", []string{a.Addr().String(), b.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()

	var got []string
	for range 4 {
		got = append(got, ask(t, p.Addr()))
	}
	if diff := cmp.Diff([]string{"a", "b", "a", "b"}, got); diff != "" {
		t.Errorf("connections spread over both backends (-want,+got):\n%s", diff)
	}

	// A backend that is gone is passed over.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for range 3 {
		got = append(got, ask(t, p.Addr()))
	}
	if diff := cmp.Diff([]string{"b", "b", "b"}, got); diff != "" {
		t.Errorf("connections with backend a gone (-want,+got):\n%s", diff)
	}

	// An open connection is closed by Close.
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := io.WriteString(c, "who\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	if answer, err := r.ReadString('\n'); err != nil || answer != "b\n" {
		t.Fatalf("answer before Close = %q, %v", answer, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("read after Close = %v, want EOF", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Error("the proxy still accepts connections after Close")
	}
}

func TestTCPProxyNoBackend(t *testing.T) {
	a := namedBackend(t, "a")
	addr := a.Addr().String()
	_ = a.Close()
	p, err := startTCPProxy("127.0.0.1:0", []string{addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	if got := ask(t, p.Addr()); got != "" {
		t.Errorf("answer with no backend = %q, want the connection closed", got)
	}
	if _, err := startTCPProxy("127.0.0.1:0", nil); err == nil {
		t.Error("startTCPProxy(no backends) = nil error")
	}
}
