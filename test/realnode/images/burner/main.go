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
// usage is whatever its cgroup lets it have.
package main

import (
	"flag"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	threads := flag.Int("threads", 1, "CPUs to keep busy")
	flag.Parse()
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
