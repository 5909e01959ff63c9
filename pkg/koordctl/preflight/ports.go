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

package preflight

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Port is a TCP port a component of the local cluster listens on.
type Port struct {
	// Flag is the flag that sets it, for messages, e.g. "--apiserver-port".
	Flag string
	// Host is the address the component binds: "127.0.0.1", or "" for every interface.
	Host string
	// Port is the port; 0 picks a free one.
	Port int
}

// Process is a process that holds a port.
type Process struct {
	// PID is its process id.
	PID int
	// Command is its command name (/proc/<pid>/comm).
	Command string
}

// PortInUseError says that a port asked for is taken.
type PortInUseError struct {
	// Flag is the flag that chose the port.
	Flag string
	// Port is the port.
	Port int
	// Owner is the process listening on it, when it could be found.
	Owner *Process
	// Err is the error of the attempt to listen.
	Err error
}

// Error names the flag, the port and, when known, the process that holds it.
func (e *PortInUseError) Error() string {
	by := ""
	if e.Owner != nil {
		by = fmt.Sprintf(" by %s (pid %d)", e.Owner.Command, e.Owner.PID)
	}
	return fmt.Sprintf("%s: port %d is in use%s; choose another port, or 0 for a free one", e.Flag, e.Port, by)
}

// Unwrap returns the error of the attempt to listen.
func (e *PortInUseError) Unwrap() error { return e.Err }

// ResolvePorts checks that every fixed port of ports is free and picks a free port for every zero one. It
// returns the ports in the order of ports. The errors name each busy port (a *PortInUseError) and each port
// asked for twice. A picked port is free when ResolvePorts returns; another process may still take it before
// the component binds it, which the component then reports.
func ResolvePorts(ports []Port) ([]int, error) {
	var errs []error
	seen := map[int]string{}
	for _, p := range ports {
		if p.Port < 0 || p.Port > 65535 {
			errs = append(errs, fmt.Errorf("%s: %d is not a port (0 picks a free one)", p.Flag, p.Port))
			continue
		}
		if p.Port == 0 {
			continue
		}
		if other, ok := seen[p.Port]; ok {
			errs = append(errs, fmt.Errorf("%s and %s both ask for port %d", other, p.Flag, p.Port))
			continue
		}
		seen[p.Port] = p.Flag
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	// Keep every listener open until all ports are chosen, so that no two picks are the same port.
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	out := make([]int, len(ports))
	for i, p := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort(p.Host, strconv.Itoa(p.Port)))
		if err != nil {
			if p.Port == 0 {
				errs = append(errs, fmt.Errorf("%s: pick a free port: %w", p.Flag, err))
				continue
			}
			e := &PortInUseError{Flag: p.Flag, Port: p.Port, Err: err}
			if owner, ok := PortOwner(p.Port); ok {
				e.Owner = &owner
			}
			errs = append(errs, e)
			continue
		}
		listeners = append(listeners, l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// PortOwner finds the process listening on TCP port, from /proc (Linux). It reports false when there is none,
// when /proc is not there, or when the socket belongs to a process whose descriptors cannot be read.
func PortOwner(port int) (Process, bool) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, inode := range listeningInodes(table, port) {
			inodes[inode] = true
		}
	}
	if len(inodes) == 0 {
		return Process{}, false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return Process{}, false
	}
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
				return Process{PID: pid, Command: strings.TrimSpace(string(comm))}, true
			}
		}
	}
	return Process{}, false
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listeningInodes returns the socket inodes of the table (/proc/net/tcp or tcp6) that listen on port.
func listeningInodes(table string, port int) []string {
	f, err := os.Open(table)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	want := fmt.Sprintf(":%04X", port)
	var out []string
	lines := bufio.NewScanner(f)
	lines.Scan() // header
	for lines.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
		fields := strings.Fields(lines.Text())
		if len(fields) < 10 || fields[3] != tcpListen || !strings.HasSuffix(fields[1], want) {
			continue
		}
		out = append(out, fields[9])
	}
	return out
}
