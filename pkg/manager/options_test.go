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

package manager

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestEnabledControllers(t *testing.T) {
	tests := map[string]struct {
		flag    string
		gates   string
		want    []string
		wantErr string
	}{
		"gate adds the opt-in": {flag: "*", gates: "ColocationProfileController=true",
			want: []string{ControllerNodeMetric, ControllerNodeSLO, ControllerNodeResource, ControllerQuotaProfile, ControllerDeviceResource, ControllerColocationProfile}},
		"removing wins over the gate": {flag: "*,-colocationprofile", gates: "ColocationProfileController=true", want: KnownControllers},
		"gate off":                    {flag: "*", gates: "ColocationProfileController=false", want: KnownControllers},
		"all":                         {flag: "*", want: KnownControllers},
		"all but one":                 {flag: "*,-noderesource", want: []string{ControllerNodeMetric, ControllerNodeSLO, ControllerQuotaProfile, ControllerDeviceResource}},
		"one":                         {flag: "nodeslo", want: []string{ControllerNodeSLO}},
		"start order":                 {flag: "noderesource,nodemetric", want: []string{ControllerNodeMetric, ControllerNodeResource}},
		"none":                        {flag: "", want: nil},
		"unknown":                     {flag: "*,nodeslos", wantErr: `unknown controller "nodeslos"`},
		"opt-in off by *":             {flag: "*", want: []string{ControllerNodeMetric, ControllerNodeSLO, ControllerNodeResource, ControllerQuotaProfile, ControllerDeviceResource}},
		"opt-in named":                {flag: "colocationprofile", want: []string{ControllerColocationProfile}},
		"all plus opt-in":             {flag: "colocationprofile,*", want: []string{ControllerNodeMetric, ControllerNodeSLO, ControllerNodeResource, ControllerQuotaProfile, ControllerDeviceResource, ControllerColocationProfile}},
		"opt-in removed":              {flag: "*,colocationprofile,-colocationprofile", want: KnownControllers},
		"unknown lists opt-in":        {flag: "colocationprofiles", wantErr: `(known: nodemetric, nodeslo, noderesource, quotaprofile, deviceresource, colocationprofile)`},
		"unknown remove":              {flag: "*,-foo", wantErr: `unknown controller "foo"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			args := []string{"--controllers=" + tc.flag}
			if tc.gates != "" {
				args = append(args, "--feature-gates="+tc.gates)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			got, err := o.EnabledControllers()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("controllers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateOptions(t *testing.T) {
	tests := map[string]struct {
		mutate  func(*Options)
		wantErr []string
	}{
		"defaults are valid": {mutate: func(*Options) {}},
		"bad webhook port":   {mutate: func(o *Options) { o.Webhook.Port = 70000 }, wantErr: []string{"--webhook-port"}},
		"bad url port":       {mutate: func(o *Options) { o.Webhook.Host = "127.0.0.1"; o.Webhook.URLPort = 70000 }, wantErr: []string{"--webhook-url-port: 70000"}},
		"url port without host": {mutate: func(o *Options) { o.Webhook.URLPort = 9443 },
			wantErr: []string{"--webhook-url-port needs --webhook-host"}},
		"url port with host": {mutate: func(o *Options) { o.Webhook.Host = "127.0.0.1"; o.Webhook.URLPort = 9443 }},
		"bad timeout":        {mutate: func(o *Options) { o.Webhook.TimeoutSeconds = 0 }, wantErr: []string{"--webhook-timeout-seconds"}},
		"no service, no host": {mutate: func(o *Options) { o.Webhook.ServiceName = "" },
			wantErr: []string{"--webhook-host and --webhook-service-name"}},
		"webhooks off ignore webhook flags": {mutate: func(o *Options) { o.EnableWebhookServer = false; o.Webhook.Port = -1 }},
		"leader election timing": {mutate: func(o *Options) { o.RenewDeadline = 20 * time.Second },
			wantErr: []string{"leader election timing"}},
		"client limits":   {mutate: func(o *Options) { o.KubeAPIBurst = 0 }, wantErr: []string{"--kube-api-qps (50) and --kube-api-burst (0) must be positive"}},
		"bad config name": {mutate: func(o *Options) { o.SLOConfigName = "Bad'Name" }, wantErr: []string{"--slo-config-name"}},
		"short colocation profile interval": {mutate: func(o *Options) { o.ColocationProfileInterval = 100 * time.Millisecond },
			wantErr: []string{"--colocation-profile-interval"}},
		"failure policies": {mutate: func(o *Options) {
			o.WebhookFailurePolicies = map[string]string{"pods": "Fail", "nodes": "Ignore", "elasticquotas": "Never"}
		},
			wantErr: []string{`unknown kind "nodes"`, `elasticquotas="Never" is neither Ignore nor Fail`}},
		"pprof without address": {mutate: func(o *Options) { o.EnablePprof, o.PprofBindAddress = true, "" }, wantErr: []string{"--enable-pprof needs --pprof-addr"}},
		"several problems at once": {mutate: func(o *Options) { o.Webhook.Port = 0; o.Controllers = []string{"x"} },
			wantErr: []string{"--webhook-port", `unknown controller "x"`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mutate(&o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

// TestKoordinatorCommandLine parses the command line and environment Koordinator's v1.8 Helm chart gives
// koord-manager.
func TestKoordinatorCommandLine(t *testing.T) {
	env := map[string]string{"POD_NAMESPACE": "koord-system", "WEBHOOK_PORT": "9443", "WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS": "Ignore"}
	o := DefaultOptions()
	if err := o.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatalf("ApplyEnv: %v", err)
	}
	fs := pflag.NewFlagSet("koord-manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	args := []string{
		"--enable-leader-election", "--metrics-addr=:8080", "--health-probe-addr=:8000", "--logtostderr=true",
		"--leader-election-namespace=koord-system", "--feature-gates=", "--sync-period=0",
		"--config-namespace=koord-system", "--leader-elect-resource-lock=leases", "--rest-config-qps=30",
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse Koordinator's command line: %v", err)
	}
	got := []any{o.LeaderElection, o.MetricsBindAddress, o.HealthProbeBindAddress, o.LeaderElectionNamespace,
		o.SyncPeriod, o.SLOConfigNamespace, o.Webhook.ServiceNamespace, o.Webhook.Port, o.KubeAPIQPS}
	want := []any{true, ":8080", ":8000", "koord-system", time.Duration(0), "koord-system", "koord-system", 9443, float32(30)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed options (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"logtostderr"}, o.compat.Ignored()); diff != "" {
		t.Errorf("ignored flags (-want,+got):\n%s", diff)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	for _, bad := range [][]string{{"--leader-elect-resource-lock=configmaps"}, {"--sync-period=soon"}} {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("koord-manager", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v parsed; want an error", bad)
		}
	}
	o = DefaultOptions()
	if err := o.ApplyEnv(func(k string) string { return map[string]string{"WEBHOOK_PORT": "x"}[k] }); err == nil || !strings.Contains(err.Error(), "$WEBHOOK_PORT") {
		t.Errorf("bad $WEBHOOK_PORT: err %v, want one naming it", err)
	}
}
