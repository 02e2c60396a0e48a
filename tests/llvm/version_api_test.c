/* version_api_test: links libblk.so (only its exported blk_* functions) and
 * checks that the LLVM inside it answers. Prints one case and the counts. */
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	const char *v = blk_compiler_version();
	int ok = v && strncmp(v, "blk ", 4) == 0 && strstr(v, "(LLVM 19.") && strstr(v, "NVPTX)");
	if (ok)
		printf("ok   blk_compiler_version through libblk.so: %s\n", v);
	else
		printf("FAIL blk_compiler_version through libblk.so: got '%s'\n", v ? v : "(null)");
	printf("%d passed, %d failed\n", ok, !ok);
	return !ok;
}
