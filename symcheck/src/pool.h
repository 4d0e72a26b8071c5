/* A small worker pool: run fn over n jobs on several threads. Each job writes only its own
 * result slot, so the output the caller renders afterwards, in job order, does not depend on
 * the number of threads or on which thread ran which job. */
#ifndef SYMCHECK_POOL_H
#define SYMCHECK_POOL_H

#include <stddef.h>

/* fn(arg, job, worker): job in [0, n), worker in [0, nthreads) (per-worker scratch state). */
typedef void (*pool_fn)(void *arg, size_t job, unsigned worker);

/* The number of threads for n jobs: SYMCHECK_JOBS when set to 1..POOL_MAX_THREADS, else the
 * online CPUs (at most POOL_MAX_THREADS); never more than n, at least 1. */
#define POOL_MAX_THREADS 64
unsigned pool_threads(size_t n);

/* Run every job once. Threads take the next job from order[] (a permutation of 0..n-1; NULL:
 * 0, 1, ...) as they become free, so big jobs put first balance the load. With nthreads <= 1,
 * or if a thread cannot be created, the calling thread runs the rest itself, in that order.
 * Returns when every job has finished. */
void pool_run(size_t n, const size_t *order, unsigned nthreads, pool_fn fn, void *arg);

/* order[] for pool_run: job indices sorted by weight, heaviest first (ties: lower index first). */
size_t *pool_order_by_weight(const size_t *weight, size_t n);

#endif
