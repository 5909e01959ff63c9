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

package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
)

// Options are the flags of `koordctl explain`: kubectl's connection flags (--kubeconfig, --context,
// -n/--namespace, --cluster, --user, --server, --token, ...) and the output format. They are client-go's
// (clientcmd), not k8s.io/cli-runtime's, which would link kustomize and with it the stdlib plugin package (see
// cmd/koordctl's TestCommands).
type Options struct {
	// Loading finds the kubeconfig ($KUBECONFIG, then ~/.kube/config, unless --kubeconfig).
	Loading *clientcmd.ClientConfigLoadingRules
	// Overrides are the flags that override the kubeconfig.
	Overrides *clientcmd.ConfigOverrides
	// Output is table, json or yaml.
	Output string
	// KoordletPort is the port of koordlet's metrics endpoint on the nodes; 0 skips reading cgroups.
	KoordletPort int
}

// NewCommand returns `explain` and its subcommands pod, node, quota and gang.
func NewCommand() *cobra.Command {
	o := &Options{Loading: clientcmd.NewDefaultClientConfigLoadingRules(), Overrides: &clientcmd.ConfigOverrides{}, Output: OutputTable,
		KoordletPort: DefaultKoordletPort}
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain why a pod waits, how a node's batch resources were computed, a quota's runtime, a gang's state",
		Long: `Explain reads an object and what Koord's components recorded about it, and says why it is in the state it is in.

  pod NAME     why the pod waits (the plugins that rejected it on how many nodes, its quota and gang, what would
               make it fit), or for a placed pod its QoS class, priority, batch resources and the profile that
               gave them, its CPUs, devices and Reservation, and the evictions it suffered
  node NAME    the batch and mid resource calculation term by term, the NodeSLO in force, usage against its
               thresholds, Reservations, NUMA zones and devices
  quota NAME   an ElasticQuota's runtime resource by resource, and its place in the quota tree
  gang NAME    a gang's spec and members (a PodGroup, or pods annotated gang.scheduling.koordinator.sh/name)

It is also kubectl's plugin "kubectl koord explain" when koordctl is installed as kubectl-koord.`,
	}
	cmd.PersistentFlags().StringVar(&o.Loading.ExplicitPath, "kubeconfig", "", "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).")
	clientcmd.BindOverrideFlags(o.Overrides, cmd.PersistentFlags(), clientcmd.RecommendedConfigOverrideFlags(""))
	cmd.PersistentFlags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: "+strings.Join(Outputs, ", ")+".")
	cmd.PersistentFlags().IntVar(&o.KoordletPort, "koordlet-port", o.KoordletPort, "Port of koordlet's metrics endpoint on the nodes, "+
		"from which explain pod reads a running pod's cgroup settings through the apiserver's node proxy (needs nodes/proxy); 0 skips them.")
	for _, sub := range []struct {
		use, short string
		run        func(ctx context.Context, e *Explainer, namespace, name string) (tablePrinter, error)
	}{
		{"pod NAME", "Explain a pod: why it waits for a node, or what it got and what happened to it", func(ctx context.Context, e *Explainer, ns, name string) (tablePrinter, error) {
			return e.Pod(ctx, ns, name)
		}},
		{"node NAME", "Explain a node: its batch and mid resources term by term, NodeSLO, usage, Reservations, NUMA zones and devices", func(ctx context.Context, e *Explainer, _, name string) (tablePrinter, error) {
			return e.Node(ctx, name)
		}},
		{"quota NAME", "Explain an ElasticQuota: its runtime by resource and its place in the tree", func(ctx context.Context, e *Explainer, ns, name string) (tablePrinter, error) {
			return e.Quota(ctx, ns, name)
		}},
		{"gang NAME", "Explain a gang: its spec and where its members are", func(ctx context.Context, e *Explainer, ns, name string) (tablePrinter, error) {
			return e.Gang(ctx, ns, name)
		}},
	} {
		kind := strings.Fields(sub.use)[0]
		cmd.AddCommand(&cobra.Command{
			Use:   sub.use,
			Short: sub.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if !slices.Contains(Outputs, o.Output) {
					return fmt.Errorf("--output %q: want one of %s", o.Output, strings.Join(Outputs, ", "))
				}
				if o.KoordletPort < 0 || o.KoordletPort > 65535 {
					return fmt.Errorf("--koordlet-port %d: want a port (1-65535), or 0 to skip reading cgroups", o.KoordletPort)
				}
				e, namespace, explicit, err := o.explainer()
				if err != nil {
					return err
				}
				if kind == "quota" && !explicit {
					// Quota names are unique in the cluster: look everywhere unless told where.
					namespace = ""
				}
				x, err := sub.run(cmd.Context(), e, namespace, args[0])
				if err != nil {
					return err
				}
				return Print(cmd.OutOrStdout(), o.Output, x)
			},
		})
	}
	return cmd
}

// explainer connects to the cluster the flags name and returns the namespace to look in, and whether the
// namespace was given (-n) rather than the kubeconfig's.
func (o *Options) explainer() (*Explainer, string, bool, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(o.Loading, o.Overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", false, fmt.Errorf("kubeconfig: %w", err)
	}
	namespace, explicit, err := loader.Namespace()
	if err != nil {
		return nil, "", false, fmt.Errorf("namespace: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", false, fmt.Errorf("client: %w", err)
	}
	koord, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, "", false, fmt.Errorf("client: %w", err)
	}
	return &Explainer{Kube: kube, Koord: koord, KoordletPort: o.KoordletPort}, namespace, explicit, nil
}
