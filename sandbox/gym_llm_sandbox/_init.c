/* gym_llm sandbox: the init (PID 1) of every jail that has one: those a resident
 * nsjail (-Ml) serves, and per-run jails (nsjail -Mo) where the host could build it.
 *
 * The connection to the host is fd 0 (read) and fd 1 (write): nsjail -Ml hands each
 * TCP connection a fresh jail whose fds 0/1/2 carry it (relayed by nsjail); a per-run
 * nsjail (-Mo) passes its own stdin and stdout, the host's pipes, and its command line
 * starts this init with --direct first. This program:
 *   - makes itself non-dumpable, so the program (same uid) cannot reach its fds or
 *     memory through /proc/1/{fd,mem};
 *   - sends a hello frame (the jail is up), then reads the request (all integers
 *     big-endian; strings are [u32 length][bytes]):
 *       [u32 argc][argc strings]   the program; argc 0: argv[1..] of this init, which
 *                                  was started at once, before the request (an
 *                                  interpreter that reads its program from stdin)
 *       [u32 nfiles][nfiles x (string name, u32 mode, u64 size, bytes)]
 *                                  files written into the cwd (/work) first
 *       [u32 nout][nout strings][u64 max]  files sent back after the exit, each at
 *                                  most `max` bytes
 *       [u64 N][N bytes]           forwarded to the program's stdin (then closed);
 *   - runs the program with fd 0/1/2 on fresh pipes and every other fd closed (the
 *     connection never reaches the program);
 *   - sends frames [1 byte stream][4 bytes big-endian length][payload] back:
 *     0 = hello (empty), 1 = stdout, 2 = stderr, 4 = an output file ([string name]
 *     [content]; only regular files reached without a symlink), 3 = exit (12 bytes:
 *     the raw wait status of the program, then the CPU time it used in ns as the
 *     kernel counts it against RLIMIT_CPU: its CPUCLOCK_PROF clock, read while it is a
 *     zombie), last;
 *   - exits once the program has exited (after draining its pipes) and the host has
 *     read the exit frame and closed the connection, or at once when the connection
 *     reaches EOF after the request, errors, or hangs up (the host gave up: timeout,
 *     output cap, cancellation). With --direct the host closes its end of stdin once
 *     the request is written and gives up by killing the per-run nsjail instead (its
 *     init, this, dies with it), so EOF on fd 0 after the request means nothing, and
 *     what is written to the host's pipe stays readable after we exit: exit at once
 *     after the exit frame. Being PID 1, its exit kills every process left in the
 *     jail's PID namespace.
 * The host trusts none of it: a malformed or missing frame is a failed run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SOCK 0
#define BUF (64 * 1024)
#define MAX_ARGS 65536
#define MAX_STR (1 << 20) /* one argument or file name */

/* A frame being built: header in the first 5 bytes, so each frame is one write (one
 * wake-up of the nsjail that relays it). */
static char fbuf[BUF + 5];

static void send_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(0); /* the host is gone */
        p += w;
        n -= (size_t)w;
    }
}

static void put32(char *p, uint32_t n) {
    p[0] = (char)(n >> 24); p[1] = (char)(n >> 16); p[2] = (char)(n >> 8); p[3] = (char)n;
}

/* Send fbuf[5 .. 5+n) as a frame of `stream`. */
static void frame(int stream, uint32_t n) {
    char *hdr = fbuf;
    hdr[0] = (char)stream;
    put32(hdr + 1, n);
    send_all(fbuf, 5 + (size_t)n);
}

/* Forward what is readable on pipe fd as frames of `stream`; returns -1 at EOF. */
static int pump(int fd, int stream) {
    for (;;) {
        ssize_t r = read(fd, fbuf + 5, BUF);
        if (r > 0) { frame(stream, (uint32_t)r); continue; }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return 0;
        return -1;
    }
}

static void read_exact(char *p, size_t n) {
    while (n > 0) {
        ssize_t r = read(SOCK, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) _exit(0);
        p += r;
        n -= (size_t)r;
    }
}

static uint64_t get_n(int bytes) {
    unsigned char b[8];
    read_exact((char *)b, (size_t)bytes);
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = (v << 8) | b[i];
    return v;
}

/* A request string: no NUL inside, at most MAX_STR bytes; anything else ends the jail. */
static char *get_str(void) {
    uint64_t n = get_n(4);
    if (n > MAX_STR) _exit(4);
    char *s = malloc(n + 1);
    if (!s) _exit(4);
    read_exact(s, n);
    s[n] = 0;
    if (strlen(s) != n) _exit(4);
    return s;
}

/* The directory holding `name` (relative to the cwd), its parents made (0755) and
 * entered without following a symlink; *base is the last component. -1 on failure. */
static int parent_dir(char *name, int make, char **base) {
    int dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *p = name, *slash;
    while (dfd >= 0 && (slash = strchr(p, '/'))) {
        *slash = 0;
        if (*p) {
            if (make) mkdirat(dfd, p, 0755);
            int nfd = openat(dfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            close(dfd);
            dfd = nfd;
        }
        *slash = '/';
        p = slash + 1;
    }
    *base = p;
    return dfd;
}

/* An input file: `size` bytes from the connection into the cwd. A file that cannot be
 * written (the host checked the names; the tmpfs may be full) ends the jail unrun. */
static void write_file(char *name, uint32_t mode, uint64_t size) {
    char *base;
    int dfd = parent_dir(name, 1, &base);
    if (dfd < 0) _exit(5);
    int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    close(dfd);
    if (fd < 0 || fchmod(fd, mode & 0777)) _exit(5);
    while (size > 0) {
        size_t want = size < BUF ? (size_t)size : BUF;
        read_exact(fbuf, want);
        for (size_t off = 0; off < want;) {
            ssize_t w = write(fd, fbuf + off, want - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) _exit(5);
            off += (size_t)w;
        }
        size -= want;
    }
    close(fd);
}

/* An output file: frame 4 (its name), then frames 5 (its content, at most `max`
 * bytes); nothing if it is not a regular file reached without a symlink. */
static void send_file(char *name, uint64_t max) {
    char *base;
    int dfd = parent_dir(name, 0, &base);
    if (dfd < 0) return;
    int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
    struct stat st;
    if (fd < 0) return;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) { close(fd); return; }
    size_t n = strlen(name);
    if (n > BUF) n = BUF; /* never: names are at most a path long */
    memcpy(fbuf + 5, name, n);
    frame(4, (uint32_t)n);
    while (max > 0) {
        ssize_t r = read(fd, fbuf + 5, max < BUF ? (size_t)max : BUF);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        frame(5, (uint32_t)r);
        max -= (uint64_t)r;
    }
    close(fd);
}

/* The CPU time (ns) of process `pid` (a zombie not yet reaped) on its CPUCLOCK_PROF
 * clock: user + system time of all its threads, the very sum the kernel compares with
 * RLIMIT_CPU (tick-sampled, so it can differ from rusage by 10% and more on a busy
 * VM). The clock id is the kernel's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_PROF). */
static uint64_t prof_ns(pid_t pid) {
    struct timespec ts;
    if (clock_gettime((clockid_t)(~(unsigned)pid << 3), &ts)) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int in[2], out[2], err[2];
static sigset_t chld;

static pid_t start(char **args) {
    pid_t pid = fork();
    if (pid < 0) _exit(3);
    if (pid == 0) {
        sigprocmask(SIG_UNBLOCK, &chld, NULL);
        signal(SIGPIPE, SIG_DFL);
        /* dup2 onto 0/1/2 replaces the connection; every other fd is close-on-exec. */
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(127);
        execv(args[0], args);
        const char *msg = strerror(errno);
        (void)!write(2, args[0], strlen(args[0]));
        (void)!write(2, ": ", 2);
        (void)!write(2, msg, strlen(msg));
        (void)!write(2, "\n", 1);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    return pid;
}

int main(int argc, char **argv) {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    int direct = argc >= 2 && !strcmp(argv[1], "--direct");
    if (direct) { argv++; argc--; }
    frame(0, 0);
    if (sfd < 0 || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        return 3;

    /* An interpreter on our command line starts before its input is known (the host
     * may keep this jail as a spare): it then blocks reading its program from stdin. */
    pid_t pid = argc >= 2 ? start(argv + 1) : 0;
    uint64_t nargs = get_n(4);
    char **args = NULL;
    if ((nargs == 0) == (pid == 0) || nargs > MAX_ARGS) _exit(4);
    if (nargs) {
        args = calloc(nargs + 1, sizeof *args);
        if (!args) _exit(4);
        for (uint64_t i = 0; i < nargs; i++) args[i] = get_str();
    }
    for (uint64_t i = 0, n = get_n(4); i < n; i++) {
        char *name = get_str();
        uint32_t mode = (uint32_t)get_n(4);
        write_file(name, mode, get_n(8));
        free(name);
    }
    uint64_t nout = get_n(4);
    if (nout > MAX_ARGS) _exit(4);
    char **outs = calloc(nout + 1, sizeof *outs);
    if (!outs) _exit(4);
    for (uint64_t i = 0; i < nout; i++) outs[i] = get_str();
    uint64_t max_out = get_n(8);
    uint64_t left = get_n(8);
    if (!pid) pid = start(args);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);

    /* stdin bytes read from the connection but not yet written to the pipe */
    static char pend[BUF];
    size_t pend_off = 0, pend_len = 0;
    int in_fd = in[1], out_fd = out[0], err_fd = err[0];
    if (left == 0) { close(in_fd); in_fd = -1; }
    int status = 0;
    uint64_t cpu_ns = 0;
    for (;;) {
        struct pollfd p[5] = {
            {SOCK, (short)(left > 0 && pend_len == 0 ? POLLIN : POLLRDHUP), 0},
            {in_fd, POLLOUT, 0},
            {out_fd, POLLIN, 0},
            {err_fd, POLLIN, 0},
            {sfd, POLLIN, 0},
        };
        if (pend_len == 0) p[1].fd = -1;
        /* --direct: the host closes its end once the request is written, so a hang-up
         * is news only while declared bytes are missing (read() then says EOF). */
        if (direct && (left == 0 || pend_len > 0)) p[0].fd = -1;
        if (poll(p, 5, -1) < 0) {
            if (errno == EINTR) continue;
            return 3;
        }
        if (p[0].revents) {
            if (left > 0 && pend_len == 0 && (p[0].revents & POLLIN)) {
                size_t want = left < BUF ? (size_t)left : BUF;
                ssize_t r = read(SOCK, pend, want);
                if (r <= 0 && !(r < 0 && (errno == EINTR || errno == EAGAIN))) _exit(0);
                if (r > 0) { pend_off = 0; pend_len = (size_t)r; left -= (uint64_t)r; }
            } else if (left == 0 || (p[0].revents & (POLLHUP | POLLERR | POLLRDHUP))) {
                _exit(0); /* EOF or hang-up after the request: the host gave up */
            }
        }
        if (in_fd >= 0 && pend_len > 0 && p[1].revents) {
            ssize_t w = write(in_fd, pend + pend_off, pend_len);
            if (w > 0) { pend_off += (size_t)w; pend_len -= (size_t)w; }
            else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                close(in_fd); /* the program closed its stdin: drop the rest */
                in_fd = -1;
            }
        }
        if (in_fd < 0) pend_len = 0; /* keep consuming (and dropping) the declared bytes */
        if (in_fd >= 0 && left == 0 && pend_len == 0) { close(in_fd); in_fd = -1; }
        if (out_fd >= 0 && p[2].revents && pump(out_fd, 1) < 0) { close(out_fd); out_fd = -1; }
        if (err_fd >= 0 && p[3].revents && pump(err_fd, 2) < 0) { close(err_fd); err_fd = -1; }
        if (p[4].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) > 0) {}
            siginfo_t dead;
            int done = 0;
            /* WNOWAIT first: the program's clock can only be read before it is reaped. */
            while (memset(&dead, 0, sizeof dead),
                   !waitid(P_ALL, 0, &dead, WEXITED | WNOHANG | WNOWAIT) && dead.si_pid) {
                if (dead.si_pid == pid) cpu_ns = prof_ns(pid);
                int st;
                if (waitpid(dead.si_pid, &st, 0) == pid) { status = st; done = 1; }
            }
            if (done) break;
        }
    }
    /* The program has exited: what it wrote is in the pipes (a daemon it left could
     * keep writing: take only what is there now). */
    if (out_fd >= 0) pump(out_fd, 1);
    if (err_fd >= 0) pump(err_fd, 2);
    for (uint64_t i = 0; i < nout; i++) send_file(outs[i], max_out);
    put32(fbuf + 5, (uint32_t)status);
    put32(fbuf + 9, (uint32_t)(cpu_ns >> 32));
    put32(fbuf + 13, (uint32_t)cpu_ns);
    frame(3, 12);
    if (direct) return 0;
    /* nsjail relays what we write through a pipe, 4 KiB per poll round, and drops what
     * is still buffered once we (its only writer) exit: stay until the host, having
     * read the exit frame, closes the connection (nsjail then closes our fd 0). */
    for (;;) {
        ssize_t r = read(SOCK, fbuf, BUF);
        if (r > 0 || (r < 0 && errno == EINTR)) continue;
        return 0;
    }
}
