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
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/util/compatflag"
)

// koordinatorOnlyGates are --feature-gates names of Koordinator's koord-scheduler (pkg/features/
// scheduler_features.go, v1.8) that are neither Kubernetes gates nor implemented by Koord, including the
// Kubernetes gates that have since been removed upstream. They are set aside and logged, so that a Koordinator
// command line starts koord-scheduler unchanged.
var koordinatorOnlyGates = []string{
	"CompatibleCSIStorageCapacity", "DisableCSIStorageCapacityInformer", "CompatiblePodDisruptionBudget",
	"DisablePodDisruptionBudgetInformer", "DisableDynamicResourceAllocationInformer", "ResizePod",
	"ElasticQuotaIgnorePodOverhead", "ElasticQuotaImmediateIgnoreTerminatingPod",
	"ElasticQuotaGuaranteeUsage", "DisableDefaultQuota", "SupportParentQuotaSubmitPod", "LazyReservationRestore",
	"OmitNodeLabelsForReservation", "SkipReservationFitsNode", "DevicePluginAdaption",
	"CleanExpiredReservationAllocated", "DynamicSchedulerCheck", "CSIStorageCapacity", "GenericEphemeralVolume",
	"PodDisruptionBudget", "SyncBarrier", "PriorityTransformer", "PreemptionPolicyTransformer",
	"ReplaceResourcesTransformer", "SkipFilterWithNominatedPods", "CrossSchedulerNomination",
	"GangPendingPodsConditionPatch", "EnableInlineBatchSchedule", "EnableBatchScheduleNodeSnapshot",
}

// splitKoordinatorGates removes Koordinator-only gates from the --feature-gates values of args and returns
// the rest of the command line and the names removed.
func splitKoordinatorGates(args []string) (out, ignored []string) {
	filter := func(value string) string {
		var kept []string
		for _, pair := range strings.Split(value, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(pair), "=")
			if slices.Contains(koordinatorOnlyGates, name) {
				if !slices.Contains(ignored, name) {
					ignored = append(ignored, name)
				}
				continue
			}
			if strings.TrimSpace(pair) != "" {
				kept = append(kept, pair)
			}
		}
		return strings.Join(kept, ",")
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...), ignored
		case strings.HasPrefix(a, "--feature-gates="):
			if v := filter(strings.TrimPrefix(a, "--feature-gates=")); v != "" {
				out = append(out, "--feature-gates="+v)
			}
		case a == "--feature-gates" && i+1 < len(args):
			i++
			if v := filter(args[i]); v != "" {
				out = append(out, "--feature-gates", v)
			}
		default:
			out = append(out, a)
		}
	}
	return out, ignored
}

// koordinatorFlags are the flags Koordinator's koord-scheduler adds to kube-scheduler's (v1.8,
// cmd/koord-scheduler/app/options).
type koordinatorFlags struct {
	// port and address serve /healthz and /metrics over plain HTTP, as Koordinator's --port does (its chart
	// probes http://:10251/healthz); 0 turns it off.
	port    int
	address string
	set     *compatflag.Set
}

func addKoordinatorFlags(cmd *cobra.Command) *koordinatorFlags {
	fs := cmd.Flags()
	k := &koordinatorFlags{set: compatflag.New(fs)}
	fs.IntVar(&k.port, "port", 0, "Koordinator's insecure port: serve /healthz and /metrics over plain HTTP on it; 0 turns it off. "+
		"kube-scheduler's --secure-port serves both over HTTPS.")
	fs.StringVar(&k.address, "address", "0.0.0.0", "Address of --port.")
	k.set.IgnoreBool("Coscheduling's awareNetworkTopology alone turns network-topology placement on; the topology is read when a gang is planned", "enable-network-topology-manager")
	k.set.IgnoreValue("Koord runs every controller of its scheduler plugins", "controller-plugins")
	k.set.IgnoreValue("Koord explains a pending pod through its PodScheduled condition and events",
		"debug-scores", "debug-diagnosis-queue-size", "debug-diagnosis-worker-count")
	k.set.IgnoreBool("Koord explains a pending pod through its PodScheduled condition and events",
		"debug-filters", "debug-diagnosis", "debug-diagnosis-blocking")
	k.set.IgnoreValue("Koord has no sync barrier", "sync-barrier-pod-namespace", "sync-barrier-pod-name", "sync-hard-timeout")
	k.set.IgnoreValue("kube-scheduler's own metrics measure scheduling latency",
		"scheduler-monitor-period", "scheduling-timeout", "scheduling-drop-unhandled-timeout")
	k.set.IgnoreBool("klog writes synchronously", "async-log")
	k.set.IgnoreValue("klog writes synchronously", "async-log-queue-length")
	k.set.IgnoreBool("Koord has no workload auditor", "enable-workload-auditor")
	k.set.IgnoreValue("Koord has no workload auditor", "workload-auditor-metric-labels",
		"workload-auditor-victim-reschedule-duration", "workload-auditor-victim-deletion-duration",
		"workload-auditor-victim-deleting-retries", "workload-auditor-scheduling-event-interval")
	return k
}

// serveInsecure serves /healthz and /metrics on --port until ctx ends.
func (k *koordinatorFlags) serveInsecure(ctx context.Context) error {
	if k.port == 0 {
		return nil
	}
	if k.port < 0 || k.port > 65535 {
		return errors.New("--port: " + strconv.Itoa(k.port) + " is not a port")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(k.address, strconv.Itoa(k.port)))
	if err != nil {
		return fmt.Errorf("--port: %w", err)
	}
	serveInsecure(ctx, ln)
	return nil
}

// serveInsecure serves /healthz and /metrics on ln until ctx ends.
func serveInsecure(ctx context.Context, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("/metrics", legacyregistry.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	klog.FromContext(ctx).Info("Serving /healthz and /metrics over plain HTTP (Koordinator's --port)", "address", ln.Addr().String())
}
