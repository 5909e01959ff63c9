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

// Package build makes container images from binaries without a container engine: a multi-platform OCI index per
// component (CA bundle, passwd and group, /tmp, and the binary at /<name>), written as one archive that `ctr
// images import` and `docker load` both read. A dynamically linked binary (koordlet, which loads the NVIDIA
// driver's NVML library) also gets the C runtime it needs, taken from a sysroot. hack/images (make images) and
// the real-node suite's test images use it.
package build

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user a non-root image runs as: distroless' "nonroot", so that files written by other images' tools
// line up.
const (
	nonRootUID  = 65532
	nonRootName = "nonroot"
)

// NonRootUser is the user:group a non-root image runs as.
var NonRootUser = fmt.Sprintf("%d:%d", nonRootUID, nonRootUID)

// Where the CA bundle lands in the image: the path Go's crypto/x509 reads first on Linux.
const caBundlePath = "etc/ssl/certs/ca-certificates.crt"

// Spec is one component's image.
type Spec struct {
	// Component names the binary and the image, e.g. koord-manager.
	Component string
	// Binaries are the static binaries, one per platform.
	Binaries []Binary
	// Root runs the image as root; otherwise it runs as the non-root user.
	Root bool
	// CABundle is the PEM file installed at /etc/ssl/certs/ca-certificates.crt.
	CABundle string
	// Labels become the image configs' labels and the index's annotations (OCI's org.opencontainers.image.*).
	Labels map[string]string
	// Created stamps the configs; the zero time keeps the images reproducible.
	Created time.Time
	// Env is added to the images' environment.
	Env []string
	// Libraries are shared libraries a dynamically linked binary loads at run time besides those it names
	// (koordlet: what the NVIDIA driver's libnvidia-ml.so.1 links against); they come from the sysroot too.
	Libraries []string
}

// Binary is a component's binary for one platform.
type Binary struct {
	Platform v1.Platform
	Path     string
	// Sysroot is where the C runtime of a dynamically linked binary is found: its interpreter and the shared
	// libraries it and Spec.Libraries need, looked up under lib/<triplet>, usr/lib/<triplet>, lib, usr/lib and
	// lib64 of it. "/" is the build machine's own; Debian's cross packages put arm64's in /usr/aarch64-linux-gnu.
	// A static binary needs none.
	Sysroot string
}

// Build returns the multi-platform index of the component's images, one image per platform, each of two
// layers, the base files (CA bundle, passwd, group, /tmp) and the binary at /<component>, and a third between
// them with the C runtime when the binary is dynamically linked.
func Build(spec Spec) (v1.ImageIndex, error) {
	if len(spec.Binaries) == 0 {
		return nil, fmt.Errorf("image %s: no binaries", spec.Component)
	}
	ca, err := os.ReadFile(spec.CABundle)
	if err != nil {
		return nil, fmt.Errorf("image %s: read the CA bundle (install Debian's ca-certificates or pass --ca-bundle): %w", spec.Component, err)
	}
	base, err := layerOf(baseFiles(ca))
	if err != nil {
		return nil, fmt.Errorf("image %s: base layer: %w", spec.Component, err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for _, b := range spec.Binaries {
		img, err := buildImage(spec, b, base)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &b.Platform}})
	}
	idx = mutate.AppendManifests(idx, adds...)
	return mutate.Annotations(idx, spec.Labels).(v1.ImageIndex), nil
}

func buildImage(spec Spec, b Binary, base v1.Layer) (v1.Image, error) {
	p := b.Platform
	bin, err := os.ReadFile(b.Path)
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", spec.Component, p, err)
	}
	binLayer, err := layerOf([]file{{name: spec.Component, mode: 0o755, data: bin}})
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: binary layer: %w", spec.Component, p, err)
	}
	layers := []v1.Layer{base, binLayer}
	env := []string{"PATH=/", "SSL_CERT_FILE=/" + caBundlePath}
	rt, err := runtimeFiles(bin, b, spec.Libraries)
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", spec.Component, p, err)
	}
	if rt != nil {
		rtLayer, err := layerOf(rt.files)
		if err != nil {
			return nil, fmt.Errorf("image %s for %s: C runtime layer: %w", spec.Component, p, err)
		}
		layers = []v1.Layer{base, rtLayer, binLayer}
		env = append(env, "LD_LIBRARY_PATH="+strings.Join(rt.libraryPath, ":"))
	}
	env = append(env, spec.Env...)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layers...); err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", spec.Component, p, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", spec.Component, p, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: spec.Created}
	cf.Config = v1.Config{
		Entrypoint: []string{"/" + spec.Component},
		Env:        env,
		WorkingDir: "/",
		Labels:     spec.Labels,
		User:       fmt.Sprintf("%d:%d", nonRootUID, nonRootUID),
	}
	if spec.Root {
		cf.Config.User = "0:0"
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", spec.Component, p, err)
	}
	return img, nil
}

// file is one entry of a layer.
type file struct {
	name string
	mode int64
	dir  bool
	data []byte
}

func baseFiles(ca []byte) []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n",
		nonRootName, nonRootUID, nonRootUID, nonRootName, nonRootName)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", nonRootName, nonRootUID)
	return []file{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl", mode: 0o755, dir: true},
		{name: "etc/ssl/certs", mode: 0o755, dir: true},
		{name: caBundlePath, mode: 0o644, data: ca},
		{name: "home", mode: 0o755, dir: true},
		{name: "home/" + nonRootName, mode: 0o700, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}
}

// layerOf returns a gzip layer of the files, with fixed owners and times so that the same input gives the
// same digest.
func layerOf(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if strings.HasPrefix(f.name, "home/"+nonRootName) {
			h.Uid, h.Gid = nonRootUID, nonRootUID
		}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// WriteArchive writes the index as one tar file, replacing archive only once it is whole, that both container runtimes load:
//   - an OCI image layout (oci-layout, index.json naming the index ref, blobs/sha256/...), which
//     `ctr -n k8s.io images import` reads, all platforms included;
//   - a Docker manifest.json for the image of dockerPlatform, which `docker load` reads.
func WriteArchive(archive, ref string, idx v1.ImageIndex, dockerPlatform v1.Platform) (retErr error) {
	blobs := map[v1.Hash][]byte{}
	addBlob := func(h v1.Hash, data []byte) { blobs[h] = data }

	raw, err := idx.RawManifest()
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	mt, err := idx.MediaType()
	if err != nil {
		return err
	}
	addBlob(digest, raw)
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	var docker []dockerManifest
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		entry, err := addImage(img, addBlob)
		if err != nil {
			return fmt.Errorf("image %s for %s: %w", ref, d.Platform, err)
		}
		if d.Platform != nil && d.Platform.Satisfies(dockerPlatform) {
			entry.RepoTags = []string{ref}
			docker = append(docker, entry)
		}
	}
	if len(docker) == 0 {
		return fmt.Errorf("image %s: no image for %s, the platform docker load gets", ref, dockerPlatform.String())
	}

	tag := ref
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		tag = ref[i+1:]
	}
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt,
			Size:      int64(len(raw)),
			Digest:    digest,
			Annotations: map[string]string{
				"io.containerd.image.name":          ref,
				"org.opencontainers.image.ref.name": tag,
			},
		}},
	}
	indexJSON, err := json.Marshal(top)
	if err != nil {
		return err
	}
	manifestJSON, err := json.Marshal(docker)
	if err != nil {
		return err
	}

	// Written beside the archive and renamed into place, so that a failed write leaves the last good one.
	f, err := os.CreateTemp(filepath.Dir(archive), "."+filepath.Base(archive)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Close(); err != nil && retErr == nil {
			retErr = err
		}
		if retErr == nil {
			retErr = os.Rename(f.Name(), archive)
		}
		if retErr != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	entries := []file{
		{name: "oci-layout", mode: 0o644, data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", mode: 0o644, data: indexJSON},
		{name: "manifest.json", mode: 0o644, data: manifestJSON},
		{name: "blobs", mode: 0o755, dir: true},
		{name: "blobs/sha256", mode: 0o755, dir: true},
	}
	hashes := make([]v1.Hash, 0, len(blobs))
	for h := range blobs {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b v1.Hash) int { return strings.Compare(a.String(), b.String()) })
	for _, h := range hashes {
		entries = append(entries, file{name: blobPath(h), mode: 0o644, data: blobs[h]})
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			h.Name, h.Typeflag, h.Size = e.name+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// dockerManifest is one entry of `docker save`'s manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// addImage adds an image's manifest, config and layers to the blobs and returns its Docker manifest entry.
func addImage(img v1.Image, addBlob func(v1.Hash, []byte)) (dockerManifest, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return dockerManifest{}, err
	}
	d, err := img.Digest()
	if err != nil {
		return dockerManifest{}, err
	}
	addBlob(d, raw)
	cfg, err := img.RawConfigFile()
	if err != nil {
		return dockerManifest{}, err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return dockerManifest{}, err
	}
	addBlob(cfgName, cfg)
	entry := dockerManifest{Config: blobPath(cfgName)}
	layers, err := img.Layers()
	if err != nil {
		return dockerManifest{}, err
	}
	for _, l := range layers {
		ld, err := l.Digest()
		if err != nil {
			return dockerManifest{}, err
		}
		rc, err := l.Compressed()
		if err != nil {
			return dockerManifest{}, err
		}
		data, err := io.ReadAll(rc)
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return dockerManifest{}, errors.Join(fmt.Errorf("read layer %s", ld), err)
		}
		addBlob(ld, data)
		entry.Layers = append(entry.Layers, blobPath(ld))
	}
	return entry, nil
}

func blobPath(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }
