package runtime

import (
	"fmt"

	"github.com/jobgen/jobgen/internal/seal"
)

// jobAD is the data bound to a job's sealed body, so that a body cannot
// be moved to another job.
func jobAD(env *Envelope) []byte { return []byte("jobgen:" + env.Name + ":" + env.ID) }

// seal encrypts env's body in place if its job is encrypted.
func (e *Engine) seal(env *Envelope) error {
	if !env.Encrypted {
		return nil
	}
	if e.cfg.Keys == nil {
		return fmt.Errorf("dispatch %s: %w", env.Name, ErrNoKeyRing)
	}
	b, err := e.cfg.Keys.Seal(env.Body, jobAD(env))
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	env.Body = b
	return nil
}

// sealPending seals env's body if it is marked Encrypted and is not in
// the sealed form (KeyRing.Seal's) yet. An engine with no key ring
// leaves it as it is: a job sealed elsewhere, a chain's link say, is
// pushed as it came, and the worker's engine opens it.
func (e *Engine) sealPending(env *Envelope) error {
	if !env.Encrypted || e.cfg.Keys == nil || seal.IsSealed(env.Body) {
		return nil
	}
	return e.seal(env)
}

// resealAs gives env the ID id, its sealed body sealed again under it.
func (e *Engine) resealAs(env *Envelope, id string) error {
	if !env.Encrypted {
		env.ID = id
		return nil
	}
	plain, err := e.cfg.Keys.Open(env.Body, jobAD(env))
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	env.ID, env.Body = id, plain
	return e.seal(env)
}

// encryptedType reports whether the options of T's zero value say
// Encrypted. A T that is not a Job, or whose JobOptions panics on a zero
// value, is taken as not encrypted.
func encryptedType[T any]() (enc bool) {
	defer func() {
		if recover() != nil {
			enc = false
		}
	}()
	var zero T
	j, ok := any(zero).(Job)
	return ok && j.JobOptions().Encrypted
}
