/* report.c: the results of blkc bench and tune on standard output, as a
 * table, CSV or JSON. */
#include "blkc.h"

#include <math.h>
#include <string.h>

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 32)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_number(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

static double gbps(const TuneRun *r, double ms) { return r->bytes > 0 && ms > 0 ? r->bytes / (ms * 1e6) : -1; }

static void print_bytes(FILE *f, double bytes)
{
	if (bytes >= 1e9)
		fprintf(f, "%.2f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		fprintf(f, "%.2f MB", bytes / 1e6);
	else if (bytes >= 1e3)
		fprintf(f, "%.2f kB", bytes / 1e3);
	else
		fprintf(f, "%.0f B", bytes);
}

void print_bench(FILE *f, const TuneRun *r, Format fmt)
{
	double ms = r->cfg[0].ms, g = gbps(r, ms);
	switch (fmt) {
	case FORMAT_TABLE:
		fprintf(f, "%s: %.4f ms (median of %d on %s)", r->kernel, ms, r->reps, r->backend);
		if (r->bytes > 0) {
			fputs(", ", f);
			print_bytes(f, r->bytes);
			fprintf(f, " moved: %.2f GB/s", g);
		}
		fputc('\n', f);
		break;
	case FORMAT_CSV:
		fprintf(f, "kernel,backend,reps,ms,bytes,gbps\n%s,%s,%d,%.6g,%.0f,", r->kernel, r->backend, r->reps, ms,
		        r->bytes);
		if (g >= 0)
			fprintf(f, "%.6g", g);
		fputc('\n', f);
		break;
	case FORMAT_JSON:
		fputs("{\"kernel\": ", f);
		json_string(f, r->kernel);
		fputs(", \"backend\": ", f);
		json_string(f, r->backend);
		fprintf(f, ", \"reps\": %d, \"ms\": ", r->reps);
		json_number(f, ms, "%.6g");
		fprintf(f, ", \"bytes\": %.0f, \"gbps\": ", r->bytes);
		if (g >= 0)
			json_number(f, g, "%.6g");
		else
			fputs("null", f);
		fputs("}\n", f);
		break;
	}
}

void print_tune(FILE *f, const TuneRun *r, Format fmt)
{
	char label[1024];
	if (fmt == FORMAT_TABLE) {
		int n_pruned = 0;
		for (int i = 0; i < r->n; i++)
			n_pruned += r->cfg[i].pruned;
		fprintf(f, "%s on %s: %d config%s", r->kernel, r->backend, r->n, r->n == 1 ? "" : "s");
		if (n_pruned)
			fprintf(f, " (%d pruned)", n_pruned);
		fprintf(f, ", median of %d run%s each", r->reps, r->reps == 1 ? "" : "s");
		if (r->bytes > 0) {
			fputs(", ", f);
			print_bytes(f, r->bytes);
			fputs(" moved", f);
		}
		fputc('\n', f);
		int w[TUNE_MAX_CONSTS];
		fprintf(f, "%4s", "#");
		for (int j = 0; j < r->n_names; j++) {
			w[j] = (int)strlen(r->names[j]) > 6 ? (int)strlen(r->names[j]) : 6;
			fprintf(f, "  %*s", w[j], r->names[j]);
		}
		fprintf(f, "  %12s", "ms");
		if (r->bytes > 0)
			fprintf(f, "  %10s", "GB/s");
		fputc('\n', f);
		for (int i = 0; i < r->n; i++) {
			const TuneConfig *c = &r->cfg[i];
			fprintf(f, "%4d", i + 1);
			for (int j = 0; j < r->n_names; j++) {
				const blk_const *v = config_get(c, r->names[j]);
				if (!v)
					fprintf(f, "  %*s", w[j], "-");
				else if (v->type)
					fprintf(f, "  %*s", w[j], v->type);
				else if (v->is_float)
					fprintf(f, "  %*g", w[j], v->f);
				else
					fprintf(f, "  %*lld", w[j], (long long)v->i);
			}
			if (c->ms >= 0)
				fprintf(f, "  %12.4f", c->ms);
			else
				fprintf(f, "  %12s", "-");
			if (r->bytes > 0) {
				if (c->ms > 0)
					fprintf(f, "  %10.2f", gbps(r, c->ms));
				else
					fprintf(f, "  %10s", "-");
			}
			if (i == r->best)
				fputs("  *", f);
			else if (c->pruned)
				fprintf(f, "  %s", c->note); /* "pruned: why" */
			else if (c->ms < 0)
				fprintf(f, "  failed: %s", c->note);
			fputc('\n', f);
		}
		if (r->best >= 0) {
			config_label(&r->cfg[r->best], label, sizeof label, " ");
			fprintf(f, "* fastest: %s, %.4f ms\n", label, r->cfg[r->best].ms);
		} else {
			fputs("no config ran\n", f);
		}
	} else if (fmt == FORMAT_CSV) {
		fputs("config", f);
		for (int j = 0; j < r->n_names; j++)
			fprintf(f, ",%s", r->names[j]);
		fputs(",ms,gbps,best,error\n", f);
		for (int i = 0; i < r->n; i++) {
			const TuneConfig *c = &r->cfg[i];
			fprintf(f, "%d", i + 1);
			for (int j = 0; j < r->n_names; j++) {
				const blk_const *v = config_get(c, r->names[j]);
				if (!v)
					fputc(',', f);
				else if (v->type)
					fprintf(f, ",%s", v->type);
				else if (v->is_float)
					fprintf(f, ",%.17g", v->f);
				else
					fprintf(f, ",%lld", (long long)v->i);
			}
			fputc(',', f);
			if (c->ms >= 0)
				fprintf(f, "%.6g", c->ms);
			fputc(',', f);
			if (c->ms > 0 && r->bytes > 0)
				fprintf(f, "%.6g", gbps(r, c->ms));
			fprintf(f, ",%d,", i == r->best);
			if (c->ms < 0) { /* a quoted field: quotes doubled */
				fputc('"', f);
				for (const char *p = c->note; *p; p++) {
					if (*p == '"')
						fputc('"', f);
					fputc(*p, f);
				}
				fputc('"', f);
			}
			fputc('\n', f);
		}
	} else {
		fputs("{\n  \"kernel\": ", f);
		json_string(f, r->kernel);
		fputs(",\n  \"backend\": ", f);
		json_string(f, r->backend);
		fprintf(f, ",\n  \"reps\": %d,\n  \"bytes\": %.0f,\n  \"best\": ", r->reps, r->bytes);
		if (r->best >= 0)
			fprintf(f, "%d", r->best);
		else
			fputs("null", f);
		fputs(",\n  \"configs\": [", f);
		for (int i = 0; i < r->n; i++) {
			const TuneConfig *c = &r->cfg[i];
			fprintf(f, "%s\n    {\"consts\": {", i ? "," : "");
			for (int j = 0; j < c->n; j++) {
				fputs(j ? ", " : "", f);
				json_string(f, c->c[j].name);
				fputs(": ", f);
				if (c->c[j].type)
					json_string(f, c->c[j].type);
				else if (c->c[j].is_float)
					json_number(f, c->c[j].f, "%.17g");
				else
					fprintf(f, "%lld", (long long)c->c[j].i);
			}
			fputs("}, \"ms\": ", f);
			if (c->ms >= 0)
				json_number(f, c->ms, "%.6g");
			else
				fputs("null", f);
			fputs(", \"gbps\": ", f);
			if (c->ms > 0 && r->bytes > 0)
				json_number(f, gbps(r, c->ms), "%.6g");
			else
				fputs("null", f);
			fprintf(f, ", \"best\": %s", i == r->best ? "true" : "false");
			if (c->pruned) {
				fputs(", \"pruned\": ", f);
				json_string(f, strncmp(c->note, "pruned: ", 8) == 0 ? c->note + 8 : c->note);
			} else if (c->ms < 0) {
				fputs(", \"error\": ", f);
				json_string(f, c->note);
			}
			fputc('}', f);
		}
		fputs("\n  ]\n}\n", f);
	}
}
