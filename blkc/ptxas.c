/* ptxas.c: finding and running ptxas, the CUDA toolkit's PTX assembler, for
 * --emit=cubin and --emit=c (with -v: a kernel that spills registers gets a
 * warning naming it and the bytes); reading and writing whole files. */
#include "blkc.h"
#include "lower/lower.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ptxas: on PATH, else in $CUDA_HOME/bin, else (CUDA_HOME unset) in
 * /usr/local/cuda/bin. */
const char *find_ptxas(char *buf, size_t size)
{
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		snprintf(buf, size, "%.*s/ptxas", (int)(n ? n : 1), n ? path : ".");
		struct stat st;
		if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return buf;
		path = colon ? colon + 1 : NULL;
	}
	const char *home = getenv("CUDA_HOME");
	snprintf(buf, size, "%s/bin/ptxas", home && home[0] ? home : "/usr/local/cuda");
	return access(buf, X_OK) == 0 ? buf : NULL;
}

FILE *open_output(const char *path, char *tmp, size_t size)
{
	struct stat st;
	tmp[0] = '\0';
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return fopen(path, "wb"); /* /dev/stdout, /dev/full, a FIFO: written in place */
	if ((size_t)snprintf(tmp, size, "%s.tmp.XXXXXX", path) >= size) {
		tmp[0] = '\0';
		errno = ENAMETOOLONG;
		return NULL;
	}
	int fd = mkstemp(tmp);
	if (fd < 0) {
		tmp[0] = '\0';
		return NULL;
	}
	/* the mode a new file gets (mkstemp makes it 0600) */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int err = errno;
		close(fd);
		unlink(tmp);
		tmp[0] = '\0';
		errno = err;
	}
	return f;
}

bool close_output(FILE *f, const char *path, const char *tmp, bool keep)
{
	int err = 0;
	if (ferror(f))
		err = EIO;
	if (fflush(f) != 0 && !err)
		err = errno;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (!err && keep && tmp[0] && rename(tmp, path) != 0)
		err = errno;
	if (tmp[0] && (err || !keep))
		unlink(tmp);
	errno = err;
	return err == 0;
}

bool write_file(const char *path, const void *data, size_t len)
{
	char tmp[4200];
	FILE *f = open_output(path, tmp, sizeof tmp);
	if (!f)
		return false;
	int err = fwrite(data, 1, len, f) == len ? 0 : errno ? errno : EIO;
	bool ok = close_output(f, path, tmp, err == 0);
	if (err)
		errno = err;
	return ok && !err;
}

/* The whole file, malloc'd, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *more = realloc(buf, cap * 2 + 1);
			if (!more) {
				free(buf);
				buf = NULL;
			}
			buf = more;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* Assembles PTX into a cubin with `ptxas -v -arch=ARCH`, in a temporary
 * folder. On failure reports ptxas's messages to diag; on success, a
 * warning when its log shows spill stores. */
bool run_ptxas(const char *ptxas, const char *arch, const char *kernel, const char *ptx, size_t len,
               unsigned char **cubin, size_t *cubin_len, Diag *diag)
{
	*cubin = NULL;
	*cubin_len = 0;
	const char *tmp = getenv("TMPDIR");
	char dir[4096], in[4200], out[4200], log[4200], archarg[64];
	snprintf(dir, sizeof dir, "%s/blkc-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		diag_plain(diag, DIAG_ERROR, "cannot make a temporary folder for ptxas in '%s': %s",
		           tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
		return false;
	}
	snprintf(in, sizeof in, "%s/%s.ptx", dir, "kernel");
	snprintf(out, sizeof out, "%s/%s.cubin", dir, "kernel");
	snprintf(log, sizeof log, "%s/ptxas.log", dir);
	snprintf(archarg, sizeof archarg, "-arch=%s", arch);
	bool ok = false;
	if (!write_file(in, ptx, len)) {
		diag_plain(diag, DIAG_ERROR, "cannot write '%s': %s", in, strerror(errno));
	} else {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		char *argv[] = {"ptxas", "-v", archarg, "-o", out, in, NULL};
		pid_t pid;
		int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ), status = 0;
		posix_spawn_file_actions_destroy(&fa);
		if (rc != 0) {
			diag_plain(diag, DIAG_ERROR, "cannot run '%s': %s", ptxas, strerror(rc));
		} else if (waitpid(pid, &status, 0) < 0) {
			diag_plain(diag, DIAG_ERROR, "waiting for '%s': %s", ptxas, strerror(errno));
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			size_t n = 0;
			char *msg = slurp(log, &n);
			while (msg && n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
				msg[--n] = '\0';
			diag_plain(diag, DIAG_ERROR, "%s %s failed on kernel '%s' (%s %d)%s%s", ptxas, archarg, kernel,
			           WIFEXITED(status) ? "exit status" : "signal",
			           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg && n ? ":\n" : "",
			           msg && n ? msg : "");
			free(msg);
		} else {
			*cubin = (unsigned char *)slurp(out, cubin_len);
			ok = *cubin != NULL;
			if (!ok)
				diag_plain(diag, DIAG_ERROR, "cannot read what ptxas wrote ('%s')", out);
			size_t n = 0;
			char *msg = slurp(log, &n);
			long stores = 0, loads = 0;
			if (ok && msg && gpu_ptxas_spills(msg, &stores, &loads) && (stores || loads))
				diag_plain(diag, DIAG_WARNING,
				           "kernel '%s' spills registers for %s: %ld bytes of spill stores and %ld bytes of spill "
				           "loads a thread; a smaller block or more warps (num_warps) keeps its values in registers",
				           kernel, arch, stores, loads);
			free(msg);
		}
	}
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
	return ok;
}
