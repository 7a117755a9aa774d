#ifndef RINGD_CSHIM_H
#define RINGD_CSHIM_H

/* What Glibc's Swift module does not expose: epoll, eventfd, timerfd, a
   few socket constants and closefrom and chdir for posix_spawn. Thin on purpose:
   the Swift side owns every handle. */

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <spawn.h>

static inline int cshim_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cshim_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

/* A flat, unpacked view of epoll_event so Swift reads plain fields. */
typedef struct cshim_event {
    uint32_t events;
    uint64_t data;
} cshim_event;

/* Waits like epoll_wait and copies the ready events into `out`. */
static inline int cshim_epoll_wait(int epfd, cshim_event *out, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        out[i].events = evs[i].events;
        out[i].data = evs[i].data.u64;
    }
    return n;
}

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC. A GNU extension, so it is
   compiled in shim.c: defining _GNU_SOURCE here would change libc's types
   (fd_set) for every module that imports this one. */
int cshim_accept(int fd, struct sockaddr *addr, socklen_t *len);

/* posix_spawn_file_actions_addclosefrom_np: the child closes every
   descriptor from `from` up, so a daemon it forks inherits none of ours.
   A GNU extension, compiled in shim.c like cshim_accept. */
int cshim_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/* posix_spawn_file_actions_addchdir_np: the child starts in `directory`
   (a test runs ringd from an empty directory). GNU, in shim.c too. */
int cshim_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *directory);

/* pthread_setname_np for the calling thread: the kernel's copy of its name
   (15 bytes at most), which top, perf and /proc show; Foundation's
   Thread.name stays in Foundation on Linux. GNU, in shim.c too. */
int cshim_name_thread(const char *name);

/* Glibc's Swift module leaves out <sys/random.h>. */
static inline long cshim_getrandom(void *buffer, size_t length) { return getrandom(buffer, length, 0); }

static inline int cshim_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static inline int cshim_timerfd(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/* Arms `fd` to fire once at the absolute CLOCK_MONOTONIC time `ns` (0 disarms). */
static inline int cshim_timerfd_arm(int fd, uint64_t ns) {
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = (time_t)(ns / 1000000000ull);
    spec.it_value.tv_nsec = (long)(ns % 1000000000ull);
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

static const uint32_t CSHIM_EPOLLIN = EPOLLIN;
static const uint32_t CSHIM_EPOLLOUT = EPOLLOUT;
static const uint32_t CSHIM_EPOLLERR = EPOLLERR;
static const uint32_t CSHIM_EPOLLHUP = EPOLLHUP;
static const int CSHIM_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CSHIM_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CSHIM_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
static const int CSHIM_SOCK_STREAM = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
static const int CSHIM_TCP_NODELAY = TCP_NODELAY;
static const int CSHIM_IPPROTO_TCP = IPPROTO_TCP;
static const int CSHIM_SO_REUSEPORT = SO_REUSEPORT;

#endif
