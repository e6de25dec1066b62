package load

import (
	"go/ast"
	"strings"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// checkLaravel checks the options of a job that stands for a PHP job
// (laravel=) against what the bridge can carry: an encrypted job is a
// ShouldBeEncrypted class, whose serialized command Laravel seals, and a
// string job (Class@method) has no command to seal.
func (l *loader) checkLaravel(spec *ast.TypeSpec, job model.Job) {
	if job.Laravel == "" || !job.Options.Encrypted || !strings.Contains(job.Laravel, "@") {
		return
	}
	l.errs.add(l.position(spec.Name.Pos()), "%s: laravel=%s is a string job, whose data Laravel sends as plain JSON, and encrypted seals a queued class's command (ShouldBeEncrypted); drop encrypted, or map the job to a queued class", job.TypeName, job.Laravel)
}
