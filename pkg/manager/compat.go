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
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/koord-dev/koord/pkg/util/compatflag"
)

// addKoordinatorFlags adds the flags Koordinator's koord-manager takes (v1.8, cmd/koord-manager/options): the
// ones Koord has under another name as aliases, the rest accepted and ignored with the reason logged at start.
func (o *Options) addKoordinatorFlags(fs *pflag.FlagSet) {
	c := compatflag.New(fs)
	o.compat = c
	c.Alias("enable-leader-election", "leader-elect")
	c.Alias("leader-election-namespace", "leader-elect-namespace")
	c.Alias("metrics-addr", "metrics-bind-address")
	c.Alias("health-probe-addr", "health-probe-bind-address")
	c.Alias("rest-config-qps", "kube-api-qps")
	c.Alias("rest-config-burst", "kube-api-burst")
	c.Alias("config-namespace", "slo-config-namespace")
	c.Alias("colocation-profile-reconcile-interval", "colocation-profile-interval")
	c.Var(leasesOnly{}, "leader-elect-resource-lock", "Koordinator's lock type; Koord elects with Leases, the only value accepted.")
	c.Var(&syncPeriod{&o.SyncPeriod}, "sync-period", "Koordinator's informer resync period, a Go duration; 0 or empty: no resync.")
	c.IgnoreValue("Koord's controllers read every namespace", "namespace")
	c.IgnoreValue("Koord computes batch and mid resources; device resources are not offered yet", "noderesource-plugins")
	c.IgnoreValue("Koord always checks the names of node strategies", "node-strategy-name-need-check")
	c.IgnoreBool("Koord's clients copy nothing they do not change", "disable-no-deepcopy")
	c.IgnoreBool("Koord's colocationprofile controller applies only profiles labelled config.koordinator.sh/controller-managed=true",
		"colocation-profile-reconcile-by-default")
	c.IgnoreValue("Koord's colocationprofile controller patches pending pods only, at --colocation-profile-interval",
		"colocation-profile-force-update-pod-duration", "colocation-profile-expire-pod-cache-duration",
		"colocation-profile-update-pod-qps", "colocation-profile-update-pod-qps-burst")
	c.IgnoreValue("Koord has no configurable pod validator",
		"pod-enhanced-validator-config-namespace", "pod-enhanced-validator-config-name", "pod-enhanced-validator-reconcile-interval")
	c.IgnoreValue("Koord's quota status is written by koord-scheduler",
		"quota-update-max-retries", "quota-update-retry-jitter", "quota-update-max-total-jitter", "quota-update-conflict-fresh-get")
	c.IgnoreValue("Koord has no pods/binding admission webhook",
		"binding-admission-user-name", "binding-admission-dry-run", "binding-admission-namespaces",
		"binding-admission-exclude-namespaces", "binding-admission-bypass-labels", "binding-admission-bypass-annotations")
	c.LegacyKlog()
}

// koordinatorEnv are the environment variables Koordinator's koord-manager reads for its webhook server
// (pkg/webhook/util), applied to the defaults so that its Deployment works unchanged; flags win over them.
var koordinatorEnv = []struct {
	name  string
	apply func(o *Options, v string) error
}{
	{"WEBHOOK_PORT", func(o *Options, v string) error {
		p, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("$WEBHOOK_PORT: %q is not a port: %w", v, err)
		}
		o.Webhook.Port = p
		return nil
	}},
	{"POD_NAMESPACE", func(o *Options, v string) error { o.Webhook.ServiceNamespace = v; return nil }},
	{"SERVICE_NAME", func(o *Options, v string) error { o.Webhook.ServiceName = v; return nil }},
	{"SECRET_NAME", func(o *Options, v string) error { o.Webhook.SecretName = v; return nil }},
	{"MUTATING_WEBHOOK_NAME", func(o *Options, v string) error { o.Webhook.MutatingConfigName = v; return nil }},
	{"VALIDATING_WEBHOOK_NAME", func(o *Options, v string) error { o.Webhook.ValidatingConfigName = v; return nil }},
	{"WEBHOOK_HOST", func(o *Options, v string) error { o.Webhook.Host = v; return nil }},
	{"WEBHOOK_CERT_DIR", func(o *Options, v string) error { o.Webhook.CertDir = v; return nil }},
}

// ApplyEnv applies Koordinator's webhook environment variables that getenv returns non-empty. Call it before
// AddFlags, so that flags override the environment.
func (o *Options) ApplyEnv(getenv func(string) string) error {
	for _, e := range koordinatorEnv {
		if v := getenv(e.name); v != "" {
			if err := e.apply(o, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// DefaultOptionsFromEnv returns DefaultOptions with Koordinator's webhook environment applied.
func DefaultOptionsFromEnv() (Options, error) {
	o := DefaultOptions()
	return o, o.ApplyEnv(os.Getenv)
}

// leasesOnly is --leader-elect-resource-lock: Koordinator offers configmaps and endpoints locks, which
// client-go no longer has; Koord elects with Leases.
type leasesOnly struct{}

func (leasesOnly) String() string { return "leases" }
func (leasesOnly) Type() string   { return "string" }
func (leasesOnly) Set(s string) error {
	if s != "leases" {
		return fmt.Errorf("%q: Koord elects its leader with a coordination.k8s.io Lease; only \"leases\" is accepted", s)
	}
	return nil
}

// syncPeriod is Koordinator's --sync-period, a Go duration where "" and "0" mean no periodic resync.
type syncPeriod struct{ d *time.Duration }

func (p *syncPeriod) String() string {
	if *p.d == 0 {
		return "0"
	}
	return p.d.String()
}
func (p *syncPeriod) Type() string { return "duration" }
func (p *syncPeriod) Set(s string) error {
	if s == "" {
		*p.d = 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("%s is negative", s)
	}
	*p.d = d
	return nil
}
