"""Why a connection to a Dask scheduler failed, in words that name the cause.

Dask wraps a refused TLS handshake in an OSError that speaks of a timeout
("Timed out during handshake while connecting to ...") or of a mismatch; the
ssl error behind it is in the exception's cause or context. tls_failure() finds
it, so that a refused certificate is not reported as a scheduler that does
not answer."""

import ssl

MARKS = ("SSL", "TLS", "certificate")


def _chain(exc, limit=10):
    seen = []
    while exc is not None and len(seen) < limit and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def tls_failure(exc):
    """The TLS reason behind `exc` ('' when none), e.g. "[SSL: CERTIFICATE_VERIFY_FAILED] ..."."""
    chain = _chain(exc)
    for e in chain:
        if isinstance(e, ssl.SSLError):
            return str(e.args[1] if len(e.args) > 1 else e)
    for e in chain:
        text = str(e)
        if "SSLError: " in text:
            return text.split("SSLError: ", 1)[1]
        if any(m in text for m in MARKS):
            return text
    return ""


def first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
