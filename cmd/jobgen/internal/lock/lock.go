// Package lock is the schema lock: the file (model.LockFile) jobgen
// writes beside its generated code with the wire schema of each job,
// event and result type of a package, and the check that compares a
// package with it on the next run. A compatible change (a new field, a
// widened integer) updates the lock; a breaking change (a field's wire
// key renamed, a field removed, a type changed incompatibly, a job's wire
// name changed) is refused with the ways forward, unless the job
// declares a new version with an upgrade from the one in the lock, or
// the run accepts the break by name, which the lock records.
package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// header is the lock's first key, saying what the file is.
const header = "Written by jobgen: the wire schema of this package's jobs, events and results. Commit it. go generate refuses a change to a type here that would break jobs already queued (docs/changing-jobs.md)."

// formatVersion is the lock's format.
const formatVersion = 1

// File is a lock file's content.
type File struct {
	About  string `json:"about"`
	Format int    `json:"format"`
	// Types are the wire types, sorted by Type.
	Types []Type `json:"types"`
}

// Type is one wire type's entry.
type Type struct {
	// Type is the Go type's name, which the lock is keyed by.
	Type string `json:"type"`
	// Kind is "job", "event" or "result".
	Kind string `json:"kind"`
	// Name is a job's wire name.
	Name string `json:"name,omitempty"`
	// Version is the schema version, 1 unless the job declared more.
	Version int `json:"version"`
	// Fields are the fields msgpack carries, in declaration order.
	Fields []Field `json:"fields"`
	// Previous are the earlier versions, oldest first, whose jobs a
	// worker upgrades.
	Previous []Version `json:"previous,omitempty"`
	// Accepted records each break accepted on purpose.
	Accepted []Break `json:"accepted,omitempty"`
}

// Field is one field of a wire type.
type Field struct {
	Key   string `json:"key"`
	Field string `json:"field,omitempty"`
	Type  string `json:"type"`
	// OmitEmpty: tagged omitempty, so a body may lack it.
	OmitEmpty bool `json:"omitempty,omitempty"`
	// Added: added since the type entered the lock at its version, so
	// bodies queued before lack it and it decodes as zero.
	Added bool `json:"added,omitempty"`
}

// Version is an earlier version of a job's schema.
type Version struct {
	Version int     `json:"version"`
	Fields  []Field `json:"fields"`
}

// Break is a breaking change accepted on purpose (jobgen
// -accept-break): the version it was made to and what changed.
type Break struct {
	Version int      `json:"version"`
	Changes []string `json:"changes"`
}

// Read reads the lock at path; a missing file is an empty lock.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v; it is jobgen's schema lock: restore it from version control, or delete it to start a new lock (which forgets what jobs already queued carry)", path, err)
	}
	if f.Format != formatVersion {
		return nil, fmt.Errorf("%s: lock format %d, this jobgen reads %d; run the jobgen that wrote it, or a newer one", path, f.Format, formatVersion)
	}
	return &f, nil
}

// Encode returns f as the lock file holds it: JSON with a type's
// heading on one line and each field on a line of its own, types sorted,
// ending in a newline, so that the same schema always gives the same
// bytes and a change shows as a line in a diff.
func (f *File) Encode() ([]byte, error) {
	f.About, f.Format = header, formatVersion
	slices.SortFunc(f.Types, func(a, b Type) int { return strings.Compare(a.Type, b.Type) })
	var b bytes.Buffer
	w := &writer{buf: &b}
	b.WriteString("{\n  \"about\": ")
	w.value(f.About)
	b.WriteString(",\n  \"format\": ")
	w.value(f.Format)
	b.WriteString(",\n  \"types\": [")
	for i, t := range f.Types {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    {")
		fmt.Fprintf(&b, "\"type\": %s, \"kind\": %s", w.text(t.Type), w.text(t.Kind))
		if t.Name != "" {
			fmt.Fprintf(&b, ", \"name\": %s", w.text(t.Name))
		}
		fmt.Fprintf(&b, ", \"version\": %d,\n      \"fields\": ", t.Version)
		w.fields(t.Fields, "      ")
		if len(t.Previous) > 0 {
			b.WriteString(",\n      \"previous\": [")
			for j, v := range t.Previous {
				if j > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "\n        {\"version\": %d, \"fields\": ", v.Version)
				w.fields(v.Fields, "        ")
				b.WriteString("}")
			}
			b.WriteString("\n      ]")
		}
		if len(t.Accepted) > 0 {
			b.WriteString(",\n      \"accepted\": [")
			for j, a := range t.Accepted {
				if j > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "\n        {\"version\": %d, \"changes\": %s}", a.Version, w.text(a.Changes))
			}
			b.WriteString("\n      ]")
		}
		b.WriteString("}")
	}
	b.WriteString("\n  ]\n}\n")
	if w.err != nil {
		return nil, w.err
	}
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("the lock written is not valid JSON")
	}
	return b.Bytes(), nil
}

// writer writes JSON values without HTML escapes.
type writer struct {
	buf *bytes.Buffer
	err error
}

func (w *writer) text(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && w.err == nil {
		w.err = err
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (w *writer) value(v any) { w.buf.WriteString(w.text(v)) }

// fields writes fs one a line, indented by indent.
func (w *writer) fields(fs []Field, indent string) {
	if len(fs) == 0 {
		w.buf.WriteString("[]")
		return
	}
	w.buf.WriteString("[")
	for i, f := range fs {
		if i > 0 {
			w.buf.WriteString(",")
		}
		w.buf.WriteString("\n" + indent + "  " + w.text(f))
	}
	w.buf.WriteString("\n" + indent + "]")
}

// find returns the entry of type name, or nil.
func (f *File) find(name string) *Type {
	for i := range f.Types {
		if f.Types[i].Type == name {
			return &f.Types[i]
		}
	}
	return nil
}
