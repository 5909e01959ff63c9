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

package cache

import (
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/koord-dev/koord/apis/extension"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

// defaults are the defaults of the tests' caches.
var defaults = Defaults{WaitTime: 10 * time.Minute, MatchPolicy: extension.GangMatchPolicyOnceSatisfied}

// newTestCache returns an empty cache with the test defaults and a fake clock at utiltesting.Now.
func newTestCache() (*Cache, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(utiltesting.Now)
	return NewCache(defaults, clk), clk
}

// gid is the ID of gang name in namespace default.
func gid(name string) ID { return ID{Namespace: "default", Name: name} }
