/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_tsp.c - the TSA certificate's usage as tsp.c checks it (RFC 3161
 * 2.3: the extended key usage id-kp-timeStamping alone, critical).  The
 * certificates are made in the run by openssl (P-256 keys, never
 * committed): critical timeStamping (accepted), and refused: the same but
 * not critical, timeStamping with serverAuth, anyExtendedKeyUsage (which
 * mbedTLS's own check takes as a wildcard), no extended key usage, a v1
 * certificate without extensions.  The tokens of `openssl ts -reply`
 * cannot carry such certificates (openssl refuses to sign with them), so
 * this is the check on its own; tests/e2e/timestamp.sh covers the rest.
 * Without openssl the test is skipped (exit 77).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ps.h"
#include "tsp.h"
#include "pdfgen.h"

static const char *dir;
static int pki_ok;

static const char pki[] =
	"set -e\n"
	"printf '[ok]\\nextendedKeyUsage = critical,timeStamping\\n"
	"[noncrit]\\nextendedKeyUsage = timeStamping\\n"
	"[two]\\nextendedKeyUsage = critical,timeStamping,serverAuth\\n"
	"[any]\\nextendedKeyUsage = critical,anyExtendedKeyUsage\\n"
	"[none]\\nkeyUsage = critical,digitalSignature\\n' >ext.cnf\n"
	"openssl ecparam -name prime256v1 -genkey -noout -out k.pem\n"
	"for n in ok noncrit two any none; do\n"
	"  openssl req -new -key k.pem -subj \"/CN=tsa $n\" -out $n.csr\n"
	"  openssl x509 -req -in $n.csr -signkey k.pem -days 30 -extfile ext.cnf "
	"-extensions $n -outform DER -out $n.der\n"
	"done\n"
	"openssl x509 -req -in ok.csr -signkey k.pem -days 30 -outform DER -out v1.der\n";

static void setup_pki(void)
{
	char cmd[4096];
	int rc;

	dir = pg_tmpdir("check_tsp");
	snprintf(cmd, sizeof cmd, "cd '%s' && ( %s ) >tool.log 2>&1", dir, pki);
	rc = system(cmd);
	pki_ok = rc != -1 && WEXITSTATUS(rc) == 0;
}

static void teardown_pki(void)
{
	pg_rmdir(dir);
}

/* ps_tsp_check_tsa_usage of NAME.der: its code, its message into MSG. */
static int usage(const char *name, char *msg, size_t msglen)
{
	char path[512];
	uint8_t *c;
	size_t n;
	ps_ctx *ctx;
	int rc;

	ck_assert_msg(pki_ok, "openssl made the certificates (see %s/tool.log)", dir);
	snprintf(path, sizeof path, "%s/%s.der", dir, name);
	c = pg_slurp(path, &n);
	ck_assert_msg(c != NULL, "%s was made", path);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	rc = ps_tsp_check_tsa_usage(ctx, c, n);
	snprintf(msg, msglen, "%s", pdfstamp_ctx_errmsg(ctx));
	pdfstamp_ctx_free(ctx);
	free(c);
	return rc;
}

START_TEST(critical_timestamping_accepted)
{
	char m[256];

	ck_assert_msg(usage("ok", m, sizeof m) == 0, "%s", m);
}
END_TEST

static const struct {
	const char *name, *msg;
} refused[] = {
	{"noncrit", "not critical"},
	{"two", "other than id-kp-timeStamping alone"},
	{"any", "other than id-kp-timeStamping alone"},
	{"none", "lacks the extended key usage"},
	{"v1", "lacks the extended key usage"},
};

START_TEST(other_usages_refused)
{
	char m[256];

	ck_assert_int_eq(usage(refused[_i].name, m, sizeof m), PDFSTAMP_E_FORMAT);
	ck_assert_msg(strstr(m, refused[_i].msg) != NULL, "%s: %s", refused[_i].name, m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tsp");
	TCase *tc = tcase_create("usage");
	SRunner *sr;
	int failed;

	if (system("openssl version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: openssl is not installed\n");
		return 77;
	}
	tcase_add_unchecked_fixture(tc, setup_pki, teardown_pki);
	tcase_add_test(tc, critical_timestamping_accepted);
	tcase_add_loop_test(tc, other_usages_refused, 0, (int)(sizeof refused / sizeof refused[0]));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
