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

// Command burner is the real-node suite's load: it keeps --threads CPUs busy until SIGTERM, so that a pod's
// usage is whatever its cgroup lets it have. With --report-quota it burns nothing: it writes the CFS quota its
// cgroup has at its first instruction to the termination log and exits, so that a test sees what the container
// started with.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
)

func main() {
	threads := flag.Int("threads", 1, "CPUs to keep busy")
	reportQuota := flag.Bool("report-quota", false, "write the container's CFS quota at start to /dev/termination-log and exit")
	flag.Parse()
	if *reportQuota {
		os.Exit(report())
	}
	runtime.GOMAXPROCS(*threads + 1)
	for range *threads {
		go func() {
			x := uint64(1)
			for {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}

// report writes "cpu.cfs_quota_us <value>" (cgroup v1) or "cpu.max <quota> <period>" (v2) of the container's own
// cgroup, as runc mounts it at /sys/fs/cgroup, to the termination log.
func report() int {
	var msg string
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		msg = "cpu.cfs_quota_us " + strings.TrimSpace(string(b))
	} else if b, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
		msg = "cpu.max " + strings.TrimSpace(string(b))
	} else {
		msg = fmt.Sprintf("no CFS quota file: %v", err)
	}
	if err := os.WriteFile("/dev/termination-log", []byte(msg), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
