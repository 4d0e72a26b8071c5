#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

unsigned pool_threads(size_t n)
{
    long want = 0;
    const char *env = getenv("SYMCHECK_JOBS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (!*end && v >= 1 && v <= POOL_MAX_THREADS)
            want = v;
    }
    if (!want) {
        want = sysconf(_SC_NPROCESSORS_ONLN);
        if (want < 1)
            want = 1;
        if (want > POOL_MAX_THREADS)
            want = POOL_MAX_THREADS;
    }
    if ((size_t)want > n)
        want = n ? (long)n : 1;
    return (unsigned)want;
}

typedef struct {
    size_t n;
    const size_t *order;
    pool_fn fn;
    void *arg;
    atomic_size_t next;
} pool_t;

typedef struct {
    pool_t *p;
    unsigned worker;
} pool_worker_t;

static void pool_drain(pool_t *p, unsigned worker)
{
    for (;;) {
        size_t k = atomic_fetch_add(&p->next, 1);
        if (k >= p->n)
            return;
        p->fn(p->arg, p->order ? p->order[k] : k, worker);
    }
}

static void *pool_thread(void *v)
{
    pool_worker_t *w = v;
    pool_drain(w->p, w->worker);
    return NULL;
}

void pool_run(size_t n, const size_t *order, unsigned nthreads, pool_fn fn, void *arg)
{
    pool_t p = {.n = n, .order = order, .fn = fn, .arg = arg};
    atomic_init(&p.next, 0);
    if (nthreads > POOL_MAX_THREADS)
        nthreads = POOL_MAX_THREADS;
    pthread_t tid[POOL_MAX_THREADS];
    pool_worker_t w[POOL_MAX_THREADS];
    unsigned started = 0;
    /* worker 0 is the calling thread */
    for (unsigned i = 1; i < nthreads; i++) {
        w[i] = (pool_worker_t){&p, i};
        if (pthread_create(&tid[i], NULL, pool_thread, &w[i]) != 0)
            break;
        started = i;
    }
    pool_drain(&p, 0);
    for (unsigned i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
}

static int cmp_weight(const void *a, const void *b, void *ctx)
{
    const size_t *weight = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (weight[x] != weight[y])
        return weight[x] > weight[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

size_t *pool_order_by_weight(const size_t *weight, size_t n)
{
    size_t *order = xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, cmp_weight, (void *)weight);
    return order;
}
