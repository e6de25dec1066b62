package model

import "go/token"

// LockFile is the name of the schema lock jobgen writes beside
// OutputFile in each package with jobs, events or results: each wire
// type's name, version and fields as msgpack carries them. It is
// committed; the next run compares the package with it and refuses a
// breaking change (docs/changing-jobs.md).
const LockFile = "jobgen.lock"

// WireOptions are what a job's annotation says about its wire schema.
type WireOptions struct {
	// Version is the `version=` key: the schema's version, 0 for 1.
	Version int
	// Upgrade is the `upgrade=` key: the type, of this package, holding
	// the previous version's fields, whose Upgrade method returns the
	// job. Empty for none.
	Upgrade string
	// Lenient is `decode=lenient`: unknown keys are skipped and missing
	// fields left zero, rather than failing the job.
	Lenient bool
	// Optional are the wire keys of fields added since the job entered
	// the lock at its version: older bodies lack them. The lock check
	// fills it.
	Optional []string
}

// SchemaVersion is the version the options declare, at least 1.
func (w WireOptions) SchemaVersion() int { return max(w.Version, 1) }

// Wire kinds: what a wire type of the lock is.
const (
	KindJob    = "job"
	KindEvent  = "event"
	KindResult = "result"
	// KindStruct is a struct type of the package that a wire type's
	// field holds (directly, or through pointers, slices, arrays and
	// maps): its fields are on the wire too.
	KindStruct = "struct"
)

// WireType is one type whose values travel through Redis (a job, a
// `//job:event` struct, a job's result type), with its wire schema, as
// the loader reads it for the lock.
type WireType struct {
	// Kind is KindJob, KindEvent or KindResult.
	Kind string
	// TypeName is the Go type's name; the lock is keyed by it.
	TypeName string
	// Name is a job's wire name; the TypeName for the others.
	Name string
	// Pos is where the type is declared.
	Pos token.Position
	// Wire is what a job's annotation says; zero for the others.
	Wire WireOptions
	// Fields are the fields msgpack carries, in declaration order.
	Fields []WireField
	// Upgrade is the upgrade type's fields, for a job with `upgrade=`.
	Upgrade []WireField
}

// WireField is one field as msgpack carries it.
type WireField struct {
	// Key is the wire key: the msgpack tag's name, or the field's name.
	Key string
	// Field is the Go field's name, dotted through inlined structs.
	Field string
	// Type is the field's type as the wire sees it: a named type whose
	// underlying type is basic is written as that basic type.
	Type string
	// OmitEmpty is set for a field tagged omitempty.
	OmitEmpty bool
	// Pos is where the field is declared.
	Pos token.Position
}
