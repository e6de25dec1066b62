package runtime

import (
	"reflect"
	"slices"
	"strings"
)

// JobType is a job type registered on a Router, for tools that build
// jobs of it at run time (the dashboard's dispatch form).
type JobType struct {
	// Name is the wire name it was registered under.
	Name string
	// Type is the type its body decodes into.
	Type reflect.Type
	// Options are the type's JobOptions, if it is a Job.
	Options JobOptions
}

// JobTypes returns the job types registered on r, by name.
func (r *Router) JobTypes() []JobType {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]JobType, 0, len(r.routes))
	for _, rt := range r.routes {
		out = append(out, JobType{Name: rt.name, Type: rt.typ, Options: rt.opts})
	}
	slices.SortFunc(out, func(a, b JobType) int { return strings.Compare(a.Name, b.Name) })
	return out
}
