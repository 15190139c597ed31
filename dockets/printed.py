"""What an issued auto prints that a reader checks against other files: the SHA-256 of
its evidence bundle. Read from the PDF's text (pypdf), as the operator's lawyer reads it."""

from __future__ import annotations

import io
import re

from kernel.errors import FiscalizaError

# The auto prints "…, SHA-256:" and the 64 digits, which the page may wrap.
_BUNDLE_DIGEST = re.compile(r"Pacote de evidências.*?SHA-256:\s*((?:[0-9a-f]\s*){64})", re.DOTALL)


class PrintedError(FiscalizaError, ValueError):
    """The PDF cannot be read, or prints no bundle digest."""


def printed_bundle_digest(pdf: bytes) -> str:
    """The evidence bundle's SHA-256 as the auto prints it, or PrintedError."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(pdf)).pages)
    except (PyPdfError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise PrintedError(f"o PDF não pôde ser lido: {str(exc)[:120]}") from None
    found = _BUNDLE_DIGEST.search(text)
    if found is None:
        raise PrintedError("o PDF não imprime o SHA-256 de um pacote de evidências")
    return re.sub(r"\s+", "", found.group(1))
