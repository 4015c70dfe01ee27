// Package crypt is SRT's payload encryption (draft-sharabayko-srt §6, libsrt's HaiCrypt):
// the Key Material (KM) message, the key encrypting key from a passphrase, AES-CTR on data
// payloads, and the even/odd key refresh of a live connection. It does no I/O; the SRT link
// calls it, one Sender and one Receiver per encrypted connection.
//
// Keys: the sender draws a 16-byte salt and a stream encrypting key (SEK) of 16, 24 or 32
// bytes. KEK = PBKDF2-HMAC-SHA1(passphrase, salt[8:16], 2048 iterations, SEK length); the KM
// carries the salt and the SEK(s) wrapped with the KEK by AES key wrap (RFC 3394), so a wrong
// passphrase fails the wrap's integrity check (ErrBadPassphrase).
//
// KM layout (all big-endian): byte 0 = 0x12 (S=0, version 1, packet type 2), bytes 1..2 = 0x2029
// ('HAI'), byte 3 = KK in its low 2 bits (1 even, 2 odd, 3 both), bytes 4..7 = KEKI 0, byte 8 =
// cipher 2 (AES-CTR), 9 = auth 0, 10 = SE 2 (MPEG-TS/SRT), 11..13 = 0, 14 = salt length/4 (4),
// 15 = key length/4 (4, 6, 8); then the 16-byte salt; then the wrap: an 8-byte integrity value
// and the wrapped SEK(s), even first when both. A KMRSP may instead be a single 32-bit KM state
// (ParseKMState).
//
// Payload: AES-CTR with the SEK the packet's KK bits name. The initial counter block is the
// first 14 bytes of the salt XOR (10 zero bytes, then the packet sequence number as 4
// big-endian bytes), followed by a 16-bit block counter starting at 0; the counter block
// increments by one per 16 bytes of payload. Encryption and decryption are the same operation,
// in place, allocation-free.
//
// Refresh: each SEK encrypts Refresh.Rate packets (libsrt's SRTO_KMREFRESHRATE, default 2^24).
// Refresh.PreAnnounce packets before the switch (SRTO_KMPREANNOUNCE, default 2^12) the sender
// makes the next SEK, alternating even and odd, and announces both in a KM the link sends in a
// KMREQ; at the switch the new key encrypts, and PreAnnounce packets after it the old key is
// retired. The salt, and so the KEK, stays the same for the whole connection, as in libsrt.
package crypt
