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
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/test/testenv"
)

// Leader election of the replicas in TestLeaderOnlyControllers: short, so that a takeover takes seconds.
const (
	haLeaseDuration = 4 * time.Second
	haRenewDeadline = 3 * time.Second
	haRetryPeriod   = 500 * time.Millisecond
)

// TestLeaderOnlyControllers runs two koord-scheduler processes (the binary, with leader election) and shows
// that the controllers inside the scheduler act only in the leader:
//   - while A leads, B writes nothing: no PodGroup or ElasticQuota status (B's cache lacks the pods waiting in
//     A's Permit, so its quota status would differ from A's and the two would fight), no Reservation write, no
//     eviction;
//   - A alone revokes an over-used quota's pods;
//   - A is killed with SIGKILL: B takes the lease within the lease duration of A's last renewal, schedules the
//     gang again, writes the quota status, and evicts nothing twice.
func TestLeaderOnlyControllers(t *testing.T) {
	f := newFixture(t)
	f.runTerminatingPodsToEnd()
	cfg := f.haConfig(t)

	a := f.startReplica(t, "a", cfg)
	a.eventuallyLeading(t)
	b := f.startReplica(t, "b", cfg)
	b.eventuallyServing(t)

	// An over-used quota: 4 pods of 1Gi bound, then its max lowered to 2Gi. The leader's revoker evicts 2.
	node := f.node("a", "0", 0, nil)
	quota := f.quota("revoked", "0", "4Gi")
	var revoked []*corev1.Pod
	for i := range 4 {
		revoked = append(revoked, f.quotaPod(fmt.Sprintf("revoked-%d", i), quota, nil))
	}
	for _, p := range revoked {
		if got := f.boundNode(p); got != node {
			t.Fatalf("pod %s bound to %s, want %s", p.Name, got, node)
		}
	}
	f.setQuotaMaxMemory(quota, "2Gi")
	f.eventually("the over-used quota was not revoked", func(context.Context) (bool, error) {
		return f.countBound(quota) == 2, nil
	})

	// A gang that waits in Permit: NonStrict, 3 members of 4 cpus, charged to a quota, on a node with room for
	// 2 (10 cpus, 0.2 taken). Two wait in A's Permit, counted in A's quota used and not in B's.
	gangQuota := f.quota("gang", "0", "40Gi")
	for i := range 3 {
		f.pod(fmt.Sprintf("train-%d", i), cpu("4"), func(p *corev1.Pod) {
			p.Labels = map[string]string{extension.LabelQuotaName: gangQuota}
			p.Annotations = map[string]string{
				extension.AnnotationGangName:     "train",
				extension.AnnotationGangMinNum:   "3",
				extension.AnnotationGangMode:     string(extension.GangModeNonStrict),
				extension.AnnotationGangWaitTime: "10m",
			}
		})
	}
	f.eventuallyQuotaUsedCPU(gangQuota, "8")
	// Reservations the leader's controller handles: one that fits nowhere (too big), which it keeps Pending.
	f.reservation("ha", "50", nil)
	a.eventuallyWrote(t, "reservation")

	// B stood by all along, and a second of B's status interval more changes nothing.
	time.Sleep(2 * time.Second)
	for _, c := range []string{"podgroup", "elasticquota", "revoker", "reservation"} {
		if got := b.metric(t, "koord_scheduler_controller_writes_total", "controller", c); got != 0 {
			t.Errorf("the standby wrote %v times as controller %s", got, c)
		}
	}
	if got := b.metric(t, "koord_scheduler_leading"); got != 0 {
		t.Errorf("koord_scheduler_leading of the standby = %v, want 0", got)
	}
	revokedByA := a.metric(t, "koord_scheduler_controller_writes_total", "controller", "revoker")
	if revokedByA != 2 {
		t.Errorf("the leader evicted %v pods, want 2", revokedByA)
	}

	// Kill A; B takes over within the lease duration of A's last renewal.
	before := f.lease(t)
	a.kill(t)
	b.eventuallyLeading(t)
	after := f.lease(t)
	if *after.Spec.HolderIdentity == *before.Spec.HolderIdentity {
		t.Fatalf("the lease is still held by %s", *before.Spec.HolderIdentity)
	}
	takeover := after.Spec.AcquireTime.Sub(before.Spec.RenewTime.Time)
	t.Logf("takeover %v after the old leader's last renewal (lease duration %v, retry period %v)", takeover, haLeaseDuration, haRetryPeriod)
	if takeover > haLeaseDuration+2*haRetryPeriod+time.Second {
		t.Errorf("B took the lease %v after A's last renewal; the lease lasts %v", takeover, haLeaseDuration)
	}

	// B schedules the gang again (A's assumptions died with it), its controllers handle new objects, and it
	// evicts nothing more.
	f.eventuallyQuotaUsedCPU(gangQuota, "8")
	f.eventuallyRuntime(f.quota("after", "0", "1Gi"), "0")
	b.eventuallyWrote(t, "elasticquota")
	f.reservation("after", "50", nil)
	b.eventuallyWrote(t, "reservation")
	f.consistentlyBound(quota, 2, 3*time.Second)
	if got := b.metric(t, "koord_scheduler_controller_writes_total", "controller", "revoker"); got != 0 {
		t.Errorf("the new leader evicted %v pods of a quota the old leader had revoked already", got)
	}
}

// haConfig writes the shipped configuration with leader election on (a lease of the test's own, short
// durations) and returns its path.
func (f *fixture) haConfig(t *testing.T) string {
	t.Helper()
	user, err := env.UserWithRoles(t.Context(), schedulerUser, filepath.Join("config", "rbac", "koord-scheduler", "role.yaml"),
		"system:kube-scheduler", "system:volume-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(user, kubeconfig); err != nil {
		t.Fatal(err)
	}
	data, err := configFor(filepath.Join(env.RepoRoot, "config", "scheduler", "koord-scheduler-config.yaml"), kubeconfig,
		requestsOnly,
		pluginArgs{plugin: "ElasticQuota", fields: map[string]any{"monitorAllQuotas": true, "delayEvictTime": "1s"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["leaderElection"] = map[string]any{
		"leaderElect":       true,
		"resourceLock":      "leases",
		"resourceName":      f.leaseName(),
		"resourceNamespace": leaseNamespace,
		"leaseDuration":     haLeaseDuration.String(),
		"renewDeadline":     haRenewDeadline.String(),
		"retryPeriod":       haRetryPeriod.String(),
	}
	if data, err = yaml.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// replica is a koord-scheduler process of the test.
type replica struct {
	name string
	cmd  *exec.Cmd
	port int
	log  string
	done chan struct{}
}

// startReplica starts bin/koord-scheduler with config, serving /healthz and /metrics on a free port. It is
// killed when the test ends; its log is printed when the test fails.
func (f *fixture) startReplica(t *testing.T, name, config string) *replica {
	t.Helper()
	binDir, err := testenv.BinDir(env.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	r := &replica{name: name, port: port, log: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	out, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(filepath.Join(binDir, "koord-scheduler"), "--config="+config, "--secure-port=0",
		"--port="+strconv.Itoa(port), "--address=127.0.0.1", "-v=2")
	r.cmd.Stdout, r.cmd.Stderr = out, out
	if err := r.cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("start koord-scheduler %s: %v (make build builds it)", name, err)
	}
	go func() {
		_ = r.cmd.Wait()
		_ = out.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.kill(t)
		if t.Failed() {
			r.printLog(t)
		}
	})
	return r
}

// kill kills the process with SIGKILL and waits for it.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
		return
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Errorf("kill koord-scheduler %s: %v", r.name, err)
	}
	<-r.done
}

// printLog logs the last 200 lines of the replica's log.
func (r *replica) printLog(t *testing.T) {
	data, err := os.ReadFile(r.log)
	if err != nil {
		t.Logf("read the log of %s: %v", r.name, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	lines = lines[max(0, len(lines)-200):]
	t.Logf("koord-scheduler %s, last lines of its log:\n%s", r.name, strings.Join(lines, "\n"))
}

// metric returns the replica's sample name with the labels (name, value pairs) from its /metrics; 0 while it
// has no such series.
func (r *replica) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	v, err := r.scrape(t.Context(), name, labels...)
	if err != nil {
		t.Fatalf("metrics of %s: %v", r.name, err)
	}
	return v
}

func (r *replica) scrape(ctx context.Context, name string, labels ...string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", r.port), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bufio.NewReader(resp.Body))
	if err != nil {
		return 0, fmt.Errorf("parse: %w", err)
	}
	family, ok := families[name]
	if !ok {
		return 0, nil
	}
series:
	for _, m := range family.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if got[labels[i]] != labels[i+1] {
				continue series
			}
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), nil
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), nil
		}
	}
	return 0, nil
}

// eventuallyServing waits until the replica serves its metrics.
func (r *replica) eventuallyServing(t *testing.T) {
	t.Helper()
	r.poll(t, "serve /metrics", func(ctx context.Context) (bool, error) {
		_, err := r.scrape(ctx, "koord_scheduler_leading")
		return err == nil, nil
	})
}

// eventuallyLeading waits until the replica says it leads.
func (r *replica) eventuallyLeading(t *testing.T) {
	t.Helper()
	r.poll(t, "lead", func(ctx context.Context) (bool, error) {
		v, err := r.scrape(ctx, "koord_scheduler_leading")
		return err == nil && v == 1, nil
	})
}

// eventuallyWrote waits until the replica's controller has written to the API.
func (r *replica) eventuallyWrote(t *testing.T, controller string) {
	t.Helper()
	r.poll(t, "write as controller "+controller, func(ctx context.Context) (bool, error) {
		v, err := r.scrape(ctx, "koord_scheduler_controller_writes_total", "controller", controller)
		return err == nil && v > 0, nil
	})
}

func (r *replica) poll(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-r.done:
			return false, fmt.Errorf("koord-scheduler %s exited", r.name)
		default:
		}
		return cond(ctx)
	})
	if err != nil {
		t.Fatalf("koord-scheduler %s did not %s: %v", r.name, what, err)
	}
}

// leaseNamespace is where the shipped role lets koord-scheduler keep its lease.
const leaseNamespace = "koordinator-system"

// leaseName is the test's own lease, so that runs do not share one.
func (f *fixture) leaseName() string { return "koord-scheduler-" + f.namespace }

// lease returns the replicas' leader election lease.
func (f *fixture) lease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: leaseNamespace, Name: f.leaseName()}, l); err != nil {
		t.Fatalf("get the lease: %v", err)
	}
	return l
}

// setQuotaMaxMemory sets the memory of quota's max.
func (f *fixture) setQuotaMaxMemory(quota, memory string) {
	f.t.Helper()
	eq := &schedv1alpha1.ElasticQuota{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.namespace, Name: quota}, eq); err != nil {
		f.t.Fatal(err)
	}
	eq.Spec.Max[corev1.ResourceMemory] = resource.MustParse(memory)
	if err := env.Client.Update(f.t.Context(), eq); err != nil {
		f.t.Fatalf("update ElasticQuota %s: %v", quota, err)
	}
}

// eventuallyQuotaUsedCPU waits until quota's status says it uses cpus.
func (f *fixture) eventuallyQuotaUsedCPU(quota, cpus string) {
	f.t.Helper()
	want := resource.MustParse(cpus)
	f.eventually(fmt.Sprintf("quota %s does not use %s cpus", quota, cpus), func(ctx context.Context) (bool, error) {
		eq := &schedv1alpha1.ElasticQuota{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: quota}, eq); err != nil {
			return false, err
		}
		got, ok := eq.Status.Used[corev1.ResourceCPU]
		return ok && got.Cmp(want) == 0, nil
	})
}

// consistentlyBound fails the test when quota's bound pods are not n at any time within d.
func (f *fixture) consistentlyBound(quota string, n int, d time.Duration) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.t.Context(), 200*time.Millisecond, d, true, func(context.Context) (bool, error) {
		if got := f.countBound(quota); got != n {
			return false, fmt.Errorf("quota %s has %d pods bound, want %d", quota, got, n)
		}
		return false, nil
	})
	if !wait.Interrupted(err) {
		f.t.Fatal(err)
	}
}
