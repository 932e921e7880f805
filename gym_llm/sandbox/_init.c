/* gym_llm sandbox: the init (PID 1) of a jail served by a resident nsjail (-Ml).
 *
 * nsjail hands each connection a fresh jail whose fds 0/1/2 are the connection's
 * socket. This program:
 *   - makes itself non-dumpable, so the program (same uid) cannot reach its fds or
 *     memory through /proc/1/{fd,mem};
 *   - runs argv[1..] at once with fd 0/1/2 on fresh pipes and every other fd closed
 *     (the socket never reaches the program);
 *   - reads an 8-byte big-endian length N, then forwards exactly N bytes from the
 *     socket to the program's stdin (then closes it);
 *   - sends frames [1 byte stream][4 bytes big-endian length][payload] on the socket:
 *     stream 0 = hello (empty, sent first: the jail is up), 1 = stdout, 2 = stderr,
 *     3 = exit (4 bytes: the raw wait status of the program);
 *   - exits once the program has exited (after draining its pipes) and the host has
 *     read the exit frame and closed the connection, or at once when the socket
 *     reaches EOF after the N bytes, errors, or hangs up (the host gave up: timeout,
 *     output cap, cancellation). Being PID 1, its exit kills every process left in
 *     the jail's PID namespace.
 * The host trusts none of it: a malformed or missing frame is a failed run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define SOCK 0
#define BUF (64 * 1024)

static char buf[BUF + 5];

static void send_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(0); /* the host is gone */
        p += w;
        n -= (size_t)w;
    }
}

static void frame(int stream, const char *data, uint32_t n) {
    char hdr[5] = {(char)stream, (char)(n >> 24), (char)(n >> 16), (char)(n >> 8), (char)n};
    send_all(hdr, 5);
    if (n) send_all(data, n);
}

/* Forward what is readable on pipe fd as frames of `stream`; returns -1 at EOF. */
static int pump(int fd, int stream) {
    for (;;) {
        ssize_t r = read(fd, buf, BUF);
        if (r > 0) { frame(stream, buf, (uint32_t)r); continue; }
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

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    signal(SIGPIPE, SIG_IGN);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    frame(0, NULL, 0);

    /* The program starts before its input is known (the host may keep this jail as a
     * spare): an interpreter then blocks reading its program from stdin. */
    int in[2], out[2], err[2];
    if (sfd < 0 || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        return 3;
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
        sigprocmask(SIG_UNBLOCK, &chld, NULL);
        signal(SIGPIPE, SIG_DFL);
        /* dup2 onto 0/1/2 replaces the socket; every other fd is close-on-exec. */
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(127);
        execv(argv[1], argv + 1);
        const char *msg = strerror(errno);
        (void)!write(2, argv[1], strlen(argv[1]));
        (void)!write(2, ": ", 2);
        (void)!write(2, msg, strlen(msg));
        (void)!write(2, "\n", 1);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    unsigned char len[8];
    read_exact((char *)len, 8);
    uint64_t left = 0;
    for (int i = 0; i < 8; i++) left = (left << 8) | len[i];
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);

    /* stdin bytes read from the socket but not yet written to the pipe */
    static char pend[BUF];
    size_t pend_off = 0, pend_len = 0;
    int in_fd = in[1], out_fd = out[0], err_fd = err[0];
    if (left == 0) { close(in_fd); in_fd = -1; }
    int status = 0;
    for (;;) {
        struct pollfd p[5] = {
            {SOCK, (short)(left > 0 && pend_len == 0 ? POLLIN : POLLRDHUP), 0},
            {in_fd, POLLOUT, 0},
            {out_fd, POLLIN, 0},
            {err_fd, POLLIN, 0},
            {sfd, POLLIN, 0},
        };
        if (pend_len == 0) p[1].fd = -1;
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
                _exit(0); /* EOF or hang-up after stdin: the host gave up */
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
            int st;
            pid_t w;
            int done = 0;
            while ((w = waitpid(-1, &st, WNOHANG)) > 0)
                if (w == pid) { status = st; done = 1; }
            if (done) break;
        }
    }
    /* The program has exited: what it wrote is in the pipes (a daemon it left could
     * keep writing: take only what is there now). */
    if (out_fd >= 0) pump(out_fd, 1);
    if (err_fd >= 0) pump(err_fd, 2);
    uint32_t s = (uint32_t)status;
    char st[4] = {(char)(s >> 24), (char)(s >> 16), (char)(s >> 8), (char)s};
    frame(3, st, 4);
    /* nsjail relays what we write through a pipe, 4 KiB per poll round, and drops what
     * is still buffered once we (its only writer) exit: stay until the host, having
     * read the exit frame, closes the connection (nsjail then closes our fd 0). */
    for (;;) {
        ssize_t r = read(SOCK, buf, BUF);
        if (r > 0 || (r < 0 && errno == EINTR)) continue;
        return 0;
    }
}
