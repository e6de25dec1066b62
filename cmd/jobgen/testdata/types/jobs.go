// Package reports is a golden case for the shapes of job types: jobs in
// a type group, embedded structs, recursive types, types that encode
// themselves, fields msgpack skips, and explicit wire names.
package reports

import (
	"encoding/json"
	"time"
)

type (
	// BuildReport builds one report.
	//
	//job:name=reports.build/v2 queue=reports timeout=15m tags=reports,slow
	BuildReport struct {
		Meta
		Spec    json.RawMessage
		Filters map[string][]string
		Period  [2]time.Time
		Tree    *Node
	}

	// PurgeCache carries no data.
	//
	//job:queue=maintenance unique_for=1h
	PurgeCache struct{}
)

// Meta is embedded in jobs; msgpack inlines it.
type Meta struct {
	RequestedBy string
	At          time.Time
}

// Node is a recursive type.
type Node struct {
	Name     string
	Children []*Node
}

// Secret encodes itself, so what it holds is its own business.
type Secret struct{ reveal func() string }

// MarshalText encodes the secret, redacted.
func (Secret) MarshalText() ([]byte, error) { return []byte("redacted"), nil }

// UnmarshalText decodes a redacted secret.
func (s *Secret) UnmarshalText([]byte) error {
	*s = Secret{reveal: func() string { return "redacted" }}
	return nil
}

// ExportReport sends a report somewhere.
//
//job:name=reports.export encrypted max_exceptions=3 backoff=500ms
type ExportReport struct {
	ReportID string
	Token    Secret
	Progress func(int) `msgpack:"-"`
	done     chan struct{}
}
