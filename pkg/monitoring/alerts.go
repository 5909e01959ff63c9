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

package monitoring

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// RuleGroup is a group of Prometheus alert rules, evaluated together.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is one Prometheus alert rule.
type Rule struct {
	// Alert is the alert's name.
	Alert string `json:"alert"`
	// Expr is the PromQL condition; every series it returns is an alert.
	Expr string `json:"expr"`
	// For is how long the condition must hold before the alert fires, a Prometheus duration.
	For string `json:"for,omitempty"`
	// Labels carry the severity: critical, warning or info.
	Labels map[string]string `json:"labels"`
	// Annotations carry the summary and description, which may use {{ $labels.x }} and {{ $value }}.
	Annotations map[string]string `json:"annotations"`
}

// Severities of the alerts.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
)

func rule(alert, severity, forDuration, expr, summary, description string) Rule {
	return Rule{
		Alert: alert, Expr: expr, For: forDuration,
		Labels:      map[string]string{"severity": severity},
		Annotations: map[string]string{"summary": summary, "description": description},
	}
}

// RuleGroups are Koord's alert rules. They use Koord's metric names (docs/metrics.md).
func RuleGroups() []RuleGroup {
	return []RuleGroup{
		{Name: "koord-colocation", Rules: []Rule{
			rule("KoordNodeMetricStale", SeverityWarning, "10m",
				`sum by (reason) (increase(koord_manager_noderesource_degrades_total{reason=~"NodeMetricMissing|NodeMetricNoUpdateTime|NodeMetricStale|NodeUsageMissing"}[10m])) > 0`,
				"Nodes lose their batch and mid resources: their NodeMetrics are {{ $labels.reason }}.",
				"koord-manager removed batch and mid resources {{ $value }} times in 10 minutes because a node's NodeMetric was missing or stale. Check koordlet on those nodes (koordctl explain node NAME shows the reason)."),
			rule("KoordBatchCapacityCollapse", SeverityWarning, "15m",
				`sum(koord_manager_noderesource_batch_allocatable{resource="cpu"}) < 0.5 * sum(koord_manager_noderesource_batch_allocatable{resource="cpu"} offset 1h)`,
				"Batch CPU offered fell by more than half within an hour.",
				"The cluster offers {{ $value }} cores of kubernetes.io/batch-cpu, less than half of an hour ago. Either the services use more (expected) or NodeMetrics went stale or colocation was switched off (see KoordNodeMetricStale and the slo-controller-config)."),
			rule("KoordSLOConfigRejected", SeverityWarning, "5m",
				`max(koord_manager_slo_config_valid) == 0`,
				"The slo-controller-config ConfigMap is invalid; the last good version stays in force.",
				"koord-manager refused the latest version of the slo-controller-config ConfigMap; its log and Events name what is wrong."),
		}},
		{Name: "koord-evictions", Rules: []Rule{
			rule("KoordletEvictionStorm", SeverityCritical, "5m",
				`sum by (node) (rate(koord_koordlet_evictions_total[5m])) * 60 > 5`,
				"koordlet on {{ $labels.node }} evicts more than 5 pods a minute.",
				"koordlet evicted {{ $value }} pods per minute on {{ $labels.node }} over 5 minutes. The node's services are short of memory or CPU: check the NodeSLO thresholds and the node's batch capacity."),
			rule("KoordDeschedulerEvictionStorm", SeverityWarning, "10m",
				`sum(rate(koord_descheduler_pod_migration_evictions_total{result="success"}[10m])) * 60 > 10`,
				"koord-descheduler evicts more than 10 pods a minute.",
				"PodMigrationJobs evicted {{ $value }} pods per minute over 10 minutes. LowNodeLoad may be oscillating: compare its thresholds with the nodes' usage."),
		}},
		{Name: "koord-quota", Rules: []Rule{
			rule("KoordQuotaOverUsed", SeverityWarning, "15m",
				`max by (quota, resource) (koord_scheduler_elastic_quota_resource{type="used"}) > max by (quota, resource) (koord_scheduler_elastic_quota_resource{type="runtime"})`,
				"Quota {{ $labels.quota }} uses more {{ $labels.resource }} than its runtime quota.",
				"ElasticQuota {{ $labels.quota }} has used more {{ $labels.resource }} than its runtime quota for 15 minutes; with revokePodInterval set its pods are revoked (koordctl explain quota {{ $labels.quota }})."),
		}},
		{Name: "koord-control-plane", Rules: []Rule{
			rule("KoordWebhookRegistrationFailing", SeverityCritical, "10m",
				`increase(koord_manager_webhook_registration_sync_errors_total[10m]) > 0`,
				"koord-manager cannot keep its webhook certificate and configurations.",
				"koord-manager failed {{ $value }} times in 10 minutes to ensure its webhook certificate and configurations; pods may be admitted unmutated."),
			rule("KoordWebhookOverloaded", SeverityWarning, "5m",
				`sum(rate(koord_manager_webhook_overload_rejections_total[5m])) > 0`,
				"koord-manager's webhook refuses admission requests for overload.",
				"koord-manager answered 429 to {{ $value }} admission requests per second; add replicas or raise its in-flight limit."),
			rule("KoordWebhookCertificateExpiring", SeverityWarning, "1h",
				`min(koord_manager_webhook_certificate_expiration_timestamp_seconds) - time() < 7 * 24 * 3600`,
				"koord-manager's webhook certificate expires within a week.",
				"The webhook serving certificate expires in {{ $value | humanizeDuration }}; koord-manager renews it unless its registration is failing."),
			rule("KoordSchedulerNoLeader", SeverityCritical, "5m",
				`sum(koord_scheduler_leading) < 1`,
				"No koord-scheduler replica leads.",
				"No koord-scheduler replica holds the lease: pods of schedulerName koord-scheduler stay pending. Check the replicas' logs and the lease in the install namespace."),
			rule("KoordManagerNoLeader", SeverityCritical, "5m",
				`sum(koord_manager_leading) < 1`,
				"No koord-manager replica leads.",
				"No koord-manager replica holds the lease: batch and mid resources, NodeSLOs and NodeMetrics are not updated (the webhooks still answer). Check the replicas' logs and the lease in the install namespace."),
			rule("KoordDeschedulerNoLeader", SeverityWarning, "15m",
				`sum(koord_descheduler_leading) < 1`,
				"No koord-descheduler replica leads.",
				"No koord-descheduler replica holds the lease: hot nodes are not relieved and PodMigrationJobs do not progress. Check the replicas' logs and the lease in the install namespace."),
		}},
	}
}

// Queries returns every PromQL expression of the groups.
func Queries(groups []RuleGroup) []string {
	var out []string
	for _, g := range groups {
		for _, r := range g.Rules {
			out = append(out, r.Expr)
		}
	}
	return out
}

// RulesYAML returns the groups as a Prometheus rule file ({groups: [...]}), which is also the spec of a
// PrometheusRule.
func RulesYAML(groups []RuleGroup) ([]byte, error) {
	out, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		return nil, fmt.Errorf("encode the alert rules: %w", err)
	}
	return append([]byte("# Generated from pkg/monitoring by \"go test ./pkg/monitoring -update\" (make generate); edit alerts.go there.\n"), out...), nil
}
