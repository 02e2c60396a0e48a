/* options.c: what the command lines of blkc share: usage errors, -D values,
 * and where the standard library is. */
#include "blkc.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "blkc: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'blkc --help' for more information.\n");
	return 2;
}

int unknown_option(int argc, char **argv, const struct option *longopts)
{
	char msg[300];
	if (optopt) { /* a short option, maybe inside a word such as -Wall */
		const char *word = NULL;
		for (int i = 1; i < argc && !word; i++)
			if (argv[i][0] == '-' && argv[i][1] && argv[i][1] != '-' && strchr(argv[i] + 1, optopt))
				word = argv[i];
		if (word && strlen(word) > 2)
			snprintf(msg, sizeof msg, "unknown option '-%c' (in '%%s')", optopt);
		else
			snprintf(msg, sizeof msg, "unknown option '-%c'%%s", optopt);
		return bad_usage(msg, word && strlen(word) > 2 ? word : "");
	}
	const char *arg = argv[optind - 1];
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(arg + 2, "="), strncmp(arg, "--", 2) == 0 ? arg + 2 : arg);
	Nearest n;
	nearest_init(&n, name);
	for (const struct option *o = longopts; o->name; o++)
		nearest_consider(&n, o->name);
	if (!n.best)
		return bad_usage("unknown option '%s'", arg);
	snprintf(msg, sizeof msg, "unknown option '%%s'; did you mean '--%s'?", n.best);
	return bad_usage(msg, arg);
}

bool is_identifier(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* The standard library: $BLK_STDLIB, else beside the program as installed
 * (PREFIX/bin/blkc, PREFIX/share/blk/stdlib) or as built (build/blkc,
 * stdlib/). */
const char *find_stdlib(char *buf, size_t size)
{
	const char *env = getenv("BLK_STDLIB");
	if (env && env[0])
		return env;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	static const char *const rel[] = {"../share/blk/stdlib", "../stdlib", "../../stdlib"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(buf, size, "%s/%s", exe, rel[i]);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

/* VALUE of -D: an integer (decimal, 0x hex), a float, true/false, or an element
 * type name (f16) for a const type parameter. */
bool parse_define(const char *arg, ConstBinding *out)
{
	const char *eq = strchr(arg, '=');
	if (!eq || !is_identifier(arg, (size_t)(eq - arg)) || !eq[1])
		return false;
	const char *v = eq + 1;
	char *end;
	*out = (ConstBinding){.name = strndup(arg, (size_t)(eq - arg))};
	if (!out->name)
		return false;
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		out->i = v[0] == 't';
		return true;
	}
	ScalarKind k;
	if (scalar_from_name(v, &k)) { /* a type, for a const type parameter: the static name */
		out->type = scalar_name(k);
		return true;
	}
	errno = 0;
	long long i = strtoll(v, &end, 0);
	if (!*end && !errno) {
		out->i = i;
		return true;
	}
	errno = 0;
	double f = strtod(v, &end);
	if (!*end && !errno) {
		out->is_float = true;
		out->f = f;
		return true;
	}
	free((char *)out->name);
	out->name = NULL;
	return false;
}

/* Is `out` (the output of option `flag`) a file this compile reads: the
 * input as given, or a file loaded for it (modules: the input and its
 * imports)? By device and inode, so that another name of the same file
 * counts; an output that does not exist yet clashes with nothing. Reports
 * a clash on stderr, `who` first ("blkc", "blkc run"). */
bool output_is_source(const char *who, const char *flag, const char *out, const char *input, const PtrVec *modules)
{
	struct stat so, si;
	if (!out || strcmp(out, "-") == 0 || stat(out, &so) != 0)
		return false;
	int n = modules ? modules->len : 0;
	for (int i = -1; i < n; i++) {
		const char *p = i < 0 ? input : ((const Module *)modules->items[i])->path;
		if (!p || strcmp(p, "-") == 0 || stat(p, &si) != 0 || si.st_dev != so.st_dev || si.st_ino != so.st_ino)
			continue;
		if (i <= 0)
			fprintf(stderr, "%s: error: %s: the output '%s' is the input '%s': refusing to overwrite it\n", who,
			        flag, out, p);
		else
			fprintf(stderr, "%s: error: %s: the output '%s' is '%s', a file the input imports: refusing to "
			                "overwrite it\n", who, flag, out, p);
		return true;
	}
	return false;
}
