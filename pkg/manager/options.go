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

// Package manager assembles koord-manager: its options and flags, the controllers it runs, and the admission
// webhooks it serves and registers.
package manager

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/featuregate"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/manager/controller/colocationprofile"
	"github.com/koord-dev/koord/pkg/manager/webhook"
	"github.com/koord-dev/koord/pkg/util/compatflag"
)

// Controller names accepted by --controllers.
const (
	ControllerNodeMetric   = "nodemetric"
	ControllerNodeSLO      = "nodeslo"
	ControllerNodeResource = "noderesource"
	// ControllerQuotaProfile keeps the root ElasticQuota of each ElasticQuotaProfile, on by default as in
	// Koordinator.
	ControllerQuotaProfile = "quotaprofile"
	// ControllerDeviceResource writes nodes' device resources from their Device objects (Koordinator's
	// GPUDeviceResource and RDMADeviceResource node-resource plugins), on by default as there.
	ControllerDeviceResource = "deviceresource"
	// ControllerColocationProfile is alpha, as in Koordinator, and off unless named explicitly.
	ControllerColocationProfile = "colocationprofile"
)

// KnownControllers lists the controllers koord-manager runs by default ("*"), in start order.
var KnownControllers = []string{ControllerNodeMetric, ControllerNodeSLO, ControllerNodeResource, ControllerQuotaProfile, ControllerDeviceResource}

// OptInControllers lists the controllers that run only when --controllers names them; "*" leaves them off. They
// start after KnownControllers, in this order.
var OptInControllers = []string{ControllerColocationProfile}

// allControllers is every controller name --controllers accepts, in start order.
func allControllers() []string {
	return slices.Concat(KnownControllers, OptInControllers)
}

// Options are koord-manager's settings. DefaultOptions gives the defaults; AddFlags binds them.
type Options struct {
	// Kubeconfig is the path of a kubeconfig; empty means in-cluster, then $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst bound koord-manager's requests to the apiserver. The controllers write one
	// NodeMetric, one NodeSLO and one node status per node, so large clusters need more than client-go's 5/10.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// LeaderElection makes only one replica run the controllers.
	LeaderElection bool
	// LeaderElectionNamespace and LeaderElectionID locate the Lease.
	LeaderElectionNamespace, LeaderElectionID string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// MetricsBindAddress serves /metrics; "0" turns it off.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" turns it off.
	HealthProbeBindAddress string
	// Controllers selects controllers: "*" for all, a name to add one, "-name" to remove one.
	Controllers []string
	// EnableWebhookServer serves and registers the admission webhooks whose feature gates are on.
	EnableWebhookServer bool
	// Webhook configures the webhook server and its registration.
	Webhook webhook.Options
	// WebhookMaxInFlight bounds concurrent admission requests per webhook path.
	WebhookMaxInFlight int
	// SLOConfigNamespace and SLOConfigName locate the slo-controller-config ConfigMap.
	SLOConfigNamespace, SLOConfigName string
	// ColocationProfileInterval is how often the colocationprofile controller re-applies each managed profile.
	ColocationProfileInterval time.Duration
	// UnreportedPodsInMaxUsageRequest counts the request of a high-priority pod koordlet does not report yet in
	// the maxUsageRequest batch policy (Koord's default); false counts it as Koordinator does, in the usage
	// policy only.
	UnreportedPodsInMaxUsageRequest bool
	// FeatureGates are koord-manager's gates.
	FeatureGates featuregate.MutableVersionedFeatureGate
	// WebhookFailurePolicies overrides the failure policy of the webhooks of a kind (see webhookKinds): Ignore
	// or Fail.
	WebhookFailurePolicies map[string]string
	// SyncPeriod makes the informers resync that often; 0 never.
	SyncPeriod time.Duration
	// PprofBindAddress serves net/http/pprof when EnablePprof is set.
	PprofBindAddress string
	// EnablePprof serves the profiles at PprofBindAddress. Off by default: the profiles are served without
	// authentication.
	EnablePprof bool

	// compat holds Koordinator's flags and gatesFlag the --feature-gates value, to log what they set aside.
	compat    *compatflag.Set
	gatesFlag *features.CompatFlag
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{
		KubeAPIQPS:                      50,
		KubeAPIBurst:                    100,
		LeaderElection:                  true,
		LeaderElectionNamespace:         configuration.ConfigNamespace,
		LeaderElectionID:                "koord-manager",
		LeaseDuration:                   15 * time.Second,
		RenewDeadline:                   10 * time.Second,
		RetryPeriod:                     2 * time.Second,
		MetricsBindAddress:              ":8080",
		HealthProbeBindAddress:          ":8000",
		Controllers:                     []string{"*"},
		EnableWebhookServer:             true,
		Webhook:                         webhook.DefaultOptions(),
		WebhookMaxInFlight:              64,
		SLOConfigNamespace:              configuration.ConfigNamespace,
		SLOConfigName:                   configuration.SLOCtrlConfigMap,
		ColocationProfileInterval:       colocationprofile.DefaultInterval,
		UnreportedPodsInMaxUsageRequest: true,
		FeatureGates:                    features.NewManagerGate(),
		PprofBindAddress:                ":8090",
	}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig. Empty: in-cluster config, then $KUBECONFIG, then ~/.kube/config.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Queries per second to the apiserver.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of queries to the apiserver.")
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "Elect a leader so that only one replica runs the controllers.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-elect-namespace", o.LeaderElectionNamespace, "Namespace of the leader election Lease.")
	fs.StringVar(&o.LeaderElectionID, "leader-elect-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long a non-leader waits before it tries to take over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader tries to renew before it gives up leadership.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How often leader election actions are retried.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus /metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of /healthz and /readyz; 0 turns them off.")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"Controllers to run: '*' for the default set, 'name' to add one, '-name' to remove one. Default set: %s. Off unless named (alpha): %s.",
		strings.Join(KnownControllers, ", "), strings.Join(OptInControllers, ", ")))
	fs.BoolVar(&o.EnableWebhookServer, "enable-webhook-server", o.EnableWebhookServer, "Serve and register the admission webhooks whose feature gates are on.")
	fs.IntVar(&o.Webhook.Port, "webhook-port", o.Webhook.Port, "Port of the webhook server.")
	fs.IntVar(&o.Webhook.URLPort, "webhook-url-port", o.Webhook.URLPort, "Port of the URL the webhooks are registered with, when it is not --webhook-port: that of a proxy in front of several replicas outside the cluster. Only with --webhook-host; 0: --webhook-port.")
	fs.StringVar(&o.Webhook.CertDir, "webhook-cert-dir", o.Webhook.CertDir, "Directory for the webhook serving certificate. Empty: a directory under the system temp directory.")
	fs.StringVar(&o.Webhook.Host, "webhook-host", o.Webhook.Host, "Register webhooks by URL https://<host>:<port>/<path> instead of by Service (for a manager outside the cluster).")
	fs.StringVar(&o.Webhook.ServiceNamespace, "webhook-service-namespace", o.Webhook.ServiceNamespace, "Namespace of the webhook Service and certificate Secret.")
	fs.StringVar(&o.Webhook.ServiceName, "webhook-service-name", o.Webhook.ServiceName, "Name of the Service in front of the webhook server.")
	fs.Int32Var(&o.Webhook.ServicePort, "webhook-service-port", o.Webhook.ServicePort, "Port of the webhook Service.")
	fs.StringVar(&o.Webhook.SecretName, "webhook-secret-name", o.Webhook.SecretName, "Secret that stores the webhook CA and serving certificate.")
	fs.StringVar(&o.Webhook.MutatingConfigName, "mutating-webhook-configuration-name", o.Webhook.MutatingConfigName, "Name of the MutatingWebhookConfiguration koord-manager writes.")
	fs.StringVar(&o.Webhook.ValidatingConfigName, "validating-webhook-configuration-name", o.Webhook.ValidatingConfigName, "Name of the ValidatingWebhookConfiguration koord-manager writes.")
	fs.Int32Var(&o.Webhook.TimeoutSeconds, "webhook-timeout-seconds", o.Webhook.TimeoutSeconds, "How long the apiserver waits for a webhook answer.")
	fs.DurationVar(&o.Webhook.SyncInterval, "webhook-sync-interval", o.Webhook.SyncInterval, "How often the webhook certificate and configurations are checked and repaired.")
	fs.IntVar(&o.WebhookMaxInFlight, "webhook-max-in-flight", o.WebhookMaxInFlight, "Concurrent admission requests served per webhook; 0 means no limit.")
	fs.StringVar(&o.SLOConfigNamespace, "slo-config-namespace", o.SLOConfigNamespace, "Namespace of the slo-controller-config ConfigMap.")
	fs.StringVar(&o.SLOConfigName, "slo-config-name", o.SLOConfigName, "Name of the slo-controller-config ConfigMap.")
	fs.BoolVar(&o.UnreportedPodsInMaxUsageRequest, "unreported-pods-in-max-usage-request", o.UnreportedPodsInMaxUsageRequest,
		"Count the request of a high-priority pod koordlet does not report yet in the maxUsageRequest batch policy. false counts it "+
			"as Koordinator does: in the usage policy only, so that a pod just placed leaves room in maxUsageRequest until it is reported.")
	fs.DurationVar(&o.ColocationProfileInterval, "colocation-profile-interval", o.ColocationProfileInterval,
		"How often the colocationprofile controller re-applies each ClusterColocationProfile labelled config.koordinator.sh/controller-managed=true to pending pods.")
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof, "Serve net/http/pprof at --pprof-addr (unauthenticated; off by default, unlike Koordinator).")
	fs.StringVar(&o.PprofBindAddress, "pprof-addr", o.PprofBindAddress, "Address of net/http/pprof when --enable-pprof is set.")
	fs.StringToStringVar(&o.WebhookFailurePolicies, "webhook-failure-policy", o.WebhookFailurePolicies,
		"Failure policy per kind, e.g. pods=Ignore,elasticquotas=Fail (kinds: pods, elasticquotas, clustercolocationprofiles, configmaps; policies: Ignore, Fail). "+
			"Default, as Koordinator's chart: Ignore for pods and elasticquotas, Fail for clustercolocationprofiles and the SLO ConfigMap.")
	fs.BoolVar(&o.Webhook.OwnedByNamespace, "webhook-owned-by-namespace", o.Webhook.OwnedByNamespace,
		"Make the webhook configurations dependents of the --webhook-service-namespace Namespace, so that deleting the namespace (helm uninstall) deletes them.")
	o.gatesFlag = features.NewManagerCompatFlag(o.FeatureGates)
	o.gatesFlag.AddFlag(fs)
	o.addKoordinatorFlags(fs)
}

// LogIgnoredFlags logs the Koordinator flags the command line set that Koord ignores.
func (o *Options) LogIgnoredFlags(logger logr.Logger) {
	if o.compat != nil {
		o.compat.LogIgnored(logger)
	}
	if o.gatesFlag != nil {
		o.gatesFlag.LogIgnored(logger)
	}
}

// EnabledControllers resolves --controllers into the controllers to run, in start order. "*" stands for
// KnownControllers; the OptInControllers run only when named, or (colocationprofile) when the
// ColocationProfileController gate is on, as in Koordinator; "-name" wins over both.
func (o *Options) EnabledControllers() ([]string, error) {
	all := allControllers()
	enabled := map[string]bool{}
	if o.FeatureGates != nil && o.FeatureGates.Enabled(features.ColocationProfileController) {
		enabled[ControllerColocationProfile] = true
	}
	for _, raw := range o.Controllers {
		name := strings.TrimSpace(raw)
		switch {
		case name == "":
			continue
		case name == "*":
			for _, c := range KnownControllers {
				enabled[c] = true
			}
		case strings.HasPrefix(name, "-"):
			n := strings.TrimPrefix(name, "-")
			if !slices.Contains(all, n) {
				return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", n, strings.Join(all, ", "))
			}
			enabled[n] = false
		default:
			if !slices.Contains(all, name) {
				return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", name, strings.Join(all, ", "))
			}
			enabled[name] = true
		}
	}
	var out []string
	for _, c := range all {
		if enabled[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	var errs []error
	if _, err := o.EnabledControllers(); err != nil {
		errs = append(errs, err)
	}
	if o.EnableWebhookServer {
		if o.Webhook.Port <= 0 || o.Webhook.Port > 65535 {
			errs = append(errs, fmt.Errorf("--webhook-port: %d is not a port", o.Webhook.Port))
		}
		if o.Webhook.URLPort < 0 || o.Webhook.URLPort > 65535 {
			errs = append(errs, fmt.Errorf("--webhook-url-port: %d is not a port", o.Webhook.URLPort))
		}
		if o.Webhook.URLPort != 0 && o.Webhook.Host == "" {
			errs = append(errs, errors.New("--webhook-url-port needs --webhook-host: webhooks registered by Service use --webhook-service-port"))
		}
		if o.Webhook.TimeoutSeconds < 1 || o.Webhook.TimeoutSeconds > 30 {
			errs = append(errs, fmt.Errorf("--webhook-timeout-seconds: %d is outside 1..30", o.Webhook.TimeoutSeconds))
		}
		for kind, policy := range o.WebhookFailurePolicies {
			if !slices.Contains(webhookKinds, kind) {
				errs = append(errs, fmt.Errorf("--webhook-failure-policy: unknown kind %q (known: %s)", kind, strings.Join(webhookKinds, ", ")))
			}
			if policy != string(admissionregistrationv1.Ignore) && policy != string(admissionregistrationv1.Fail) {
				errs = append(errs, fmt.Errorf("--webhook-failure-policy: %s=%q is neither Ignore nor Fail", kind, policy))
			}
		}
		if o.Webhook.SyncInterval < time.Second {
			errs = append(errs, fmt.Errorf("--webhook-sync-interval: %s is shorter than 1s", o.Webhook.SyncInterval))
		}
		if o.Webhook.SecretName == "" || o.Webhook.ServiceNamespace == "" {
			errs = append(errs, errors.New("--webhook-secret-name and --webhook-service-namespace must not be empty"))
		}
		if o.Webhook.Host == "" && o.Webhook.ServiceName == "" {
			errs = append(errs, errors.New("one of --webhook-host and --webhook-service-name must be set"))
		}
	}
	if o.EnablePprof && o.PprofBindAddress == "" {
		errs = append(errs, errors.New("--enable-pprof needs --pprof-addr"))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps (%v) and --kube-api-burst (%d) must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if o.ColocationProfileInterval < time.Second {
		errs = append(errs, fmt.Errorf("--colocation-profile-interval: %s is shorter than 1s", o.ColocationProfileInterval))
	}
	if o.LeaderElection && (o.RenewDeadline >= o.LeaseDuration || o.RetryPeriod >= o.RenewDeadline) {
		errs = append(errs, fmt.Errorf("leader election timing: need retry period (%s) < renew deadline (%s) < lease duration (%s)",
			o.RetryPeriod, o.RenewDeadline, o.LeaseDuration))
	}
	for flag, name := range map[string]string{"--slo-config-namespace": o.SLOConfigNamespace, "--slo-config-name": o.SLOConfigName} {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a valid name: %s", flag, name, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}
