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

package build

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

func testSpec(t *testing.T, root bool) Spec {
	t.Helper()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Component: "koord-manager", Root: root, CABundle: ca, Labels: map[string]string{"org.opencontainers.image.revision": "abc"}}
	for _, p := range []v1.Platform{amd64, arm64} {
		bin := filepath.Join(dir, p.Architecture)
		if err := os.WriteFile(bin, []byte("binary for "+p.Architecture), 0o755); err != nil {
			t.Fatal(err)
		}
		spec.Binaries = append(spec.Binaries, Binary{Platform: p, Path: bin})
	}
	return spec
}

// files returns the regular files of an image's layers with their modes and owners.
func files(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(tr)
			out[h.Name] = os.FileMode(h.Mode).String() + " " + strings.SplitN(string(data), "\n", 2)[0]
		}
		_ = rc.Close()
	}
	return out
}

func TestBuild(t *testing.T) {
	idx, err := Build(testSpec(t, false))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"org.opencontainers.image.revision": "abc"}, im.Annotations); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		got := []any{cf.OS + "/" + cf.Architecture, cf.Config.Entrypoint, cf.Config.User, cf.Config.Labels["org.opencontainers.image.revision"]}
		want := []any{d.Platform.String(), []string{"/koord-manager"}, "65532:65532", "abc"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s config (-want +got):\n%s", d.Platform, diff)
		}
		fs := files(t, img)
		for name, want := range map[string]string{
			"koord-manager":                     "-rwxr-xr-x binary for " + d.Platform.Architecture,
			"etc/ssl/certs/ca-certificates.crt": "-rw-r--r-- -----BEGIN CERTIFICATE-----",
			"etc/passwd":                        "-rw-r--r-- root:x:0:0:root:/root:/sbin/nologin",
		} {
			if fs[name] != want {
				t.Errorf("%s: file %s = %q, want %q", d.Platform, name, fs[name], want)
			}
		}
		if !strings.Contains(fs["etc/group"], "root") {
			t.Errorf("%s: no /etc/group", d.Platform)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}

	again, err := Build(testSpec(t, false))
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same input differ: %s, %s", d1, d2)
	}
}

func TestBuildRoot(t *testing.T) {
	idx, err := Build(testSpec(t, true))
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	if cf.Config.User != "0:0" {
		t.Errorf("user = %q, want 0:0", cf.Config.User)
	}
}

func TestBuildErrors(t *testing.T) {
	spec := testSpec(t, false)
	spec.CABundle = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := Build(spec); err == nil || !strings.Contains(err.Error(), "ca-certificates") {
		t.Errorf("missing CA bundle: err %v, want one naming ca-certificates", err)
	}
	spec = testSpec(t, false)
	spec.Binaries[1].Path = filepath.Join(t.TempDir(), "missing")
	if _, err := Build(spec); err == nil || !strings.Contains(err.Error(), "linux/arm64") {
		t.Errorf("missing binary: err %v, want one naming the platform", err)
	}
}

// TestWriteArchive reads the archive back as both runtimes do: an OCI layout whose index.json names the
// multi-platform index, and a Docker manifest.json for one platform whose files exist in the archive.
func TestWriteArchive(t *testing.T) {
	idx, err := Build(testSpec(t, false))
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "koord-manager.tar")
	const ref = "ghcr.io/koord-dev/koord-manager:v1.2.3"
	if err := WriteArchive(archive, ref, idx, amd64); err != nil {
		t.Fatalf("WriteArchive: %v", err)
	}
	dir := t.TempDir()
	untar(t, archive, dir)

	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["io.containerd.image.name"] != ref ||
		tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1.2.3" {
		t.Fatalf("index.json = %+v, want one index named %s", tm.Manifests, ref)
	}
	inner, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatalf("the named index: %v", err)
	}
	want, _ := idx.Digest()
	if got, _ := inner.Digest(); got != want {
		t.Errorf("archived index %s, want %s", got, want)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var docker []dockerManifest
	if err := json.Unmarshal(raw, &docker); err != nil {
		t.Fatal(err)
	}
	if len(docker) != 1 || len(docker[0].RepoTags) != 1 || docker[0].RepoTags[0] != ref || len(docker[0].Layers) != 2 {
		t.Fatalf("manifest.json = %+v, want one amd64 image tagged %s with two layers", docker, ref)
	}
	var cfg v1.ConfigFile
	data, err := os.ReadFile(filepath.Join(dir, docker[0].Config))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.Architecture != "amd64" {
		t.Errorf("docker config: %v, architecture %q, want amd64", err, cfg.Architecture)
	}
	for _, l := range docker[0].Layers {
		if _, err := os.Stat(filepath.Join(dir, l)); err != nil {
			t.Errorf("docker layer: %v", err)
		}
	}

	other := filepath.Join(t.TempDir(), "other.tar")
	if err := WriteArchive(other, ref, idx, v1.Platform{OS: "linux", Architecture: "s390x"}); err == nil {
		t.Error("an archive for a platform the index lacks was written")
	}
	if entries, _ := os.ReadDir(filepath.Dir(other)); len(entries) != 0 {
		t.Errorf("a failed write left %v behind", entries)
	}
}

func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
