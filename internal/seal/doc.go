// Package seal seals and opens the bodies of encrypted jobs with AES-GCM
// under a ring of keys (Ring): the first key seals, any key of the ring
// opens, and every sealed body names the key that sealed it. It also
// reads a ring from text (ParseKeys). runtime.KeyRing is the public face
// of a Ring.
//
// # The sealed form
//
// A version byte (1), the key ID's length (1 to 255), the key ID, a
// 12-byte nonce, the ciphertext and a 16-byte tag. The version and the
// key ID are authenticated with the caller's additional data.
package seal
