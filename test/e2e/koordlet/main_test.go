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

package koordlet_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/koord-dev/koord/test/testenv"
)

// burnEnv, when set to a thread count, turns the re-executed test binary into a CPU burner (see burn).
const burnEnv = "KOORD_E2E_BURN"

var env *testenv.Environment

func TestMain(m *testing.M) {
	if threads, ok := os.LookupEnv(burnEnv); ok {
		burn(threads)
	}
	// Cgroups of earlier runs that were killed before their cleanup ran. The testenv reaper (this binary
	// re-executed) sweeps too, harmlessly: a directory of a live test process is never touched.
	sweepStaleCgroups()
	testenv.Main(m, &env)
}

// burn spins threads busy loops until the parent process goes away, and never returns. The test starts it
// with Pdeathsig; the parent check also covers a parent that dies in a way Pdeathsig misses (it fires when
// the forking thread exits, not the process).
func burn(threads string) {
	n, err := strconv.Atoi(threads)
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "burner: %s=%q is not a positive thread count\n", burnEnv, threads)
		os.Exit(2)
	}
	runtime.GOMAXPROCS(n)
	parent := os.Getppid()
	for range n {
		go spin()
	}
	for os.Getppid() == parent {
		time.Sleep(200 * time.Millisecond)
	}
	os.Exit(0)
}

// spin burns one CPU: floating-point work that neither allocates nor ends.
func spin() {
	x := 1.0
	for {
		x = x*1.000001 + 1e-9
		if x > 1e300 {
			x = 1
		}
	}
}
