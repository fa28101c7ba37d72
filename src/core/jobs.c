/* jobs.c - fork-join of a few equal jobs on threads, shared by the host passes of pqpbo,
 * parallel-bk's grid tiles and qpbo's threaded normal form (Jeppesen et al. 2021, section 4:
 * blocks built and solved at once). */
#include "internal.h"

#include <pthread.h>
#include <stdbool.h>

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
