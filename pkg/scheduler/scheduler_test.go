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

package scheduler

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/features"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedvalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"github.com/koord-dev/koord/apis/extension"
	koordfeatures "github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware"
)

// defaultConfigFile is the shipped configuration.
var defaultConfigFile = filepath.Join("..", "..", "config", "scheduler", "koord-scheduler-config.yaml")

// TestDefaultConfigFile loads the shipped configuration the way kube-scheduler loads --config, validates it
// as kube-scheduler and the plugins do, and checks the profile.
func TestDefaultConfigFile(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, defaultConfigFile)
	if err != nil {
		t.Fatalf("load %s: %v", defaultConfigFile, err)
	}
	if err := schedvalidation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("kube-scheduler rejects %s: %v", defaultConfigFile, err)
	}
	if !cfg.LeaderElection.LeaderElect {
		t.Error("leader election is off")
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != "koord-scheduler" {
		t.Fatalf("profiles = %v, want one named koord-scheduler", cfg.Profiles)
	}
	prof := cfg.Profiles[0]
	for point, set := range map[string]schedconfig.PluginSet{"filter": prof.Plugins.Filter, "score": prof.Plugins.Score, "reserve": prof.Plugins.Reserve} {
		if !slices.ContainsFunc(set.Enabled, func(p schedconfig.Plugin) bool { return p.Name == loadaware.Name }) {
			t.Errorf("%s is not enabled at %s: %v", loadaware.Name, point, set.Enabled)
		}
	}

	var fit *schedconfig.NodeResourcesFitArgs
	var loadAware *config.LoadAwareSchedulingArgs
	for _, pc := range prof.PluginConfig {
		switch args := pc.Args.(type) {
		case *schedconfig.NodeResourcesFitArgs:
			fit = args
		case *config.LoadAwareSchedulingArgs:
			loadAware = args
		}
	}
	if fit == nil || fit.ScoringStrategy == nil {
		t.Fatal("no NodeResourcesFit scoring strategy")
	}
	wantFit := &schedconfig.ScoringStrategy{
		Type: schedconfig.LeastAllocated,
		Resources: []schedconfig.ResourceSpec{
			{Name: string(corev1.ResourceCPU), Weight: 1},
			{Name: string(corev1.ResourceMemory), Weight: 1},
			{Name: string(extension.BatchCPU), Weight: 1},
			{Name: string(extension.BatchMemory), Weight: 1},
		},
	}
	if diff := cmp.Diff(wantFit, fit.ScoringStrategy); diff != "" {
		t.Errorf("NodeResourcesFit scoring (-want,+got):\n%s", diff)
	}

	if loadAware == nil {
		t.Fatal("no LoadAwareScheduling args")
	}
	if errs := validation.ValidateLoadAwareSchedulingArgs(nil, loadAware); len(errs) > 0 {
		t.Errorf("LoadAwareScheduling args are invalid: %v", errs.ToAggregate())
	}
	wantArgs := &config.LoadAwareSchedulingArgs{
		TypeMeta:                    loadAware.TypeMeta,
		FilterExpiredNodeMetrics:    true,
		NodeMetricExpirationSeconds: 180,
		ResourceWeights:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1},
		UsageThresholds:             map[corev1.ResourceName]int64{corev1.ResourceCPU: 65, corev1.ResourceMemory: 95},
		EstimatedScalingFactors:     map[corev1.ResourceName]int64{corev1.ResourceCPU: 85, corev1.ResourceMemory: 70},
	}
	if diff := cmp.Diff(wantArgs, loadAware); diff != "" {
		t.Errorf("LoadAwareScheduling args (-want,+got):\n%s", diff)
	}
}

// writeKubeconfig writes a kubeconfig for a server nobody listens on: building a scheduler connects to
// nothing before the plugins are built.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeConfig writes a scheduler configuration with the koord-scheduler profile and the given
// LoadAwareScheduling args (YAML, indented under args:).
func writeConfig(t *testing.T, kubeconfig, args string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	data := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: ` + kubeconfig + `
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: koord-scheduler
    plugins:
      filter:
        enabled:
          - name: LoadAwareScheduling
    pluginConfig:
      - name: LoadAwareScheduling
        args:
` + args
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadArgsStopTheScheduler: the scheduler does not start with invalid LoadAwareScheduling args, and says
// which field is wrong, both through Start and through the command.
func TestBadArgsStopTheScheduler(t *testing.T) {
	kubeconfig := writeKubeconfig(t)
	tests := map[string]struct {
		args string
		want string
	}{
		"threshold out of range": {
			args: "          usageThresholds:\n            cpu: 120\n",
			want: "pluginConfig[LoadAwareScheduling].args.usageThresholds[cpu]: Invalid value: 120: must be a percentage in [0, 100]",
		},
		"unknown aggregation type": {
			args: "          aggregated:\n            usageThresholds:\n              cpu: 70\n            usageAggregationType: p42\n",
			want: "pluginConfig[LoadAwareScheduling].args.aggregated.usageAggregationType: Unsupported value: \"p42\"",
		},
		"unknown field": {
			args: "          usageThreshold:\n            cpu: 60\n",
			want: "unknown field \"usageThreshold\"",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			cfg := writeConfig(t, kubeconfig, tc.args)
			_, err := Start(ctx, []string{"--config=" + cfg, "--secure-port=0"}, Plugins()...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start error = %v, want one containing %q", err, tc.want)
			}
		})
	}

	t.Run("command", func(t *testing.T) {
		cmd := NewCommand()
		cmd.SetArgs([]string{"--config=" + writeConfig(t, kubeconfig, tests["threshold out of range"].args), "--secure-port=0"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.ExecuteContext(t.Context())
		if want := tests["threshold out of range"].want; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("koord-scheduler error = %v, want one containing %q", err, want)
		}
	})
}

func TestStartRejectsUnknownFlags(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	if _, err := Start(ctx, []string{"--no-such-flag"}); err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("Start error = %v, want one naming the unknown flag", err)
	}
}

// TestArgsFeatureGates: koord-scheduler's command line turns NominatedNodeNameForExpectation off unless the
// user's --feature-gates turns it on.
func TestArgsFeatureGates(t *testing.T) {
	enabled := func(args ...string) bool {
		t.Helper()
		opts := options.NewOptions()
		fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
		for _, f := range opts.Flags.FlagSets {
			fs.AddFlagSet(f)
		}
		if err := fs.Parse(args); err != nil {
			t.Fatalf("parse %q: %v", args, err)
		}
		if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
			t.Fatalf("apply the feature gates of %q: %v", args, err)
		}
		return utilfeature.DefaultFeatureGate.Enabled(features.NominatedNodeNameForExpectation)
	}
	// The gates are the process's: leave kube-scheduler's default behind.
	t.Cleanup(func() { enabled("--feature-gates=NominatedNodeNameForExpectation=true") })

	tests := map[string]struct {
		args []string
		want bool
	}{
		"defaults":                      {args: Args(), want: false},
		"other gates":                   {args: Args("--feature-gates=SchedulerAsyncAPICalls=true"), want: false},
		"turned on by the command line": {args: Args("--feature-gates=NominatedNodeNameForExpectation=true"), want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := enabled(tc.args...); got != tc.want {
				t.Errorf("NominatedNodeNameForExpectation with %q = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}

// TestKoordinatorCommandLine parses the command line Koordinator's v1.8 Helm chart gives koord-scheduler.
func TestKoordinatorCommandLine(t *testing.T) {
	args := []string{
		"--port=10251", "--authentication-skip-lookup=true", "--v=4",
		"--feature-gates=CompatibleCSIStorageCapacity=true",
		"--config=/config/koord-scheduler.config", "--enable-network-topology-manager=true",
	}
	cmd, k := newCommand(args)
	// As NewCommand does: Koordinator's gates are set aside before kube-scheduler parses the rest, whose gate
	// values the process keeps.
	split, _ := splitKoordinatorGates(Args(args...))
	if err := cmd.ParseFlags(split); err != nil {
		t.Fatalf("parse Koordinator's command line: %v", err)
	}
	if k.port != 10251 {
		t.Errorf("--port = %d, want 10251", k.port)
	}
	if diff := cmp.Diff([]string{"enable-network-topology-manager"}, k.set.Ignored()); diff != "" {
		t.Errorf("ignored flags (-want +got):\n%s", diff)
	}
}

func TestSplitKoordinatorGates(t *testing.T) {
	tests := map[string]struct {
		args, want, wantIgnored []string
	}{
		"no gates": {args: []string{"--v=4"}, want: []string{"--v=4"}},
		"kubernetes gates stay": {
			args: []string{"--feature-gates=SchedulerAsyncAPICalls=true"},
			want: []string{"--feature-gates=SchedulerAsyncAPICalls=true"},
		},
		"koordinator gates go": {
			args:        []string{"--feature-gates=DynamicSchedulerCheck=true,SchedulerAsyncAPICalls=false", "--feature-gates", "SyncBarrier=true"},
			want:        []string{"--feature-gates=SchedulerAsyncAPICalls=false"},
			wantIgnored: []string{"DynamicSchedulerCheck", "SyncBarrier"},
		},
		"after --": {
			args: []string{"--", "--feature-gates=SyncBarrier=true"},
			want: []string{"--", "--feature-gates=SyncBarrier=true"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ignored := splitKoordinatorGates(tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIgnored, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInsecureServing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveInsecure(ctx, ln)
	for path, want := range map[string]string{"/healthz": "ok", "/metrics": "# HELP"} {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %.80q, want 200 with %q", path, resp.StatusCode, body, want)
		}
	}
}

// TestElasticQuotaGate: Koordinator's gate ElasticQuotaIgnoreTerminatingPod is a real gate of koord-scheduler
// (on by default): --feature-gates passes it to kube-scheduler's gate set instead of setting it aside.
func TestElasticQuotaGate(t *testing.T) {
	args, ignored := splitKoordinatorGates(Args("--feature-gates=ElasticQuotaIgnoreTerminatingPod=false"))
	if len(ignored) != 0 {
		t.Fatalf("set aside %v", ignored)
	}
	apply := func(args []string) bool {
		t.Helper()
		opts := options.NewOptions()
		fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
		for _, f := range opts.Flags.FlagSets {
			fs.AddFlagSet(f)
		}
		if err := fs.Parse(args); err != nil {
			t.Fatalf("parse %q: %v", args, err)
		}
		if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
			t.Fatalf("apply %q: %v", args, err)
		}
		return utilfeature.DefaultFeatureGate.Enabled(koordfeatures.ElasticQuotaIgnoreTerminatingPod)
	}
	t.Cleanup(func() { apply(Args("--feature-gates=ElasticQuotaIgnoreTerminatingPod=true")) })
	if !utilfeature.DefaultFeatureGate.Enabled(koordfeatures.ElasticQuotaIgnoreTerminatingPod) {
		t.Error("the gate is off by default; Koord's default is on")
	}
	if apply(args) {
		t.Error("ElasticQuotaIgnoreTerminatingPod=false left the gate on")
	}
}
