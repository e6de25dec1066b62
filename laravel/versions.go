package laravel

import (
	"fmt"

	"github.com/jobgen/jobgen/laravel/phpserial"
	"github.com/jobgen/jobgen/runtime"
)

// What differs between Laravel 8 and 13 in what the bridge reads and
// writes (docs/laravel.md, "Laravel versions", lists each with its
// source file). The payload's own changes (createdAt, batchId, delay,
// deleteWhenMissingModels) need nothing: DecodePayload reads what it
// knows, and a reserved job keeps every byte it was pushed with.

// minLaravel and maxLaravel bound Config.Laravel.
const minLaravel, maxLaravel = 8, 13

func checkLaravel(v int) error {
	if v != 0 && (v < minLaravel || v > maxLaravel) {
		return fmt.Errorf("%w: laravel.Config.Laravel (%d) must be a major version from %d to %d, or 0 for %d", runtime.ErrInvalid, v, minLaravel, maxLaravel, minLaravel)
	}
	return nil
}

// major is the app's Laravel major version, 8 when not given.
func (c Config) major() int {
	if c.Laravel == 0 {
		return minLaravel
	}
	return c.Laravel
}

// uniqueKey is Illuminate\Bus\UniqueLock::getKey of a job of class with
// uniqueID, as the app's version builds it:
//
//	8 to 10: laravel_unique_job:CLASS + ID
//	11:      laravel_unique_job:CLASS:ID
//	12, 13:  laravel_unique_job:NAME:ID, NAME the class, or xxh128 of
//	         displayName() for a class that defines it
//
// displayName is the payload's; one that is not the class means the
// class defines displayName(), whose xxh128 the bridge does not compute:
// that is an error.
func uniqueKey(major int, class, displayName, uniqueID string) (string, error) {
	switch {
	case major <= 10:
		return "laravel_unique_job:" + class + uniqueID, nil
	case major == 11:
		return "laravel_unique_job:" + class + ":" + uniqueID, nil
	}
	name, err := lockName(class, displayName, "unique")
	return "laravel_unique_job:" + name + ":" + uniqueID, err
}

// debounceKey is Illuminate\Bus\DebounceLock::getKey (13.x):
// laravel_debounced_job:NAME:ID, NAME as for uniqueKey.
func debounceKey(class, displayName, debounceID string) (string, error) {
	name, err := lockName(class, displayName, "debounce")
	return "laravel_debounced_job:" + name + ":" + debounceID, err
}

func lockName(class, displayName, kind string) (string, error) {
	if displayName != "" && displayName != class {
		return "", fmt.Errorf("%w: %s defines displayName() (%q), so Laravel 12+ names its %s lock by xxh128 of it, which the bridge does not compute", ErrUnmappable, class, displayName, kind)
	}
	return class, nil
}

// commandProp returns the property name of the serialized job command,
// whatever its visibility, and false if it has none.
func commandProp(command, name string) (any, bool) {
	v, err := phpserial.Unmarshal([]byte(command))
	if err != nil {
		return nil, false
	}
	o, ok := v.(*phpserial.Object)
	if !ok {
		return nil, false
	}
	for _, p := range o.Props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return nil, false
}

// commandString is commandProp for a string property, "" when absent.
func commandString(command, name string) string {
	v, _ := commandProp(command, name)
	s, _ := v.(string)
	if s == "" {
		if n, ok := v.(int64); ok {
			s = fmt.Sprint(n)
		}
	}
	return s
}
