#define _GNU_SOURCE
#include <sys/socket.h>
#include <pthread.h>
#include <spawn.h>
#include "CShim.h"

int cshim_accept(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cshim_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int cshim_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np(actions, directory);
}

int cshim_name_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
