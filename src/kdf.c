/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdf.c - the standard security handler's password side: password
 * preparation and the key derivation and checks of ISO 32000-2 7.6.4
 * (Algorithms 2.A, 2.B, 8, 9, 10 and 13).  Pure functions of the handler
 * parameters (ps_secparams) and a password or file key; the handler object
 * that holds them is sec.c.  The legacy Algorithms 1-7 (RC4/MD5, R2-R4,
 * ISO 32000-1 7.6.3) are here too, beside them (design note 6).
 *
 * DESIGN NOTES
 *
 * References are to ISO 32000-2:2020 7.6.4 ("Alg." = numbered algorithm).
 *
 *  1. Passwords are prepared once per call (Alg. 2.A steps a-b, 7.6.4.3.3):
 *     SASLprep (RFC 4013 through libidn's stringprep, i.e. the Unicode 3.2
 *     tables), UTF-8, truncated to 127 bytes.  If SASLprep refuses the input
 *     (invalid UTF-8, prohibited or BiDi-violating characters, an embedded
 *     NUL) the raw bytes, truncated, are used instead.  Authentication also
 *     tries the raw bytes when they differ from the prepared form, which
 *     covers writers that skip SASLprep (qpdf, MuPDF) and R5 files, which
 *     predate it.
 *  2. Owner before user (Alg. 2.A order): every candidate password is tried
 *     as owner first, so a password that is both opens as owner.  One
 *     Alg. 2.B hash per role, not two: Alg. 2.A checks a password with a
 *     hash over the validation salt (step c for the owner, Alg. 12; step e
 *     for the user, Alg. 11) and then derives the intermediate key with a
 *     second hash over the key salt (steps d, f).  ps_kdf_authenticate
 *     computes the key hash first, unwraps /OE (or /UE) and accepts the
 *     key when /Perms decrypts under it to a block that agrees with /P and
 *     /EncryptMetadata (Alg. 13, 7.6.4.4.12): "adb", the 32 bits of P and
 *     T/F, 2^-64 odds for a wrong key, where a wrong password gives
 *     a pseudo-random one.  Only when /Perms confirms neither role (a
 *     wrong password, or a /Perms that is missing, tampered or written
 *     wrong) are the validation hashes computed, owner then user, as in
 *     Alg. 2.A, and the key already derived for the role that matches is
 *     used.  Hashes per call: owner 1, user 2 (owner's key hash, then
 *     user's), a wrong password 4, and with a /Perms that does not match,
 *     owner 3 and user 4 (per candidate password, note 1).  Alg. 2.A's
 *     order spends 2 on the owner, 3 on the user (a failed owner check,
 *     then 2) and 2 on a wrong password.  Every hash is counted in
 *     ctx->kdf_hashes.
 *  3. Nothing is written to the caller's KEY unless authentication
 *     succeeded; every intermediate (prepared passwords, hash state, the
 *     Alg. 2.B scratch, intermediate keys, AES schedules) is in a local
 *     that is wiped on every path, and after each Alg. 2.B hash,
 *     authentication and new /Encrypt the vector registers are zeroed
 *     (cpu.c note 4), by one function, wiped(): each public entry point
 *     that handles a password, and each hash, is `return wiped(ctx,
 *     worker(...))` around a static worker.  libidn's own temporary UCS-4
 *     copies, which it frees without wiping, stay in a short-lived child
 *     process (saslprep_isolated); the work is done in process only when
 *     no child can be made (with a warning) and in fuzzing builds.
 *  4. The AES here: the /UE /OE key wrap and the /Perms block are mbedTLS
 *     used directly, a few blocks at a time; Alg. 2.B step c, one serial
 *     AES-128-CBC chain of ~6 KB per round, is aesmb.c's one-chain kernel
 *     (AES-NI, else mbedTLS), and the round's SHA-256 sha2.c's kernel (SHA
 *     extensions, else mbedTLS): the hash is what a batch of stamps costs
 *     (issue 16), and those two were 40% of it.  Then mbedtls_sha512 was
 *     the largest part left (36% of a batch stamp's CPU, issue 34): the
 *     rounds' SHA-384/512 are sha2.c's other kernel (AVX and BMI2, else
 *     mbedTLS), which took the owner password's hash from 1.43 to 1.11 ms
 *     and the user's from 0.88 to 0.66 (bench/kdf-bench medians, 16 runs
 *     of each build alternating; sha2.c note 3).
 *     cpu.c's probe is made once per context (ps_cpu_bits); PDFSTAMP_AES=
 *     mbedtls (read by aesmb.c alone: ps_aes_env_kind) selects the
 *     portable paths here as in the engine, and the tests run both.  Bulk
 *     object data goes through the multi-lane engine, which only sec.c
 *     uses.  The file key leaves this module only in the caller's buffer;
 *     the caller (sec.c) turns it into key schedules and wipes it.
 *  5. Password scratch: the Alg. 2.B buffers (K1 holds 64 copies of the
 *     password), prepared passwords, intermediate keys and the unwrapped
 *     file key live in pages of their own (secret_alloc): locked in RAM so
 *     they never reach swap, left out of core dumps, and wiped before they
 *     are unmapped.  A failed mlock (RLIMIT_MEMLOCK) is not an error: the
 *     wipe still happens.  Own pages rather than malloc, because munlock
 *     works on whole pages and would unlock a neighbour's locked page (the
 *     CLI's password buffer).  Costs ~20 us per call, about 1% of one
 *     Alg. 2.B run.
 *  6. Legacy handlers, R2-R4 (ISO 32000-1 7.6.3.3-7.6.3.4; ISO 32000-2
 *     7.6.4.3.1-2 and 7.6.4.4.1-6): passwords are PDFDocEncoding bytes, not
 *     SASLprep'd: the UTF-8 input converted (text.c, ps_text_pdfdoc_from_utf8)
 *     and, when that fails or differs, the raw bytes too; cut or padded to
 *     32 bytes with the standard padding string.  Algorithm 2 (file key:
 *     MD5 of the padded password, /O, /P as 4 bytes LE, ID[0], FFFFFFFF for
 *     R4 without metadata encryption, then 50 MD5s of the first n bytes for
 *     R3+; n = 5 for R2, /Length/8 else), 3 (/O), 4 and 5 (/U), 6 (user:
 *     compare /U, 16 bytes for R3+) and 7 (owner: RC4-decrypt /O with the
 *     owner key, once for R2 or 20 times with key XOR 19..0, and run 6 on
 *     the result).  The owner key's 50 re-hashes also take n bytes (qpdf,
 *     PDFBox; pdf.js hashes 16 and disagrees below 128 bits).  Owner is
 *     tried first, as in note 2.  Algorithm 1 (the per-object key) is
 *     ps_kdf_object_key; sec.c calls it for each object.  MD5 and RC4 are
 *     mbedTLS's (ARC4 where the build has it, else the 15 lines of
 *     ps_kdf_rc4, checked by the RFC 6229 vectors in tests/check_crypt.c).
 */
#include "config.h"

#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mbedtls/aes.h>
#include <mbedtls/md5.h>
#include <mbedtls/version.h>
#if MBEDTLS_VERSION_NUMBER < 0x03000000
#include <mbedtls/config.h>
#endif
#if defined(MBEDTLS_ARC4_C)
#include <mbedtls/arc4.h>
#endif
#include <stringprep.h>

#include "ps.h"
#include "aesmb.h"
#include "cpu.h"
#include "sha2.h"
#include "text.h"


#define PW_MAX 127                          /* Alg. 2.A step b */
#define R6_BLOCK_MAX (PW_MAX + 64 + 48)     /* P || K (<= 64) || U48 */
#define R6_K1_MAX (64 * R6_BLOCK_MAX)       /* 15296 bytes */
#define PREP_INPUT_MAX ((size_t)1 << 20)    /* longer inputs skip SASLprep */

/* Constant-time comparison of N bytes: 0 if equal. */
static int ct_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d != 0;
}

/* ---- locked scratch for password material (design note 5) ---------------- */

/* N zeroed bytes in pages of their own, locked and excluded from core
 * dumps.  *maplen receives the mapped length for secret_free. */
static void *secret_alloc(size_t n, size_t *maplen)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = n;
	void *p;

	if (pg > 0)
		len = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)mlock(p, len);               /* best effort: RLIMIT_MEMLOCK may refuse */
#ifdef MADV_DONTDUMP
	(void)madvise(p, len, MADV_DONTDUMP);
#endif
	*maplen = len;
	return p;
}

static void secret_free(void *p, size_t maplen)
{
	if (!p)
		return;
	ps_wipe(p, maplen);
	(void)munlock(p, maplen);
	munmap(p, maplen);
}

/* ---- password preparation (7.6.4.3.3 a-b) -------------------------------- */

static void take_raw(const char *pw, size_t len, uint8_t out[128], size_t *outlen)
{
	size_t n = len > PW_MAX ? PW_MAX : len;

	if (n)
		memcpy(out, pw, n);
	*outlen = n;
}

/* SASLprep with libidn into OUT (the result before truncation to 127
 * bytes; at most PREP_OUT_MAX).  Returns 1 on success, 0 if SASLprep
 * rejects the password (raw bytes are then used), or a negative code. */
#define PREP_OUT_MAX 4096
static int saslprep_inproc(const char *pw, size_t len, int stored, uint8_t *out, size_t *outlen)
{
	char *buf = NULL;
	size_t cap = len * 4 + 64, n;
	int rc;

	/* NFKC can expand the string (U+FDFA becomes 18 code points), so the
	 * buffer grows until libidn stops reporting TOO_SMALL_BUFFER. */
	for (;;) {
		buf = malloc(cap);
		if (!buf)
			return PDFSTAMP_E_NOMEM;
		memcpy(buf, pw, len);
		buf[len] = '\0';
		rc = stringprep(buf, cap, stored ? STRINGPREP_NO_UNASSIGNED : 0,
		                stringprep_saslprep);
		if (rc != STRINGPREP_TOO_SMALL_BUFFER || cap > PREP_INPUT_MAX * 32)
			break;
		ps_wipe(buf, cap);
		free(buf);
		cap *= 2;
	}
	if (rc == STRINGPREP_OK) {
		n = strlen(buf);
		if (n > PREP_OUT_MAX)
			n = PREP_OUT_MAX;
		memcpy(out, buf, n);
		*outlen = n;
	}
	ps_wipe(buf, cap);
	free(buf);
	if (rc == STRINGPREP_MALLOC_ERROR)
		return PDFSTAMP_E_NOMEM;
	return rc == STRINGPREP_OK;
}

/* libidn's stringprep makes UCS-4 working copies of the password and frees
 * them without wiping, where a core dump or a reader of our memory could
 * find them.  So it runs in a short-lived child process; only the result
 * comes back, through a pipe.  (Printable ASCII never gets here: SASLprep
 * leaves it unchanged.)  If the child cannot be made, the work is done in
 * process, with a warning. */
static int saslprep_isolated(ps_ctx *ctx, const char *pw, size_t len, int stored, uint8_t *out,
                             size_t *outlen)
{
	const size_t msgcap = 3 + PREP_OUT_MAX;
	uint8_t *msg;
	int fds[2], st = 0, rc;
	size_t got = 0, maplen = 0;
	pid_t pid;

	/* the reply holds the prepared password: locked scratch */
	if (!(msg = secret_alloc(msgcap, &maplen)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory preparing a password");
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* Fuzz builds: a fork per input would dominate the run, and there is
	 * no secret to protect. */
	goto inproc_quiet;
#endif
	if (pipe2(fds, O_CLOEXEC) < 0)
		goto inproc;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		goto inproc;
	}
	if (pid == 0) { /* the child: prepare, send, vanish */
		size_t n = 0, off = 0;
		close(fds[0]);
		rc = saslprep_inproc(pw, len, stored, msg + 3, &n);
		/* status (1 prepared, 0 rejected, 2 out of memory), length, bytes */
		msg[0] = (uint8_t)(rc == 1 ? 1 : rc == 0 ? 0 : 2);
		msg[1] = (uint8_t)(n >> 8);
		msg[2] = (uint8_t)(n & 0xff);
		while (off < n + 3) {
			ssize_t k = write(fds[1], msg + off, n + 3 - off);
			if (k <= 0)
				_exit(1);
			off += (size_t)k;
		}
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		ssize_t k = read(fds[0], msg + got, msgcap - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* Any failure of the child, running out of memory included (its
	 * memory is not ours), means doing the work here. */
	if (got < 3 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    got != 3 + (((size_t)msg[1] << 8) | msg[2]) || msg[0] > 1) {
		ps_wipe(msg, msgcap);
		goto inproc;
	}
	rc = msg[0];
	*outlen = got - 3;
	memcpy(out, msg + 3, *outlen);
	secret_free(msg, maplen);
	return rc;
inproc:
	ps_warn(ctx,
	        "cannot isolate SASLprep in a child process; preparing the password in process");
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
inproc_quiet:
#endif
	secret_free(msg, maplen);
	rc = saslprep_inproc(pw, len, stored, out, outlen);
	return rc == PDFSTAMP_E_NOMEM ? ps_err(ctx, rc, "out of memory preparing a password") : rc;
}

int ps_kdf_prepare_password(ps_ctx *ctx, const char *pw, size_t len, int stored,
                            uint8_t out[128], size_t *outlen)
{
	uint8_t *tmp = NULL;
	size_t i, n = 0, maplen = 0;
	int rc, ascii = 1;

	if (!out || !outlen || (!pw && len))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_kdf_prepare_password: bad arguments");
	*outlen = 0;
	if (len == 0)
		return 0;
	/* stringprep works on NUL-terminated strings, so an embedded NUL
	 * (a C0 control, prohibited by SASLprep anyway) means raw bytes. */
	if (memchr(pw, 0, len) || len > PREP_INPUT_MAX)
		goto raw;
	for (i = 0; i < len; i++)
		ascii &= (unsigned char)pw[i] >= 0x20 && (unsigned char)pw[i] <= 0x7e;
	if (ascii) {
		/* RFC 4013: printable ASCII maps to itself (no mapping, NFKC-stable,
		 * nothing prohibited, no bidi). */
		take_raw(pw, len, out, outlen);
		return 0;
	}
	/* the prepared form before truncation: locked scratch */
	if (!(tmp = secret_alloc(PREP_OUT_MAX, &maplen)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory preparing a password");
	rc = saslprep_isolated(ctx, pw, len, stored, tmp, &n);
	if (rc < 0) {
		secret_free(tmp, maplen);
		return rc;
	}
	if (rc == 1) {
		if (n > PW_MAX)
			n = PW_MAX;
		memcpy(out, tmp, n);
		*outlen = n;
		secret_free(tmp, maplen);
		return 0;
	}
	secret_free(tmp, maplen);
raw:
	if (stored)
		ps_warn(ctx, "password is not valid for SASLprep; its raw bytes are used");
	take_raw(pw, len, out, outlen);
	return 0;
}

/* ---- Algorithm 2.B (R6) and the R5 hash ----------------------------------- */

/* The Alg. 2.B working set, in locked scratch (design note 5). */
struct r6_work {
	uint8_t k1[R6_K1_MAX];
	uint8_t k[64];
	ps_aes128_work aes;          /* step c's schedule of K[0..15] */
};

/* Design note 3's register wipe, written once: every function that
 * leaves a password, a key or a schedule behind in the vector registers
 * (each Alg. 2.B hash, each public entry point that handles a password)
 * is a thin wrapper, `return wiped(ctx, worker(...))`, around a static
 * worker that has the body, so that no return path of the worker, and no
 * new entry point written the same way, can skip the wipe.  The wipe is
 * cheap (32 instructions) beside what it follows. */
static int wiped(ps_ctx *ctx, int rc)
{
	ps_cpu_wipe_vectors(ps_cpu_bits(ctx));
	return rc;
}

/* Alg. 2.B (or R5's one SHA-256) in W, which is wiped before returning;
 * the vector registers are not (hash_r6 and ps_kdf_hash_r6 do it). */
static int hash_rounds(ps_ctx *ctx, struct r6_work *w, int r, const uint8_t *pw, size_t pwlen,
                       const uint8_t salt[8], const uint8_t *u48, uint8_t out[32])
{
	uint8_t *k1 = w->k1, *k = w->k;
	size_t klen, ulen = u48 ? 48 : 0, blk, len, i;
	unsigned n, sum, last;
	unsigned hw, sha512_cpu;
	int portable, sha_ni, aes_ni;
	/* The constants of steps b and e: 64 copies, at least 64 rounds, then
	 * stop once last(E) <= n - 32. */
	unsigned reps = 64, min_rounds = 64;
	int slack = 32;
	int ret = 0;

	if (pwlen > PW_MAX || (!pw && pwlen) || !salt || !out || (r != 5 && r != 6))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_kdf_hash_r6: bad arguments");
	if (ctx)
		ctx->kdf_hashes++;
	/* the CPU's kernels (sha2.c's two, aesmb.c's AES-128 chain), unless
	 * PDFSTAMP_AES=mbedtls asks for the portable paths (as it does for
	 * the AES engine) */
	hw = ps_cpu_bits(ctx);
	portable = ps_aes_env_kind() == PS_AES_MBEDTLS;
	sha_ni = !portable && (hw & PS_CPU_SHA);
	aes_ni = !portable && (hw & PS_CPU_AESNI);
	sha512_cpu = portable ? 0 : hw;

	/* Alg. 2.B step a (and all of R5): K = SHA-256(P || S || U48). */
	len = 0;
	if (pwlen)
		memcpy(k1, pw, pwlen);
	len += pwlen;
	memcpy(k1 + len, salt, 8);
	len += 8;
	if (u48)
		memcpy(k1 + len, u48, 48);
	len += ulen;
	if (ps_sha256_hw(sha_ni, k1, len, k) != 0)
		goto fail;
	klen = 32;

	if (r == 5) /* Adobe extension level 3: no rounds */
		goto done;

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* Fuzz builds: 16 copies (still a whole number of AES blocks, whatever
	 * the lengths), at least 2 rounds, and a stop test that is true three
	 * times in four from round 2 on, so every branch below still runs at a
	 * hundredth of the cost.  Never compiled into a real build. */
	if (ctx && ctx->fuzz_light_kdf) {
		reps = 16;
		min_rounds = 2;
		slack = 2 - 192;
	}
#endif

	/* Alg. 2.B steps b-e: rounds until n >= 64 and last(E) <= n - 32. */
	for (n = 1;; n++) {
		/* b: K1 = (P || K || U48) repeated 64 times. */
		blk = pwlen + klen + ulen;
		if (pwlen)
			memcpy(k1, pw, pwlen);
		memcpy(k1 + pwlen, k, klen);
		if (u48)
			memcpy(k1 + pwlen + klen, u48, 48);
		/* the copies by doubling: six copies instead of 63 */
		for (len = blk; len < reps * blk; len += i) {
			i = len < reps * blk - len ? len : reps * blk - len;
			memcpy(k1 + len, k1, i);
		}

		/* c: E = AES-128-CBC(key K[0..15], IV K[16..31]) of K1, one chain,
		 * computed in place. */
		if (ps_aes128_cbc_encrypt(&w->aes, aes_ni, k, k + 16, k1, len) != 0)
			goto fail;

		/* d: first 16 bytes of E as a big-endian number mod 3, which is
		 * their byte sum mod 3 since 256 = 1 (mod 3). */
		for (sum = 0, i = 0; i < 16; i++)
			sum += k1[i];
		switch (sum % 3) {
		case 0:
			ret = ps_sha256_hw(sha_ni, k1, len, k);
			klen = 32;
			break;
		case 1:
			ret = ps_sha512_hw(sha512_cpu, k1, len, k, 1);
			klen = 48;
			break;
		default:
			ret = ps_sha512_hw(sha512_cpu, k1, len, k, 0);
			klen = 64;
			break;
		}
		if (ret != 0)
			goto fail;

		/* e: stop after round n once n >= 64 and last(E) <= n - 32. */
		last = k1[len - 1];
		if (n >= min_rounds && (int)last <= (int)n - slack)
			break;
	}
done:
	memcpy(out, k, 32);          /* step f: the first 32 bytes */
	goto out;
fail:
	ret = ps_err(ctx, PDFSTAMP_E_INTERNAL, "password hash failed inside mbedTLS");
out:
	ps_wipe(w, sizeof *w);
	return ret;
}

/* One hash, then the registers wiped: K1 passed through them (memcpy,
 * the kernels).  The internal callers' hash. */
static int hash_r6(ps_ctx *ctx, struct r6_work *w, int r, const uint8_t *pw, size_t pwlen,
                   const uint8_t salt[8], const uint8_t *u48, uint8_t out[32])
{
	return wiped(ctx, hash_rounds(ctx, w, r, pw, pwlen, salt, u48, out));
}

static int hash_alone(ps_ctx *ctx, int r, const uint8_t *pw, size_t pwlen,
                      const uint8_t salt[8], const uint8_t *u48, uint8_t out[32])
{
	struct r6_work *w;
	size_t maplen = 0;
	int rc;

	if (!(w = secret_alloc(sizeof *w, &maplen)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory for the password hash");
	rc = hash_rounds(ctx, w, r, pw, pwlen, salt, u48, out);
	secret_free(w, maplen);
	return rc;
}

int ps_kdf_hash_r6(ps_ctx *ctx, int r, const uint8_t *pw, size_t pwlen,
                   const uint8_t salt[8], const uint8_t *u48, uint8_t out[32])
{
	return wiped(ctx, hash_alone(ctx, r, pw, pwlen, salt, u48, out));
}

/* AES-256 under KEY, MODE encrypt or decrypt: one ECB block (N 16: the
 * /Perms block of Alg. 10 / Alg. 13), or CBC with a zero IV and no
 * padding over two blocks (N 32: the /UE and /OE key wrap, Alg. 2.A e-f
 * reading, Alg. 8 c / 9 c writing). */
static int aes256(ps_ctx *ctx, int mode, const uint8_t key[32], const uint8_t *in, uint8_t *out,
                  size_t n)
{
	mbedtls_aes_context aes;
	uint8_t iv[16] = {0};
	int rc;

	mbedtls_aes_init(&aes);
	if (mode == MBEDTLS_AES_ENCRYPT)
		rc = mbedtls_aes_setkey_enc(&aes, key, 256);
	else
		rc = mbedtls_aes_setkey_dec(&aes, key, 256);
	if (rc == 0)
		rc = n == 16 ? mbedtls_aes_crypt_ecb(&aes, mode, in, out)
		             : mbedtls_aes_crypt_cbc(&aes, mode, n, iv, in, out);
	mbedtls_aes_free(&aes);
	ps_wipe(iv, sizeof iv);
	if (rc != 0)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              n == 16 ? "/Perms cipher failed inside mbedTLS"
		                      : "key wrap failed inside mbedTLS");
	return 0;
}

int ps_kdf_read_perms(ps_ctx *ctx, const ps_secparams *sp, const uint8_t key[32],
                      int64_t *p, int *state)
{
	uint8_t blk[16];
	uint32_t got;
	int rc;

	*state = PS_PERMS_GARBLED;
	*p = 0;
	/* Alg. 13 step a: AES-256-ECB-decrypt /Perms under the file key. */
	if ((rc = aes256(ctx, MBEDTLS_AES_DECRYPT, key, sp->perms, blk, 16)) < 0)
		return rc;
	/* step b: bytes 9-11 "adb", else the block is not a permissions block
	 * (a wrong key, a tampered /Perms, or a writer's bug). */
	if (blk[9] == 'a' && blk[10] == 'd' && blk[11] == 'b') {
		/* steps c-d: bytes 0-3 are P, low byte first; byte 8 'T' or 'F'
		 * is EncryptMetadata. */
		got = (uint32_t)blk[0] | (uint32_t)blk[1] << 8 | (uint32_t)blk[2] << 16 |
		      (uint32_t)blk[3] << 24;
		*p = (int32_t)got;
		*state = got == (uint32_t)sp->p && blk[8] == (sp->encrypt_metadata ? 'T' : 'F') ?
		         PS_PERMS_OK : PS_PERMS_MISMATCH;
	}
	ps_wipe(blk, sizeof blk);
	return 0;
}

/* Algorithm 13 as a yes/no: *ok is 1 only if /Perms is well formed and
 * agrees with /P and /EncryptMetadata. */
static int perms_check(ps_ctx *ctx, const ps_secparams *sp, const uint8_t key[32], int *ok)
{
	int64_t p;
	int st, rc;

	*ok = 0;
	if ((rc = ps_kdf_read_perms(ctx, sp, key, &p, &st)) < 0)
		return rc;
	*ok = st == PS_PERMS_OK;
	return 0;
}

/* ---- Algorithm 2.A: authenticate and unwrap the file key ------------------ */

/* Alg. 2.A steps d (owner: 2.B over P, O[40..47], U48) or f (user: 2.B
 * over P, U[40..47]): the intermediate key, then /OE or /UE unwrapped with
 * it into KEY, whatever the password.  W and H (32 bytes) are locked
 * scratch; H is wiped here. */
static int unwrap_key(ps_ctx *ctx, struct r6_work *w, uint8_t *h, const ps_secparams *sp, int owner,
                      const uint8_t *pw, size_t pwlen, uint8_t key[32])
{
	const uint8_t *hs = owner ? sp->o : sp->u;   /* hash || vsalt || ksalt */
	int rc = hash_r6(ctx, w, sp->r, pw, pwlen, hs + 40, owner ? sp->u : NULL, h);

	if (rc == 0)
		rc = aes256(ctx, MBEDTLS_AES_DECRYPT, h, owner ? sp->oe : sp->ue, key, 32);
	ps_wipe(h, 32);
	return rc;
}

/* Alg. 12 (owner: 2.B over P, O[32..39], U48 vs O[0..31]) or Alg. 11
 * (user: 2.B over P, U[32..39] vs U[0..31]), compared in constant time.
 * 1 on a match, 0 on none, or an error.  H is wiped here. */
static int validate(ps_ctx *ctx, struct r6_work *w, uint8_t *h, const ps_secparams *sp, int owner,
                    const uint8_t *pw, size_t pwlen)
{
	const uint8_t *hs = owner ? sp->o : sp->u;
	int rc = hash_r6(ctx, w, sp->r, pw, pwlen, hs + 32, owner ? sp->u : NULL, h);

	if (rc == 0)
		rc = !ct_diff(h, hs, 32);
	ps_wipe(h, 32);
	return rc;
}

static int authenticate(ps_ctx *ctx, const ps_secparams *sp, const char *password, size_t len,
                        uint8_t key[32], int *is_owner, int *perms_ok)
{
	struct {
		struct r6_work w;
		uint8_t prep[128], raw[128], h[32];
		uint8_t k[2][2][32];    /* [owner][candidate]: the unwrapped keys */
	} *sc;                          /* locked scratch (design note 5) */
	size_t plen, rlen, i, maplen = 0;
	const uint8_t *cand[2];
	size_t clen[2];
	int ncand = 0, owner, rc, ok = 0, role = -1;
	size_t which = 0;

	if (!sp || !key || !is_owner || !perms_ok || (!password && len))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_kdf_authenticate: bad arguments");
	*is_owner = 0;
	*perms_ok = 0;
	if (sp->r != 5 && sp->r != 6)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "standard security handler revision %d is not supported", sp->r);
	if (!(sc = secret_alloc(sizeof *sc, &maplen)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory for the password hash");

	/* Candidates: the SASLprep'd form, then the raw bytes if different. */
	if ((rc = ps_kdf_prepare_password(ctx, password, len, 0, sc->prep, &plen)) < 0)
		goto out;
	take_raw(password, len, sc->raw, &rlen);
	cand[ncand] = sc->prep;
	clen[ncand++] = plen;
	if (rlen != plen || ct_diff(sc->raw, sc->prep, rlen)) {
		cand[ncand] = sc->raw;
		clen[ncand++] = rlen;
	}

	/* Owner then user, each by its key hash alone, confirmed by /Perms
	 * (design note 2). */
	for (owner = 1; owner >= 0 && role < 0; owner--) {
		for (i = 0; i < (size_t)ncand; i++) {
			if ((rc = unwrap_key(ctx, &sc->w, sc->h, sp, owner, cand[i], clen[i],
			                     sc->k[owner][i])) < 0 ||
			    (rc = perms_check(ctx, sp, sc->k[owner][i], &ok)) < 0)
				goto out;
			if (ok) {
				role = owner;
				which = i;
				break;
			}
		}
	}
	/* /Perms confirmed neither: Alg. 2.A's own checks, owner then user,
	 * with the keys derived above. */
	for (owner = 1; owner >= 0 && role < 0; owner--) {
		for (i = 0; i < (size_t)ncand; i++) {
			if ((rc = validate(ctx, &sc->w, sc->h, sp, owner, cand[i], clen[i])) < 0)
				goto out;
			if (rc == 1) {
				role = owner;
				which = i;
				break;
			}
		}
	}
	if (role < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_PASSWORD,
		            "the password matches neither the owner nor the user password");
		goto out;
	}
	memcpy(key, sc->k[role][which], 32);
	*is_owner = role;
	*perms_ok = ok;
	rc = 0;
out:
	if (rc < 0)
		*is_owner = 0;
	secret_free(sc, maplen);        /* wipes */
	return rc;
}

int ps_kdf_authenticate(ps_ctx *ctx, const ps_secparams *sp,
                        const char *password, size_t len,
                        uint8_t key[32], int *is_owner, int *perms_ok)
{
	/* passwords, keys, schedules */
	return wiped(ctx, authenticate(ctx, sp, password, len, key, is_owner, perms_ok));
}

/* ---- Algorithms 8, 9, 10: new /U /UE /O /OE /Perms ------------------------ */

/* Prepares a new password ("stored" SASLprep profile) into OUT and warns
 * when that changed it: a reader that skips SASLprep (qpdf, MuPDF, pdf.js
 * for R5) then accepts only the prepared form, not what the
 * user typed.  The password itself is never part of the message.  RAW is
 * 128 bytes of scratch. */
static int prepare_new(ps_ctx *ctx, const char *which, const char *pw, size_t len,
                       uint8_t out[128], size_t *outlen, uint8_t raw[128])
{
	size_t rlen;
	int rc;

	if ((rc = ps_kdf_prepare_password(ctx, pw, len, 1, out, outlen)) < 0)
		return rc;
	take_raw(pw, len, raw, &rlen);
	if (rlen != *outlen || ct_diff(raw, out, rlen))
		ps_warn(ctx, "SASLprep (ISO 32000-2 7.6.4.3.3) changes the new %s password; "
		        "readers that do not apply SASLprep, such as qpdf, will not accept "
		        "it as typed", which);
	ps_wipe(raw, 128);
	return 0;
}

static int make(ps_ctx *ctx, ps_secparams *sp, const char *user_pw, size_t ulen,
                const char *owner_pw, size_t olen, const uint8_t key[32])
{
	struct {
		struct r6_work w;
		uint8_t pu[128], po[128], raw[128], rnd[36], h[32], blk[16];
	} *sc;                          /* locked scratch (design note 5) */
	uint8_t u[48], ue[32], o[48], oe[32], perms[16];
	size_t pulen = 0, polen = 0, maplen = 0;
	uint64_t ext;
	int i, rc;

	if (!sp || !key || (!user_pw && ulen) || (!owner_pw && olen))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_kdf_make: bad arguments");
	if (sp->p < INT32_MIN || sp->p > (int64_t)UINT32_MAX)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "/P %lld does not fit in 32 bits",
		              (long long)sp->p);
	if (!(sc = secret_alloc(sizeof *sc, &maplen)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory for the password hash");

	if ((rc = prepare_new(ctx, "user", user_pw, ulen, sc->pu, &pulen, sc->raw)) < 0 ||
	    (rc = prepare_new(ctx, "owner", owner_pw, olen, sc->po, &polen, sc->raw)) < 0)
		goto out;
	/* 8 + 8 user salts, 8 + 8 owner salts, 4 random /Perms bytes. */
	if ((rc = ps_random(ctx, sc->rnd, sizeof sc->rnd)) < 0)
		goto out;

	/* Alg. 8 (7.6.4.4.7): U = 2.B(Pu, uvs) || uvs || uks;
	 * UE = CBC0(2.B(Pu, uks), key). */
	memcpy(u + 32, sc->rnd, 16);
	if ((rc = hash_r6(ctx, &sc->w, 6, sc->pu, pulen, u + 32, NULL, u)) < 0 ||
	    (rc = hash_r6(ctx, &sc->w, 6, sc->pu, pulen, u + 40, NULL, sc->h)) < 0 ||
	    (rc = aes256(ctx, MBEDTLS_AES_ENCRYPT, sc->h, key, ue, 32)) < 0)
		goto out;

	/* Alg. 9 (7.6.4.4.8): the same with the owner password, the owner
	 * salts and the new 48-byte U as the third input. */
	memcpy(o + 32, sc->rnd + 16, 16);
	if ((rc = hash_r6(ctx, &sc->w, 6, sc->po, polen, o + 32, u, o)) < 0 ||
	    (rc = hash_r6(ctx, &sc->w, 6, sc->po, polen, o + 40, u, sc->h)) < 0 ||
	    (rc = aes256(ctx, MBEDTLS_AES_ENCRYPT, sc->h, key, oe, 32)) < 0)
		goto out;

	/* Alg. 10 (7.6.4.4.9): P sign-extended to 64 bits, low byte first;
	 * 'T'/'F'; "adb"; 4 random bytes; AES-256-ECB under the file key. */
	ext = (uint64_t)(int64_t)(int32_t)(uint32_t)(sp->p & 0xffffffff);
	for (i = 0; i < 8; i++)
		sc->blk[i] = (uint8_t)(ext >> (8 * i));
	sc->blk[8] = sp->encrypt_metadata ? 'T' : 'F';
	sc->blk[9] = 'a';
	sc->blk[10] = 'd';
	sc->blk[11] = 'b';
	memcpy(sc->blk + 12, sc->rnd + 32, 4);
	if ((rc = aes256(ctx, MBEDTLS_AES_ENCRYPT, key, sc->blk, perms, 16)) < 0)
		goto out;

	sp->v = 5;
	sp->r = 6;
	sp->p = (int32_t)(uint32_t)(sp->p & 0xffffffff);
	memcpy(sp->u, u, 48);
	memcpy(sp->ue, ue, 32);
	memcpy(sp->o, o, 48);
	memcpy(sp->oe, oe, 32);
	memcpy(sp->perms, perms, 16);
	rc = 0;
out:
	secret_free(sc, maplen);        /* wipes */
	return rc;
}

int ps_kdf_make(ps_ctx *ctx, ps_secparams *sp,
                const char *user_pw, size_t ulen,
                const char *owner_pw, size_t olen, const uint8_t key[32])
{
	/* passwords, keys, schedules */
	return wiped(ctx, make(ctx, sp, user_pw, ulen, owner_pw, olen, key));
}


/* ---- legacy handlers, R2-R4 (design note 6) -------------------------------- */

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define md5_starts(c) mbedtls_md5_starts(c)
#define md5_update(c, p, n) mbedtls_md5_update((c), (p), (n))
#define md5_finish(c, h) mbedtls_md5_finish((c), (h))
#define md5_once(p, n, h) mbedtls_md5((p), (n), (h))
#else
#define md5_starts(c) mbedtls_md5_starts_ret(c)
#define md5_update(c, p, n) mbedtls_md5_update_ret((c), (p), (n))
#define md5_finish(c, h) mbedtls_md5_finish_ret((c), (h))
#define md5_once(p, n, h) mbedtls_md5_ret((p), (n), (h))
#endif

/* Algorithm 2 step a: the padding string (ISO 32000-1 7.6.3.3). */
static const uint8_t pad32[32] = {
	0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41,
	0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80,
	0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
};

void ps_kdf_rc4(const uint8_t *key, size_t klen, const uint8_t *in, uint8_t *out, size_t n)
{
#if defined(MBEDTLS_ARC4_C)
	mbedtls_arc4_context a;

	mbedtls_arc4_init(&a);
	mbedtls_arc4_setup(&a, key, (unsigned)klen);
	(void)mbedtls_arc4_crypt(&a, n, in, out);
	mbedtls_arc4_free(&a);           /* zeroizes the state */
#else
	uint8_t S[256], t;
	unsigned i, j = 0;
	size_t k;

	for (i = 0; i < 256; i++)
		S[i] = (uint8_t)i;
	for (i = 0; i < 256; i++) {
		j = (j + S[i] + key[i % klen]) & 255;
		t = S[i], S[i] = S[j], S[j] = t;
	}
	for (i = j = 0, k = 0; k < n; k++) {
		i = (i + 1) & 255;
		j = (j + S[i]) & 255;
		t = S[i], S[i] = S[j], S[j] = t;
		out[k] = (uint8_t)(in[k] ^ S[(S[i] + S[j]) & 255]);
	}
	ps_wipe(S, sizeof S);
	ps_wipe(&t, sizeof t);
#endif
}

void ps_kdf_md5(const uint8_t *in, size_t n, uint8_t out[16])
{
	(void)md5_once(in, n, out);
}

size_t ps_kdf_object_key(const uint8_t *fkey, size_t n, uint32_t num, uint16_t gen, int aes,
                         uint8_t out[16])
{
	uint8_t b[16 + 5 + 4];
	size_t m = n;

	memcpy(b, fkey, n);
	b[m++] = (uint8_t)num;
	b[m++] = (uint8_t)(num >> 8);
	b[m++] = (uint8_t)(num >> 16);
	b[m++] = (uint8_t)gen;
	b[m++] = (uint8_t)(gen >> 8);
	if (aes) {
		memcpy(b + m, "sAlT", 4);
		m += 4;
	}
	ps_kdf_md5(b, m, out);
	ps_wipe(b, sizeof b);
	return n + 5 < 16 ? n + 5 : 16;
}

/* Algorithm 2 step a: PW cut or padded to 32 bytes. */
static void pad_password(const uint8_t *pw, size_t len, uint8_t out[32])
{
	size_t n = len > 32 ? 32 : len;

	if (n)
		memcpy(out, pw, n);
	memcpy(out + n, pad32, 32 - n);
}

/* Algorithm 2: the file key from the padded password PW. */
static void legacy_file_key(const ps_secparams *sp, const uint8_t pw[32], uint8_t key[16])
{
	static const uint8_t ff[4] = {0xFF, 0xFF, 0xFF, 0xFF};
	mbedtls_md5_context m;
	uint32_t p = (uint32_t)sp->p;
	uint8_t h[16], pb[4] = {(uint8_t)p, (uint8_t)(p >> 8), (uint8_t)(p >> 16),
	                        (uint8_t)(p >> 24)};
	size_t n = (size_t)sp->length;
	int i;

	mbedtls_md5_init(&m);
	(void)md5_starts(&m);
	(void)md5_update(&m, pw, 32);
	(void)md5_update(&m, sp->o, 32);
	(void)md5_update(&m, pb, 4);
	(void)md5_update(&m, sp->id0, sp->id0len);
	if (sp->r >= 4 && !sp->encrypt_metadata)
		(void)md5_update(&m, ff, 4);
	(void)md5_finish(&m, h);
	mbedtls_md5_free(&m);
	for (i = 0; sp->r >= 3 && i < 50; i++)
		ps_kdf_md5(h, n, h);
	memcpy(key, h, n);
	ps_wipe(h, sizeof h);
}

/* Algorithm 3 steps a-d: the RC4 key from the padded owner password.  The
 * 50 re-hashes take the first n bytes, as for the file key (Algorithm 2
 * step h) and as qpdf, PDFBox and Acrobat do; it matters below 128 bits. */
static void owner_key(const ps_secparams *sp, const uint8_t opw[32], uint8_t key[16])
{
	uint8_t h[16];
	int i;

	ps_kdf_md5(opw, 32, h);
	for (i = 0; sp->r >= 3 && i < 50; i++)
		ps_kdf_md5(h, (size_t)sp->length, h);
	memcpy(key, h, 16);
	ps_wipe(h, sizeof h);
}

/* 20 RC4 passes with KEY XOR i (Algorithm 3 step g, 5 step e, 7 step b);
 * i runs up for encryption, down for decryption. */
static void rc4_passes(const uint8_t *key, size_t n, uint8_t *buf, size_t len, int down)
{
	uint8_t k[16];
	int i, j;

	for (i = 0; i < 20; i++) {
		int x = down ? 19 - i : i;
		for (j = 0; j < (int)n; j++)
			k[j] = (uint8_t)(key[j] ^ x);
		ps_kdf_rc4(k, n, buf, buf, len);
	}
	ps_wipe(k, sizeof k);
}

/* Algorithms 4 and 5: /U from the file key. */
static void compute_u(const ps_secparams *sp, const uint8_t *key, uint8_t u[32])
{
	size_t n = (size_t)sp->length;
	uint8_t b[32 + 128];

	if (sp->r == 2) {
		ps_kdf_rc4(key, n, pad32, u, 32);
		return;
	}
	memcpy(b, pad32, 32);
	memcpy(b + 32, sp->id0, sp->id0len);
	ps_kdf_md5(b, 32 + sp->id0len, u);
	rc4_passes(key, n, u, 16, 0);
	memset(u + 16, 0, 16);           /* arbitrary padding (Algorithm 5 step f) */
}

/* Algorithm 6: is PW (padded) the user password?  KEY receives the file key. */
static int user_ok(const ps_secparams *sp, const uint8_t pw[32], uint8_t key[16])
{
	uint8_t u[32];
	int ok;

	legacy_file_key(sp, pw, key);
	compute_u(sp, key, u);
	ok = !ct_diff(u, sp->u, sp->r == 2 ? 32 : 16);
	ps_wipe(u, sizeof u);
	return ok;
}

/* Algorithm 7: is PW (padded) the owner password? */
static int owner_ok(const ps_secparams *sp, const uint8_t pw[32], uint8_t key[16])
{
	uint8_t k[16], upw[32];
	size_t n = sp->r == 2 ? 5 : (size_t)sp->length;
	int ok;

	owner_key(sp, pw, k);
	memcpy(upw, sp->o, 32);
	if (sp->r == 2)
		ps_kdf_rc4(k, n, upw, upw, 32);
	else
		rc4_passes(k, n, upw, 32, 1);
	ok = user_ok(sp, upw, key);
	ps_wipe(k, sizeof k);
	ps_wipe(upw, sizeof upw);
	return ok;
}

static int legacy_params_ok(ps_ctx *ctx, const ps_secparams *sp)
{
	if (!sp || sp->r < 2 || sp->r > 4 || sp->length < 5 || sp->length > 16 ||
	    sp->id0len > sizeof sp->id0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "legacy handler: bad parameters");
	return 0;
}

static int legacy_authenticate(ps_ctx *ctx, const ps_secparams *sp, const char *password,
                               size_t len, uint8_t key[16], int *is_owner)
{
	struct {
		uint8_t doc[32], raw[32], pw[32], k[16];
	} *sc;                          /* locked scratch (design note 5) */
	size_t dlen = 0, maplen = 0, rlen = len > 32 ? 32 : len;
	const uint8_t *cand[2];
	size_t clen[2];
	int ncand = 0, owner, i, rc;

	if (!key || !is_owner || (!password && len))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_kdf_legacy_authenticate: bad arguments");
	if ((rc = legacy_params_ok(ctx, sp)) < 0)
		return rc;
	*is_owner = 0;
	if (!(sc = secret_alloc(sizeof *sc, &maplen)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory for the password");
	/* Candidates (note 6): PDFDocEncoding, then the raw bytes if different. */
	if (rlen)
		memcpy(sc->raw, password, rlen);
	if (ps_text_pdfdoc_from_utf8(password ? password : "", len, sc->doc, 32, &dlen) == 0) {
		cand[ncand] = sc->doc;
		clen[ncand++] = dlen;
	}
	if (!ncand || dlen != rlen || ct_diff(sc->doc, sc->raw, rlen)) {
		cand[ncand] = sc->raw;
		clen[ncand++] = rlen;
	}
	rc = 1;
	for (owner = 1; owner >= 0 && rc; owner--)
		for (i = 0; i < ncand && rc; i++) {
			pad_password(cand[i], clen[i], sc->pw);
			if (owner ? owner_ok(sp, sc->pw, sc->k) : user_ok(sp, sc->pw, sc->k)) {
				memcpy(key, sc->k, (size_t)sp->length);
				*is_owner = owner;
				rc = 0;
			}
		}
	secret_free(sc, maplen);        /* wipes */
	if (rc)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD,
		              "the password matches neither the owner nor the user password");
	return rc;
}

int ps_kdf_legacy_authenticate(ps_ctx *ctx, const ps_secparams *sp, const char *password,
                               size_t len, uint8_t key[16], int *is_owner)
{
	/* passwords, keys (the MD5 and RC4 state passed through them) */
	return wiped(ctx, legacy_authenticate(ctx, sp, password, len, key, is_owner));
}

int ps_kdf_legacy_make(ps_ctx *ctx, ps_secparams *sp, const char *user_pw, size_t ulen,
                       const char *owner_pw, size_t olen)
{
	uint8_t upw[32], opw[32], k[16], key[16];
	size_t n;
	int rc;

	if ((rc = legacy_params_ok(ctx, sp)) < 0)
		return rc;
	n = sp->r == 2 ? 5 : (size_t)sp->length;
	pad_password((const uint8_t *)user_pw, ulen, upw);
	if (olen)
		pad_password((const uint8_t *)owner_pw, olen, opw);
	else
		memcpy(opw, upw, 32);    /* Algorithm 3 step a: no owner password */
	owner_key(sp, opw, k);         /* Algorithm 3 */
	memcpy(sp->o, upw, 32);
	if (sp->r == 2)
		ps_kdf_rc4(k, n, sp->o, sp->o, 32);
	else
		rc4_passes(k, n, sp->o, 32, 0);
	legacy_file_key(sp, upw, key); /* Algorithms 4 and 5 */
	compute_u(sp, key, sp->u);
	ps_wipe(upw, sizeof upw);
	ps_wipe(opw, sizeof opw);
	ps_wipe(k, sizeof k);
	ps_wipe(key, sizeof key);
	return 0;
}
