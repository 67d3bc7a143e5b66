/* SPDX-License-Identifier: Apache-2.0 */
/*
 * init.c - the pdfstamp_*_init functions: each versioned struct of the
 * public API filled with its *_INIT macro's values, for callers that
 * cannot use a C macro (language bindings, FFI).
 *
 * DESIGN NOTES
 *
 *  1. One template per struct, initialised with the macro itself, so that
 *     a function and its macro cannot disagree; the template has static
 *     storage, so its padding is zero (C11 6.7.9p10), and the caller's
 *     struct gets zero padding too (tests/check_api.c compares the bytes).
 *  2. The caller says which version it was compiled with (the header's
 *     PDFSTAMP_*_VERSION), as libgit2's git_*_options_init do: a struct
 *     grows at its end, and a program built against an older header has
 *     the older, shorter struct.  Version V is given the template's bytes
 *     up to the end of the last member V has (not sizeof of today's
 *     struct), and its own number in `version`; nothing past it is
 *     written.  A version the library does not know, or a NULL pointer:
 *     PDFSTAMP_E_USAGE, and nothing is written.  There is no context, so
 *     no message.
 *  3. Nothing is allocated or freed: a result struct that holds lists
 *     must be fresh or cleared (pdfstamp_info_clear, ...), as for the
 *     macro.
 * State: none (the templates are constant).
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "pdfstamp.h"

/* Bytes of a struct up to the end of MEMBER (note 2). */
#define END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* Note 2: copies the first LENS[VERSION - 1] bytes of TMPL to P (one
 * length per version, NVERSIONS of them) and stores VERSION in its first
 * member. */
static int fill(void *p, const void *tmpl, const size_t *lens, unsigned nversions, unsigned version)
{
	if (!p || version < 1 || version > nversions)
		return PDFSTAMP_E_USAGE;
	memcpy(p, tmpl, lens[version - 1]);
	memcpy(p, &version, sizeof version); /* every versioned struct starts
	                                      * with `unsigned version` */
	return 0;
}

#define NVERSIONS(lens) ((unsigned)(sizeof lens / sizeof lens[0]))

int pdfstamp_info_init(struct pdfstamp_info *info, unsigned version)
{
	static const struct pdfstamp_info tmpl = PDFSTAMP_INFO_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_info, sigs_incomplete),
	                              END_OF(struct pdfstamp_info, weak), sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_INFO_VERSION, "one length per version");
	return fill(info, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_write_opts_init(struct pdfstamp_write_opts *opts, unsigned version)
{
	static const struct pdfstamp_write_opts tmpl = PDFSTAMP_WRITE_OPTS_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_write_opts, flags),
	                              END_OF(struct pdfstamp_write_opts, output_fd), sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_WRITE_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_result_init(struct pdfstamp_result *result, unsigned version)
{
	static const struct pdfstamp_result tmpl = PDFSTAMP_RESULT_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_result, nwarnings),
	                              END_OF(struct pdfstamp_result, weak), sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_RESULT_VERSION, "one length per version");
	return fill(result, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_stamp_opts_init(struct pdfstamp_stamp_opts *opts, unsigned version)
{
	static const struct pdfstamp_stamp_opts tmpl = PDFSTAMP_STAMP_OPTS_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_stamp_opts, freetext),
	                              END_OF(struct pdfstamp_stamp_opts, image_len), sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_STAMP_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_meta_opts_init(struct pdfstamp_meta_opts *opts, unsigned version)
{
	static const struct pdfstamp_meta_opts tmpl = PDFSTAMP_META_OPTS_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_META_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_dss_opts_init(struct pdfstamp_dss_opts *opts, unsigned version)
{
	static const struct pdfstamp_dss_opts tmpl = PDFSTAMP_DSS_OPTS_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_dss_opts, vri), sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_DSS_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_timestamp_opts_init(struct pdfstamp_timestamp_opts *opts, unsigned version)
{
	static const struct pdfstamp_timestamp_opts tmpl = PDFSTAMP_TIMESTAMP_OPTS_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_timestamp_opts, timeout_ms),
	                              sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_TIMESTAMP_OPTS_VERSION,
	               "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_timestamp_info_init(struct pdfstamp_timestamp_info *info, unsigned version)
{
	static const struct pdfstamp_timestamp_info tmpl = PDFSTAMP_TIMESTAMP_INFO_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_timestamp_info, bytes_hashed),
	                              sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_TIMESTAMP_INFO_VERSION,
	               "one length per version");
	return fill(info, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_rewrite_opts_init(struct pdfstamp_rewrite_opts *opts, unsigned version)
{
	static const struct pdfstamp_rewrite_opts tmpl = PDFSTAMP_REWRITE_OPTS_INIT;
	static const size_t lens[] = {END_OF(struct pdfstamp_rewrite_opts, progress_ud),
	                              END_OF(struct pdfstamp_rewrite_opts, output_fd), sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_REWRITE_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_key_init(struct pdfstamp_key *key, unsigned version)
{
	static const struct pdfstamp_key tmpl = PDFSTAMP_KEY_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_KEY_VERSION, "one length per version");
	return fill(key, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_rewrite_stats_init(struct pdfstamp_rewrite_stats *stats, unsigned version)
{
	static const struct pdfstamp_rewrite_stats tmpl = PDFSTAMP_REWRITE_STATS_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_REWRITE_STATS_VERSION, "one length per version");
	return fill(stats, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_verify_opts_init(struct pdfstamp_verify_opts *opts, unsigned version)
{
	static const struct pdfstamp_verify_opts tmpl = PDFSTAMP_VERIFY_OPTS_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_VERIFY_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_verify_report_init(struct pdfstamp_verify_report *report, unsigned version)
{
	static const struct pdfstamp_verify_report tmpl = PDFSTAMP_VERIFY_REPORT_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_VERIFY_REPORT_VERSION, "one length per version");
	return fill(report, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_audit_report_init(struct pdfstamp_audit_report *report, unsigned version)
{
	static const struct pdfstamp_audit_report tmpl = PDFSTAMP_AUDIT_REPORT_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_AUDIT_REPORT_VERSION, "one length per version");
	return fill(report, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_stamps_init(struct pdfstamp_stamps *list, unsigned version)
{
	static const struct pdfstamp_stamps tmpl = PDFSTAMP_STAMPS_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_STAMPS_VERSION, "one length per version");
	return fill(list, &tmpl, lens, NVERSIONS(lens), version);
}

int pdfstamp_unstamp_opts_init(struct pdfstamp_unstamp_opts *opts, unsigned version)
{
	static const struct pdfstamp_unstamp_opts tmpl = PDFSTAMP_UNSTAMP_OPTS_INIT;
	static const size_t lens[] = {sizeof tmpl};

	_Static_assert(NVERSIONS(lens) == PDFSTAMP_UNSTAMP_OPTS_VERSION, "one length per version");
	return fill(opts, &tmpl, lens, NVERSIONS(lens), version);
}
