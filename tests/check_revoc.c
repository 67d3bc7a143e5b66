/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_revoc.c - the OCSP reply checks of `dss --fetch`
 * (ps_revoc_ocsp_check: ocsp.c, x509sig.c).  A CA, a signer and a
 * delegated responder are made in the run by openssl (RSA 2048 keys,
 * never committed), and `openssl ocsp -index ... -respout` signs replies
 * for the signer: PKCS#1 v1.5, and RSASSA-PSS (RFC 4055) with SHA-256 and
 * the maximal salt, by the delegated responder, with SHA-384 and a 20-byte
 * salt; refused: PSS whose MGF1 hash is not the signature's hash, PSS
 * with SHA-1, a spoilt PSS signature, a reply asked for another
 * certificate; and the delegated responder's own status: from the CA
 * accepted, from the responder itself refused (ocsp.c note 3); a
 * responder whose extended key usage is anyExtendedKeyUsage refused, one
 * whose certificate has expired refused; replies without nextUpdate
 * (tests/kat/ocsp-age.py, python3-cryptography) refused when their
 * thisUpdate is over 7 days old; a CMS of 135 certificates
 * whose issuers must be fetched stops at 128 requests.
 * Without openssl the test is skipped (exit 77).
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ps.h"
#include "revoc.h"
#include "pdfgen.h"

static const char *dir;
static int pki_ok;

/* Runs a shell command in the temporary directory: its exit status. */
static int sh(const char *cmd)
{
	char full[4096];
	int rc;

	snprintf(full, sizeof full, "cd '%s' && ( %s ) >>tool.log 2>&1", dir, cmd);
	rc = system(full);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static const char pki[] =
	"set -e\n"
	"printf '[ca]\\ndefault_ca = tca\\n[tca]\\ndir = .\\ndatabase = idx\\n"
	"new_certs_dir = .\\nserial = serial\\ndefault_md = sha256\\ndefault_days = 36500\\n"
	"policy = any\\nunique_subject = no\\n[any]\\ncommonName = supplied\\n"
	"[v3_ca]\\nbasicConstraints = critical,CA:true\\nkeyUsage = critical,keyCertSign\\n"
	"[v3_leaf]\\nbasicConstraints = CA:false\\nkeyUsage = critical,digitalSignature\\n"
	"[v3_ocsp]\\nbasicConstraints = CA:false\\nkeyUsage = critical,digitalSignature\\n"
	"extendedKeyUsage = critical,OCSPSigning\\n"
	"[v3_anyeku]\\nbasicConstraints = CA:false\\nkeyUsage = critical,digitalSignature\\n"
	"extendedKeyUsage = anyExtendedKeyUsage\\n"
	"[v3_expired]\\nbasicConstraints = CA:false\\nkeyUsage = critical,digitalSignature\\n"
	"extendedKeyUsage = critical,OCSPSigning\\n' >ca.cnf\n"
	": >idx; echo 1000 >serial\n"
	"openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
	"-subj '/CN=revoc check CA' -days 36500 -config ca.cnf -extensions v3_ca\n"
	"for n in leaf ocsp anyeku expired; do\n"
	"  openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj \"/CN=check $n\"\n"
	"  D=; [ $n = expired ] && D='-startdate 20200101000000Z -enddate 20210101000000Z'\n"
	"  openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -extensions v3_$n "
	"-in $n.csr -out $n.pem -notext $D\n"
	"done\n"
	"for c in ca leaf ocsp; do openssl x509 -in $c.pem -outform DER -out $c.der; done\n"
	"R='openssl ocsp -index idx -CA ca.pem -issuer ca.pem -cert leaf.pem -ndays 36500 "
	"-no_nonce'\n"
	"P='-rsigopt rsa_padding_mode:pss'\n"
	"$R -rsigner ca.pem -rkey ca.key -respout v15.ocsp\n"
	"$R -rsigner ca.pem -rkey ca.key $P -respout pss.ocsp\n"
	"$R -rsigner ocsp.pem -rkey ocsp.key $P -respout pss_deleg.ocsp\n"
	"$R -rsigner anyeku.pem -rkey anyeku.key -respout anyeku.ocsp\n"
	"$R -rsigner expired.pem -rkey expired.key -respout expired.ocsp\n"
	"A=\"python3 $TOP_SRCDIR/tests/kat/ocsp-age.py ca.pem ca.key leaf.pem\"\n"
	"$A 30 old_nonext.ocsp\n"
	"$A 1 recent_nonext.ocsp\n"
	"$A 30 old_next.ocsp 1\n"
	"openssl ecparam -name prime256v1 -genkey -noout -out gk.pem\n"
	"openssl req -x509 -new -key gk.pem -subj /CN=ghost -days 30 -out ghost.pem\n"
	"echo 'authorityInfoAccess = caIssuers;URI:http://127.0.0.1:1/ghost.der' >aia.ext\n"
	": >many.pem\n"
	"for i in $(seq 135); do\n"
	"  openssl req -new -key gk.pem -subj /CN=m$i | openssl x509 -req -CA ghost.pem "
	"-CAkey gk.pem -set_serial $i -days 30 -extfile aia.ext -out m.pem\n"
	"  if [ $i = 1 ]; then cp m.pem m1.pem; else cat m.pem >>many.pem; fi\n"
	"done\n"
	"echo x >data\n"
	"openssl cms -sign -binary -nodetach -in data -signer m1.pem -inkey gk.pem "
	"-certfile many.pem -outform DER -out many.p7s\n"
	"$R -rsigner ca.pem -rkey ca.key -rmd sha384 $P -rsigopt rsa_mgf1_md:sha384 "
	"-rsigopt rsa_pss_saltlen:20 -respout pss384.ocsp\n"
	"$R -rsigner ca.pem -rkey ca.key $P -rsigopt rsa_mgf1_md:sha512 -respout pssmgf.ocsp\n"
	"$R -rsigner ca.pem -rkey ca.key -rmd sha1 $P -respout pss_sha1.ocsp\n"
	"S='openssl ocsp -index idx -CA ca.pem -issuer ca.pem -cert ocsp.pem -ndays 36500 "
	"-no_nonce'\n"
	"$S -rsigner ocsp.pem -rkey ocsp.key -respout self.ocsp\n"
	"$S -rsigner ca.pem -rkey ca.key -respout resp_by_ca.ocsp\n"
	"openssl ocsp -respin pss.ocsp -resp_text -noverify | grep -q 'mgf1 with sha256'\n"
	"openssl ocsp -respin pssmgf.ocsp -resp_text -noverify | grep -q 'mgf1 with sha512'\n";

static void setup_pki(void)
{
	dir = pg_tmpdir("check_revoc");
	pki_ok = sh(pki) == 0;
}

static void teardown_pki(void)
{
	pg_rmdir(dir);
}

static uint8_t *rd(const char *name, size_t *n)
{
	char path[512];
	uint8_t *p;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	p = pg_slurp(path, n);
	ck_assert_msg(p != NULL, "%s was made", name);
	return p;
}

/* ps_revoc_ocsp_check of REPLY (FLIP: a byte of its signature spoilt, the
 * first 256-byte BIT STRING, which comes before the reply's certs) for CERT
 * issued by ca.der; the message into MSG. */
static int check(const char *reply, const char *cert, int flip, char *msg, size_t msglen)
{
	uint8_t *r, *c, *i;
	size_t rn, cn, in;
	ps_ctx *ctx;
	int rc;

	ck_assert_msg(pki_ok, "openssl made the PKI and the replies (see %s/tool.log)", dir);
	r = rd(reply, &rn);
	c = rd(cert, &cn);
	i = rd("ca.der", &in);
	if (flip) {
		static const uint8_t bs[] = {0x03, 0x82, 0x01, 0x01, 0x00};
		size_t k;
		for (k = 0; k + sizeof bs + 10 < rn && memcmp(r + k, bs, sizeof bs); k++)
			;
		ck_assert_msg(k + sizeof bs + 10 < rn, "%s has a 2048-bit signature", reply);
		r[k + sizeof bs + 10] ^= 1;
	}
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	rc = ps_revoc_ocsp_check(ctx, r, rn, c, cn, i, in, NULL);
	snprintf(msg, msglen, "%s", pdfstamp_ctx_errmsg(ctx));
	pdfstamp_ctx_free(ctx);
	free(r);
	free(c);
	free(i);
	return rc;
}

#define GOOD(reply)                                                                          \
	do {                                                                                 \
		char m_[256];                                                                \
		int rc_ = check(reply, "leaf.der", 0, m_, sizeof m_);                        \
		ck_assert_msg(rc_ == 0, "%s accepted as good: %d %s", reply, rc_, m_);       \
	} while (0)

#define REFUSED(reply, cert, flip, text)                                                     \
	do {                                                                                 \
		char m_[256];                                                                \
		int rc_ = check(reply, cert, flip, m_, sizeof m_);                           \
		ck_assert_msg(rc_ == PDFSTAMP_E_FORMAT, "%s refused: %d", reply, rc_);       \
		ck_assert_msg(strstr(m_, text) != NULL, "%s: the message '%s' says '%s'",    \
		              reply, m_, text);                                              \
	} while (0)

START_TEST(pkcs1_v15)
{
	GOOD("v15.ocsp");
}
END_TEST

START_TEST(pss_sha256)
{
	GOOD("pss.ocsp");
}
END_TEST

START_TEST(pss_delegated)
{
	GOOD("pss_deleg.ocsp");
}
END_TEST

START_TEST(pss_sha384_salt20)
{
	GOOD("pss384.ocsp");
}
END_TEST

START_TEST(pss_mgf_mismatch)
{
	REFUSED("pssmgf.ocsp", "leaf.der", 0, "MGF1 hash other than the signature's hash");
}
END_TEST

START_TEST(pss_sha1)
{
	REFUSED("pss_sha1.ocsp", "leaf.der", 0, "not SHA-256, SHA-384 or SHA-512");
}
END_TEST

START_TEST(pss_spoilt)
{
	REFUSED("pss.ocsp", "leaf.der", 1, "signed neither by the issuer");
	REFUSED("pss_deleg.ocsp", "leaf.der", 1, "signed neither by the issuer");
}
END_TEST

START_TEST(pss_other_cert)
{
	REFUSED("pss.ocsp", "ocsp.der", 0, "no SingleResponse for the certificate asked");
}
END_TEST

/* RFC 6960 4.2.2.2: a delegated responder's certificate must name
 * id-kp-OCSPSigning; anyExtendedKeyUsage (which mbedTLS's EKU check
 * accepts as a wildcard) does not make any certificate of the CA an OCSP
 * responder. */
START_TEST(responder_any_eku)
{
	REFUSED("anyeku.ocsp", "leaf.der", 0, "signed neither by the issuer");
}
END_TEST

/* ocsp.c note 3: a delegated responder whose certificate has expired. */
START_TEST(responder_expired)
{
	REFUSED("expired.ocsp", "leaf.der", 0, "whose certificate is not valid now");
}
END_TEST

/* ocsp.c note 2: without nextUpdate, thisUpdate at most 7 days old (made
 * by tests/kat/ocsp-age.py); with a nextUpdate to come, any thisUpdate. */
START_TEST(reply_age)
{
	GOOD("recent_nonext.ocsp");
	GOOD("old_next.ocsp");
	REFUSED("old_nonext.ocsp", "leaf.der", 0, "no nextUpdate and its thisUpdate is more than "
	        "7 days old");
}
END_TEST

/* revoc.c note 6: a CMS whose 135 certificates each send for their
 * (missing) issuer stops at MAX_REQUESTS (128) requests, failing. */
static void count_event(void *ud, const struct pdfstamp_fetch_event *ev)
{
	int *n = ud;

	if (!ev->error || !strstr(ev->error, "more than 128 requests"))
		(*n)++;
}

START_TEST(request_cap)
{
	struct pdfstamp_dss_opts o = PDFSTAMP_DSS_OPTS_INIT;
	struct ps_revoc_item *items = NULL;
	size_t n = 0, cn;
	ps_revoc *r = NULL;
	ps_ctx *ctx;
	uint8_t *cms;
	int sent = 0, rc;

	ck_assert_msg(pki_ok, "openssl made the PKI and the replies (see %s/tool.log)", dir);
	cms = rd("many.p7s", &cn);
	o.fetch = 1;
	o.timeout_ms = 2000;
	o.on_fetch = count_event;
	o.on_fetch_userdata = &sent;
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_int_eq(ps_revoc_new(ctx, &o, &r), 0);
	rc = ps_revoc_collect(r, cms, cn, &items, &n);
	ck_assert_msg(rc == PDFSTAMP_E_FORMAT, "capped: %d %s", rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "more than 128 requests") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(sent, 128);
	ck_assert_ptr_null(items);
	ps_revoc_free(r);
	pdfstamp_ctx_free(ctx);
	free(cms);
}
END_TEST

START_TEST(responder_about_itself)
{
	char m[256];
	int rc = check("resp_by_ca.ocsp", "ocsp.der", 0, m, sizeof m);

	ck_assert_msg(rc == 0, "the CA's reply about the responder is good: %d %s", rc, m);
	REFUSED("self.ocsp", "ocsp.der", 0, "signed by the responder it is about: no proof");
}
END_TEST

static Suite *revoc_suite(void)
{
	Suite *s = suite_create("revoc");
	TCase *t = tcase_create("ocsp");

	tcase_add_unchecked_fixture(t, setup_pki, teardown_pki);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, pkcs1_v15);
	tcase_add_test(t, pss_sha256);
	tcase_add_test(t, pss_delegated);
	tcase_add_test(t, pss_sha384_salt20);
	tcase_add_test(t, pss_mgf_mismatch);
	tcase_add_test(t, pss_sha1);
	tcase_add_test(t, pss_spoilt);
	tcase_add_test(t, pss_other_cert);
	tcase_add_test(t, responder_about_itself);
	tcase_add_test(t, responder_any_eku);
	tcase_add_test(t, responder_expired);
	tcase_add_test(t, reply_age);
	tcase_add_test(t, request_cap);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (system("command -v openssl >/dev/null 2>&1") != 0) {
		printf("SKIP: openssl is not installed\n");
		return 77;
	}
	sr = srunner_create(revoc_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
