//go:build realnode

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

package realnode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/hack/images/build"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/test/realnode/node"
	"github.com/koord-dev/koord/test/testenv"
)

// ImageTagEnv names the tag of the images `make images` built into bin/images (make test-realnode sets it).
const ImageTagEnv = "KOORD_IMAGE_TAG"

// burnerImage is the suite's CPU burner, imported with the pause image.
const burnerImage = "koord.dev/realnode-burner:v1"

// The test namespace.
const namespace = "realnode"

var env struct {
	root  string
	dir   string
	node  *node.Node
	kube  kubernetes.Interface
	koord versioned.Interface
	tag   string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if env.tag = os.Getenv(ImageTagEnv); env.tag == "" {
		fmt.Fprintf(os.Stderr, "$%s is empty: run the suite with `make test-realnode`, which builds the images and sets it\n", ImageTagEnv)
		return 1
	}
	if env.root, err = testenv.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env.dir, err = os.MkdirTemp("", "koord-realnode-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(env.dir)
		} else {
			fmt.Fprintf(os.Stderr, "the node's files and logs are kept in %s\n", env.dir)
		}
	}()
	images, err := testImages(ctx, filepath.Join(env.dir, "images"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "test images: %v\n", err)
		return 1
	}
	for _, c := range []string{"koord-manager", "koord-scheduler", "koord-descheduler", "koordlet"} {
		images = append(images, filepath.Join(env.root, "bin", "images", c+".tar"))
	}
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	n, err := node.Start(startCtx, node.Options{
		BinDir: filepath.Join(env.root, "bin"), NodeBinDir: filepath.Join(env.root, "bin", "realnode"),
		Dir: filepath.Join(env.dir, "node"), Images: images,
	})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the node: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "node up in %s\n", time.Since(start).Round(time.Second))
	env.node = n
	env.kube = kubernetes.NewForConfigOrDie(n.Config)
	env.koord = versioned.NewForConfigOrDie(n.Config)

	code = m.Run()
	if err := n.Failed(); err != nil {
		fmt.Fprintf(os.Stderr, "a node component failed during the tests: %v\n", err)
		code = 1
	}
	stopped := time.Now()
	if err := n.Stop(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "stop the node: %v\n", err)
		code = 1
	}
	fmt.Fprintf(os.Stderr, "node down in %s\n", time.Since(stopped).Round(time.Second))
	if left := n.Leftovers(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "the node left on the host: %s\n", strings.Join(left, "; "))
		code = 1
	}
	return code
}

// testImages builds the pause image (under containerd's sandbox image name) and the burner image from the
// programs under images/, and returns their archives.
func testImages(ctx context.Context, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ca := "/etc/ssl/certs/ca-certificates.crt"
	var archives []string
	for name, ref := range map[string]string{"pause": node.SandboxImage, "burner": burnerImage} {
		bin := filepath.Join(dir, name)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./test/realnode/images/"+name)
		cmd.Dir = env.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", name, err, out)
		}
		p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
		idx, err := build.Build(build.Spec{Component: name, CABundle: ca, Binaries: []build.Binary{{Platform: p, Path: bin}}})
		if err != nil {
			return nil, err
		}
		archive := filepath.Join(dir, name+".tar")
		if err := build.WriteArchive(archive, ref, idx, p); err != nil {
			return nil, err
		}
		archives = append(archives, archive)
	}
	return archives, nil
}

// helm runs bin/helm against the node with its state in the suite's directory.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	home := filepath.Join(env.dir, "helm")
	cmd := exec.CommandContext(t.Context(), filepath.Join(env.root, "bin", "helm"), append(args, "--kubeconfig", env.node.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("helm %s took %s", args[0], time.Since(start).Round(time.Second))
	return stdout.String()
}

// eventually polls cond every half second until it holds, failing the test after timeout with what cond last
// said.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, state := cond(ctx)
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s; last seen: %s", what, timeout, last)
	}
}

// installValues are the chart settings of the suite, over the Koordinator values file: Koord's images, one
// replica each with small requests (the node has two cores), koordlet's default gates (the file turns BE CPU
// eviction on, which would evict the suite's BE burner), and short report and aggregation windows.
// koord-descheduler is installed as the chart's default has it: MigrationController only (LowNodeLoad off), so
// it moves no pod of the suite; helm install --wait then checks that its pod starts and becomes Ready.
func installValues() []string {
	set := []string{
		"imageRepositoryHost=ghcr.io",
		"manager.image.repository=koord-dev/koord-manager", "manager.image.tag=" + env.tag,
		"scheduler.image.repository=koord-dev/koord-scheduler", "scheduler.image.tag=" + env.tag,
		"descheduler.image.repository=koord-dev/koord-descheduler", "descheduler.image.tag=" + env.tag,
		"koordlet.image.repository=koord-dev/koordlet", "koordlet.image.tag=" + env.tag,
		"scheduler.resources.requests.cpu=100m", "manager.resources.requests.cpu=100m",
		"descheduler.resources.requests.cpu=100m",
		"koordlet.features=",
		// koordlet reads kubelet's CPU manager state under its root directory.
		"koordlet.hostDirs.kubeletLibDir=" + env.node.KubeletRootDir(),
		// koordlet registers with containerd as an NRI plugin on its socket.
		"koordlet.hostDirs.nriSocketDir=" + env.node.NRISocketDir(),
	}
	args := []string{"-f", filepath.Join(env.root, "charts", "koord", "ci", "koordinator-values.yaml")}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return append(args, "--set-json", `sloControllerConfig={"colocation-config":{"metricReportIntervalSeconds":5,"metricAggregateDurationSeconds":10,"cpuReclaimThresholdPercent":100,"memoryReclaimThresholdPercent":90}}`)
}

func TestRealNode(t *testing.T) {
	klog.SetOutput(os.Stderr)
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"helm install: the DaemonSet and Deployments become Ready", testInstall},
		{"koordlet reports the machine's topology as the NodeResourceTopology", testNodeTopology},
		{"koordlet's image loads NVML through its C runtime and says the node has no NVIDIA driver", testNVMLLoader},
		{"with colocation on the node gets batch resources", testColocationOn},
		// Before the LS burner: koord-scheduler's LoadAwareScheduling (usage threshold 65%) would keep the BE
		// pod off a node already half busy.
		// Before the burners, for the same reason.
		{"a BE container starts with its CFS quota already set (koordlet's NRI hook)", testQuotaAtStart},
		{"a profiled pod is mutated, scheduled by koord-scheduler and gets BE cgroup settings", testBEPod},
		{"NodeMetric reports a real pod's usage as its cgroup accounts it", testReportedUsage},
		{"BE suppression lowers a BE burner's CPU while an LS burner keeps its share", testSuppression},
		{"the coreSched CPU QoS policy makes the besteffort cgroup idle (cpu.idle), and turned off undoes it", testCPUIdle},
		{"koordlet samples the pressure stall information (PSI) of real pods on cgroup v1", testPodPressure},
		{"a real Prometheus scraping koordlet answers koordlet's dashboard queries with data", testKoordletDashboards},
		{"helm uninstall removes Koord", testUninstall},
	}
	for _, s := range steps {
		start := time.Now()
		ok := t.Run(s.name, s.run)
		t.Logf("%s: %s", s.name, time.Since(start).Round(time.Second))
		if !ok {
			t.FailNow()
		}
	}
}
