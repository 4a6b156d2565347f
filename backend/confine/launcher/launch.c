/*
 * gatehouse-launch: the confinement launcher Gatehouse starts between fork
 * and the exec of a script's runtime (backend/confine, docs/process-ownership.md).
 *
 * Why C and not the Go launcher it replaces: a re-exec of the Go program
 * starts a whole Go runtime (heap, threads, every package's init) only to
 * make five system calls and exec; that cost was about a tenth of a
 * trivial attempt. This file is freestanding (no libc, raw system calls,
 * x86-64 only), so the binary is a few kilobytes, starts in microseconds
 * and is byte-for-byte reproducible by build.sh; the Go package embeds it.
 *
 * It decides nothing: the Go side computes the Landlock masks and rules
 * (plan.go) and passes them on the command line; this program checks them
 * against the kernel, enforces them on itself, reports the facts it saw
 * and executes the target. Usage (every number decimal):
 *
 *   gatehouse-launch USERNS_UID USERNS_GID ABI_LIMIT FS NET SCOPE NETNS \
 *       NRULES {ACCESS IGNORE_MISSING PATH}×NRULES TARGET ARGV...
 *
 * USERNS_UID ≥ 0 makes this process, first of all, the only member of a new
 * user namespace where it is USERNS_UID:USERNS_GID, mapped to its own
 * effective ids (setgroups denied): root's attempts run as an ordinary
 * user, without the parent paying for a clone into a user namespace (a
 * full fork and three map writes across processes).
 *
 * The target's environment is this program's own environment, unchanged.
 * Descriptors 0-3 are the target's; descriptor 4 is the report pipe: one
 * JSON line {"abi":N,"netns":B} once everything is enforced, or
 * {"error":"...","unavailable":B} (and exit 126) when it cannot be, or an
 * error line after the report when the exec itself fails (exit 127).
 */

typedef unsigned long u64;
typedef long s64;

#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_execve 59
#define SYS_prctl 157
#define SYS_exit_group 231
#define SYS_geteuid 107
#define SYS_getegid 108
#define SYS_unshare 272
#define SYS_openat 257
#define SYS_close_range 436
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446

#define AT_FDCWD (-100)
#define O_RDONLY 0
#define O_WRONLY 1
#define CLONE_NEWUSER 0x10000000
#define O_PATH 010000000
#define O_CLOEXEC 02000000
#define ENOENT 2
#define PR_SET_NO_NEW_PRIVS 38
#define CLOSE_RANGE_CLOEXEC 4
#define LANDLOCK_CREATE_RULESET_VERSION 1
#define LANDLOCK_RULE_PATH_BENEATH 1

#define REPORT_FD 4
#define MAX_KNOWN_ABI 7

static s64 sys6(s64 n, s64 a, s64 b, s64 c, s64 d, s64 e, s64 f)
{
	s64 r;
	register s64 r10 __asm__("r10") = d;
	register s64 r8 __asm__("r8") = e;
	register s64 r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}
#define sys3(n, a, b, c) sys6(n, (s64)(a), (s64)(b), (s64)(c), 0, 0, 0)

/* gcc may emit calls to these for struct copies and clears. */
void *memset(void *d, int c, u64 n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}
void *memcpy(void *d, const void *s, u64 n)
{
	unsigned char *p = d;
	const unsigned char *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

struct ruleset_attr {
	u64 handled_access_fs;
	u64 handled_access_net;
	u64 scoped;
};

struct path_beneath_attr {
	u64 allowed_access;
	int parent_fd;
} __attribute__((packed));

/* What each Landlock ABI can handle (filesystem, network, scope). */
static const u64 abi_fs[MAX_KNOWN_ABI + 1] = {0, 0x1fff, 0x3fff, 0x7fff, 0x7fff, 0xffff, 0xffff, 0xffff};
static const u64 abi_net[MAX_KNOWN_ABI + 1] = {0, 0, 0, 0, 0x3, 0x3, 0x3, 0x3};
static const u64 abi_scope[MAX_KNOWN_ABI + 1] = {0, 0, 0, 0, 0, 0, 0x3, 0x3};

/* The report line is built here; it is bounded, and longer text is cut.
 * Quoted text (a path can be 4095 bytes) stops TAIL bytes before the end,
 * so the line's end (an errno, the unavailable flag, the closing quote and
 * brace: under 64 bytes) always fits and the line stays one JSON object. */
static char line[4096];
static u64 len;
#define TAIL 128

static void put(const char *s)
{
	while (*s && len < sizeof line - 8)
		line[len++] = *s++;
}

/* putq appends s as JSON string content: quotes, backslashes and every
 * control character escaped, so no path can break the line; text past
 * the room left before TAIL is cut and marked "...". */
static void putq(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	for (; *s; s++) {
		if (len >= sizeof line - TAIL) {
			put("...");
			return;
		}
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			line[len++] = '\\';
			line[len++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			put("\\u00");
			line[len++] = hex[c >> 4];
			line[len++] = hex[c & 15];
		} else {
			line[len++] = (char)c;
		}
	}
}

static void putn(s64 n)
{
	char b[24];
	int i = sizeof b - 1;
	int neg = n < 0;
	u64 u = neg ? (u64)(-n) : (u64)n;
	b[i] = 0;
	do {
		b[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		b[--i] = '-';
	put(b + i);
}

static void flush(void)
{
	line[len++] = '\n';
	sys3(SYS_write, REPORT_FD, line, len);
	len = 0;
}

__attribute__((noreturn)) static void die(int code)
{
	for (;;)
		sys3(SYS_exit_group, code, 0, 0);
}

/* fail reports an error (what, then detail and an errno when given) and
 * exits 126 without executing anything. */
__attribute__((noreturn)) static void fail(int unavailable, const char *what, const char *detail, s64 err)
{
	put("{\"error\":\"");
	putq(what);
	if (detail) {
		put(" ");
		putq(detail);
	}
	if (err) {
		put(": errno ");
		putn(err);
	}
	put(unavailable ? "\",\"unavailable\":true}" : "\"}");
	flush();
	die(126);
}

/* number parses a decimal argument (an optional leading '-'), or fails. */
static s64 number(const char *s)
{
	s64 n = 0;
	int neg = 0;
	if (!s || !*s)
		fail(0, "malformed launch request:", "missing number", 0);
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (!*s)
		fail(0, "malformed launch request:", "bad number", 0);
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > (s64)1 << 56)
			fail(0, "malformed launch request:", "bad number", 0);
		n = n * 10 + (*s - '0');
	}
	return neg ? -n : n;
}

/* only_loopback reports whether this network namespace has no interface
 * but lo (a fresh one): /proc/self/net/dev has two header lines and one
 * line per interface, "  name: counters...". */
static int only_loopback(void)
{
	static char buf[8192];
	s64 fd = sys6(SYS_openat, AT_FDCWD, (s64)"/proc/self/net/dev", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	s64 n = 0, r;
	if (fd < 0)
		return 0;
	while (n < (s64)sizeof buf - 1 && (r = sys3(SYS_read, fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	sys3(SYS_close, fd, 0, 0);
	if (r < 0 || n >= (s64)sizeof buf - 1)
		return 0;
	buf[n] = 0;
	int ifaces = 0;
	for (char *p = buf; *p;) {
		char *eol = p, *colon = 0;
		while (*eol && *eol != '\n') {
			if (*eol == ':' && !colon)
				colon = eol;
			eol++;
		}
		if (colon) {
			char *name = p;
			while (name < colon && *name == ' ')
				name++;
			if (colon - name != 2 || name[0] != 'l' || name[1] != 'o')
				return 0;
			ifaces++;
		}
		p = *eol ? eol + 1 : eol;
	}
	return ifaces == 1;
}

/* write_file writes s to path, or fails naming it. */
static void write_file(const char *path, const char *s)
{
	u64 n = 0;
	while (s[n])
		n++;
	s64 fd = sys6(SYS_openat, AT_FDCWD, (s64)path, O_WRONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		fail(0, "open", path, -fd);
	s64 r = sys3(SYS_write, fd, s, n);
	sys3(SYS_close, fd, 0, 0);
	if (r != (s64)n)
		fail(0, "write", path, r < 0 ? -r : 0);
}

/* idmap formats "INSIDE OUTSIDE 1" into b. */
static const char *idmap(char *b, s64 inside, s64 outside)
{
	u64 save = len;
	len = 0;
	putn(inside);
	put(" ");
	putn(outside);
	put(" 1");
	line[len] = 0;
	for (u64 k = 0; k <= len; k++)
		b[k] = line[k];
	len = save;
	return b;
}

/* user_namespace makes this process the only member of a new user
 * namespace where it is uid:gid. */
static void user_namespace(s64 uid, s64 gid)
{
	char m[64];
	s64 euid = sys3(SYS_geteuid, 0, 0, 0), egid = sys3(SYS_getegid, 0, 0, 0);
	s64 r = sys3(SYS_unshare, CLONE_NEWUSER, 0, 0);
	if (r < 0)
		fail(0, "unshare(CLONE_NEWUSER)", 0, -r);
	write_file("/proc/self/setgroups", "deny");
	write_file("/proc/self/uid_map", idmap(m, uid, euid));
	write_file("/proc/self/gid_map", idmap(m, gid, egid));
}

__attribute__((noreturn, used)) void launch(s64 *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	int i = 1;
#define ARG() (i < argc ? argv[i++] : (fail(0, "malformed launch request:", "too few arguments", 0), (char *)0))
	s64 uid = number(ARG());
	s64 gid = number(ARG());
	s64 limit = number(ARG());
	struct ruleset_attr attr = {(u64)number(ARG()), (u64)number(ARG()), (u64)number(ARG())};
	s64 netns = number(ARG());
	s64 nrules = number(ARG());
	if (nrules < 0 || nrules > argc)
		fail(0, "malformed launch request:", "bad rule count", 0);
	int rules = i;
	for (s64 k = 0; k < nrules; k++) {
		number(ARG());
		number(ARG());
		ARG();
	}
	char *target = ARG();
	char **targv = argv + i;
	if (target[0] != '/' || i >= argc)
		fail(0, "malformed launch request:", "the target needs an absolute path and an argv", 0);

	if (uid >= 0)
		user_namespace(uid, gid);

	s64 abi = sys6(SYS_landlock_create_ruleset, 0, 0, LANDLOCK_CREATE_RULESET_VERSION, 0, 0, 0);
	if (abi < 0)
		abi = 0;
	if (limit >= 0 && abi > limit)
		abi = limit;
	s64 known = abi > MAX_KNOWN_ABI ? MAX_KNOWN_ABI : abi;
	if ((attr.handled_access_fs & ~abi_fs[known]) || (attr.handled_access_net & ~abi_net[known]) ||
	    (attr.scoped & ~abi_scope[known])) {
		put("{\"error\":\"this kernel's Landlock (ABI ");
		putn(abi);
		put(") cannot enforce the requested confinement\",\"unavailable\":true}");
		flush();
		die(126);
	}
	if (netns && !only_loopback())
		fail(1, "the attempt's network namespace is not a fresh one (an interface other than lo is present)", 0, 0);

	s64 r = sys6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
	if (r < 0)
		fail(0, "no_new_privs", 0, -r);
	if (attr.handled_access_fs | attr.handled_access_net | attr.scoped) {
		s64 fd = sys3(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
		if (fd < 0)
			fail(1, "Landlock ruleset", 0, -fd);
		for (s64 k = 0; k < nrules; k++) {
			u64 access = (u64)number(argv[rules + 3 * k]) & attr.handled_access_fs;
			s64 ignore = number(argv[rules + 3 * k + 1]);
			char *path = argv[rules + 3 * k + 2];
			if (!access)
				continue;
			s64 pfd = sys6(SYS_openat, AT_FDCWD, (s64)path, O_PATH | O_CLOEXEC, 0, 0, 0);
			if (pfd == -ENOENT && ignore)
				continue;
			if (pfd < 0)
				fail(0, "open", path, -pfd);
			struct path_beneath_attr pb = {access, (int)pfd};
			r = sys6(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, (s64)&pb, 0, 0, 0);
			if (r < 0)
				fail(1, "landlock_add_rule", path, -r);
			sys3(SYS_close, pfd, 0, 0);
		}
		r = sys3(SYS_landlock_restrict_self, fd, 0, 0);
		if (r < 0)
			fail(1, "Landlock restrict_self", 0, -r);
		sys3(SYS_close, fd, 0, 0);
	}
	put("{\"abi\":");
	putn(abi);
	put(netns ? ",\"netns\":true}" : ",\"netns\":false}");
	flush();
	/* The target inherits only 0-3: everything above, the report pipe
	 * included, closes on exec. */
	r = sys3(SYS_close_range, REPORT_FD, ~0U, CLOSE_RANGE_CLOEXEC);
	if (r < 0)
		fail(0, "close_range", 0, -r);
	r = sys3(SYS_execve, target, targv, envp);
	put("{\"error\":\"exec ");
	putq(target);
	put(": errno ");
	putn(-r);
	put("\"}");
	flush();
	die(127);
}

/* The kernel starts a static program at _start with the stack holding
 * argc, argv, NULL, envp, NULL: pass that to launch on an aligned stack. */
__asm__(".globl _start\n"
	"_start:\n"
	"	xor %rbp, %rbp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call launch\n"
	"	hlt\n");
