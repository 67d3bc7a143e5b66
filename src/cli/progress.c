/* SPDX-License-Identifier: Apache-2.0 */
/*
 * progress.c - a one-line progress bar on stderr for long rewrites and
 * verifications.
 *
 * DESIGN NOTES
 *
 *  1. Drawn only when stderr is a terminal (never into a pipe or a log
 *     file), the command was not given --quiet, and the total is over
 *     CLI_PROGRESS_MIN_BYTES; small files finish before a bar would help.
 *  2. The line is "LABEL  42% [#####.....]  120.3/300.0 MB  85.1 MB/s
 *     0:02 left", redrawn in place with a carriage return and padded with
 *     spaces over the previous one; it is kept narrower than the terminal
 *     (TIOCGWINSZ, 80 columns if unknown) so it never wraps.
 *  3. Redraws are rate-limited to about ten a second, except the first
 *     one and the one for 100 %.  The library reports object offsets,
 *     which need not grow monotonically (objects are written in number
 *     order, not file order), so the highest value seen is shown.
 *  4. cli_progress_end() blanks the line and returns the cursor to column
 *     0, so that the next message starts on a clean line.
 *  5. The label is plain ASCII from the program, never text from a file
 *     or the command line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define MB 1.0e6
#define REDRAW_INTERVAL 0.1 /* seconds */
#define BAR_CELLS 20

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

void cli_progress_init(struct cli_progress *p, const char *label, int quiet)
{
	memset(p, 0, sizeof *p);
	p->label = label;
	p->enabled = !quiet && isatty(STDERR_FILENO);
	p->t0 = mono_now();
}

static void format_time(char *buf, size_t n, double s)
{
	long t;

	if (!(s >= 0) || s > 359999.0) {
		snprintf(buf, n, "--:--");
		return;
	}
	t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

static void draw(struct cli_progress *p, int64_t total, double now)
{
	char line[256], left[32], bar[BAR_CELLS + 1];
	double frac = (double)p->done / (double)total;
	double el = now - p->t0, rate = el > 0 ? (double)p->done / el : 0;
	int i, len, fill, cols = columns() - 1;

	if (frac > 1)
		frac = 1;
	fill = (int)(frac * BAR_CELLS);
	for (i = 0; i < BAR_CELLS; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[BAR_CELLS] = '\0';
	/* A rate needs a little history before the time left means much. */
	if (el >= 0.5 && rate > 0)
		format_time(left, sizeof left, (double)(total - p->done) / rate);
	else
		snprintf(left, sizeof left, "--:--");
	len = snprintf(line, sizeof line, "%s %3d%% [%s] %.1f/%.1f MB %.1f MB/s %s left",
	               p->label ? p->label : "", (int)(frac * 100), bar,
	               (double)p->done / MB, (double)total / MB, rate / MB, left);
	if (len < 0)
		return;
	if (len >= (int)sizeof line)
		len = (int)sizeof line - 1;
	if (len > cols)
		len = cols;
	fputc('\r', stderr);
	fwrite(line, 1, (size_t)len, stderr);
	/* blank what is left of a longer previous line */
	for (i = len; i < p->width && i < cols; i++)
		fputc(' ', stderr);
	fflush(stderr);
	p->width = len;
	p->shown = 1;
	p->last = now;
}

void cli_progress_cb(void *userdata, int64_t done, int64_t total)
{
	struct cli_progress *p = userdata;
	double now;

	if (!p || !p->enabled || total <= CLI_PROGRESS_MIN_BYTES)
		return;
	if (done < 0)
		done = 0;
	if (done > total)
		done = total;
	if (done > p->done)
		p->done = done;
	now = mono_now();
	if (p->shown && p->done < total && now - p->last < REDRAW_INTERVAL)
		return;
	draw(p, total, now);
}

void cli_progress_end(struct cli_progress *p)
{
	int i;

	if (!p || !p->shown)
		return;
	fputc('\r', stderr);
	for (i = 0; i < p->width; i++)
		fputc(' ', stderr);
	fputc('\r', stderr);
	fflush(stderr);
	p->shown = 0;
	p->width = 0;
}
