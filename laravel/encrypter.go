package laravel

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jobgen/jobgen/laravel/phpserial"
	"github.com/jobgen/jobgen/runtime"
)

// Encrypter is Laravel's Illuminate\Encryption\Encrypter for
// AES-256-CBC, the cipher of a default app: what it seals a
// ShouldBeEncrypted job's data.command with. A sealed value is base64 of
// JSON {iv, value, mac, tag}: value is the ciphertext of the PKCS#7-padded
// plaintext, base64; mac is HMAC-SHA256 of iv and value, hex; tag is
// empty. It opens what any of its keys sealed, as Laravel 11's previous
// keys do, and seals with the first.
type Encrypter struct {
	keys [][]byte
}

// NewEncrypter returns the encrypter of an app whose APP_KEY is key, and
// which once had the previous keys (APP_PREVIOUS_KEYS). A key is written
// as in .env: "base64:" and 32 bytes in base64, or 32 raw bytes.
func NewEncrypter(key string, previous ...string) (*Encrypter, error) {
	e := &Encrypter{}
	for i, k := range append([]string{key}, previous...) {
		raw := []byte(k)
		if b64, ok := strings.CutPrefix(k, "base64:"); ok {
			var err error
			if raw, err = base64.StdEncoding.DecodeString(b64); err != nil {
				return nil, fmt.Errorf("%w: laravel: key %d is not valid base64: %v", runtime.ErrInvalid, i, err)
			}
		}
		if len(raw) != 32 {
			return nil, fmt.Errorf("%w: laravel: key %d is %d bytes; AES-256-CBC takes 32 (APP_KEY=base64:..., as php artisan key:generate writes it)", runtime.ErrInvalid, i, len(raw))
		}
		e.keys = append(e.keys, raw)
	}
	return e, nil
}

// sealed is an Encrypter's payload.
type sealed struct {
	IV    string `json:"iv"`
	Value string `json:"value"`
	MAC   string `json:"mac"`
	Tag   string `json:"tag"`
}

// Encrypt seals plaintext as Laravel's encryptString does (no serialize).
func (e *Encrypter) Encrypt(plaintext []byte) (string, error) {
	key := e.keys[0]
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	iv := make([]byte, aes.BlockSize)
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	pad := aes.BlockSize - len(plaintext)%aes.BlockSize
	buf := append(bytes.Clone(plaintext), bytes.Repeat([]byte{byte(pad)}, pad)...)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf, buf)
	s := sealed{IV: base64.StdEncoding.EncodeToString(iv), Value: base64.StdEncoding.EncodeToString(buf)}
	s.MAC = mac(key, s.IV, s.Value)
	js, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(js), nil
}

// Decrypt opens what Encrypt, or Laravel's encryptString, sealed with any
// of the encrypter's keys.
func (e *Encrypter) Decrypt(payload string) ([]byte, error) {
	js, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, errors.New("the payload is not base64")
	}
	var s sealed
	if err := json.Unmarshal(js, &s); err != nil || s.IV == "" || s.Value == "" || s.MAC == "" {
		return nil, errors.New("the payload is invalid")
	}
	iv, err := base64.StdEncoding.DecodeString(s.IV)
	if err != nil || len(iv) != aes.BlockSize {
		return nil, errors.New("the payload's iv is invalid")
	}
	value, err := base64.StdEncoding.DecodeString(s.Value)
	if err != nil || len(value) == 0 || len(value)%aes.BlockSize != 0 {
		return nil, errors.New("the payload's value is invalid")
	}
	for _, key := range e.keys {
		if !hmac.Equal([]byte(mac(key, s.IV, s.Value)), []byte(s.MAC)) {
			continue
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		out := bytes.Clone(value)
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, out)
		pad := int(out[len(out)-1])
		if pad < 1 || pad > aes.BlockSize || pad > len(out) || !bytes.Equal(out[len(out)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
			return nil, errors.New("could not decrypt the data")
		}
		return out[:len(out)-pad], nil
	}
	return nil, errors.New("the MAC is invalid: sealed with a key this encrypter does not hold (APP_KEY)")
}

// mac is Laravel's Encrypter::hash: HMAC-SHA256 of iv and value, hex.
func mac(key []byte, iv, value string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(iv + value))
	return hex.EncodeToString(h.Sum(nil))
}

// sealCommand seals a serialized job as Laravel's Queue::createObjectPayload
// does for a ShouldBeEncrypted job: encrypt(serialize($job)), which
// serializes the serialized job once more, as a PHP string.
func (e *Encrypter) sealCommand(command []byte) (string, error) {
	outer, err := phpserial.Marshal(string(command))
	if err != nil {
		return "", err
	}
	return e.Encrypt(outer)
}

// openCommand opens a sealed data.command, as CallQueuedHandler does:
// unserialize(decrypt($command)), a serialized job.
func (e *Encrypter) openCommand(command string) (string, error) {
	plain, err := e.Decrypt(command)
	if err != nil {
		return "", fmt.Errorf("%w: data.command is sealed: %v", ErrUnmappable, err)
	}
	v, err := phpserial.Unmarshal(plain)
	if err != nil {
		return "", fmt.Errorf("%w: sealed data.command: %w", ErrUnmappable, err)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: sealed data.command holds %s, not a serialized job", ErrUnmappable, phpType(v))
	}
	return s, nil
}

// commandNotAJob returns an error matching ErrUnmappable when command is PHP's
// serialize() of something that is neither a job object ("O:...") nor
// sealed: an array ("a:..."), a string, a number, a bool or null.
// CallQueuedHandler would try to decrypt it and fail ("The payload is
// invalid"); it is no sealed job, and saying so would send its reader
// after the app's key. A sealed command is base64, which has no ':' or
// ';'. It returns nil for anything else.
func commandNotAJob(class, command string) error {
	kind := ""
	switch {
	case command == "N;":
		kind = "null"
	case len(command) < 2 || command[1] != ':':
	case command[0] == 'a':
		kind = "an array"
	case command[0] == 's' || command[0] == 'S':
		kind = "a string"
	case command[0] == 'i' || command[0] == 'd':
		kind = "a number"
	case command[0] == 'b':
		kind = "a bool"
	case command[0] == 'C' || command[0] == 'E':
		kind = "a custom-serialized object or enum"
	}
	if kind == "" {
		return nil
	}
	return fmt.Errorf("%w: data.command of %s is a serialized PHP value, %s, not a job object (O:...) and not sealed: Laravel's CallQueuedHandler cannot run it either", ErrUnmappable, class, kind)
}
