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
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"
)

// Output formats of `koordctl explain`.
const (
	OutputTable = "table"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
)

// Outputs lists the formats Print takes.
var Outputs = []string{OutputTable, OutputJSON, OutputYAML}

// tablePrinter is an explanation that can print itself for people.
type tablePrinter interface {
	printTable(p *printer)
}

// Print writes e in format: tables for people, or JSON or YAML of the explanation's struct for programs.
func Print(w io.Writer, format string, e tablePrinter) error {
	switch format {
	case OutputTable, "":
		p := &printer{w: w}
		e.printTable(p)
		return p.err
	case OutputJSON:
		data, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case OutputYAML:
		data, err := yaml.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode YAML: %w", err)
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("output %q: want one of %s", format, strings.Join(Outputs, ", "))
}

// printer writes the sections and tables of an explanation, keeping the first write error.
type printer struct {
	w   io.Writer
	err error
	// started tells whether a section was written, so that the next one is separated by a blank line.
	started bool
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// section starts a titled section.
func (p *printer) section(title string) {
	if p.started {
		p.printf("\n")
	}
	p.started = true
	p.printf("%s\n", title)
}

// fields writes "name: value" pairs aligned, skipping those with an empty value.
func (p *printer) fields(pairs ...string) {
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		if p.err == nil {
			_, p.err = fmt.Fprintf(tw, "  %s:\t%s\n", pairs[i], pairs[i+1])
		}
	}
	if p.err == nil {
		p.err = tw.Flush()
	}
}

// table writes rows under an upper-case header, indented.
func (p *printer) table(header []string, rows [][]string) {
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	line := func(cells []string) {
		if p.err == nil {
			_, p.err = fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
		}
	}
	upper := make([]string, len(header))
	for i, h := range header {
		upper[i] = strings.ToUpper(h)
	}
	line(upper)
	for _, r := range rows {
		line(r)
	}
	if p.err == nil {
		p.err = tw.Flush()
	}
}

// bullets writes one indented line per item.
func (p *printer) bullets(items []string) {
	for _, it := range items {
		p.printf("  - %s\n", it)
	}
}

// formatResources writes a resource list as "cpu=2, memory=4Gi", names sorted.
func formatResources(list corev1.ResourceList) string {
	names := make([]string, 0, len(list))
	for n := range list {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := list[corev1.ResourceName(n)]
		parts = append(parts, n+"="+q.String())
	}
	return strings.Join(parts, ", ")
}

// age words how long ago t was, as kubectl does ("3m20s"); "" for the zero time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t))
}
