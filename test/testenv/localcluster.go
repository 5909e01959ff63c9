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

package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/koord-dev/koord/pkg/koordctl/preflight"
)

// LocalClusterBinDir returns a directory with every binary a local cluster (pkg/koordctl/cluster) runs: the
// control plane from $KOORD_BIN_DIR or the repository's bin/ (`make bin`), and Koord's binaries from there too
// when all are present (`make build`), else built into tmp/bin from the working tree.
func LocalClusterBinDir(ctx context.Context, tmp string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	src := os.Getenv(BinDirEnv)
	if src == "" {
		src = filepath.Join(root, "bin")
	}
	if err := preflight.CheckBinaries(src, preflight.ControlPlaneBinaries); err != nil {
		return "", err
	}
	if preflight.CheckBinaries(src, preflight.KoordBinaries) == nil {
		return src, nil
	}
	dir := filepath.Join(tmp, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	for _, b := range preflight.ControlPlaneBinaries {
		if err := os.Symlink(filepath.Join(src, b.Name), filepath.Join(dir, b.Name)); err != nil {
			return "", fmt.Errorf("link %s: %w", b.Name, err)
		}
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, b := range preflight.KoordBinaries {
		args = append(args, "./cmd/"+b.Name)
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %v: %w\n%s", args, err, out)
	}
	return dir, nil
}
