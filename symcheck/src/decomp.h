/* Compressed modules (.ko.xz, .ko.zst, .ko.gz): detection by magic bytes, in-memory decompression. */
#ifndef SYMCHECK_DECOMP_H
#define SYMCHECK_DECOMP_H

#include "util.h"

enum comp_kind { COMP_NONE, COMP_XZ, COMP_ZSTD, COMP_GZIP };

/* Largest decompressed image accepted (a module is a few MiB; this stops bombs). */
#define DECOMP_MAX_SIZE ((size_t)1 << 30)

enum comp_kind comp_detect(const unsigned char *buf, size_t len);
const char *comp_name(enum comp_kind k);

/* Decompress buf into a heap buffer *out (out->mapped false). The whole input must be
 * one or more complete streams. Returns 0, or -1 with e set ("xz: truncated input", ...). */
int decomp_buffer(enum comp_kind k, const unsigned char *buf, size_t len, filebuf_t *out, err_t *e);

/* If fb holds compressed data, replace it with the decompressed image. Returns 0 or -1. */
int decomp_maybe(filebuf_t *fb, err_t *e);

/* CRC-32 of xz and zlib (crc is the previous result, 0 to start): carry-less multiplication
 * where the CPU has it, zlib's crc32() otherwise and for the tail. */
uint32_t decomp_crc32(uint32_t crc, const unsigned char *p, size_t n);

/* Decoders and an output buffer kept between files (one context per thread). */
typedef struct {
    void *xz;            /* lzma_stream *, made on first use */
    void *zstd;          /* ZSTD_DCtx *, made on first use */
    unsigned char *buf;  /* output, grown to the largest image so far */
    size_t cap;
} decomp_ctx_t;

void decomp_ctx_init(decomp_ctx_t *c);
void decomp_ctx_free(decomp_ctx_t *c);
/* As decomp_buffer, into c's buffer: the buffer is first sized from what the input states (the
 * xz index, the zstd frame header, the gzip trailer) and grows only if that was wrong. *out
 * points into c and stays valid until the next call on c. Same results and errors. */
int decomp_into(decomp_ctx_t *c, enum comp_kind k, const unsigned char *buf, size_t len, unsigned char **out,
                size_t *outlen, err_t *e);

#endif
