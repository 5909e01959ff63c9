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

// Package node runs a real single-node Kubernetes cluster on this machine for the real-node suite: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, containerd with runc and the CNI bridge, kubelet and
// kube-proxy, all from binaries built from the Go modules Koord pins. ../../shared/reference/real-node.md (in
// the project's shared notes) and docs/install.md explain the settings. Start refuses to run beside another
// kubelet; Stop takes everything down and returns the host to the state Start found it in (processes, mounts,
// cgroups, iptables, the bridge, network namespaces, ip_forward), and Leftovers says what, if anything, is left.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

// Network of the cluster.
const (
	// ServiceCIDR holds the ClusterIPs; the kubernetes Service gets its first address.
	ServiceCIDR = "10.96.0.0/16"
	// PodCIDR is the bridge's subnet.
	PodCIDR = "10.88.0.0/16"
	// Bridge is the CNI bridge's name (not cni0, so that another CNI setup on the machine is left alone).
	Bridge = "koordbr0"
	// Name is the node's name.
	Name = "koord-realnode"
)

// Options say where the binaries are and where the node keeps its state.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and kube-scheduler.
	BinDir string
	// NodeBinDir holds kubelet, kube-proxy, containerd, ctr and containerd-shim-runc-v2.
	NodeBinDir string
	// Dir receives every file of the node: certificates, configurations, data, logs. It must be empty or
	// missing.
	Dir string
	// Images are image archives to import into containerd before kubelet starts. One of them must be the
	// sandbox image, named SandboxImage.
	Images []string
}

// Node is a running single-node cluster.
type Node struct {
	opts Options
	// IP is the node's InternalIP, where kube-apiserver and kubelet listen.
	IP net.IP
	// Config reaches kube-apiserver as a cluster administrator.
	Config *rest.Config
	// Kubeconfig is the administrator's kubeconfig file.
	Kubeconfig string
	// LogDir holds every component's log.
	LogDir string

	pki      *pki
	procs    []*process
	socket   string
	host     *hostState
	unlock   func()
	apiPort  int
	etcdPort int
}

// Start brings the node up, step by step; on failure it takes down what it started.
func Start(ctx context.Context, opts Options) (_ *Node, retErr error) {
	logger := klog.FromContext(ctx)
	n := &Node{opts: opts, LogDir: filepath.Join(opts.Dir, "logs")}
	unlock, err := preflight(opts)
	if err != nil {
		return nil, err
	}
	n.unlock = unlock
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, n.Stop(context.WithoutCancel(ctx)))
		}
	}()
	if n.host, err = snapshotHost(); err != nil {
		return nil, err
	}
	for _, d := range []string{n.LogDir, n.path("etcd"), n.path("kubelet"), n.path("cni", "net.d"), n.path("pod-logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if n.IP, err = nodeIP(); err != nil {
		return nil, err
	}
	serviceIP, _, _ := net.ParseCIDR("10.96.0.1/32")
	if n.pki, err = newPKI(n.path("pki"), n.IP, serviceIP); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if err := n.startControlPlane(ctx); err != nil {
		return nil, err
	}
	logger.Info("Started etcd and kube-apiserver", "apiserver", n.Config.Host)
	if err := n.startContainerd(ctx); err != nil {
		return nil, err
	}
	logger.Info("Started containerd and imported the images", "socket", n.socket, "images", len(opts.Images))
	if err := n.startKubelet(ctx); err != nil {
		return nil, err
	}
	logger.Info("Node Ready", "node", Name, "ip", n.IP.String())
	if err := n.startControllers(ctx); err != nil {
		return nil, err
	}
	logger.Info("Started kube-proxy, kube-controller-manager and kube-scheduler")
	return n, nil
}

// KubeletRootDir is the kubelet's --root-dir.
func (n *Node) KubeletRootDir() string { return n.path("kubelet") }

// NRISocketDir is the directory of containerd's NRI socket, nri.sock.
func (n *Node) NRISocketDir() string { return n.path("containerd") }

func (n *Node) path(elem ...string) string {
	return filepath.Join(append([]string{n.opts.Dir}, elem...)...)
}

func (n *Node) bin(name string) string {
	switch name {
	case "kubelet", "kube-proxy", "containerd", "ctr", "containerd-shim-runc-v2":
		return filepath.Join(n.opts.NodeBinDir, name)
	}
	return filepath.Join(n.opts.BinDir, name)
}

func (n *Node) start(name string, args []string, env ...string) (*process, error) {
	p, err := start(name, n.bin(name), args, n.LogDir, env...)
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	return p, nil
}

// waitFor polls check until it passes, p exits or timeout passes.
func (n *Node) waitFor(ctx context.Context, what string, p *process, timeout time.Duration, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if p != nil {
			if gone, err := p.exited(); gone {
				return false, err
			}
		}
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w (logs in %s)", what, errors.Join(err, last), n.LogDir)
	}
	return nil
}

func (n *Node) startControlPlane(ctx context.Context) error {
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	n.etcdPort, n.apiPort = ports[0], ports[2]
	etcd, err := n.start("etcd", []string{
		"--data-dir=" + n.path("etcd"),
		"--listen-client-urls=http://127.0.0.1:" + strconv.Itoa(ports[0]),
		"--advertise-client-urls=http://127.0.0.1:" + strconv.Itoa(ports[0]),
		"--listen-peer-urls=http://127.0.0.1:" + strconv.Itoa(ports[1]),
		"--initial-advertise-peer-urls=http://127.0.0.1:" + strconv.Itoa(ports[1]),
		"--initial-cluster=default=http://127.0.0.1:" + strconv.Itoa(ports[1]),
		"--unsafe-no-fsync",
	})
	if err != nil {
		return err
	}
	_ = etcd
	p := n.pki
	api, err := n.start("kube-apiserver", []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(ports[0]),
		"--bind-address=0.0.0.0",
		"--advertise-address=" + n.IP.String(),
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + n.path("apiserver"),
		"--tls-cert-file=" + p.path(serverCertFile),
		"--tls-private-key-file=" + p.path(serverKeyFile),
		"--client-ca-file=" + p.path(caCertFile),
		"--kubelet-client-certificate=" + p.path(adminCertFile),
		"--kubelet-client-key=" + p.path(adminKeyFile),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-key-file=" + p.path(saPubFile),
		"--service-account-signing-key-file=" + p.path(saKeyFile),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
	})
	if err != nil {
		return err
	}
	n.Config = &rest.Config{
		Host:            "https://" + net.JoinHostPort(n.IP.String(), strconv.Itoa(ports[2])),
		TLSClientConfig: rest.TLSClientConfig{CAFile: p.path(caCertFile), CertFile: p.path(adminCertFile), KeyFile: p.path(adminKeyFile)},
		QPS:             100, Burst: 200,
	}
	n.Kubeconfig = n.path("admin.kubeconfig")
	if err := writeKubeconfig(n.Kubeconfig, n.Config); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(n.Config)
	if err != nil {
		return err
	}
	return n.waitFor(ctx, "kube-apiserver ready", api, 2*time.Minute, func(ctx context.Context) error {
		_, err := kube.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err
	})
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["realnode"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile}
	kc.Contexts["realnode"] = &clientcmdapi.Context{Cluster: "realnode", AuthInfo: "admin"}
	kc.CurrentContext = "realnode"
	return clientcmd.WriteToFile(*kc, path)
}

// SandboxImage is the image containerd runs as every pod's sandbox; the suite imports its pause image
// under this name.
const SandboxImage = "registry.k8s.io/pause:3.10.2"

func (n *Node) startContainerd(ctx context.Context) error {
	n.socket = n.path("containerd", "containerd.sock")
	out, err := runOutput(ctx, n.bin("containerd"), "config", "default")
	if err != nil {
		return fmt.Errorf("containerd config default: %w", err)
	}
	cfg, err := containerdConfig(out, n.path("containerd"), n.socket, n.path("cni", "net.d"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(n.path("containerd.toml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(n.path("cni", "net.d", "10-koord-realnode.conflist"), []byte(cniConfig(n.path("cni", "ipam"))), 0o644); err != nil {
		return err
	}
	// containerd starts runc through its own shim, found on PATH: ours comes first.
	p, err := n.start("containerd", []string{"--config=" + n.path("containerd.toml")},
		"PATH="+n.opts.NodeBinDir+":"+os.Getenv("PATH"))
	if err != nil {
		return err
	}
	if err := n.waitFor(ctx, "containerd's socket", p, time.Minute, func(ctx context.Context) error {
		_, err := runOutput(ctx, n.bin("ctr"), "--address", n.socket, "version")
		return err
	}); err != nil {
		return err
	}
	for _, img := range n.opts.Images {
		if _, err := runOutput(ctx, n.bin("ctr"), "--address", n.socket, "-n", "k8s.io", "images", "import", img); err != nil {
			return fmt.Errorf("import %s: %w", img, err)
		}
	}
	return nil
}

// containerdConfig turns containerd's default configuration into the node's: state under dir, the socket,
// Debian's CNI plugins and the node's CNI configuration, and restrict_oom_score_adj (root here lacks
// CAP_SYS_RESOURCE, so runc could not lower oom_score_adj and every sandbox would fail).
func containerdConfig(def, dir, socket, cniConfDir string) (string, error) {
	replacements := [][2]string{
		{"root = '/var/lib/containerd'", "root = '" + dir + "/root'"},
		{"state = '/run/containerd'", "state = '" + dir + "/state'"},
		{"imports = ['/etc/containerd/conf.d/*.toml']", "imports = []"},
		{"address = '/run/containerd/containerd.sock.ttrpc'", "address = '" + socket + ".ttrpc'"},
		{"address = '/run/containerd/containerd.sock'", "address = '" + socket + "'"},
		{"restrict_oom_score_adj = false", "restrict_oom_score_adj = true"},
		{"bin_dirs = ['/opt/cni/bin']", "bin_dirs = ['/usr/lib/cni']"},
		{"conf_dir = '/etc/cni/net.d'", "conf_dir = '" + cniConfDir + "'"},
		{"socket_path = '/var/run/nri/nri.sock'", "socket_path = '" + dir + "/nri.sock'"},
		{"path = '/opt/containerd'", "path = '" + dir + "/opt'"},
		{"sandbox = '" + SandboxImage + "'", "sandbox = '" + SandboxImage + "'"},
	}
	out := def
	for _, r := range replacements {
		if !strings.Contains(out, r[0]) {
			return "", fmt.Errorf("containerd's default configuration has no %q: this containerd is not the one the suite knows", r[0])
		}
		out = strings.ReplaceAll(out, r[0], r[1])
	}
	return out, nil
}

// cniConfig is a bridge with host-local addresses from PodCIDR, its state under ipamDir.
func cniConfig(ipamDir string) string {
	return `{
  "cniVersion": "1.0.0",
  "name": "koord-realnode",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "` + Bridge + `",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "` + ipamDir + `",
        "ranges": [[{"subnet": "` + PodCIDR + `"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`
}

func (n *Node) startKubelet(ctx context.Context) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
evictionHard: {memory.available: 100Mi, nodefs.available: 1%%, imagefs.available: 1%%, nodefs.inodesFree: 1%%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: /etc/resolv.conf
maxPods: 30
`, n.IP, ports[0], ports[1], n.pki.path(caCertFile), n.socket, n.path("pod-logs"))
	if err := os.WriteFile(n.path("kubelet.yaml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	p, err := n.start("kubelet", []string{
		"--config=" + n.path("kubelet.yaml"),
		"--kubeconfig=" + n.Kubeconfig,
		"--root-dir=" + n.path("kubelet"),
		"--hostname-override=" + Name,
		"--node-ip=" + n.IP.String(),
		"--v=2",
	})
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(n.Config)
	if err != nil {
		return err
	}
	return n.waitFor(ctx, "node Ready", p, 2*time.Minute, func(ctx context.Context) error {
		node, err := kube.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready: %v", Name, node.Status.Conditions)
	})
}

func (n *Node) startControllers(ctx context.Context) error {
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	proxyCfg := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %s}
mode: iptables
hostnameOverride: %s
clusterCIDR: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
conntrack: {maxPerCore: 0}
`, n.Kubeconfig, Name, PodCIDR, ports[0], ports[1])
	if err := os.WriteFile(n.path("kube-proxy.yaml"), []byte(proxyCfg), 0o644); err != nil {
		return err
	}
	if _, err := n.start("kube-proxy", []string{"--config=" + n.path("kube-proxy.yaml"), "--v=2"}); err != nil {
		return err
	}
	// Both with the administrator's kubeconfig for the API and for delegated authentication and
	// authorization, secure serving on 127.0.0.1, no leader election.
	common := func(name string, port int) []string {
		return []string{
			"--kubeconfig=" + n.Kubeconfig, "--authentication-kubeconfig=" + n.Kubeconfig,
			"--authorization-kubeconfig=" + n.Kubeconfig, "--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port), "--cert-dir=" + n.path(name), "--leader-elect=false",
		}
	}
	kcm, err := n.start("kube-controller-manager", append(common("kube-controller-manager", ports[2]),
		"--use-service-account-credentials=false",
		"--root-ca-file="+n.pki.path(caCertFile),
		"--service-account-private-key-file="+n.pki.path(saKeyFile),
	))
	if err != nil {
		return err
	}
	if _, err := n.start("kube-scheduler", common("kube-scheduler", ports[3])); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(n.Config)
	if err != nil {
		return err
	}
	// Pods need the default ServiceAccount and the CA ConfigMap their token volumes mount.
	return n.waitFor(ctx, "kube-controller-manager's ServiceAccount and root CA publishers", kcm, 2*time.Minute, func(ctx context.Context) error {
		if _, err := kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := kube.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
}

// Failed returns the first component that has exited, if any: a node component must not stop while the
// suite runs.
func (n *Node) Failed() error {
	for _, p := range n.procs {
		if gone, err := p.exited(); gone {
			return err
		}
	}
	return nil
}

// freePorts returns count ports that were free on every interface a moment ago.
func freePorts(count int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range count {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// nodeIP returns the first IPv4 address of an interface that is up and not loopback.
func nodeIP() (net.IP, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 || strings.HasPrefix(i.Name, Bridge) || strings.HasPrefix(i.Name, "veth") {
			continue
		}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				return ipn.IP.To4(), nil
			}
		}
	}
	return nil, errors.New("no IPv4 address on an interface that is up: kubelet and kube-apiserver need one")
}
