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
		want    []string
		wantErr string
	}{
		"all":                  {flag: "*", want: KnownControllers},
		"all but one":          {flag: "*,-noderesource", want: []string{ControllerNodeMetric, ControllerNodeSLO}},
		"one":                  {flag: "nodeslo", want: []string{ControllerNodeSLO}},
		"start order":          {flag: "noderesource,nodemetric", want: []string{ControllerNodeMetric, ControllerNodeResource}},
		"none":                 {flag: "", want: nil},
		"unknown":              {flag: "*,nodeslos", wantErr: `unknown controller "nodeslos"`},
		"opt-in off by *":      {flag: "*", want: []string{ControllerNodeMetric, ControllerNodeSLO, ControllerNodeResource}},
		"opt-in named":         {flag: "colocationprofile", want: []string{ControllerColocationProfile}},
		"all plus opt-in":      {flag: "colocationprofile,*", want: []string{ControllerNodeMetric, ControllerNodeSLO, ControllerNodeResource, ControllerColocationProfile}},
		"opt-in removed":       {flag: "*,colocationprofile,-colocationprofile", want: KnownControllers},
		"unknown lists opt-in": {flag: "colocationprofiles", wantErr: `(known: nodemetric, nodeslo, noderesource, colocationprofile)`},
		"unknown remove":       {flag: "*,-foo", wantErr: `unknown controller "foo"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse([]string{"--controllers=" + tc.flag}); err != nil {
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
