package runtime

import (
	"fmt"
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

// open decrypts env's body in place if it is sealed. It refuses a
// plaintext body for a job type registered as encrypted, so that nobody
// with write access to Redis can slip one in.
func (w *Worker) open(env *Envelope) error {
	if !env.Encrypted {
		if rt := w.r.lookup(env.Name); rt != nil && rt.encrypted {
			return fmt.Errorf("%w: job %s (%s) is an encrypted job type but its payload is not sealed", ErrDecrypt, env.ID, env.Name)
		}
		return nil
	}
	ring := w.e.cfg.Keys
	if ring == nil {
		return fmt.Errorf("%w: job %s (%s) is sealed but this worker's engine has no key ring (EngineConfig.Keys)", ErrDecrypt, env.ID, env.Name)
	}
	plain, err := ring.Open(env.Body, jobAD(env))
	if err != nil {
		return fmt.Errorf("job %s (%s): %w", env.ID, env.Name, err)
	}
	env.Body, env.Encrypted = plain, false
	return nil
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
