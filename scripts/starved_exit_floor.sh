#!/usr/bin/env bash
# The floor under the starved-writer fault, with no krphase involved: how long the kernel takes
# to end a process one of whose threads is SCHED_IDLE and pinned to a CPU that a busy loop
# holds. exit() must wait for every thread of the process to run once more and die, so the
# starved thread's turn on its CPU, not any wait in the process's own code, sets this time.
# Prints the time from exit() to the parent's waitpid() return, per run, for a SCHED_IDLE and
# for an ordinary (SCHED_OTHER) thread beside the same busy loop.
#
# Usage: scripts/starved_exit_floor.sh [RUNS]     (needs cc and taskset; default 7 runs)
set -euo pipefail
runs=${1:-7}
dir=$(mktemp -d)
trap 'kill "${hog:-}" 2>/dev/null || true; rm -rf "$dir"' EXIT
cat >"$dir/exit_floor.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static int policy;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
/* The stand-in writer: on CPU 0 at the given policy, always runnable. */
static void *spin(void *arg) {
    (void)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
    struct sched_param p = {0};
    sched_setscheduler(0, policy, &p);
    for (volatile unsigned long x = 0;; x++) {
    }
    return NULL;
}
int main(int argc, char **argv) {
    policy = argc > 1 && !strcmp(argv[1], "idle") ? SCHED_IDLE : SCHED_OTHER;
    int fd[2];
    if (pipe(fd) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
        pthread_t t;
        pthread_create(&t, NULL, spin, NULL);
        usleep(200000);
        double at = now();
        if (write(fd[1], &at, sizeof at) != sizeof at) _exit(1);
        exit(0);
    }
    double at;
    if (read(fd[0], &at, sizeof at) != sizeof at) return 1;
    int status;
    waitpid(child, &status, 0);
    printf("%.1f\n", (now() - at) * 1e3);
    return 0;
}
C
cc -O2 -pthread "$dir/exit_floor.c" -o "$dir/exit_floor"
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
for policy in idle other; do
    times=()
    for _ in $(seq "$runs"); do times+=("$("$dir/exit_floor" "$policy")"); done
    printf '%-6s thread beside a busy loop on its CPU: exit() to waitpid() ms: %s\n' \
        "$policy" "${times[*]}"
done
