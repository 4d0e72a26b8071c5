#include "decomp.h"

#include <immintrin.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

enum comp_kind comp_detect(const unsigned char *buf, size_t len)
{
    if (len >= 6 && memcmp(buf, "\xfd" "7zXZ\0", 6) == 0)
        return COMP_XZ;
    if (len >= 4 && memcmp(buf, "\x28\xb5\x2f\xfd", 4) == 0)
        return COMP_ZSTD;
    if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
        return COMP_GZIP;
    return COMP_NONE;
}

const char *comp_name(enum comp_kind k)
{
    switch (k) {
    case COMP_XZ: return "xz";
    case COMP_ZSTD: return "zstd";
    case COMP_GZIP: return "gzip";
    case COMP_NONE: break;
    }
    return "none";
}

static uint32_t rd32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Output buffer that grows by doubling up to DECOMP_MAX_SIZE. */
typedef struct {
    unsigned char *p;
    size_t n, cap;
} outbuf_t;

/* Make room for more output; returns false when the limit is reached. */
static bool out_grow(outbuf_t *o, size_t hint)
{
    if (o->cap >= DECOMP_MAX_SIZE)
        return false;
    size_t want = o->cap ? o->cap * 2 : (hint < 4096 ? 4096 : hint);
    if (want > DECOMP_MAX_SIZE)
        want = DECOMP_MAX_SIZE;
    o->p = xrealloc(o->p, want);
    o->cap = want;
    return true;
}

/* Decode with *s, a stream that is new (LZMA_STREAM_INIT) or was used before: liblzma then
 * keeps its allocations (the 1 MiB dictionary of a module) for the next file. The caller
 * ends the stream. */
static int xz_decode(lzma_stream *s, const unsigned char *buf, size_t len, uint32_t flags, outbuf_t *o, err_t *e)
{
    if (lzma_stream_decoder(s, UINT64_MAX, LZMA_CONCATENATED | flags) != LZMA_OK) {
        err_set(e, "xz: cannot initialise the decoder");
        return -1;
    }
    s->next_in = buf;
    s->avail_in = len;
    lzma_ret r = LZMA_OK;
    while (r == LZMA_OK) {
        if (o->n == o->cap && !out_grow(o, len * 4)) {
            err_set(e, "xz: decompressed size over %zu bytes", DECOMP_MAX_SIZE);
            return -1;
        }
        s->next_out = o->p + o->n;
        s->avail_out = o->cap - o->n;
        r = lzma_code(s, LZMA_FINISH);
        o->n = o->cap - s->avail_out;
    }
    if (r == LZMA_STREAM_END)
        return 0;
    if (r == LZMA_BUF_ERROR)
        err_set(e, "xz: truncated input");
    else if (r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR)
        err_set(e, "xz: out of memory");
    else if (r == LZMA_FORMAT_ERROR)
        err_set(e, "xz: not xz data after the first stream");
    else if (r == LZMA_OPTIONS_ERROR)
        err_set(e, "xz: unsupported compression options");
    else
        err_set(e, "xz: corrupt data (lzma error %d)", (int)r);
    return -1;
}

static int xz_decompress(const unsigned char *buf, size_t len, outbuf_t *o, err_t *e)
{
    lzma_stream s = LZMA_STREAM_INIT;
    int r = xz_decode(&s, buf, len, 0, o, e);
    lzma_end(&s);
    return r;
}

/* The uncompressed size that the index of the last xz stream states, 0 when it cannot be read
 * (stream padding, a damaged footer or index: the decoder then finds the size by itself). */
static size_t xz_size_hint(const unsigned char *buf, size_t len)
{
    lzma_stream_flags fl;
    if (len < 2 * LZMA_STREAM_HEADER_SIZE || lzma_stream_footer_decode(&fl, buf + len - LZMA_STREAM_HEADER_SIZE) != LZMA_OK)
        return 0;
    if (fl.backward_size > len - 2 * LZMA_STREAM_HEADER_SIZE)
        return 0;
    size_t isz = (size_t)fl.backward_size, pos = 0;
    lzma_index *idx = NULL;
    uint64_t memlimit = 1 << 20;
    if (lzma_index_buffer_decode(&idx, &memlimit, NULL, buf + len - LZMA_STREAM_HEADER_SIZE - isz, &pos, isz) != LZMA_OK)
        return 0;
    lzma_vli n = lzma_index_uncompressed_size(idx);
    lzma_index_end(idx, NULL);
    return n < DECOMP_MAX_SIZE ? (size_t)n : 0;
}

/* Decode with dc (new or reset here); the caller frees it. */
static int zstd_decode(ZSTD_DCtx *dc, const unsigned char *buf, size_t len, outbuf_t *o, err_t *e)
{
    ZSTD_DCtx_reset(dc, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {buf, len, 0};
    size_t r = 1;   /* 0: a frame just ended */
    while (in.pos < in.size) {
        if (o->n == o->cap && !out_grow(o, len * 4)) {
            err_set(e, "zstd: decompressed size over %zu bytes", DECOMP_MAX_SIZE);
            return -1;
        }
        ZSTD_outBuffer out = {o->p, o->cap, o->n};
        r = ZSTD_decompressStream(dc, &out, &in);
        o->n = out.pos;
        if (ZSTD_isError(r)) {
            err_set(e, "zstd: corrupt data (%s)", ZSTD_getErrorName(r));
            return -1;
        }
    }
    /* all input consumed: flush what the decoder still holds */
    while (r != 0 && o->n == o->cap && out_grow(o, 0)) {
        ZSTD_outBuffer out = {o->p, o->cap, o->n};
        r = ZSTD_decompressStream(dc, &out, &in);
        o->n = out.pos;
        if (ZSTD_isError(r))
            break;
    }
    if (r != 0) {
        err_set(e, ZSTD_isError(r) ? "zstd: corrupt data" : "zstd: truncated input");
        return -1;
    }
    return 0;
}

static int zstd_decompress(const unsigned char *buf, size_t len, outbuf_t *o, err_t *e)
{
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (!dc) {
        err_set(e, "zstd: cannot initialise the decoder");
        return -1;
    }
    int r = zstd_decode(dc, buf, len, o, e);
    ZSTD_freeDCtx(dc);
    return r;
}

/* The content size of the first zstd frame when its header states it, else 0. */
static size_t zstd_size_hint(const unsigned char *buf, size_t len)
{
    unsigned long long n = ZSTD_getFrameContentSize(buf, len);
    return n != ZSTD_CONTENTSIZE_UNKNOWN && n != ZSTD_CONTENTSIZE_ERROR && n < DECOMP_MAX_SIZE ? (size_t)n : 0;
}

/* One gzip member from *pos; *pos moves past it. */
static int gzip_member(z_stream *z, const unsigned char *buf, size_t len, size_t *pos, outbuf_t *o, err_t *e)
{
    z->next_in = (unsigned char *)buf + *pos;
    z->avail_in = (uInt)(len - *pos > UINT32_MAX ? UINT32_MAX : len - *pos);
    int r = Z_OK;
    while (r == Z_OK || r == Z_BUF_ERROR) {
        if (o->n == o->cap && !out_grow(o, len * 4)) {
            err_set(e, "gzip: decompressed size over %zu bytes", DECOMP_MAX_SIZE);
            return -1;
        }
        size_t room = o->cap - o->n;
        z->next_out = o->p + o->n;
        z->avail_out = (uInt)(room > UINT32_MAX ? UINT32_MAX : room);
        uInt before_in = z->avail_in, before_out = z->avail_out;
        r = inflate(z, Z_NO_FLUSH);
        o->n += before_out - z->avail_out;
        *pos += before_in - z->avail_in;
        if (r == Z_BUF_ERROR && z->avail_in == 0 && z->avail_out > 0)
            break;   /* needs more input than there is */
    }
    if (r == Z_STREAM_END)
        return 0;
    if (r == Z_BUF_ERROR)
        err_set(e, "gzip: truncated input");
    else if (r == Z_MEM_ERROR)
        err_set(e, "gzip: out of memory");
    else
        err_set(e, "gzip: corrupt data (%s)", z->msg ? z->msg : "zlib error");
    return -1;
}

static int gzip_decompress(const unsigned char *buf, size_t len, outbuf_t *o, err_t *e)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {   /* gzip wrapper only */
        err_set(e, "gzip: cannot initialise the decoder");
        return -1;
    }
    size_t pos = 0;
    int r = 0;
    /* concatenated members, as gzip -d reads them */
    while (r == 0 && pos < len) {
        if (pos > 0 && comp_detect(buf + pos, len - pos) != COMP_GZIP) {
            err_set(e, "gzip: trailing garbage after the compressed data");
            r = -1;
            break;
        }
        inflateReset(&z);
        r = gzip_member(&z, buf, len, &pos, o, e);
    }
    inflateEnd(&z);
    return r;
}

int decomp_buffer(enum comp_kind k, const unsigned char *buf, size_t len, filebuf_t *out, err_t *e)
{
    outbuf_t o = {0};
    int r;
    memset(out, 0, sizeof *out);
    switch (k) {
    case COMP_XZ: r = xz_decompress(buf, len, &o, e); break;
    case COMP_ZSTD: r = zstd_decompress(buf, len, &o, e); break;
    case COMP_GZIP: r = gzip_decompress(buf, len, &o, e); break;
    default:
        err_set(e, "not compressed");
        r = -1;
    }
    if (r == 0 && o.n == 0) {
        err_set(e, "%s: empty after decompression", comp_name(k));
        r = -1;
    }
    if (r != 0) {
        free(o.p);
        return -1;
    }
    out->data = o.p;
    out->size = o.n;
    out->mapped = false;
    return 0;
}

int decomp_maybe(filebuf_t *fb, err_t *e)
{
    enum comp_kind k = comp_detect(fb->data, fb->size);
    if (k == COMP_NONE)
        return 0;
    filebuf_t plain;
    if (decomp_buffer(k, fb->data, fb->size, &plain, e) != 0)
        return -1;
    file_free(fb);
    *fb = plain;
    return 0;
}

/* ---- reusable context (one per thread) */

/* CRC-32 (the xz/zlib one) by carry-less multiplication, folding 64 bytes at a time (Intel,
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ"; the constants of its
 * bit-reflected CRC-32 example). crc is the running value before the final inversion; n is a
 * multiple of 16, at least 64. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_clmul(uint32_t crc, const unsigned char *p, size_t n)
{
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
    __m128i x[4];
    for (int i = 0; i < 4; i++)
        x[i] = _mm_loadu_si128((const __m128i *)(p + 16 * i));
    x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)crc));
    for (p += 64, n -= 64; n >= 64; p += 64, n -= 64)
        for (int i = 0; i < 4; i++)
            x[i] = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x[i], k1k2, 0x11),
                                               _mm_clmulepi64_si128(x[i], k1k2, 0x00)),
                                 _mm_loadu_si128((const __m128i *)(p + 16 * i)));
    __m128i a = x[0];
    for (int i = 1; i < 4; i++)   /* fold the four lanes into one */
        a = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k3k4, 0x11), _mm_clmulepi64_si128(a, k3k4, 0x00)),
                          x[i]);
    for (; n >= 16; p += 16, n -= 16)
        a = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k3k4, 0x11), _mm_clmulepi64_si128(a, k3k4, 0x00)),
                          _mm_loadu_si128((const __m128i *)p));
    /* 128 -> 64 bits, then Barrett reduction to 32 */
    a = _mm_xor_si128(_mm_srli_si128(a, 8), _mm_clmulepi64_si128(a, k3k4, 0x10));
    a = _mm_xor_si128(_mm_srli_si128(a, 4), _mm_clmulepi64_si128(_mm_and_si128(a, mask32), k5k0, 0x00));
    __m128i b = _mm_clmulepi64_si128(_mm_and_si128(a, mask32), poly, 0x10);
    b = _mm_clmulepi64_si128(_mm_and_si128(b, mask32), poly, 0x00);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(a, b), 1);
}

uint32_t decomp_crc32(uint32_t crc, const unsigned char *p, size_t n)
{
    if (n >= 64 && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
        size_t m = n & ~(size_t)15;
        crc = ~crc32_clmul(~crc, p, m);
        p += m;
        n -= m;
    }
    return (uint32_t)crc32(crc, p, (uInt)n);
}

/* A single-stream .xz whose check is CRC32 (what the kernel's module compression writes): the
 * stored CRC and uncompressed span of each block, from the index at its end. Returns the number
 * of blocks (at most max), 0 when the file is anything else (then liblzma checks it itself). */
typedef struct {
    uint32_t crc;
    uint64_t off, size;
} xz_block_t;

static size_t xz_crc_blocks(const unsigned char *buf, size_t len, xz_block_t *bl, size_t max)
{
    lzma_stream_flags fl;
    if (len < 2 * LZMA_STREAM_HEADER_SIZE || lzma_stream_footer_decode(&fl, buf + len - LZMA_STREAM_HEADER_SIZE) != LZMA_OK ||
        fl.check != LZMA_CHECK_CRC32 || fl.backward_size > len - 2 * LZMA_STREAM_HEADER_SIZE)
        return 0;
    size_t isz = (size_t)fl.backward_size, pos = 0, n = 0;
    lzma_index *idx = NULL;
    uint64_t memlimit = 1 << 20;
    if (lzma_index_buffer_decode(&idx, &memlimit, NULL, buf + len - LZMA_STREAM_HEADER_SIZE - isz, &pos, isz) != LZMA_OK)
        return 0;
    lzma_index_iter it;
    if (lzma_index_stream_flags(idx, &fl) == LZMA_OK && lzma_index_file_size(idx) == len &&
        lzma_index_block_count(idx) <= max) {
        lzma_index_iter_init(&it, idx);
        while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK)) {
            uint64_t end = it.block.compressed_file_offset + it.block.total_size;
            if (end > len || it.block.total_size < 4) {
                n = 0;
                break;
            }
            bl[n++] = (xz_block_t){rd32le(buf + end - 4), it.block.uncompressed_file_offset,
                                   it.block.uncompressed_size};
        }
    }
    lzma_index_end(idx, NULL);
    return n;
}

/* xz_decode, with the CRC32 of a plain single-stream file checked here by decomp_crc32 instead
 * of by liblzma's table CRC (the top entry of check's profile): a mismatch is the error liblzma
 * would have given, LZMA_DATA_ERROR. Anything else is decoded and checked by liblzma as before. */
#define XZ_MAX_CRC_BLOCKS 64
static int xz_decode_checked(lzma_stream *s, const unsigned char *buf, size_t len, const xz_block_t *bl, size_t nb,
                             outbuf_t *o, err_t *e)
{
    if (xz_decode(s, buf, len, nb ? LZMA_IGNORE_CHECK : 0, o, e) != 0)
        return -1;
    for (size_t i = 0; i < nb; i++)
        if (bl[i].off > o->n || bl[i].size > o->n - bl[i].off ||
            decomp_crc32(0, o->p + bl[i].off, (size_t)bl[i].size) != bl[i].crc) {
            err_set(e, "xz: corrupt data (lzma error %d)", (int)LZMA_DATA_ERROR);
            return -1;
        }
    return 0;
}

void decomp_ctx_init(decomp_ctx_t *c)
{
    memset(c, 0, sizeof *c);
}

void decomp_ctx_free(decomp_ctx_t *c)
{
    if (c->xz) {
        lzma_end(c->xz);
        free(c->xz);
    }
    ZSTD_freeDCtx(c->zstd);
    free(c->buf);
    memset(c, 0, sizeof *c);
}

/* What the input says its decompressed size is; 0 when it does not say, or says more than
 * HINT_MAX_RATIO times its own size (a hint only: a wrong one costs a regrowth, never a result). */
#define HINT_MAX_RATIO 1024
static size_t sane_hint(uint64_t n, size_t len)
{
    return n < DECOMP_MAX_SIZE && n / HINT_MAX_RATIO <= len ? (size_t)n : 0;
}

static size_t size_hint(enum comp_kind k, const unsigned char *buf, size_t len)
{
    size_t n = 0;
    if (k == COMP_XZ)
        n = xz_size_hint(buf, len);
    else if (k == COMP_ZSTD)
        n = zstd_size_hint(buf, len);
    else if (k == COMP_GZIP && len >= 18)   /* ISIZE of the last member: the size mod 2^32 */
        n = rd32le(buf + len - 4);
    return sane_hint(n, len);
}

static int ctx_decode(decomp_ctx_t *c, enum comp_kind k, const unsigned char *buf, size_t len,
                      const xz_block_t *bl, size_t nb, outbuf_t *o, err_t *e)
{
    if (k == COMP_XZ) {
        if (!c->xz) {
            c->xz = xmalloc(sizeof(lzma_stream));
            *(lzma_stream *)c->xz = (lzma_stream)LZMA_STREAM_INIT;
        }
        return xz_decode_checked(c->xz, buf, len, bl, nb, o, e);
    }
    if (k == COMP_ZSTD) {
        if (!c->zstd && !(c->zstd = ZSTD_createDCtx())) {
            err_set(e, "zstd: cannot initialise the decoder");
            return -1;
        }
        return zstd_decode(c->zstd, buf, len, o, e);
    }
    if (k == COMP_GZIP)
        return gzip_decompress(buf, len, o, e);
    err_set(e, "not compressed");
    return -1;
}

int decomp_into(decomp_ctx_t *c, enum comp_kind k, const unsigned char *buf, size_t len, unsigned char **out,
                size_t *outlen, err_t *e)
{
    xz_block_t bl[XZ_MAX_CRC_BLOCKS];   /* one read of the xz index gives both the CRCs and the size */
    size_t nb = k == COMP_XZ ? xz_crc_blocks(buf, len, bl, XZ_MAX_CRC_BLOCKS) : 0;
    size_t hint = nb ? sane_hint(bl[nb - 1].off + bl[nb - 1].size, len) : size_hint(k, buf, len);
    if (hint && hint + 1 > c->cap) {   /* the right size at once: no regrowth while decoding */
        free(c->buf);
        c->cap = hint + 1 < DECOMP_MAX_SIZE ? hint + 1 : DECOMP_MAX_SIZE;
        c->buf = xmalloc(c->cap);
    }
    outbuf_t o = {c->buf, 0, c->cap};
    int r = ctx_decode(c, k, buf, len, bl, nb, &o, e);
    c->buf = o.p;
    c->cap = o.cap;
    if (r == 0 && o.n == 0) {
        err_set(e, "%s: empty after decompression", comp_name(k));
        r = -1;
    }
    *out = r == 0 ? c->buf : NULL;
    *outlen = r == 0 ? o.n : 0;
    return r;
}
