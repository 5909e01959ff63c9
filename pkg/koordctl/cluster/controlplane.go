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
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Names in the kubeconfig.
const (
	kubeconfigCluster = "koord"
	kubeconfigUser    = "koord-admin"
	kubeconfigContext = "koord"
)

// Client limits of the administrator configuration: creating a thousand nodes should not wait on the client.
const (
	adminQPS   = 500
	adminBurst = 1000
)

// controlPlane is etcd and kube-apiserver, started through envtest's control plane (which provisions the
// serving certificates and client-certificate users), with their output in the log directory.
type controlPlane struct {
	cp   *envtest.ControlPlane
	logs []*os.File
	// config reaches the apiserver as a member of system:masters.
	config *rest.Config
	// kubeconfig is config as a kubeconfig file.
	kubeconfig []byte
	// apiserver is kube-apiserver once restartAPIServer replaced envtest's process with one of its own; nil
	// before.
	apiserver *process
}

// startControlPlane starts etcd on etcdPort and kube-apiserver on apiserverPort, both on 127.0.0.1, with their
// data under runDir, and provisions the administrator user.
//
// With auditLog set, kube-apiserver writes the metadata of every request to that file, one JSON event per line
// once the response is complete (auditPolicy).
func startControlPlane(ctx context.Context, binDir, runDir, logDir string, etcdPort, apiserverPort int, auditLog string) (_ *controlPlane, retErr error) {
	c := &controlPlane{}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, c.stop())
		}
	}()
	etcdLog, err := os.OpenFile(filepath.Join(logDir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open etcd log: %w", err)
	}
	c.logs = append(c.logs, etcdLog)
	apiLog, err := os.OpenFile(filepath.Join(logDir, "kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open kube-apiserver log: %w", err)
	}
	c.logs = append(c.logs, apiLog)

	etcdData := filepath.Join(runDir, "etcd")
	certDir := filepath.Join(runDir, "kube-apiserver")
	for _, d := range []string{etcdData, certDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("create control-plane directory: %w", err)
		}
	}
	etcd := &envtest.Etcd{
		Path:         filepath.Join(binDir, "etcd"),
		DataDir:      etcdData,
		URL:          &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(etcdPort)},
		StartTimeout: time.Minute,
		StopTimeout:  stopGrace,
		Out:          etcdLog,
		Err:          etcdLog,
	}
	// A throwaway local cluster does not need its writes on disk before they are acknowledged.
	etcd.Configure().Set("unsafe-no-fsync", "true")
	apiserver := &envtest.APIServer{
		Path:          filepath.Join(binDir, "kube-apiserver"),
		CertDir:       certDir,
		SecureServing: envtest.SecureServing{ListenAddr: envtest.ListenAddr{Address: "127.0.0.1", Port: strconv.Itoa(apiserverPort)}},
		StartTimeout:  2 * time.Minute,
		StopTimeout:   stopGrace,
		Out:           apiLog,
		Err:           apiLog,
	}
	// kube-controller-manager runs without its node lifecycle controller (see controllerManagerArgs), so
	// nothing would remove the not-ready taint TaintNodesByCondition puts on new nodes; and the fake nodes mount
	// no ServiceAccount tokens, which the ServiceAccount plugin would add to every pod (envtest turns it off
	// too).
	apiserver.Configure().Set("disable-admission-plugins", "ServiceAccount", "TaintNodesByCondition")
	if auditLog != "" {
		policy := filepath.Join(certDir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return nil, fmt.Errorf("write the audit policy: %w", err)
		}
		apiserver.Configure().
			Set("audit-policy-file", policy).
			Set("audit-log-path", auditLog).
			Set("audit-log-format", "json").
			Set("audit-log-maxsize", "0")
	}
	c.cp = &envtest.ControlPlane{Etcd: etcd, APIServer: apiserver}
	if err := c.cp.Start(); err != nil {
		return nil, fmt.Errorf("start etcd and kube-apiserver (logs in %s): %w", logDir, err)
	}
	admin, err := c.cp.AddUser(envtest.User{Name: kubeconfigUser, Groups: []string{"system:masters"}},
		&rest.Config{QPS: adminQPS, Burst: adminBurst})
	if err != nil {
		return nil, fmt.Errorf("provision the administrator: %w", err)
	}
	c.config = admin.Config()
	if c.kubeconfig, err = kubeconfigFor(c.config); err != nil {
		return nil, err
	}
	if err := waitServing(ctx, c.config); err != nil {
		return nil, err
	}
	return c, nil
}

// auditPolicy records the metadata of every request (who, verb, resource, response code; no bodies) once,
// when its response is complete, so that each line of the audit log is one request.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
`

// pids returns the process ids of etcd and kube-apiserver, by name; a process not found is left out.
func (c *controlPlane) pids() map[string]int {
	pids := map[string]int{}
	if c.cp == nil {
		return pids // stopped
	}
	if c.apiserver != nil && !c.apiserver.exited() {
		pids["kube-apiserver"] = c.apiserver.pid()
	} else if pid, _, err := findProcess(c.cp.APIServer.Path, c.cp.APIServer.CertDir); err == nil {
		pids["kube-apiserver"] = pid
	}
	if pid, _, err := findProcess(c.cp.Etcd.Path, c.cp.Etcd.DataDir); err == nil {
		pids["etcd"] = pid
	}
	return pids
}

// restartEtcd stops etcd (SIGTERM) and starts it again on the same data directory and port; kube-apiserver
// reconnects by itself.
func (c *controlPlane) restartEtcd() error {
	if err := c.cp.Etcd.Stop(); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	if err := c.cp.Etcd.Start(); err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	return nil
}

// restartAPIServer kills kube-apiserver with SIGKILL, as a crash would, and starts the same command line again:
// the same certificates, users and etcd, its log appended to logPath. envtest's control plane cannot do it: its
// restart provisions a new CA, which every kubeconfig of the cluster would then fail against.
func (c *controlPlane) restartAPIServer(ctx context.Context, logPath string) error {
	var args []string
	if c.apiserver != nil {
		args = c.apiserver.args
		c.apiserver.kill()
	} else {
		pid, cmdline, err := findProcess(c.cp.APIServer.Path, c.cp.APIServer.CertDir)
		if err != nil {
			return fmt.Errorf("find kube-apiserver: %w", err)
		}
		args = cmdline[1:]
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("kill kube-apiserver: %w", err)
		}
		// envtest reaps its child; the process is gone when its /proc entry is.
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
			return errors.Is(err, fs.ErrNotExist), nil
		}); err != nil {
			return fmt.Errorf("wait for kube-apiserver %d to exit: %w", pid, err)
		}
	}
	p, err := startProcess("kube-apiserver", c.cp.APIServer.Path, args, logPath, true)
	if err != nil {
		return err
	}
	c.apiserver = p
	return waitServing(ctx, c.config)
}

// findProcess returns the pid and command line of the process running the binary path with an argument that
// names dir.
func findProcess(path, dir string) (int, []string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		if args[0] == path && slices.ContainsFunc(args[1:], func(a string) bool { return strings.Contains(a, dir) }) {
			return pid, args, nil
		}
	}
	return 0, nil, fmt.Errorf("no process of %s with an argument naming %s", path, dir)
}

// stop stops kube-apiserver, then etcd, and closes their logs.
func (c *controlPlane) stop() error {
	var errs []error
	if c.apiserver != nil {
		// Ours, since a restart: stopped before envtest stops etcd (it sees its own process gone).
		if err := c.apiserver.stop(clock.RealClock{}, stopGrace); err != nil {
			errs = append(errs, err)
		}
		c.apiserver = nil
	}
	if c.cp != nil {
		if err := c.cp.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop etcd and kube-apiserver: %w", err))
		}
		c.cp = nil
	}
	for _, f := range c.logs {
		_ = f.Close()
	}
	c.logs = nil
	return errors.Join(errs...)
}

// kubeconfigFor returns a kubeconfig file with one cluster (server and CA data), one user (client certificate
// and key) and one context, the current one. kubectl of any version since 1.20 reads it.
func kubeconfigFor(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[kubeconfigCluster] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[kubeconfigUser] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[kubeconfigContext] = &clientcmdapi.Context{Cluster: kubeconfigCluster, AuthInfo: kubeconfigUser}
	kc.CurrentContext = kubeconfigContext
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	return data, nil
}

// servingTimeout bounds how long kube-apiserver may take to serve after a start or a restart.
const servingTimeout = 2 * time.Minute

// waitServing waits until kube-apiserver serves: /readyz answers 200 (etcd reachable, the post-start hooks
// done) and the default namespace can be read.
func waitServing(ctx context.Context, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, servingTimeout, true, func(ctx context.Context) (bool, error) {
		if _, last = kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); last != nil {
			last = fmt.Errorf("/readyz: %w", last)
			return false, nil
		}
		_, last = kube.CoreV1().Namespaces().Get(ctx, corev1.NamespaceDefault, metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for kube-apiserver to serve: %w", errors.Join(err, last))
	}
	return nil
}

// watchAPIServer polls /readyz every interval until ctx ends and calls fail once when it has failed
// failures times in a row: etcd or kube-apiserver has stopped. While paused returns true (a deliberate restart
// of etcd or kube-apiserver), failures are not counted.
func watchAPIServer(ctx context.Context, clk clock.WithTicker, cfg *rest.Config, interval time.Duration, failures int, paused func() bool, fail func(error)) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail(fmt.Errorf("kubernetes client: %w", err))
		return
	}
	t := clk.NewTicker(interval)
	defer t.Stop()
	bad := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if paused() {
			bad = 0
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, interval)
		_, err := kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			bad = 0
			continue
		}
		if bad++; bad >= failures {
			fail(fmt.Errorf("kube-apiserver stopped answering /readyz: %w", err))
			return
		}
	}
}
