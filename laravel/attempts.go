package laravel

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// bumpAttempts returns job as the reserved set holds it while a worker
// runs it: the payload with its top-level attempts one more, every other
// byte as it was. It returns false, and job as it is, for a payload that
// is not a JSON object whose attempts is a number.
//
// It edits the bytes of the attempts value in place rather than decoding
// and encoding the payload: an encoder would write the payload anew (key
// order, escapes, number forms, [] against {}), and the reserved string
// is the key that deletes or releases the job, so it should differ from
// what was pushed only where Laravel's count has to change. When the key
// appears more than once, the last is the one PHP's json_decode and Go's
// decoder keep, and the one bumped.
func bumpAttempts(job []byte) ([]byte, bool) {
	start, end, ok := attemptsSpan(job)
	if !ok {
		return job, false
	}
	n, ok := nextAttempts(job[start:end])
	if !ok {
		return job, false
	}
	out := make([]byte, 0, len(job)+len(n)-(end-start))
	out = append(out, job[:start]...)
	out = append(out, n...)
	return append(out, job[end:]...), true
}

// attemptsSpan returns where the value of the last top-level "attempts"
// key of the JSON object job lies, and false if job is not one JSON
// object or has no such key.
//
// It checks job with json.Valid, then walks only the top level: on
// valid JSON, a value ends where its brackets balance (outside strings)
// or at the next delimiter.
func attemptsSpan(job []byte) (start, end int, ok bool) {
	if !json.Valid(job) {
		return 0, 0, false
	}
	i := skipSpace(job, 0)
	if job[i] != '{' {
		return 0, 0, false
	}
	i = skipSpace(job, i+1)
	for job[i] != '}' {
		keyEnd := skipString(job, i)
		key := job[i:keyEnd]
		i = skipSpace(job, keyEnd)
		i = skipSpace(job, i+1) // past ':'
		valEnd := skipValue(job, i)
		if isAttempts(key) {
			start, end, ok = i, valEnd, true
		}
		i = skipSpace(job, valEnd)
		if job[i] == ',' {
			i = skipSpace(job, i+1)
		}
	}
	return start, end, ok
}

// isAttempts reports whether the JSON string key reads "attempts".
func isAttempts(key []byte) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == `"attempts"`
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == "attempts"
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the JSON string at b[i].
func skipString(b []byte, i int) int {
	for i++; b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// skipValue returns the end of the JSON value at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && bytes.IndexByte([]byte(",}] \t\n\r"), b[i]) < 0 {
		i++
	}
	return i
}

// nextAttempts returns the JSON number v plus one, and false if v is not
// a number or is so large that adding one does not change it. A whole number is written as an
// integer, anything else in Go's shortest form.
func nextAttempts(v []byte) ([]byte, bool) {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return nil, false // a string, object, array, bool or null
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n < math.MaxInt64 {
		return strconv.AppendInt(nil, n+1, 10), true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f+1 == f {
		return nil, false // too large to count on (or past float64)
	}
	f++
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.AppendInt(nil, int64(f), 10), true
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), true
}
