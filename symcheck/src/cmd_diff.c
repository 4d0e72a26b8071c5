/* diff: exports added, removed and changed between two Module.symvers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

const char *const diff_kind_names[N_DIFF_KINDS] = {"added", "removed", "crc", "class", "namespace", "owner"};

/* ------------------------------------------------------------------ compute */

static void add_change(diff_result_t *r, enum diff_kind kind, const export_t *old, const export_t *new)
{
    r->v = xgrow(r->v, r->n, &r->cap, sizeof *r->v, 64);
    r->v[r->n++] = (change_t){kind, old, new};
    r->counts[kind]++;
}

static void compare_pair(diff_result_t *r, const export_t *x, const export_t *y)
{
    if (x->crc != y->crc)
        add_change(r, DIFF_CRC, x, y);
    if (x->cls != y->cls)
        add_change(r, DIFF_CLASS, x, y);
    if (strcmp(x->ns, y->ns) != 0)
        add_change(r, DIFF_NAMESPACE, x, y);
    if (strcmp(x->module, y->module) != 0)
        add_change(r, DIFF_OWNER, x, y);
}

void diff_compute(const exportset_t *a, const exportset_t *b, diff_result_t *r)
{
    memset(r, 0, sizeof *r);
    /* merge walk over two sorted sets */
    size_t i = 0, k = 0;
    while (i < a->n || k < b->n) {
        const export_t *x = i < a->n ? &a->v[i] : NULL;
        const export_t *y = k < b->n ? &b->v[k] : NULL;
        int c = !x ? 1 : !y ? -1 : strcmp(x->name, y->name);
        if (c < 0) {
            add_change(r, DIFF_REMOVED, x, NULL);
            i++;
        } else if (c > 0) {
            add_change(r, DIFF_ADDED, NULL, y);
            k++;
        } else {
            compare_pair(r, x, y);
            i++;
            k++;
        }
    }
}

void diff_result_free(diff_result_t *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------- render */

/* The value of one side of a change as shown; "" when that side does not apply. */
static void side_value(const change_t *c, const export_t *x, char *buf, size_t n)
{
    buf[0] = 0;
    if (!x)
        return;
    switch (c->kind) {
    case DIFF_ADDED:
    case DIFF_REMOVED:
        snprintf(buf, n, "%s %s", exp_class_str(x->cls), x->module);
        break;
    case DIFF_CRC:
        crcstr(buf, n, x->crc, true);
        break;
    case DIFF_CLASS:
        snprintf(buf, n, "%s", exp_class_str(x->cls));
        break;
    case DIFF_NAMESPACE:
        snprintf(buf, n, "%s", x->ns);
        break;
    case DIFF_OWNER:
    case N_DIFF_KINDS:
        snprintf(buf, n, "%s", x->module);
        break;
    }
}

static const char *change_symbol(const change_t *c)
{
    return c->old ? c->old->name : c->new->name;
}

static void render_json(const build_t *a, const build_t *b, const diff_result_t *r)
{
    json_t j;
    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "old"); json_str(&j, a->symvers_path);
    json_key(&j, "new"); json_str(&j, b->symvers_path);
    json_key(&j, "counts");
    json_obj_begin(&j);
    for (int c = 0; c < N_DIFF_KINDS; c++) {
        json_key(&j, diff_kind_names[c]);
        json_int(&j, (long long)r->counts[c]);
    }
    json_obj_end(&j);
    json_key(&j, "changes");
    json_arr_begin(&j);
    for (size_t i = 0; i < r->n; i++) {
        char o[200], n[200];
        side_value(&r->v[i], r->v[i].old, o, sizeof o);
        side_value(&r->v[i], r->v[i].new, n, sizeof n);
        json_obj_begin(&j);
        json_key(&j, "change"); json_str(&j, diff_kind_names[r->v[i].kind]);
        json_key(&j, "symbol"); json_str(&j, change_symbol(&r->v[i]));
        json_key(&j, "old"); json_str(&j, o[0] ? o : NULL);
        json_key(&j, "new"); json_str(&j, n[0] ? n : NULL);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_finish(&j);
}

static void render_text(const build_t *a, const build_t *b, const diff_result_t *r)
{
    const size_t *k = r->counts;
    printf("old: %s (%zu exports)\nnew: %s (%zu exports)\n", a->symvers_path, a->symvers.n,
           b->symvers_path, b->symvers.n);
    printf("added %zu, removed %zu, crc changed %zu, class changed %zu, namespace changed %zu, "
           "owner changed %zu\n", k[DIFF_ADDED], k[DIFF_REMOVED], k[DIFF_CRC], k[DIFF_CLASS],
           k[DIFF_NAMESPACE], k[DIFF_OWNER]);
    if (!r->n)
        return;
    table_t t;
    table_init(&t, 4, "CHANGE", "SYMBOL", "OLD", "NEW");
    for (size_t i = 0; i < r->n; i++) {
        char o[200], n[200];
        side_value(&r->v[i], r->v[i].old, o, sizeof o);
        side_value(&r->v[i], r->v[i].new, n, sizeof n);
        table_row(&t, diff_kind_names[r->v[i].kind], change_symbol(&r->v[i]), o, n);
    }
    putchar('\n');
    table_print(&t, stdout, "");
    table_free(&t);
}

/* ------------------------------------------------------------------ command */

static int open_symvers(const char *path, build_t *b)
{
    err_t e;
    const char *ep;
    if (build_open(path, NULL, BUILD_NEED_SYMVERS, b, &ep, &e) != 0)
        return report_error(ep, &e);
    return 0;
}

int cmd_diff(int argc, char **argv, bool json)
{
    if (argc != 2 || (argv[0][0] == '-' && argv[0][1]) || (argv[1][0] == '-' && argv[1][1]))
        return usage_error("diff: expected BUILD_A BUILD_B%s", NULL);
    build_t a, b;
    memset(&b, 0, sizeof b);
    int ret = open_symvers(argv[0], &a);
    if (!ret)
        ret = open_symvers(argv[1], &b);
    if (!ret) {
        diff_result_t r;
        diff_compute(&a.symvers, &b.symvers, &r);
        if (json)
            render_json(&a, &b, &r);
        else
            render_text(&a, &b, &r);
        ret = r.n ? EXIT_FINDINGS : EXIT_OKAY;
        diff_result_free(&r);
    }
    build_free(&a);
    build_free(&b);
    return ret;
}
