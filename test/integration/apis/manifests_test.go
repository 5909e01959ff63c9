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

package apis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/koord-dev/koord/test/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env)
}

// manifest is one YAML document of a file.
type manifest struct {
	file string
	obj  *unstructured.Unstructured
	// want is the text after a leading "# want:" comment, for manifests that must be rejected.
	want string
}

// readManifests decodes every non-empty YAML document in the files matching pattern (relative to the
// repository root).
func readManifests(t *testing.T, pattern string) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(env.RepoRoot, pattern))
	if err != nil {
		t.Fatalf("glob %s: %v", pattern, err)
	}
	var out []manifest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		rel, _ := filepath.Rel(env.RepoRoot, f)
		want := wantComment(data)
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var raw runtime.RawExtension
			if err := dec.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("decode %s: %v", rel, err)
			}
			if len(bytes.TrimSpace(raw.Raw)) == 0 || string(raw.Raw) == "null" {
				continue
			}
			// Unstructured's own JSON decoding keeps integers as int64, as objects read from the apiserver do.
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(raw.Raw); err != nil {
				t.Fatalf("decode %s: %v", rel, err)
			}
			out = append(out, manifest{file: rel, obj: obj, want: want})
		}
	}
	return out
}

// wantComment returns the text of the first "# want: ..." line of a manifest.
func wantComment(data []byte) string {
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if rest, ok := strings.CutPrefix(line, "# want:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func (m manifest) String() string {
	return fmt.Sprintf("%s %s/%s", m.file, m.obj.GetKind(), m.obj.GetName())
}
