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

package reliability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/koordctl/check"
)

// fault is one thing that goes wrong, and its repair.
type fault struct {
	// name says what happens.
	name string
	// long marks the faults only -long runs.
	long bool
	// inject makes it happen and repairs it; it returns what it found itself, and an error naming the
	// expectations that failed.
	inject func(ctx context.Context) (finding, error)
}

// finding is what the injection of a fault found out itself.
type finding struct {
	// checks counts the expectations it checked.
	checks int
	// detail has figures worth a line of the report, such as failover times.
	detail string
}

// faults are the faults, in the order they are injected.
func faults() []fault {
	restart := func(name string) func(ctx context.Context) (finding, error) {
		return func(ctx context.Context) (finding, error) { return finding{}, env.c.Restart(ctx, name) }
	}
	// restartLeader kills the leading replica of component and starts it again, and waits until a replica leads
	// again: the restarted one or another, once the lease expires.
	restartLeader := func(component string) func(ctx context.Context) (finding, error) {
		return func(ctx context.Context) (finding, error) {
			leader, err := env.c.Leader(component)
			if err != nil {
				return finding{}, err
			}
			start := time.Now()
			if err := env.c.Restart(ctx, leader); err != nil {
				return finding{}, err
			}
			var next string
			err = waitFor(ctx, time.Minute, "a leader of "+component+" again", func(context.Context) (bool, error) {
				l, err := env.c.Leader(component)
				next = l
				return err == nil, nil
			})
			if err != nil {
				return finding{checks: 1}, err
			}
			return finding{checks: 1, detail: fmt.Sprintf("killed %s; %s leads after %v", leader, next, time.Since(start).Round(100*time.Millisecond))}, nil
		}
	}
	return []fault{
		{name: "kill -9 koord-scheduler's leader while a gang is placed", inject: func(ctx context.Context) (finding, error) {
			leader, err := env.c.Leader("koord-scheduler")
			if err != nil {
				return finding{}, err
			}
			for m := range 4 {
				if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, gangPod(fmt.Sprintf("crash-gang-%d", m), "crash-gang", 4), metav1.CreateOptions{}); err != nil {
					return finding{}, err
				}
			}
			if err := env.c.Restart(ctx, leader); err != nil {
				return finding{}, err
			}
			// The gang is placed whole by the new leader.
			err = waitFor(ctx, time.Minute, "the gang of 4 bound after the restart", func(ctx context.Context) (bool, error) {
				pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=gang"})
				if err != nil {
					return false, err
				}
				bound := 0
				for _, p := range pods.Items {
					if strings.HasPrefix(p.Name, "crash-gang-") && p.Spec.NodeName != "" {
						bound++
					}
				}
				return bound == 4, nil
			})
			for m := range 4 {
				_ = env.kube.CoreV1().Pods(namespace).Delete(ctx, fmt.Sprintf("crash-gang-%d", m), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}
			return finding{checks: 1, detail: "killed " + leader}, err
		}},
		{name: "kill -9 koord-scheduler's leader while Reservations are bound", inject: killSchedulerPlacingReservations},
		{name: "kill -9 koord-manager's leader", inject: restartLeader("koord-manager")},
		{name: "kill -9 the leaders of koord-manager and koord-scheduler, left down", inject: killLeaders},
		{name: "webhook server unreachable (every koord-manager replica down)", inject: func(ctx context.Context) (finding, error) {
			replicas := env.c.Replicas("koord-manager")
			for _, r := range replicas {
				if err := env.c.Kill(r); err != nil {
					return finding{}, err
				}
			}
			var errs []error
			// Pods fail open: a pod is still created.
			p := bePod("while-webhook-down")
			if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("a pod was not created while the webhook was down: %w", err))
			} else {
				_ = env.kube.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}
			// Koord's kinds fail closed: a ClusterColocationProfile is refused.
			if err := createProfile(ctx, false); err == nil {
				errs = append(errs, errors.New("a ClusterColocationProfile was admitted while the webhook was down"))
			}
			for _, r := range replicas {
				if err := env.c.Restart(ctx, r); err != nil {
					errs = append(errs, err)
				}
			}
			return finding{checks: 2}, errors.Join(errs...)
		}},
		{name: "kill -9 kube-apiserver", inject: func(ctx context.Context) (finding, error) { return finding{}, env.c.RestartAPIServer(ctx) }},
		{name: "etcd restart", inject: func(ctx context.Context) (finding, error) { return finding{}, env.c.RestartEtcd(ctx) }},
		{name: "node agents' clocks 2 min ahead and 2 min behind", inject: skewClocks},
		{name: "kill -9 two node agents, degradeTimeMinutes 1", long: true, inject: killAgents},
		{name: "kill -9 koord-descheduler mid-migration", long: true, inject: killDeschedulerMigrating},
		{name: "kill -9 kube-scheduler and kube-controller-manager", long: true, inject: func(ctx context.Context) (finding, error) {
			return finding{}, errors.Join(env.c.Restart(ctx, "kube-scheduler"), env.c.Restart(ctx, "kube-controller-manager"))
		}},
		{name: "kill -9 kwok (the fake kubelets)", long: true, inject: restart("kwok")},
		// Last: the cluster has one node less afterwards.
		{name: "a node deleted with pods on it", long: true, inject: deleteBusiestNode},
	}
}

// clockSkew is the skew skewClocks gives the agents' clocks: well inside the load-aware scheduler's
// nodeMetricExpirationSeconds (180 s) and koord-manager's degradeTimeMinutes (15 min), the tolerances of the
// readers of a report's updateTime (docs/reliability.md).
const clockSkew = 2 * time.Minute

// skewClocks sets the clocks of four node agents off, two ahead and two behind, and checks, for each node,
// that its reports carry the skewed time, that it keeps its batch capacity, and that koord-scheduler places a
// BE pod on it; then it sets the clocks right again.
func skewClocks(ctx context.Context) (finding, error) {
	nodes := env.c.NodeNames()
	if len(nodes) < 4 {
		return finding{}, fmt.Errorf("%d nodes, want at least 4", len(nodes))
	}
	skews := map[string]time.Duration{nodes[0]: clockSkew, nodes[1]: clockSkew, nodes[2]: -clockSkew, nodes[3]: -clockSkew}
	for node, skew := range skews {
		env.c.Sim().SetClockSkew(node, skew)
	}
	defer func() {
		for node := range skews {
			env.c.Sim().SetClockSkew(node, 0)
		}
	}()
	checks := 0
	var errs []error
	for node, skew := range skews {
		checks += 3
		// The next report carries the skew (reports every 5 s).
		err := waitFor(ctx, time.Minute, "a report of "+node+" stamped "+skew.String()+" off", func(ctx context.Context) (bool, error) {
			nm, err := env.koord.SloV1alpha1().NodeMetrics().Get(ctx, node, metav1.GetOptions{})
			if err != nil || nm.Status.UpdateTime == nil {
				return false, err
			}
			off := time.Until(nm.Status.UpdateTime.Time) - skew
			return off.Abs() < 15*time.Second, nil
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n, err := env.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if q := n.Status.Allocatable[extension.BatchCPU]; q.IsZero() {
			errs = append(errs, fmt.Errorf("node %s with its agent's clock %v off has no %s", node, skew, extension.BatchCPU))
		}
		pod := bePod("skewed-" + node)
		pod.Spec.Affinity = onNode(node)
		if _, err := env.kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, waitFor(ctx, time.Minute, "a BE pod bound to "+node+" with its agent's clock "+skew.String()+" off", func(ctx context.Context) (bool, error) {
			p, err := env.kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			return err == nil && p.Spec.NodeName == node, err
		}))
		_ = env.kube.CoreV1().Pods(namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
	return finding{checks: checks}, errors.Join(errs...)
}

// killLeaders kills the leading replicas of koord-manager and koord-scheduler at once and leaves them down: the
// webhooks answer through the proxy (the webhook Service) from the other manager replica at once, and the
// other replicas take the leases over once they expire (leaseDuration 15 s). It reports each failover time,
// from the kill until the new leader says it acquired the lease, and then starts the killed replicas again.
func killLeaders(ctx context.Context) (finding, error) {
	components := []string{"koord-manager", "koord-scheduler"}
	leaders := map[string]string{}
	for _, c := range components {
		if n := len(env.c.Replicas(c)); n < 2 {
			return finding{}, fmt.Errorf("%s has %d replica, want at least 2", c, n)
		}
		leader, err := env.c.Leader(c)
		if err != nil {
			return finding{}, err
		}
		leaders[c] = leader
	}
	start := time.Now()
	for _, c := range components {
		if err := env.c.Kill(leaders[c]); err != nil {
			return finding{}, err
		}
	}
	var errs []error
	// Webhooks are served by every replica, not only the leader.
	webhooks := waitFor(ctx, 10*time.Second, "koord-manager's webhooks answering with its leader down", func(ctx context.Context) (bool, error) {
		err := createProfile(ctx, true)
		return err == nil, err
	})
	errs = append(errs, webhooks)
	webhookTime := time.Since(start)
	var details []string
	if webhooks == nil {
		details = append(details, fmt.Sprintf("webhooks answered %v after the kill", webhookTime.Round(10*time.Millisecond)))
	}
	for _, c := range components {
		var next string
		err := waitFor(ctx, time.Minute, "a new leader of "+c, func(context.Context) (bool, error) {
			l, err := env.c.Leader(c)
			next = l
			return err == nil && l != leaders[c], nil
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		details = append(details, fmt.Sprintf("%s failover %v (%s to %s)", c, time.Since(start).Round(100*time.Millisecond), leaders[c], next))
	}
	for _, c := range components {
		errs = append(errs, env.c.Restart(ctx, leaders[c]))
	}
	return finding{checks: 3, detail: strings.Join(details, "; ")}, errors.Join(errs...)
}

// replicaExits sums the exits of koord-manager's and koord-scheduler's replicas, each of which the cluster
// started again (a replica that cannot renew its lease, as when etcd is down, exits by design).
func replicaExits() int {
	n := 0
	for _, c := range []string{"koord-manager", "koord-scheduler"} {
		for _, r := range env.c.Replicas(c) {
			n += env.c.Exits(r)
		}
	}
	return n
}

// deleteBusiestNode deletes the node with the most pods of the Deployment and waits until the Deployment has
// all its replicas available again, none on the deleted node (kube-controller-manager's pod GC removes the
// pods of a node that is gone).
func deleteBusiestNode(ctx context.Context) (finding, error) {
	pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return finding{}, err
	}
	count := map[string]int{}
	busiest := ""
	for _, p := range pods.Items {
		if n := p.Spec.NodeName; n != "" {
			count[n]++
			if busiest == "" || count[n] > count[busiest] {
				busiest = n
			}
		}
	}
	if busiest == "" {
		return finding{}, errors.New("no pod of the Deployment is bound")
	}
	if err := env.kube.CoreV1().Nodes().Delete(ctx, busiest, metav1.DeleteOptions{}); err != nil {
		return finding{}, err
	}
	return finding{checks: 1}, waitFor(ctx, 3*time.Minute, "the Deployment whole again without node "+busiest, func(ctx context.Context) (bool, error) {
		d, err := env.kube.AppsV1().Deployments(namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := env.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == busiest {
				return false, nil
			}
		}
		return d.Status.AvailableReplicas == ptr.Deref(d.Spec.Replicas, 0), nil
	})
}

// createProfile creates (dryRun: only asks the webhooks) a ClusterColocationProfile.
func createProfile(ctx context.Context, dryRun bool) error {
	p := &configv1alpha1.ClusterColocationProfile{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "reliability-probe-"},
		Spec: configv1alpha1.ClusterColocationProfileSpec{
			Selector:      &metav1.LabelSelector{MatchLabels: map[string]string{"reliability": "probe"}},
			QoSClass:      "BE",
			SchedulerName: "koord-scheduler",
		},
	}
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	created, err := env.koord.ConfigV1alpha1().ClusterColocationProfiles().Create(ctx, p, opts)
	if err == nil && !dryRun {
		_ = env.koord.ConfigV1alpha1().ClusterColocationProfiles().Delete(ctx, created.Name, metav1.DeleteOptions{})
	}
	return err
}

// waitFor polls cond every 200ms until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not within %v: %w", what, timeout, errors.Join(err, last))
	}
	return nil
}

// recovered waits until the system serves again: koord-scheduler binds a new pod and koord-manager's webhooks
// answer.
func recovered(ctx context.Context, i int) error {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("probe-%d", i)},
		Spec: corev1.PodSpec{SchedulerName: "koord-scheduler", Containers: []corev1.Container{{Name: "c", Image: "pause"}},
			TerminationGracePeriodSeconds: ptr.To[int64](0)},
	}
	defer func() {
		_ = env.kube.CoreV1().Pods(namespace).Delete(context.WithoutCancel(ctx), probe.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}()
	if err := waitFor(ctx, 2*time.Minute, "the probe pod created", func(ctx context.Context) (bool, error) {
		_, err := env.kube.CoreV1().Pods(namespace).Create(ctx, probe, metav1.CreateOptions{})
		return err == nil, err
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, 2*time.Minute, "the probe pod bound", func(ctx context.Context) (bool, error) {
		p, err := env.kube.CoreV1().Pods(namespace).Get(ctx, probe.Name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "", err
	}); err != nil {
		return err
	}
	return waitFor(ctx, 2*time.Minute, "koord-manager's webhooks answering", func(ctx context.Context) (bool, error) {
		err := createProfile(ctx, true)
		return err == nil, err
	})
}

// row is one line of the report.
type row struct {
	fault      string
	recovery   time.Duration
	checks     int
	own        int
	detail     string
	violations []check.Violation
	err        error
}

// checks returns the objects the checker checked so far.
func checks(r check.Report) int {
	n := 0
	for _, res := range r.Results {
		n += res.Checks
	}
	return n
}

// TestFaults injects each fault while the workload churns, and checks that every invariant held throughout and
// that the system recovered; it reports a table of the faults, the checks made, the violations (which must be
// none) and the time to recover.
func TestFaults(t *testing.T) {
	ctx := t.Context()
	checker := check.New(check.Options{FormulaSettle: 30 * time.Second, QuotaRevokeDelay: quotaRevokeDelay})
	w, err := check.NewWatch(checker, env.kube, env.koord, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- w.Run(watchCtx, time.Second, func(v check.Violation) { t.Logf("VIOLATION %s %s: %s", v.Invariant, v.Object, v.Message) })
	}()

	churnCtx, stopChurn := context.WithCancel(ctx)
	load, err := startChurn(churnCtx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { load.cleanUp(context.Background()) })
	// Let the workload reach its steady state before the first fault.
	time.Sleep(20 * time.Second)

	selected, err := regexp.Compile(*only)
	if err != nil {
		t.Fatalf("-faults: %v", err)
	}
	var rows []row
	for i, f := range faults() {
		if f.long && !*long || !selected.MatchString(f.name) {
			continue
		}
		before := checker.Report()
		exits := replicaExits()
		start := time.Now()
		r := row{fault: f.name}
		var out finding
		out, r.err = f.inject(ctx)
		r.own, r.detail = out.checks, out.detail
		if err := recovered(ctx, i); err != nil {
			r.err = errors.Join(r.err, err)
		}
		r.recovery = time.Since(start)
		if n := replicaExits() - exits; n > 0 {
			r.detail = strings.TrimPrefix(r.detail+fmt.Sprintf("; %d replica exits (lease lost), started again", n), "; ")
		}
		// Give the invariants with a settle time a chance to see what the fault left behind.
		time.Sleep(15 * time.Second)
		after := checker.Report()
		r.checks = checks(after) - checks(before)
		r.violations = after.Violations()[len(before.Violations()):]
		rows = append(rows, r)
		t.Logf("fault %q: recovered in %v, %d checks, %d violations, %s, err %v", f.name, r.recovery.Truncate(10*time.Millisecond), r.checks, len(r.violations), r.detail, r.err)
	}

	stopChurn()
	load.stop(context.WithoutCancel(ctx))
	if *only == "" && load.revoked == 0 {
		t.Error("koord-scheduler's revoke controller evicted no pod of the quota tenants: quotas-within-runtime was checked on nothing")
	}
	if *only == "" && load.evicted == 0 {
		t.Error("the node agents evicted no BE pod under the memory hogs: ls-pods-not-evicted was checked on no koordlet eviction")
	}
	// The settle times of the slowest invariants (migrations 30s, formula 30s here) pass before the last look.
	time.Sleep(35 * time.Second)
	stopWatch()
	if err := <-watchDone; err != nil {
		t.Errorf("the invariant watch failed: %v", err)
	}
	final := checker.Report()

	report := writeReport(rows, final, load)
	t.Log("\n" + report)
	if path := reportPath(); path != "" {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
	for _, r := range rows {
		if r.err != nil {
			t.Errorf("fault %q: %v", r.fault, r.err)
		}
	}
	for _, v := range final.Violations() {
		t.Errorf("invariant %s violated by %s: %s", v.Invariant, v.Object, v.Message)
	}
}

// reportPath is where the report goes ($KOORD_RELIABILITY_REPORT), "" for the test log only.
func reportPath() string { return os.Getenv("KOORD_RELIABILITY_REPORT") }

// appendReport adds text to the report file at path.
func appendReport(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("open the report: %v", err)
		return
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString("\n" + text); err != nil {
		t.Errorf("write the report: %v", err)
	}
}

// writeReport renders the table of the faults and of the invariants.
func writeReport(rows []row, final check.Report, load *churn) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tRECOVERY\tINVARIANT CHECKS\tOWN CHECKS\tVIOLATIONS\tRESULT")
	var details []string
	for _, r := range rows {
		result := "ok"
		if r.err != nil {
			result = "FAILED: " + r.err.Error()
		}
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%s\n", r.fault, r.recovery.Round(100*time.Millisecond), r.checks, r.own, len(r.violations), result)
		if r.detail != "" {
			details = append(details, r.fault+": "+r.detail)
		}
	}
	if len(details) > 0 {
		fmt.Fprintln(tw)
		for _, d := range details {
			fmt.Fprintln(tw, d)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "INVARIANT\tEVALUATIONS\tCHECKS\tVIOLATIONS")
	for _, res := range final.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", res.Invariant, res.Evaluations, res.Checks, len(res.Violations))
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "\nworkload: %d pods created, %d deleted, %d requests failed (during the faults); %d pods revoked by the quota revoke controller, %d BE pods evicted by the node agents\n",
		load.created.Load(), load.deleted.Load(), load.failed.Load(), load.revoked, load.evicted)
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r.fault)
	}
	if !slices.ContainsFunc(rows, func(r row) bool { return r.err != nil || len(r.violations) > 0 }) {
		fmt.Fprintf(&b, "every invariant held through %d faults\n", len(names))
	}
	return b.String()
}
