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

// Dashboards are Koord's Grafana dashboards. They use Koord's metric names (docs/metrics.md); koordlet's
// series carry the node label the chart's ServiceMonitor sets.
func Dashboards() []Dashboard {
	return []Dashboard{colocationOverview(), scheduling(), quota(), nodeQoS(), descheduling()}
}

func colocationOverview() Dashboard {
	return Dashboard{
		UID: "koord-colocation-overview", Title: "Koord / Colocation overview",
		Description: "Batch and mid capacity the nodes offer, what the nodes use, and what koordlet does to protect the services.",
		Panels: []Panel{
			{Title: "Batch CPU offered", Kind: PanelStat, Unit: "short", Width: 6,
				Description: "kubernetes.io/batch-cpu over every node, in cores, as koord-manager last computed it.",
				Queries:     []Query{{Expr: `sum(koord_manager_noderesource_batch_allocatable{resource="cpu"})`}}},
			{Title: "Batch memory offered", Kind: PanelStat, Unit: "bytes", Width: 6,
				Queries: []Query{{Expr: `sum(koord_manager_noderesource_batch_allocatable{resource="memory"})`}}},
			{Title: "Mid CPU offered", Kind: PanelStat, Unit: "short", Width: 6,
				Queries: []Query{{Expr: `sum(koord_manager_noderesource_mid_allocatable{resource="cpu"})`}}},
			{Title: "Nodes with a degraded calculation (15m)", Kind: PanelStat, Unit: "short", Width: 6,
				Description: "Calculations that removed batch and mid resources because the NodeMetric was missing or stale.",
				Queries:     []Query{{Expr: `sum(increase(koord_manager_noderesource_degrades_total[15m]))`}}},
			{Title: "Batch CPU by node (cores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `koord_manager_noderesource_batch_allocatable{resource="cpu"}`, Legend: "{{node}}"}}},
			{Title: "Batch memory by node", Kind: PanelTimeSeries, Unit: "bytes",
				Queries: []Query{{Expr: `koord_manager_noderesource_batch_allocatable{resource="memory"}`, Legend: "{{node}}"}}},
			{Title: "Batch CPU terms of a node (cores)", Kind: PanelTimeSeries, Unit: "short", Width: 24,
				Description: "The inputs of the batch formula: capacity - safety margin - max(system used, node reserved) - high-priority used (or request).",
				Queries: []Query{{Expr: `koord_manager_noderesource_input{resource="cpu",input=~"capacity|safety_margin|node_reserved|system_used|hp_used|hp_request"}`,
					Legend: "{{node}} {{input}}"}}},
			{Title: "Node CPU usage (cores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `koord_koordlet_node_usage{resource="cpu"}`, Legend: "{{node}}"}}},
			{Title: "BE CPU limit (cores)", Kind: PanelTimeSeries, Unit: "short",
				Description: "What the besteffort cgroup may use by the suppression formula, and what it is limited to.",
				Queries: []Query{
					{Expr: `koord_koordlet_be_cpu_allowed_cores`, Legend: "{{node}} allowed"},
					{Expr: `koord_koordlet_be_cpu_suppress_cores`, Legend: "{{node}} {{policy}}"},
				}},
			{Title: "Evictions by koordlet (per minute)", Kind: PanelTimeSeries, Unit: "short", Width: 18,
				Queries: []Query{{Expr: `sum by (reason) (rate(koord_koordlet_evictions_total[5m])) * 60`, Legend: "{{reason}}"}}},
			{Title: "koord-manager leading replicas", Kind: PanelStat, Unit: "short", Width: 6,
				Description: "koord-manager replicas that lead (compute batch and mid resources, NodeSLOs and NodeMetrics); 1 in a healthy cluster.",
				Queries:     []Query{{Expr: `sum(koord_manager_leading)`}}},
		},
	}
}

func scheduling() Dashboard {
	return Dashboard{
		UID: "koord-scheduling", Title: "Koord / Scheduling",
		Description: "Why koord-scheduler rejects pods, and the state of gangs and Reservations.",
		Panels: []Panel{
			{Title: "Leading replicas", Kind: PanelStat, Unit: "short", Width: 6,
				Description: "koord-scheduler replicas that lead; 1 in a healthy cluster.",
				Queries:     []Query{{Expr: `sum(koord_scheduler_leading)`}}},
			{Title: "Gangs waiting in Permit", Kind: PanelStat, Unit: "short", Width: 6,
				Queries: []Query{{Expr: `sum(koord_scheduler_gangs{state="Waiting"})`}}},
			{Title: "Reservations available", Kind: PanelStat, Unit: "short", Width: 6,
				Queries: []Query{{Expr: `sum(koord_scheduler_reservations{phase="Available"})`}}},
			{Title: "Quota rejections (per minute)", Kind: PanelStat, Unit: "short", Width: 6,
				Queries: []Query{{Expr: `sum(rate(koord_scheduler_elastic_quota_rejections_total[5m])) * 60`}}},
			{Title: "Nodes rejected by LoadAwareScheduling (per second)", Kind: PanelTimeSeries, Unit: "short",
				Description: "By the resource over its usage threshold, or expired for a stale NodeMetric.",
				Queries:     []Query{{Expr: `sum by (reason) (rate(koord_scheduler_load_aware_rejections_total[5m]))`, Legend: "{{reason}}"}}},
			{Title: "Gangs by state", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `sum by (state) (koord_scheduler_gangs)`, Legend: "{{state}}"}}},
			{Title: "Gang timeouts and preemptions (per minute)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{
					{Expr: `sum(rate(koord_scheduler_gang_timeouts_total[5m])) * 60`, Legend: "members timed out"},
					{Expr: `sum by (result) (rate(koord_scheduler_gang_preemptions_total[5m])) * 60`, Legend: "preemption {{result}}"},
				}},
			{Title: "Reservations by phase", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `sum by (phase) (koord_scheduler_reservations)`, Legend: "{{phase}}"}}},
			{Title: "Controller writes (per second)", Kind: PanelTimeSeries, Unit: "short", Width: 24,
				Description: "API writes of the controllers inside the leading koord-scheduler.",
				Queries:     []Query{{Expr: `sum by (controller) (rate(koord_scheduler_controller_writes_total[5m]))`, Legend: "{{controller}}"}}},
		},
	}
}

func quota() Dashboard {
	return Dashboard{
		UID: "koord-quota", Title: "Koord / Elastic quota",
		Description: "Each ElasticQuota's runtime quota, what it uses and requests, and the pods revoked for over-use.",
		Panels: []Panel{
			{Title: "CPU used / runtime by quota", Kind: PanelTimeSeries, Unit: "percentunit", Width: 24,
				Description: "Above 1 a quota uses more than its runtime quota; its pods are revoked after delayEvictTime.",
				Queries: []Query{{Expr: `max by (quota) (koord_scheduler_elastic_quota_resource{resource="cpu",type="used"}) / ` +
					`max by (quota) (koord_scheduler_elastic_quota_resource{resource="cpu",type="runtime"} > 0)`, Legend: "{{quota}}"}}},
			{Title: "CPU runtime quota (millicores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `koord_scheduler_elastic_quota_resource{resource="cpu",type="runtime"}`, Legend: "{{quota}}"}}},
			{Title: "CPU used (millicores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `koord_scheduler_elastic_quota_resource{resource="cpu",type="used"}`, Legend: "{{quota}}"}}},
			{Title: "CPU requested (millicores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `koord_scheduler_elastic_quota_resource{resource="cpu",type="request"}`, Legend: "{{quota}}"}}},
			{Title: "Memory used / runtime by quota", Kind: PanelTimeSeries, Unit: "percentunit",
				Queries: []Query{{Expr: `max by (quota) (koord_scheduler_elastic_quota_resource{resource="memory",type="used"}) / ` +
					`max by (quota) (koord_scheduler_elastic_quota_resource{resource="memory",type="runtime"} > 0)`, Legend: "{{quota}}"}}},
			{Title: "Rejections and revocations (per minute)", Kind: PanelTimeSeries, Unit: "short", Width: 24,
				Queries: []Query{
					{Expr: `sum(rate(koord_scheduler_elastic_quota_rejections_total[5m])) * 60`, Legend: "pods rejected for want of quota"},
					{Expr: `sum(rate(koord_scheduler_elastic_quota_revoked_pods_total[5m])) * 60`, Legend: "pods revoked for over-use"},
				}},
		},
	}
}

func nodeQoS() Dashboard {
	return Dashboard{
		UID: "koord-node-qos", Title: "Koord / Node QoS",
		Description: "What koordlet measures and does on each node: usage, pressure, BE suppression, evictions, runtime hooks and QoS strategies.",
		Panels: []Panel{
			{Title: "Node memory usage", Kind: PanelTimeSeries, Unit: "bytes",
				Queries: []Query{{Expr: `koord_koordlet_node_usage{resource="memory"}`, Legend: "{{node}}"}}},
			{Title: "Top pods by CPU usage (cores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `topk(10, koord_koordlet_pod_usage{resource="cpu"})`, Legend: "{{pod_namespace}}/{{pod_name}}"}}},
			{Title: "Node CPU pressure (some, avg10, percent)", Kind: PanelTimeSeries, Unit: "percent",
				Queries: []Query{{Expr: `koord_koordlet_node_psi{psi_resource_type="cpu",psi_degree="some",psi_precision="avg10"}`, Legend: "{{node}}"}}},
			{Title: "BE CPU suppression (cores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `koord_koordlet_be_cpu_suppress_cores`, Legend: "{{node}} {{policy}}"}}},
			{Title: "Evictions and refused evictions (per minute)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{
					{Expr: `sum by (node, reason) (rate(koord_koordlet_evictions_total[5m])) * 60`, Legend: "{{node}} {{reason}}"},
					{Expr: `sum by (node, cause) (rate(koord_koordlet_evictions_rejected_total[5m])) * 60`, Legend: "{{node}} refused: {{cause}}"},
				}},
			{Title: "QoS strategy errors (per minute)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `sum by (strategy) (rate(koord_koordlet_qos_strategy_errors_total[5m])) * 60`, Legend: "{{strategy}}"}}},
			{Title: "QoS strategy round time (p99)", Kind: PanelTimeSeries, Unit: "s",
				Queries: []Query{{Expr: `histogram_quantile(0.99, sum by (strategy, le) (rate(koord_koordlet_qos_strategy_duration_seconds_bucket[5m])))`, Legend: "{{strategy}}"}}},
			{Title: "Runtime hook calls (per second)", Kind: PanelTimeSeries, Unit: "short",
				Description: "NRI calls by hook and result; Failed calls are left to the failure policy and the reconcile loop.",
				Queries:     []Query{{Expr: `sum by (hook, result) (rate(koord_koordlet_runtime_hook_calls_total[5m]))`, Legend: "{{hook}} {{result}}"}}},
			{Title: "Runtime hook latency (p99)", Kind: PanelTimeSeries, Unit: "s",
				Queries: []Query{{Expr: `histogram_quantile(0.99, sum by (hook, le) (rate(koord_koordlet_runtime_hook_duration_seconds_bucket[5m])))`, Legend: "{{hook}}"}}},
			{Title: "Predicted prod peak and reclaimable CPU (cores)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{
					{Expr: `koord_koordlet_prediction_prod_peak{predictor="min",resource="cpu"}`, Legend: "{{node}} peak"},
					{Expr: `koord_koordlet_prediction_prod_reclaimable{predictor="min",resource="cpu"}`, Legend: "{{node}} reclaimable"},
				}},
		},
	}
}

func descheduling() Dashboard {
	return Dashboard{
		UID: "koord-descheduling", Title: "Koord / Descheduling",
		Description: "LowNodeLoad's view of the nodes and the PodMigrationJobs that move pods off hot nodes.",
		Panels: []Panel{
			{Title: "Leading replicas", Kind: PanelStat, Unit: "short", Width: 6,
				Description: "koord-descheduler replicas that lead (run the profiles and the MigrationController); 1 in a healthy cluster.",
				Queries:     []Query{{Expr: `sum(koord_descheduler_leading)`}}},
			{Title: "Nodes by class", Kind: PanelTimeSeries, Unit: "short",
				Description: "LowNodeLoad's classification of the nodes of each pool: low, normal or high usage.",
				Queries:     []Query{{Expr: `sum by (pool, class) (koord_descheduler_lownodeload_nodes)`, Legend: "{{pool}} {{class}}"}}},
			{Title: "PodMigrationJobs by phase", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `sum by (phase) (koord_descheduler_pod_migration_jobs)`, Legend: "{{phase}}"}}},
			{Title: "Jobs ended (per minute)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `sum by (phase, reason) (rate(koord_descheduler_pod_migration_jobs_total{phase=~"Succeeded|Failed|Aborted"}[5m])) * 60`, Legend: "{{phase}} {{reason}}"}}},
			{Title: "Evictions (per minute)", Kind: PanelTimeSeries, Unit: "short",
				Queries: []Query{{Expr: `sum by (policy, result) (rate(koord_descheduler_pod_migration_evictions_total[5m])) * 60`, Legend: "{{policy}} {{result}}"}}},
			{Title: "LowNodeLoad migrations (per minute)", Kind: PanelTimeSeries, Unit: "short", Width: 24,
				Queries: []Query{{Expr: `sum by (pool, result) (rate(koord_descheduler_lownodeload_migrations_total[5m])) * 60`, Legend: "{{pool}} {{result}}"}}},
		},
	}
}
