/* ir/options.c: the table of options (options.h) and its checks. */
#include "ir/options.h"

#include <stdio.h>
#include <string.h>

const OptionInfo option_table[OPTION_COUNT] = {
#define OPTION_ROW(name, kind, dflt, lo, hi, env, in_key, help) {#name, kind, dflt, lo, hi, env, in_key, help},
	BLK_OPTIONS(OPTION_ROW)
#undef OPTION_ROW
};

int option_find(const char *name)
{
	for (int i = 0; name && i < OPTION_COUNT; i++)
		if (strcmp(option_table[i].name, name) == 0)
			return i;
	return -1;
}

const char *option_range(int id, char *buf, size_t size)
{
	const OptionInfo *o = &option_table[id];
	if (o->kind == OPTION_FLAG)
		snprintf(buf, size, "0 or 1 (false or true)");
	else
		snprintf(buf, size, "%s in %d..%d", o->kind == OPTION_POW2 ? "a power of two" : "an integer", o->lo, o->hi);
	return buf;
}

const char *option_check(int id, const char *text, int64_t v, char *buf, size_t size)
{
	const OptionInfo *o = &option_table[id];
	if (!text && v >= o->lo && v <= o->hi && (o->kind != OPTION_POW2 || !(v & (v - 1))))
		return NULL;
	char range[64], value[64];
	if (!text)
		snprintf(value, sizeof value, "%lld", (long long)v);
	snprintf(buf, size, "the option %s is %s, found %s", o->name, option_range(id, range, sizeof range),
	         text ? text : value);
	return buf;
}
