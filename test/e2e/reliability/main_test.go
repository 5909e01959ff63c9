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

package reliability

import (
	"context"
	"flag"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/test/e2e/localcluster"
)

// long adds the faults that take minutes (make reliability).
var long = flag.Bool("long", false, "run every fault, including those that take minutes")

// env is the running cluster the tests share.
var env struct {
	c     *cluster.Cluster
	kube  kubernetes.Interface
	koord versioned.Interface
}

// TestMain starts one local cluster of eight nodes for the package.
func TestMain(m *testing.M) {
	localcluster.Main(m, localcluster.Suite{
		Name:         "reliability",
		StartTimeout: 3 * time.Minute,
		Configure: func(opts *cluster.Options, _ string) error {
			opts.Nodes = 8
			opts.ReportInterval = 5 * time.Second
			opts.DeschedulerArgs = []string{"--v=2"}
			return nil
		},
		SetUp: func(_ context.Context, c *cluster.Cluster) error {
			env.c = c
			env.kube = kubernetes.NewForConfigOrDie(c.RESTConfig())
			env.koord = versioned.NewForConfigOrDie(c.RESTConfig())
			return nil
		},
	})
}
