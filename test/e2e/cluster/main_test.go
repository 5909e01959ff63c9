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

package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/test/e2e/localcluster"
)

// The loop's timing in the test cluster. Simulated time runs at real speed, so NodeMetric update times compare
// with the wall clock as koord-manager and koord-scheduler compare them.
const (
	// nodes is how many fake nodes the cluster has.
	nodes = 3
	// reportInterval is metricReportIntervalSeconds: how often the agents report.
	reportInterval = 5 * time.Second
	// aggregateDuration is metricAggregateDurationSeconds: the window nodeUsage and podsMetric average over.
	// The shipped 300 s would spread a pod's usage over five minutes; 10 s lets a node turn hot in seconds.
	aggregateDuration = 10 * time.Second
	// degradeTime is degradeTimeMinutes, at its minimum.
	degradeTime = time.Minute
	// nodeDevices are every node's simulated devices: 2 GPUs of 16Gi (one per NUMA node) and 2 RDMA NICs.
	nodeDevices = "gpu=2x16Gi,rdma=2"
	// startTimeout bounds the cluster's start.
	startTimeout = 3 * time.Minute
)

// predictionConfig is the simulated agents' peak prediction: Koordinator's, but trained every second and with
// no cold start.
var predictionConfig = func() prediction.Config {
	c := prediction.DefaultConfig()
	c.CheckpointDir, c.ColdStartDuration, c.TrainingInterval = "", 0, time.Second
	return c
}()

// env is the running cluster the tests share.
var env struct {
	c     *cluster.Cluster
	kube  kubernetes.Interface
	koord versioned.Interface
	// strategy is the cluster-wide colocation strategy in force, defaults filled in.
	strategy configuration.ColocationStrategy
}

// TestMain starts one local cluster for every test of the package and stops it when they are done.
func TestMain(m *testing.M) {
	localcluster.Main(m, localcluster.Suite{
		Name:         "cluster",
		StartTimeout: startTimeout,
		Configure: func(opts *cluster.Options, _ string) error {
			opts.Nodes = nodes
			opts.Speed = 1
			opts.ReportInterval = reportInterval
			opts.DegradeTime = degradeTime
			opts.NodeDevices = nodeDevices
			// The suite makes nodes hot to test load-aware scheduling; moving pods off them is
			// test/e2e/descheduling's.
			opts.DeschedulerLowNodeLoad = false
			// The agents' peak prediction trains every second and trusts a pod's history at once, so that
			// TestMidResourcesFromPrediction sees a prediction within seconds at real speed.
			opts.Prediction = &predictionConfig
			// Prometheus scrapes every component, for TestDashboardsAndAlertsOnPrometheus.
			opts.Monitoring = true
			return nil
		},
		SetUp: func(ctx context.Context, c *cluster.Cluster) error {
			env.c = c
			env.kube = kubernetes.NewForConfigOrDie(c.RESTConfig())
			env.koord = versioned.NewForConfigOrDie(c.RESTConfig())
			if err := shortenAggregation(ctx); err != nil {
				return fmt.Errorf("shorten the aggregation window: %w", err)
			}
			return nil
		},
	})
}

// shortenAggregation sets metricAggregateDurationSeconds of the installed slo-controller-config to
// aggregateDuration, records the strategy in force in env.strategy, and waits until every node's NodeMetric
// spec carries the new window and the report interval.
func shortenAggregation(ctx context.Context) error {
	cms := env.kube.CoreV1().ConfigMaps(configuration.ConfigNamespace)
	cm, err := cms.Get(ctx, configuration.SLOCtrlConfigMap, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get the slo-controller-config: %w", err)
	}
	cfg, err := configuration.ParseColocationCfg(cm.Data[configuration.ColocationConfigKey])
	if err != nil {
		return fmt.Errorf("parse %s: %w", configuration.ColocationConfigKey, err)
	}
	cfg.MetricAggregateDurationSeconds = ptr.To(int64(aggregateDuration / time.Second))
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode %s: %w", configuration.ColocationConfigKey, err)
	}
	cm.Data[configuration.ColocationConfigKey] = string(data)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update the slo-controller-config: %w", err)
	}
	env.strategy = withDefaults(cfg.ColocationStrategy)

	var pending []string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := env.koord.SloV1alpha1().NodeMetrics().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pending = env.c.NodeNames()
		for _, nm := range list.Items {
			p := nm.Spec.CollectPolicy
			if p != nil && ptr.Deref(p.AggregateDurationSeconds, 0) == int64(aggregateDuration/time.Second) &&
				ptr.Deref(p.ReportIntervalSeconds, 0) == int64(reportInterval/time.Second) {
				pending = slices.DeleteFunc(pending, func(n string) bool { return n == nm.Name })
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("NodeMetrics of %v lack the collect policy (aggregate %s, report %s): %w", pending, aggregateDuration, reportInterval, err)
	}
	return nil
}

// withDefaults fills the unset fields of s that the tests read from configuration.DefaultColocationStrategy.
func withDefaults(s configuration.ColocationStrategy) configuration.ColocationStrategy {
	d := configuration.DefaultColocationStrategy()
	for _, f := range []struct{ v, def **int64 }{
		{&s.CPUReclaimThresholdPercent, &d.CPUReclaimThresholdPercent},
		{&s.MemoryReclaimThresholdPercent, &d.MemoryReclaimThresholdPercent},
		{&s.DegradeTimeMinutes, &d.DegradeTimeMinutes},
	} {
		if *f.v == nil {
			*f.v = *f.def
		}
	}
	if s.ResourceDiffThreshold == nil {
		s.ResourceDiffThreshold = d.ResourceDiffThreshold
	}
	if s.CPUCalculatePolicy == nil {
		s.CPUCalculatePolicy = d.CPUCalculatePolicy
	}
	if s.MemoryCalculatePolicy == nil {
		s.MemoryCalculatePolicy = d.MemoryCalculatePolicy
	}
	return s
}
