/* jobs.c - host threads: the online core count that options.threads = 0 means, and a fork-join
 * of a few equal jobs, shared by the host passes of pqpbo, parallel-bk's grid tiles and qpbo's
 * threaded normal form (Jeppesen et al. 2021, section 4: blocks built and solved at once). */
#define _DEFAULT_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

int gcut__online_cores(void) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > 256 ? 256 : (int)cores;
}

void gcut__run_jobs(void *(*fn)(void *), void *job, size_t size, int jobs) {
    pthread_t ids[GCUT__MAX_JOBS];
    bool started[GCUT__MAX_JOBS] = {false};
    char *at = job;
    for (int t = 1; t < jobs && t < GCUT__MAX_JOBS; t++)
        started[t] = pthread_create(&ids[t], NULL, fn, at + (size_t)t * size) == 0;
    fn(at);
    for (int t = 1; t < jobs; t++) {
        if (t < GCUT__MAX_JOBS && started[t])
            pthread_join(ids[t], NULL);
        else
            fn(at + (size_t)t * size);
    }
}
