/* SPDX-License-Identifier: Apache-2.0 */
/*
 * date.c - dates: a moment parsed from "now" or ISO 8601, and written as a
 * PDF date (ISO 32000-2 7.9.4) or for XMP.
 *
 * DESIGN NOTES
 *
 * A ps_time is UTC seconds plus the offset that was in force where the
 * moment was observed.  Calendar arithmetic is done here (proleptic
 * Gregorian, days-from-civil) so nothing depends on TZ or on timegm().
 * Years outside 0000..9999 cannot be written in either format and are
 * clamped when formatting; the parser only produces years in that range.
 * Offsets are limited to +-14:00 on input and clamped to +-23:59 on output.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps.h"

#define MAX_TZOFF (14 * 60)       /* accepted on input */
#define CLAMP_TZOFF (23 * 60 + 59) /* largest offset either format can show */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (M 1..12).  The
 * year is shifted to start in March so that the leap day is the last day
 * of the shifted year; eras are 400-year cycles of 146097 days. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = floor_div(y, 400);
	yoe = y - era * 400;                                      /* 0..399 */
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;    /* 0..365 */
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;              /* 0..146096 */
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
	static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Exactly N ASCII digits at S. */
static int get_digits(const char *s, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int ps_time_parse(ps_ctx *ctx, const char *s, ps_time *out)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, oh = 0, om = 0, sign = 1;
	const char *p = s;

	if (!s)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "date: NULL string");
	if (strcmp(s, "now") == 0) {
		time_t now = time(NULL);
		struct tm lt;

		if (now == (time_t)-1)
			return ps_err(ctx, PDFSTAMP_E_INTERNAL, "cannot read the clock");
		out->t = (int64_t)now;
		out->tzoff = 0;
		if (localtime_r(&now, &lt)) {
			long off = lt.tm_gmtoff / 60;

			if (off >= -CLAMP_TZOFF && off <= CLAMP_TZOFF)
				out->tzoff = (int)off;
		}
		return 0;
	}
	/* YYYY-MM-DD */
	if (get_digits(p, 4, &y) || p[4] != '-' || get_digits(p + 5, 2, &mo) ||
	    p[7] != '-' || get_digits(p + 8, 2, &d))
		goto bad;
	p += 10;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "date '%s': no such day", s);
	/* [THH:MM[:SS[.frac]]] */
	if (*p == 'T' || *p == 't') {
		if (get_digits(p + 1, 2, &h) || p[3] != ':' || get_digits(p + 4, 2, &mi))
			goto bad;
		p += 6;
		if (*p == ':') {
			if (get_digits(p + 1, 2, &sec))
				goto bad;
			p += 3;
			if (*p == '.' || *p == ',') {   /* fractions are dropped */
				p++;
				if (*p < '0' || *p > '9')
					goto bad;
				while (*p >= '0' && *p <= '9')
					p++;
			}
		}
		if (h > 23 || mi > 59 || sec > 60)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "date '%s': no such time of day", s);
	}
	/* [Z|+HH:MM|-HH:MM] (also +HHMM and +HH) */
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (get_digits(p + 1, 2, &oh))
			goto bad;
		p += 3;
		if (*p == ':') {
			if (get_digits(p + 1, 2, &om))
				goto bad;
			p += 3;
		} else if (*p >= '0' && *p <= '9') {
			if (get_digits(p, 2, &om))
				goto bad;
			p += 2;
		}
		if (om > 59 || oh * 60 + om > MAX_TZOFF)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "date '%s': UTC offset out of range (at most 14:00)", s);
	}
	if (*p)
		goto bad;
	out->tzoff = sign * (oh * 60 + om);
	out->t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	         (int64_t)out->tzoff * 60;
	return 0;
bad:
	return ps_err(ctx, PDFSTAMP_E_USAGE,
	              "date '%s' is neither 'now' nor YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM|-HH:MM]", s);
}

typedef struct civil {
	int y, mo, d, h, mi, s;
	int tzoff;
} civil;

static void to_civil(const ps_time *tm, civil *c)
{
	/* 0000-01-01T00:00:00 and 9999-12-31T23:59:59 local time */
	const int64_t lo = -62167219200LL, hi = 253402300799LL;
	int64_t local, days, secs, y;
	int tz = tm->tzoff;

	if (tz > CLAMP_TZOFF)
		tz = CLAMP_TZOFF;
	if (tz < -CLAMP_TZOFF)
		tz = -CLAMP_TZOFF;
	local = tm->t;
	if (local < lo - 86400)
		local = lo - 86400;
	if (local > hi + 86400)
		local = hi + 86400;
	local += (int64_t)tz * 60;
	if (local < lo)
		local = lo;
	if (local > hi)
		local = hi;
	days = floor_div(local, 86400);
	secs = local - days * 86400;
	civil_from_days(days, &y, &c->mo, &c->d);
	c->y = (int)y;
	c->h = (int)(secs / 3600);
	c->mi = (int)(secs / 60 % 60);
	c->s = (int)(secs % 60);
	c->tzoff = tz;
}

void ps_time_pdf(const ps_time *tm, char out[32])
{
	civil c;
	int a;

	to_civil(tm, &c);
	a = abs(c.tzoff);
	if (c.tzoff == 0)
		snprintf(out, 32, "D:%04d%02d%02d%02d%02d%02dZ", c.y, c.mo, c.d, c.h, c.mi, c.s);
	else
		snprintf(out, 32, "D:%04d%02d%02d%02d%02d%02d%c%02d'%02d'", c.y, c.mo, c.d,
		         c.h, c.mi, c.s, c.tzoff < 0 ? '-' : '+', a / 60, a % 60);
}

void ps_time_iso(const ps_time *tm, char out[32])
{
	civil c;
	int a;

	to_civil(tm, &c);
	a = abs(c.tzoff);
	if (c.tzoff == 0)
		snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02dZ", c.y, c.mo, c.d, c.h, c.mi, c.s);
	else
		snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", c.y, c.mo, c.d,
		         c.h, c.mi, c.s, c.tzoff < 0 ? '-' : '+', a / 60, a % 60);
}

/* A PDF date (ISO 32000-2 7.9.4): D:YYYY[MM[DD[HH[mm[SS[O[HH['mm[']]]]]]]]]
 * with O one of Z, + and -; the "D:" prefix is optional, as many writers
 * drop it.  Bytes from a file: every field is checked, nothing is read past
 * N. */
int ps_time_parse_pdf(const uint8_t *p, size_t n, ps_time *out)
{
	int v[6] = {0, 1, 1, 0, 0, 0}, lens[6] = {4, 2, 2, 2, 2, 2}, i, oh = 0, om = 0, sign = 1;
	char b[8];
	size_t k = 0;

	if (n >= 2 && p[0] == 'D' && p[1] == ':')
		k = 2;
	for (i = 0; i < 6; i++) {
		if (k == n || p[k] < '0' || p[k] > '9') {
			if (i == 0)
				return -1;
			break;
		}
		if (n - k < (size_t)lens[i])
			return -1;
		memcpy(b, p + k, (size_t)lens[i]);
		b[lens[i]] = '\0';
		if (get_digits(b, lens[i], &v[i]))
			return -1;
		k += (size_t)lens[i];
	}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > days_in_month(v[0], v[1]) ||
	    v[3] > 23 || v[4] > 59 || v[5] > 60)
		return -1;
	if (k < n && (p[k] == '+' || p[k] == '-')) {
		sign = p[k] == '-' ? -1 : 1;
		k++;
		if (n - k < 2 || (memcpy(b, p + k, 2), b[2] = '\0', get_digits(b, 2, &oh)))
			return -1;
		k += 2;
		if (k < n && p[k] == '\'')
			k++;
		if (n - k >= 2 && p[k] >= '0' && p[k] <= '9') {
			memcpy(b, p + k, 2);
			b[2] = '\0';
			if (get_digits(b, 2, &om))
				return -1;
			k += 2;
		}
		if (k < n && p[k] == '\'')
			k++;
		if (om > 59 || oh * 60 + om > MAX_TZOFF)
			return -1;
	} else if (k < n && p[k] == 'Z') {
		k++;
		while (k < n && (p[k] == '\'' || (p[k] >= '0' && p[k] <= '9')))
			k++; /* "Z00'00'", as some writers put it */
	}
	if (k != n)
		return -1;
	out->tzoff = sign * (oh * 60 + om);
	out->t = days_from_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 + v[4] * 60 + v[5] -
	         (int64_t)out->tzoff * 60;
	return 0;
}

/* strftime(3) of the moment in its own offset (%z and %Z show that offset;
 * the program's locale is C: names are English).  Days of the week and
 * of the year come from the same civil arithmetic, so TZ never matters. */
int ps_time_format(ps_ctx *ctx, const ps_time *tm, const char *fmt, ps_buf *out)
{
	char buf[512], zone[8];
	struct tm t;
	civil c;
	int64_t days;
	size_t n;
	int a;

	to_civil(tm, &c);
	memset(&t, 0, sizeof t);
	t.tm_year = c.y - 1900;
	t.tm_mon = c.mo - 1;
	t.tm_mday = c.d;
	t.tm_hour = c.h;
	t.tm_min = c.mi;
	t.tm_sec = c.s;
	days = days_from_civil(c.y, c.mo, c.d);
	t.tm_wday = (int)((days % 7 + 11) % 7); /* 1970-01-01 was a Thursday (4) */
	t.tm_yday = (int)(days - days_from_civil(c.y, 1, 1));
	t.tm_isdst = 0;
	a = abs(c.tzoff);
	t.tm_gmtoff = (long)c.tzoff * 60;
	if (c.tzoff == 0)
		snprintf(zone, sizeof zone, "UTC");
	else
		snprintf(zone, sizeof zone, "%c%02d%02d", c.tzoff < 0 ? '-' : '+', (a / 60) % 100,
		         a % 60);
	t.tm_zone = zone;
	if (!*fmt)
		return 0;
	/* strftime returns 0 both for an empty result and for one that does
	 * not fit: a leading space tells them apart */
	if (strlen(fmt) > sizeof buf / 2)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the date format is too long (at most %zu bytes)", sizeof buf / 2);
	{
		char f2[sizeof buf / 2 + 2];
		f2[0] = ' ';
		memcpy(f2 + 1, fmt, strlen(fmt) + 1);
		/* the caller's format, by design (template.c note 1) */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
		n = strftime(buf, sizeof buf, f2, &t);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
	}
	if (n == 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the date format gives more than %zu bytes", sizeof buf - 2);
	ps_buf_append(out, buf + 1, n - 1);
	return 0;
}
