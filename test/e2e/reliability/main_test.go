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
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/test/e2e/localcluster"
)

// long adds the faults that take minutes (make reliability).
var long = flag.Bool("long", false, "run every fault, including those that take minutes")

// only narrows TestFaults to the faults whose name matches, for working on one fault; the checks that need
// the whole list (a revoke, an eviction happened somewhere) are then left out.
var only = flag.String("faults", "", "run only the faults whose name matches this regular expression")

// reportInterval is how often the node agents report their NodeMetrics.
const reportInterval = 5 * time.Second

// env is the running cluster the tests share.
var env struct {
	c     *cluster.Cluster
	kube  kubernetes.Interface
	koord versioned.Interface
	// auditLog is kube-apiserver's audit log.
	auditLog string
}

// TestMain starts one local cluster of eight nodes, with two replicas of koord-manager and koord-scheduler, for
// the package.
func TestMain(m *testing.M) {
	localcluster.Main(m, localcluster.Suite{
		Name:         "reliability",
		StartTimeout: 3 * time.Minute,
		Configure: func(opts *cluster.Options, tmp string) error {
			// The flags choose the cluster (the soak's nodes and speed); testing parses them only in m.Run.
			if !flag.Parsed() {
				flag.Parse()
			}
			opts.Nodes = *soakNodes
			if speed := speedForSoak(); speed > 0 {
				opts.Speed = speed
			}
			env.auditLog = filepath.Join(tmp, "audit.log")
			opts.AuditLog = env.auditLog
			// Two replicas of koord-manager and koord-scheduler, as the Helm chart's HA setting runs them: every
			// fault meets leader election, and killing a leader is a fault of its own.
			opts.Replicas = 2
			opts.ReportInterval = reportInterval
			// The workload's quota tenants meet the revoke controller, and its memory hogs koordlet's memory
			// eviction.
			opts.SchedulerConfig = filepath.Join(tmp, "koord-scheduler-config.yaml")
			if err := schedulerConfigWithRevoke(opts.SchedulerConfig); err != nil {
				return err
			}
			opts.SimFeatures.BEMemoryEvict = true
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
