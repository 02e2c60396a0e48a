/* plot.c: blkc tune --svg: the times of the configurations as a bar chart. */
#include "blkc.h"

#include <math.h>
#include <string.h>

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 32 || *s == '\t')
				fputc(*s, f);
		}
}

/* A bar chart of the times: a bar a config, the fastest in another colour,
 * the failed ones marked; axes with ticks and titles. */
bool write_svg(const char *path, const TuneRun *r)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	/* room for the x labels, slanted at 40 degrees, about 6 px a character */
	size_t longest = 0;
	for (int i = 0; i < r->n; i++) {
		char label[1024];
		config_label(&r->cfg[i], label, sizeof label, " ");
		if (strlen(label) > longest)
			longest = strlen(label);
	}
	double slant = 6.0 * (double)longest;
	double bw = r->n > 24 ? 24 : 56;
	double pw = bw * r->n > 360 ? bw * r->n : 360;
	bw = pw / (r->n ? r->n : 1);
	double left = 0.77 * slant - bw / 2 + 12, right = 24, top = 48, ph = 260, bottom = 0.64 * slant + 50;
	if (left < 78)
		left = 78;
	double width = left + pw + right, height = top + ph + bottom;
	double max = 0;
	for (int i = 0; i < r->n; i++)
		if (r->cfg[i].ms > max)
			max = r->cfg[i].ms;
	/* ticks at 1, 2 or 5 times a power of ten, about five of them */
	double step = 1;
	if (max > 0) {
		double raw = max / 5, mag = pow(10, floor(log10(raw))), frac = raw / mag;
		step = (frac <= 1 ? 1 : frac <= 2 ? 2 : frac <= 5 ? 5 : 10) * mag;
	}
	int ticks = max > 0 ? (int)ceil(max / step - 1e-9) : 1;
	if (ticks < 1)
		ticks = 1;
	double ymax = ticks * step;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	           "font-family=\"sans-serif\" font-size=\"11\">\n", width, height, width, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height);
	fprintf(f, "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">blkc tune: ", width / 2);
	xml_text(f, r->kernel);
	fprintf(f, " on %s, median of %d run%s</text>\n", r->backend, r->reps, r->reps == 1 ? "" : "s");
	/* y axis: ticks, grid lines, title */
	for (int t = 0; t <= ticks; t++) {
		double y = top + ph - ph * t / ticks;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", left, y, left + pw, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", left - 6, y + 4, t * step);
	}
	fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">median time (ms)</text>\n",
	        left - 58, top + ph / 2);
	/* bars */
	for (int i = 0; i < r->n; i++) {
		const TuneConfig *c = &r->cfg[i];
		double x = left + bw * i, cx = x + bw / 2;
		char label[1024];
		config_label(c, label, sizeof label, " ");
		if (c->ms >= 0) {
			double h = ymax > 0 ? ph * c->ms / ymax : 0;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x + bw * 0.15,
			        top + ph - h, bw * 0.7, h, i == r->best ? "#e07a1f" : "#4a78b5");
			xml_text(f, label);
			fprintf(f, ": %.4g ms</title></rect>\n", c->ms);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">%.3g%s</text>\n", cx,
			        top + ph - h - 4, c->ms, i == r->best ? " *" : "");
		} else {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#c0392b\"><title>", cx, top + ph - 6);
			xml_text(f, c->note);
			fputs("</title>failed</text>\n", f);
		}
		fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-40)\" text-anchor=\"end\" font-size=\"10\">", cx + 3,
		        top + ph + 14);
		xml_text(f, label);
		fputs("</text>\n", f);
	}
	/* axes over the bars, x title, legend */
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, top + ph);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top + ph, left + pw,
	        top + ph);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">configuration</text>\n", left + pw / 2, height - 12);
	fprintf(f, "<rect x=\"%.1f\" y=\"30\" width=\"10\" height=\"10\" fill=\"#e07a1f\"/>"
	           "<text x=\"%.1f\" y=\"39\">fastest</text>\n</svg>\n", left + pw - 60, left + pw - 46);
	return fclose(f) == 0;
}
