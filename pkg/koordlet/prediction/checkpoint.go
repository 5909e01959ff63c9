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

package prediction

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModelCheckpoint is one model as its checkpoint file holds it, in Koordinator's format (JSON, its field names),
// so that a node moving between the two agents keeps its models.
type ModelCheckpoint struct {
	// UID is the model's ID: a pod UID or a node item (see NodeUID, NodeItemUID). On load it is the file's name.
	UID string `json:"UID"`
	// CPU is the CPU histogram, in cores.
	CPU *HistogramCheckpoint `json:"CPU"`
	// Memory is the memory histogram, in bytes.
	Memory *HistogramCheckpoint `json:"Memory"`
	// LastUpdated is when the model last took a sample.
	LastUpdated metav1.Time `json:"LastUpdated"`
}

// tmpSuffix ends the name of a checkpoint being written; such files left by a crash are removed on load.
const tmpSuffix = ".tmp"

// maxCheckpointSize bounds a checkpoint file: a model is a few kilobytes, anything much larger is not one.
const maxCheckpointSize = 1 << 20

// Store keeps checkpoints in a directory, one file per model named by its UID. Writes are atomic: a file is
// written under a temporary name, synced and renamed over the old one, so a crash leaves the old checkpoint or
// the new one, never a mix.
type Store struct {
	dir string
}

// NewStore returns the store of directory dir. Nothing is touched until Prepare, Save or Load.
func NewStore(dir string) *Store {
	return &Store{dir: dir}
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Prepare creates the directory when it is missing and checks that a file can be written in it.
func (s *Store) Prepare() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create checkpoint directory: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".probe-*"+tmpSuffix)
	if err != nil {
		return fmt.Errorf("checkpoint directory %s is not writable: %w", s.dir, err)
	}
	name := f.Name()
	return errors.Join(f.Close(), os.Remove(name))
}

// validUID reports whether uid can name a checkpoint file in the directory.
func validUID(uid string) error {
	switch {
	case uid == "" || uid == "." || uid == "..":
		return fmt.Errorf("model ID %q cannot name a file", uid)
	case strings.ContainsAny(uid, "/\\\x00"):
		return fmt.Errorf("model ID %q contains a path separator or NUL", uid)
	case strings.HasSuffix(uid, tmpSuffix) || strings.HasPrefix(uid, "."):
		return fmt.Errorf("model ID %q looks like a temporary file", uid)
	}
	return nil
}

// Save writes c atomically as the file named by c.UID.
func (s *Store) Save(c *ModelCheckpoint) error {
	if err := validUID(c.UID); err != nil {
		return err
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode checkpoint %s: %w", c.UID, err)
	}
	path := filepath.Join(s.dir, c.UID)
	f, err := os.CreateTemp(s.dir, "."+c.UID+"-*"+tmpSuffix)
	if err != nil {
		return fmt.Errorf("write checkpoint %s: %w", c.UID, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write checkpoint %s: %w", c.UID, err)
	}
	return nil
}

// Remove deletes the checkpoint of uid; a missing one is no error.
func (s *Store) Remove(uid string) error {
	if err := validUID(uid); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(s.dir, uid)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove checkpoint %s: %w", uid, err)
	}
	return nil
}

// Loaded is one checkpoint file read by Load: its model, or why it could not be read.
type Loaded struct {
	// UID is the file's name.
	UID string
	// Checkpoint is the decoded model; nil when Err is set.
	Checkpoint *ModelCheckpoint
	// Err says why the file is not a checkpoint.
	Err error
}

// Load reads every checkpoint of the directory, in name order, after removing the temporary files an
// interrupted Save left. A file that cannot be read or decoded is returned with its error. A missing directory
// has no checkpoints.
func (s *Store) Load() ([]Loaded, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint directory: %w", err)
	}
	var out []Loaded
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(s.dir, name)
		if strings.HasSuffix(name, tmpSuffix) {
			_ = os.Remove(path)
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		c, err := readCheckpoint(path)
		if err != nil {
			out = append(out, Loaded{UID: name, Err: err})
			continue
		}
		c.UID = name
		out = append(out, Loaded{UID: name, Checkpoint: c})
	}
	slices.SortFunc(out, func(a, b Loaded) int { return strings.Compare(a.UID, b.UID) })
	return out, nil
}

// readCheckpoint reads and decodes one checkpoint file.
func readCheckpoint(path string) (*ModelCheckpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxCheckpointSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCheckpointSize {
		return nil, fmt.Errorf("larger than %d bytes", maxCheckpointSize)
	}
	c := &ModelCheckpoint{}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if c.CPU == nil || c.Memory == nil {
		return nil, errors.New("decode: no CPU or no Memory histogram")
	}
	return c, nil
}
