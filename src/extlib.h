/* SPDX-License-Identifier: Apache-2.0 */
/* extlib.h - internal: the libraries only some calls need -- HarfBuzz and
 * hb-subset, fontconfig and FriBidi for text in an embedded font, libspng
 * for PNG images, libqrencode for QR codes, GnuTLS for PKCS#12 files,
 * libcurl for the commands that fetch -- opened on first use (extlib.c;
 * conventions: ps.h).  font.c, fontpdf.c, image.c, qr.c, p12.c and http.c
 * call them as PS_X(name)(...), after ps_ext_need. */
#ifndef PS_EXTLIB_H
#define PS_EXTLIB_H

/* curl.h's GCC type-checking macros would wrap our calls through pointers */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <fontconfig/fontconfig.h>
#include <fribidi.h>
#include <gnutls/gnutls.h>
#include <gnutls/pkcs12.h>
#include <gnutls/x509.h>
#include <hb-ot.h>
#include <hb-subset.h>
#include <hb.h>
#include <qrencode.h>
#include <spng.h>

#include "ps.h"

/* The functions used, by library (each list is one soname: extlib.c). */
#define PS_EXT_HB(X) \
	X(hb_blob_create) X(hb_blob_destroy) X(hb_blob_get_data) X(hb_buffer_add_utf32) \
	X(hb_buffer_allocation_successful) X(hb_buffer_clear_contents) X(hb_buffer_create) \
	X(hb_buffer_destroy) X(hb_buffer_get_glyph_infos) X(hb_buffer_get_glyph_positions) \
	X(hb_buffer_guess_segment_properties) X(hb_buffer_set_direction) X(hb_buffer_set_script) \
	X(hb_face_create) X(hb_face_destroy) X(hb_face_get_glyph_count) X(hb_face_reference_blob) \
	X(hb_face_reference_table) X(hb_font_create) X(hb_font_destroy) \
	X(hb_font_get_glyph_extents) X(hb_font_get_glyph_h_advance) X(hb_font_get_nominal_glyph) \
	X(hb_font_set_scale) X(hb_language_from_string) X(hb_map_get) \
	X(hb_ot_metrics_get_position) X(hb_ot_name_get_utf8) X(hb_set_add) X(hb_shape) \
	X(hb_unicode_funcs_get_default) X(hb_unicode_script)
#define PS_EXT_HBSUB(X) \
	X(hb_subset_input_create_or_fail) X(hb_subset_input_destroy) X(hb_subset_input_glyph_set) \
	X(hb_subset_input_set) X(hb_subset_input_set_flags) X(hb_subset_plan_create_or_fail) \
	X(hb_subset_plan_destroy) X(hb_subset_plan_execute_or_fail) \
	X(hb_subset_plan_old_to_new_glyph_mapping)
#define PS_EXT_FC(X) \
	X(FcCharSetHasChar) X(FcConfigDestroy) X(FcConfigSubstitute) X(FcDefaultSubstitute) \
	X(FcFontSetDestroy) X(FcFontSort) X(FcInitLoadConfigAndFonts) X(FcNameParse) \
	X(FcPatternAddInteger) X(FcPatternAddString) X(FcPatternCreate) X(FcPatternDestroy) \
	X(FcPatternGetBool) X(FcPatternGetCharSet) X(FcPatternGetInteger) X(FcPatternGetString) \
	X(FcStrCmpIgnoreCase) X(FcStrCopy) X(FcStrFree)
#define PS_EXT_FRIBIDI(X) \
	X(fribidi_get_bidi_types) X(fribidi_get_bracket_types) \
	X(fribidi_get_par_embedding_levels_ex) X(fribidi_reorder_line)
#define PS_EXT_SPNG(X) \
	X(spng_ctx_free) X(spng_ctx_new) X(spng_decode_chunks) X(spng_decode_image) \
	X(spng_decoded_image_size) X(spng_get_ihdr) X(spng_set_chunk_limits) \
	X(spng_set_crc_action) X(spng_set_image_limits) X(spng_set_png_buffer) X(spng_strerror)
#define PS_EXT_QRENC(X) \
	X(QRcode_encodeInput) X(QRcode_free) X(QRinput_append) X(QRinput_appendECIheader) \
	X(QRinput_free) X(QRinput_new2)
#define PS_EXT_GNUTLS(X) \
	X(gnutls_pkcs12_deinit) X(gnutls_pkcs12_import) X(gnutls_pkcs12_init) \
	X(gnutls_pkcs12_mac_info) X(gnutls_pkcs12_simple_parse) X(gnutls_pkcs12_verify_mac) \
	X(gnutls_strerror) X(gnutls_x509_crt_deinit) X(gnutls_x509_crt_export2) \
	X(gnutls_x509_privkey_deinit) X(gnutls_x509_privkey_export2_pkcs8)
#define PS_EXT_CURL(X) \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_setopt) \
	X(curl_easy_perform) X(curl_easy_getinfo) X(curl_easy_strerror) X(curl_slist_append) \
	X(curl_slist_free_all)

#define PS_EXT_FIELD(name) __typeof__(name) *name;
struct ps_ext {
	PS_EXT_HB(PS_EXT_FIELD)
	PS_EXT_HBSUB(PS_EXT_FIELD)
	PS_EXT_FC(PS_EXT_FIELD)
	PS_EXT_FRIBIDI(PS_EXT_FIELD)
	PS_EXT_SPNG(PS_EXT_FIELD)
	PS_EXT_QRENC(PS_EXT_FIELD)
	PS_EXT_GNUTLS(PS_EXT_FIELD)
	PS_EXT_CURL(PS_EXT_FIELD)
};
#undef PS_EXT_FIELD

enum {
	PS_EXT_TEXT = 1,  /* HarfBuzz, hb-subset, fontconfig, FriBidi */
	PS_EXT_PNG = 2,   /* libspng */
	PS_EXT_QR = 3,    /* libqrencode */
	PS_EXT_P12 = 4,   /* GnuTLS */
	PS_EXT_HTTP = 5   /* libcurl (curl_global_init called once, when loaded) */
};

/* Around every use of fontconfig: one thread at a time in it (extlib.c
 * note 4). */
void ps_ext_fc_enter(void);
void ps_ext_fc_leave(void);
/* 0 once every library of GROUP is open and every function of its lists
 * found (loaded at the first call of the process), else PDFSTAMP_E_IO
 * naming the library and why. */
int ps_ext_need(ps_ctx *ctx, int group);
/* The table: its groups' entries are set once ps_ext_need succeeded. */
const struct ps_ext *ps_ext_table(void);
#define PS_X(name) (ps_ext_table()->name)

#endif
