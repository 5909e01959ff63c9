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

// Command images builds Koord's container images from their binaries, without a container engine: one
// multi-platform OCI index per component (koordlet's with the C runtime it loads the NVIDIA driver's NVML
// library with), written as an archive that `ctr -n k8s.io images import` and
// `docker load` read, and pushed to a registry when asked. `make images` builds the binaries and runs it; see
// docs/install.md.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/pflag"

	"github.com/koord-dev/koord/hack/images/build"
)

// components are the images Koord ships and whether each must run as root: koordlet writes the host's
// cgroups and reads every process's /proc files; the others need no privilege.
var components = map[string]bool{
	"koord-manager":     false,
	"koord-scheduler":   false,
	"koord-descheduler": false,
	"koordlet":          true,
}

// nvmlDependencies are the libraries the NVIDIA driver's libnvidia-ml.so.1 links against: koordlet loads it at
// run time (GPU discovery), so its image carries them with the C runtime. The NVIDIA container toolkit mounts
// the driver's libraries into the container when the environment below asks for them (as the nvidia/cuda base
// image Koordinator's koordlet image is built on does).
var nvmlDependencies = []string{"libc.so.6", "libdl.so.2", "libm.so.6", "libpthread.so.0", "librt.so.1"}

// nvidiaEnv asks the NVIDIA container runtime for NVML (the "utility" capability) on every GPU of the node.
var nvidiaEnv = []string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=utility"}

// componentNames lists the images Koord ships, in a fixed order.
func componentNames() []string {
	return []string{"koord-manager", "koord-scheduler", "koord-descheduler", "koordlet"}
}

type options struct {
	binaries   string
	out        string
	repository string
	tag        string
	platforms  []string
	only       []string
	caBundle   string
	source     string
	revision   string
	push       string
	sysroots   map[string]string
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := pflag.NewFlagSet("images", pflag.ContinueOnError)
	fs.StringVar(&o.binaries, "binaries", "bin/images", "directory holding <os>_<arch>/<component> binaries")
	fs.StringVar(&o.out, "out", "bin/images", "directory the archives <component>.tar are written to")
	fs.StringVar(&o.repository, "repository", "ghcr.io/koord-dev", "image name prefix: images are <repository>/<component>:<tag>")
	fs.StringVar(&o.tag, "tag", "", "image tag (required)")
	fs.StringSliceVar(&o.platforms, "platforms", []string{"linux/amd64", "linux/arm64"}, "platforms of each index")
	fs.StringSliceVar(&o.only, "components", componentNames(), "components to build")
	fs.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates the images trust")
	fs.StringVar(&o.source, "source", "https://github.com/koord-dev/koord", "org.opencontainers.image.source label")
	fs.StringVar(&o.revision, "revision", "", "org.opencontainers.image.revision label (source commit)")
	fs.StringVar(&o.push, "push", "", "also push each index to <push>/<component>:<tag> (credentials from the Docker config)")
	fs.StringToStringVar(&o.sysroots, "sysroot", nil, "platform=directory: where the C runtime of that platform's dynamically linked binaries (koordlet) is; default / for this machine's platform and /usr/<triplet> (Debian's libc6-<arch>-cross) for another")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.tag == "" {
		return errors.New("--tag is required")
	}
	if _, err := name.NewTag(o.repository + "/x:" + o.tag); err != nil {
		return fmt.Errorf("--repository %q and --tag %q do not make an image reference: %w", o.repository, o.tag, err)
	}
	platforms := make([]v1.Platform, 0, len(o.platforms))
	for _, s := range o.platforms {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return fmt.Errorf("--platforms: %w", err)
		}
		platforms = append(platforms, *p)
	}
	for k := range o.sysroots {
		if !slices.ContainsFunc(platforms, func(p v1.Platform) bool { return p.String() == k }) {
			return fmt.Errorf("--sysroot %s: not one of --platforms %s", k, strings.Join(o.platforms, ","))
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	native := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	for _, c := range o.only {
		root, ok := components[c]
		if !ok {
			return fmt.Errorf("--components: unknown component %q (known: %s)", c, strings.Join(componentNames(), ", "))
		}
		spec := build.Spec{
			Component: c,
			Root:      root,
			CABundle:  o.caBundle,
			Labels:    labels(c, o),
		}
		if c == "koordlet" {
			spec.Libraries, spec.Env = nvmlDependencies, nvidiaEnv
		}
		dockerPlatform := platforms[0]
		for _, p := range platforms {
			sysroot, ok := o.sysroots[p.String()]
			if !ok {
				// Only a dynamically linked binary needs it: an error here waits for one.
				sysroot, _ = build.DefaultSysroot(p)
			}
			spec.Binaries = append(spec.Binaries, build.Binary{Platform: p, Path: filepath.Join(o.binaries, p.OS+"_"+p.Architecture, c), Sysroot: sysroot})
			if p.Satisfies(native) {
				dockerPlatform = p
			}
		}
		idx, err := build.Build(spec)
		if err != nil {
			return err
		}
		ref := o.repository + "/" + c + ":" + o.tag
		archive := filepath.Join(o.out, c+".tar")
		if err := build.WriteArchive(archive, ref, idx, dockerPlatform); err != nil {
			return fmt.Errorf("write %s: %w", archive, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s %s %s\n", ref, digest, archive)
		if o.push != "" {
			target, err := name.NewTag(o.push + "/" + c + ":" + o.tag)
			if err != nil {
				return fmt.Errorf("--push: %w", err)
			}
			if err := remote.WriteIndex(target, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
				return fmt.Errorf("push %s: %w", target, err)
			}
			fmt.Printf("pushed %s\n", target)
		}
	}
	return nil
}

// labels are the OCI annotation keys of the image spec.
func labels(component string, o options) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":    component,
		"org.opencontainers.image.source":   o.source,
		"org.opencontainers.image.version":  o.tag,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.vendor":   "The Koord Authors",
	}
	if o.revision != "" {
		l["org.opencontainers.image.revision"] = o.revision
	}
	return l
}
