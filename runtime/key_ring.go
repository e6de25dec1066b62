package runtime

import (
	"errors"
	"fmt"

	"github.com/jobgen/jobgen/internal/seal"
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
	r *seal.Ring // the keys and the sealed form (internal/seal)
}

// NewKeyRing returns a ring of keys, the first of which seals.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	sk := make([]seal.Key, len(keys))
	for i, k := range keys {
		sk[i] = seal.Key(k)
	}
	r, err := seal.New(sk...)
	if err != nil {
		return nil, invalidKeys(err)
	}
	return &KeyRing{r: r}, nil
}

// ParseKeyRing reads a key ring from text such as an environment
// variable: comma-separated id:secret pairs, each secret in standard
// base64, the sealing key first. For example
// "2025-06:q2d...=,2025-01:Zm9...=". Empty (or blank) text is no ring:
// it returns nil and no error, and a nil ring in EngineConfig.Keys means
// no encryption, so an optional variable needs no if.
func ParseKeyRing(s string) (*KeyRing, error) {
	keys, err := seal.ParseKeys(s)
	if err != nil || keys == nil {
		return nil, invalidKeys(err)
	}
	r, err := seal.New(keys...)
	if err != nil {
		return nil, invalidKeys(err)
	}
	return &KeyRing{r: r}, nil
}

// invalidKeys wraps in ErrInvalid the fault seal found in keys.
func invalidKeys(err error) error {
	if ie := (*seal.InvalidError)(nil); errors.As(err, &ie) {
		return fmt.Errorf("%w: %s", ErrInvalid, ie.Msg)
	}
	return err
}

// IDs lists the ring's key IDs, the sealing key first.
// A nil ring has none.
func (k *KeyRing) IDs() []string {
	if k == nil {
		return nil
	}
	return k.r.IDs()
}

// Seal encrypts plaintext under the ring's first key. ad is
// authenticated but not encrypted: the same ad must be given to Open.
// The result is: version byte, key ID length, key ID, nonce, ciphertext
// and tag; the version and key ID are authenticated too.
func (k *KeyRing) Seal(plaintext, ad []byte) ([]byte, error) { return k.r.Seal(plaintext, ad) }

// Open decrypts what Seal returned, with whichever key of the ring it
// names. Every failure wraps ErrDecrypt.
func (k *KeyRing) Open(sealed, ad []byte) ([]byte, error) { return k.r.Open(sealed, ad) }
