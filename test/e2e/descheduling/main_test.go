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

package descheduling_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/test/e2e/localcluster"
)

// The loop's timing in the test cluster: reports every 5 s averaged over 10 s, a descheduling round every 5 s,
// a node hot after two rounds in a row.
const (
	// nodes is how many fake nodes the cluster has.
	nodes = 10
	// reportInterval is metricReportIntervalSeconds.
	reportInterval = 5 * time.Second
	// aggregateDuration is metricAggregateDurationSeconds: the window node and pod usage are averaged over.
	aggregateDuration = 10 * time.Second
	// startTimeout bounds the cluster's start.
	startTimeout = 3 * time.Minute
	// highCPU and lowCPU are LowNodeLoad's CPU thresholds, in percent of allocatable: Koordinator's chart's.
	highCPU, lowCPU = 75, 45
)

// deschedulerConfig is koord-descheduler's configuration in the test: Koordinator's chart's, with LowNodeLoad on,
// rounds every 5 s and a node counted hot after 2 abnormal rounds (5 by default). Koordinator's per-workload
// limits (10% of the replicas migrating at once, as many per 5 minutes) are raised to 4, so that the test's one
// Deployment moves in seconds rather than in minutes.
var deschedulerConfig = fmt.Sprintf(`apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
deschedulingInterval: 5s
profiles:
- name: koord-descheduler
  plugins:
    deschedule:
      disabled: [{name: "*"}]
    balance:
      enabled: [{name: LowNodeLoad}]
    evict:
      disabled: [{name: "*"}]
      enabled: [{name: MigrationController}]
  pluginConfig:
  - name: MigrationController
    args:
      apiVersion: descheduler/v1alpha2
      kind: MigrationControllerArgs
      namespaces: {exclude: [kube-system, koordinator-system]}
      maxMigratingPerWorkload: 4
      maxUnavailablePerWorkload: 4
      objectLimiters:
        workload: {duration: 5m, maxMigrating: 8}
  - name: LowNodeLoad
    args:
      apiVersion: descheduler/v1alpha2
      kind: LowNodeLoadArgs
      evictableNamespaces: {exclude: [kube-system, koordinator-system]}
      lowThresholds: {cpu: %d}
      highThresholds: {cpu: %d}
      anomalyCondition: {consecutiveAbnormalities: 2, consecutiveNormalities: 1}
`, lowCPU, highCPU)

// env is the running cluster the tests share.
var env struct {
	c     *cluster.Cluster
	kube  kubernetes.Interface
	koord versioned.Interface
}

// TestMain starts one local cluster for every test of the package and stops it when they are done.
func TestMain(m *testing.M) {
	localcluster.Main(m, localcluster.Suite{
		Name:         "descheduling",
		StartTimeout: startTimeout,
		Configure: func(opts *cluster.Options, tmp string) error {
			configPath := filepath.Join(tmp, "koord-descheduler.yaml")
			if err := os.WriteFile(configPath, []byte(deschedulerConfig), 0o600); err != nil {
				return fmt.Errorf("write the descheduler configuration: %w", err)
			}
			opts.Nodes = nodes
			opts.ReportInterval = reportInterval
			opts.AggregateDuration = aggregateDuration
			opts.DeschedulerConfig = configPath
			// The jobs' steps (V(2)), arbitration and reconciles (V(4)) are in the log kept when a test fails.
			opts.DeschedulerArgs = []string{"--v=4"}
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
