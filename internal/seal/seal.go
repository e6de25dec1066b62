package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrDecrypt is wrapped by every failure of Open (runtime.ErrDecrypt).
var ErrDecrypt = errors.New("jobgen: cannot decrypt job")

// InvalidError is a key or a ring's text that cannot make a ring; its
// text names the key or item at fault. runtime wraps it in
// runtime.ErrInvalid.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// Key is one AES key of a Ring.
type Key struct {
	// ID names the key inside every payload sealed with it: 1 to 255
	// bytes, unique within the ring.
	ID string
	// Secret is the AES key: 16, 24 or 32 bytes (AES-128, -192, -256).
	Secret []byte
}

// Ring is a ring of AES-GCM keys, the first of which seals. It is safe
// for concurrent use.
type Ring struct {
	ids   []string
	aeads map[string]cipher.AEAD
}

// New returns a ring of keys, the first of which seals. A key that
// cannot be used is an *InvalidError.
func New(keys ...Key) (*Ring, error) {
	if len(keys) == 0 {
		return nil, invalid("key ring: no keys")
	}
	k := &Ring{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, key := range keys {
		switch {
		case key.ID == "" || len(key.ID) > 255:
			return nil, invalid("key ring: key %d: ID must be 1 to 255 bytes", i)
		case k.aeads[key.ID] != nil:
			return nil, invalid("key ring: key ID %q appears twice", key.ID)
		}
		block, err := aes.NewCipher(key.Secret)
		if err != nil {
			return nil, invalid("key ring: key %q: secret is %d bytes, want 16, 24 or 32", key.ID, len(key.Secret))
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key ring: key %q: %w", key.ID, err)
		}
		k.ids = append(k.ids, key.ID)
		k.aeads[key.ID] = aead
	}
	return k, nil
}

// ParseKeys reads keys from text such as an environment variable:
// comma-separated id:secret pairs, each secret in standard base64, the
// sealing key first. Empty (or blank) text is no keys, and no error. An
// item it cannot read is an *InvalidError.
func ParseKeys(s string) ([]Key, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var keys []Key
	for i, item := range strings.Split(s, ",") {
		id, secret, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, invalid("key ring: item %d: want id:base64-secret", i+1)
		}
		b, err := base64.StdEncoding.DecodeString(secret)
		if err != nil {
			return nil, invalid("key ring: key %q: secret is not standard base64", id)
		}
		keys = append(keys, Key{ID: id, Secret: b})
	}
	return keys, nil
}

// IDs lists the ring's key IDs, the sealing key first.
func (k *Ring) IDs() []string { return slices.Clone(k.ids) }

// version starts every sealed body.
const version = 1

// Seal encrypts plaintext under the ring's first key. ad is
// authenticated but not encrypted: the same ad must be given to Open.
func (k *Ring) Seal(plaintext, ad []byte) ([]byte, error) {
	id := k.ids[0]
	aead := k.aeads[id]
	head := make([]byte, 0, 2+len(id)+aead.NonceSize())
	head = append(head, version, byte(len(id)))
	head = append(head, id...)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	out := make([]byte, 0, len(head)+len(nonce)+len(plaintext)+aead.Overhead())
	out = append(out, head...)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, append(head, ad...)), nil
}

// IsSealed reports whether b is in the form Seal writes: its version,
// a key ID of 1 to 255 bytes, and room for a nonce and a tag. A job's
// body in clear, a msgpack map, starts otherwise.
func IsSealed(b []byte) bool {
	return len(b) >= 2 && b[0] == version && b[1] > 0 && len(b) >= 2+int(b[1])+12+16
}

// Open decrypts what Seal returned, with whichever key of the ring it
// names. Every failure wraps ErrDecrypt.
func (k *Ring) Open(sealed, ad []byte) ([]byte, error) {
	if len(sealed) < 2 || sealed[0] != version {
		return nil, fmt.Errorf("%w: not a sealed payload (unknown format)", ErrDecrypt)
	}
	n := int(sealed[1])
	if len(sealed) < 2+n {
		return nil, fmt.Errorf("%w: sealed payload is truncated", ErrDecrypt)
	}
	id := string(sealed[2 : 2+n])
	aead := k.aeads[id]
	if aead == nil {
		return nil, fmt.Errorf("%w: sealed with key %q, which is not in the key ring (keys: %s)", ErrDecrypt, id, strings.Join(k.ids, ", "))
	}
	head := sealed[:2+n]
	rest := sealed[2+n:]
	if len(rest) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("%w: sealed payload is truncated", ErrDecrypt)
	}
	nonce, ct := rest[:aead.NonceSize()], rest[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, append(slices.Clip(head), ad...))
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed under key %q (the payload was altered, or sealed with another secret under that ID)", ErrDecrypt, id)
	}
	return plain, nil
}
