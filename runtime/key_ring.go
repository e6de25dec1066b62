package runtime

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// Key is one AES key of a KeyRing.
type Key struct {
	// ID names the key inside every payload sealed with it, so a worker
	// knows which key opens it: 1 to 255 bytes, unique within the ring.
	// It is not secret.
	ID string
	// Secret is the AES key: 16, 24 or 32 bytes (AES-128, -192, -256).
	Secret []byte
}

// KeyRing seals and opens the bodies of encrypted jobs (the `encrypted`
// annotation, JobOptions.Encrypted) with AES-GCM. The first key seals;
// any key of the ring opens. To rotate, put a new key first and keep the
// old ones until every job sealed with them has run. It is safe for
// concurrent use.
type KeyRing struct {
	ids   []string
	aeads map[string]cipher.AEAD
}

// NewKeyRing returns a ring of keys, the first of which seals.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: key ring: no keys", ErrInvalid)
	}
	k := &KeyRing{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, key := range keys {
		switch {
		case key.ID == "" || len(key.ID) > 255:
			return nil, fmt.Errorf("%w: key ring: key %d: ID must be 1 to 255 bytes", ErrInvalid, i)
		case k.aeads[key.ID] != nil:
			return nil, fmt.Errorf("%w: key ring: key ID %q appears twice", ErrInvalid, key.ID)
		}
		block, err := aes.NewCipher(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("%w: key ring: key %q: secret is %d bytes, want 16, 24 or 32", ErrInvalid, key.ID, len(key.Secret))
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

// ParseKeyRing reads a key ring from text such as an environment
// variable: comma-separated id:secret pairs, each secret in standard
// base64, the sealing key first. For example
// "2025-06:q2d...=,2025-01:Zm9...=". Empty (or blank) text is no ring:
// it returns nil and no error, and a nil ring in EngineConfig.Keys means
// no encryption, so an optional variable needs no if.
func ParseKeyRing(s string) (*KeyRing, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var keys []Key
	for i, item := range strings.Split(s, ",") {
		id, secret, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, fmt.Errorf("%w: key ring: item %d: want id:base64-secret", ErrInvalid, i+1)
		}
		b, err := base64.StdEncoding.DecodeString(secret)
		if err != nil {
			return nil, fmt.Errorf("%w: key ring: key %q: secret is not standard base64", ErrInvalid, id)
		}
		keys = append(keys, Key{ID: id, Secret: b})
	}
	return NewKeyRing(keys...)
}

// IDs lists the ring's key IDs, the sealing key first.
// A nil ring has none.
func (k *KeyRing) IDs() []string {
	if k == nil {
		return nil
	}
	return slices.Clone(k.ids)
}

// sealedVersion starts every sealed body.
const sealedVersion = 1

// Seal encrypts plaintext under the ring's first key. ad is
// authenticated but not encrypted: the same ad must be given to Open.
// The result is: version byte, key ID length, key ID, nonce, ciphertext
// and tag; the version and key ID are authenticated too.
func (k *KeyRing) Seal(plaintext, ad []byte) ([]byte, error) {
	id := k.ids[0]
	aead := k.aeads[id]
	head := make([]byte, 0, 2+len(id)+aead.NonceSize())
	head = append(head, sealedVersion, byte(len(id)))
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

// isSealed reports whether b is in the form Seal writes: its version,
// a key ID of 1 to 255 bytes, and room for a nonce and a tag. A job's
// body in clear, a msgpack map, starts otherwise.
func isSealed(b []byte) bool {
	return len(b) >= 2 && b[0] == sealedVersion && b[1] > 0 && len(b) >= 2+int(b[1])+12+16
}

// Open decrypts what Seal returned, with whichever key of the ring it
// names. Every failure wraps ErrDecrypt.
func (k *KeyRing) Open(sealed, ad []byte) ([]byte, error) {
	if len(sealed) < 2 || sealed[0] != sealedVersion {
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
