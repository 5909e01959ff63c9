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

// Package version holds the release and source revision a Koord binary was built from. The build sets them
// with -ldflags "-X github.com/koord-dev/koord/pkg/version.version=... -X ...revision=..." (see the Makefile);
// a plain `go build` leaves the defaults, and the revision then comes from the VCS stamp Go records.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time.
var (
	version  = "v0.0.0-dev"
	revision = ""
)

// Info describes a build.
type Info struct {
	// Version is the release, e.g. v0.3.0, or v0.0.0-dev for an untagged build.
	Version string `json:"version"`
	// Revision is the source commit, empty when unknown.
	Revision string `json:"revision,omitempty"`
	// GoVersion is the Go release the binary was built with.
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the build's Info.
func Get() Info {
	rev := revision
	if rev == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					rev = s.Value
				}
			}
		}
	}
	return Info{Version: version, Revision: rev, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// String formats the Info for --version output.
func (i Info) String() string {
	if i.Revision == "" {
		return fmt.Sprintf("%s (%s, %s)", i.Version, i.GoVersion, i.Platform)
	}
	return fmt.Sprintf("%s, revision %s (%s, %s)", i.Version, i.Revision, i.GoVersion, i.Platform)
}
