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

package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/test/testenv"
)

// TestStartStop brings a 3-node cluster up from the binaries, uses it through the kubeconfig it wrote the way
// kubectl would, and checks that Stop leaves no process, run directory or kubeconfig behind.
func TestStartStop(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	opts := DefaultOptions()
	binDir, err := testenv.LocalClusterBinDir(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("binaries: %v", err)
	}
	opts.BinDir = binDir
	opts.StateDir = filepath.Join(t.TempDir(), "state")
	opts.KubeconfigOut = filepath.Join(t.TempDir(), "koord.kubeconfig")
	opts.Nodes = 3

	c, err := Start(ctx, opts, nil)
	if err != nil {
		t.Fatalf("Start() = %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	if c.Kubeconfig() != opts.KubeconfigOut {
		t.Errorf("Kubeconfig() = %s, want %s", c.Kubeconfig(), opts.KubeconfigOut)
	}

	// Everything below goes through the kubeconfig file, as kubectl does.
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.KubeconfigOut)
	if err != nil {
		t.Fatalf("load the written kubeconfig: %v", err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	koord := versioned.NewForConfigOrDie(cfg)

	t.Run("nodes are Ready", func(t *testing.T) {
		nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeLabel + "=" + NodeLabelValue})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if !nodeReady(n) {
				t.Errorf("node %s is not Ready: %+v", n.Name, n.Status.Conditions)
			}
			if len(n.Spec.Taints) > 0 {
				t.Errorf("node %s has taints %v; pods would not land", n.Name, n.Spec.Taints)
			}
			got = append(got, n.Name)
		}
		if diff := cmp.Diff(c.NodeNames(), got); diff != "" {
			t.Errorf("nodes (-want,+got):\n%s", diff)
		}
	})

	t.Run("every node has a NodeMetric with status", func(t *testing.T) {
		metrics, err := koord.SloV1alpha1().NodeMetrics().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range metrics.Items {
			if m.Status.UpdateTime == nil || m.Status.NodeMetric == nil || m.Status.NodeMetric.NodeUsage.ResourceList.Cpu().IsZero() {
				t.Errorf("NodeMetric %s has no usage: %+v", m.Name, m.Status)
			}
			got = append(got, m.Name)
		}
		if diff := cmp.Diff(c.NodeNames(), got); diff != "" {
			t.Errorf("NodeMetrics (-want,+got):\n%s", diff)
		}
	})

	t.Run("kubectl-style table of a Koord CRD", func(t *testing.T) {
		// kubectl get asks the server for a Table and prints its columns.
		raw, err := koord.SloV1alpha1().RESTClient().Get().Resource("nodemetrics").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		table := &metav1.Table{}
		if err := json.Unmarshal(raw, table); err != nil {
			t.Fatalf("decode table: %v", err)
		}
		var columns []string
		for _, col := range table.ColumnDefinitions {
			columns = append(columns, col.Name)
		}
		if diff := cmp.Diff([]string{"Name", "UpdateTime", "Age"}, columns); diff != "" {
			t.Errorf("columns (-want,+got):\n%s", diff)
		}
		if len(table.Rows) != len(c.NodeNames()) {
			t.Errorf("table has %d rows, want %d", len(table.Rows), len(c.NodeNames()))
		}
	})

	t.Run("kubectl", func(t *testing.T) {
		path, err := exec.LookPath("kubectl")
		if err != nil {
			t.Logf("kubectl is not installed; the Table request above is what it would send")
			return
		}
		out, err := exec.CommandContext(ctx, path, "--kubeconfig="+opts.KubeconfigOut, "get", "nodes,nodemetrics,nodeslos", "-o", "name").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get: %v\n%s", err, out)
		}
		var want []string
		for _, kind := range []string{"node", "nodemetric.slo.koordinator.sh", "nodeslo.slo.koordinator.sh"} {
			for _, n := range c.NodeNames() {
				want = append(want, kind+"/"+n)
			}
		}
		if diff := cmp.Diff(want, strings.Fields(string(out))); diff != "" {
			t.Errorf("kubectl get (-want,+got):\n%s", diff)
		}
	})

	t.Run("the sample BE pod is admitted and runs", func(t *testing.T) {
		pod := &corev1.Pod{}
		if err := yaml.UnmarshalStrict([]byte(SampleBEPod), pod); err != nil {
			t.Fatal(err)
		}
		created, err := kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create the sample BE pod: %v", err)
		}
		// koord-manager's mutating webhook records the batch resources; its presence shows the webhook ran.
		if _, ok := created.Annotations[extension.AnnotationExtendedResourceSpec]; !ok {
			t.Errorf("pod annotations %v lack %s: the mutating webhook did not run", created.Annotations, extension.AnnotationExtendedResourceSpec)
		}
		var last *corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			last, err = kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			return err == nil && last.Status.Phase == corev1.PodRunning, nil
		})
		if err != nil {
			t.Fatalf("pod not Running: %v; last seen %+v", err, last.Status)
		}
		if !slices.Contains(c.NodeNames(), last.Spec.NodeName) {
			t.Errorf("pod runs on %q, want a fake node", last.Spec.NodeName)
		}
	})

	t.Run("a killed component is restarted without failing the cluster", func(t *testing.T) {
		wantComponents := []string{"kube-controller-manager", "kube-scheduler", "koord-manager", "koord-scheduler", "koord-descheduler", "kwok"}
		if diff := cmp.Diff(wantComponents, c.Components()); diff != "" {
			t.Fatalf("Components() (-want,+got):\n%s", diff)
		}
		before := processesNaming(filepath.Join(opts.BinDir, "koord-descheduler"))
		if err := c.Restart(ctx, "koord-descheduler"); err != nil {
			t.Fatalf("Restart() = %v", err)
		}
		after := processesNaming(filepath.Join(opts.BinDir, "koord-descheduler"))
		if len(before) != 1 || len(after) != 1 || before[0] == after[0] {
			t.Errorf("koord-descheduler processes before %v and after %v the restart, want one each, different", before, after)
		}
		if err := c.Err(); err != nil {
			t.Errorf("the cluster failed after the restart: %v", err)
		}
		if err := c.Restart(ctx, "koord-nothing"); err == nil || !strings.Contains(err.Error(), "not a component") {
			t.Errorf("Restart(koord-nothing) = %v, want an error saying it is not a component", err)
		}
	})

	t.Run("a killed component stays down until restarted", func(t *testing.T) {
		if err := c.Kill("koord-descheduler"); err != nil {
			t.Fatalf("Kill() = %v", err)
		}
		if got := processesNaming(filepath.Join(opts.BinDir, "koord-descheduler")); len(got) != 0 {
			t.Errorf("koord-descheduler processes after Kill: %v", got)
		}
		if err := c.Restart(ctx, "koord-descheduler"); err != nil {
			t.Fatalf("Restart() after Kill = %v", err)
		}
		if got := processesNaming(filepath.Join(opts.BinDir, "koord-descheduler")); len(got) != 1 {
			t.Errorf("koord-descheduler processes after the restart: %v, want one", got)
		}
		if err := c.Err(); err != nil {
			t.Errorf("the cluster failed after Kill and Restart: %v", err)
		}
	})

	t.Run("kube-apiserver restarts under a running cluster", func(t *testing.T) {
		for range 2 { // envtest's process, then the cluster's own
			if err := c.RestartAPIServer(ctx); err != nil {
				t.Fatalf("RestartAPIServer() = %v", err)
			}
			kube := kubernetes.NewForConfigOrDie(c.RESTConfig())
			if _, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
				t.Errorf("list nodes after the kube-apiserver restart: %v", err)
			}
		}
		if err := c.Err(); err != nil {
			t.Errorf("the cluster failed after the kube-apiserver restarts: %v", err)
		}
	})

	t.Run("etcd restarts under a running cluster", func(t *testing.T) {
		if err := c.RestartEtcd(ctx); err != nil {
			t.Fatalf("RestartEtcd() = %v", err)
		}
		kube := kubernetes.NewForConfigOrDie(c.RESTConfig())
		if _, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list nodes after the etcd restart: %v", err)
		}
		if err := c.Err(); err != nil {
			t.Errorf("the cluster failed after the etcd restart: %v", err)
		}
	})

	t.Run("a second cluster on the same state directory is refused", func(t *testing.T) {
		second := opts
		second.KubeconfigOut = filepath.Join(t.TempDir(), "second.kubeconfig")
		_, err := Start(ctx, second, nil)
		var running *AlreadyRunningError
		if !errors.As(err, &running) || running.PID != os.Getpid() {
			t.Fatalf("second Start() = %v, want an *AlreadyRunningError naming this process", err)
		}
		// The refused start left the running cluster alone.
		if _, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("the running cluster stopped answering: %v", err)
		}
		if _, err := os.Stat(filepath.Join(opts.StateDir, RunDir)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	})

	if err := c.Err(); err != nil {
		t.Errorf("the cluster failed while running: %v", err)
	}
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop() = %v", err)
	}
	if left := processesNaming(opts.StateDir + "/"); len(left) > 0 {
		t.Errorf("processes left after Stop: %v", left)
	}
	for _, gone := range []string{
		filepath.Join(opts.StateDir, RunDir), filepath.Join(opts.StateDir, PIDFile), filepath.Join(opts.StateDir, KubeconfigFile),
		filepath.Join(opts.StateDir, SampleBEPodFile), opts.KubeconfigOut,
	} {
		if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there after Stop (%v)", gone, err)
		}
	}
	logs, err := os.ReadDir(filepath.Join(opts.StateDir, LogDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range logs {
		names = append(names, l.Name())
	}
	want := []string{"etcd.log", "koord-descheduler.log", "koord-manager.log", "koord-scheduler.log", "kube-apiserver.log", "kube-controller-manager.log", "kube-scheduler.log", "kwok.log"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("logs kept (-want,+got):\n%s", diff)
	}
}
