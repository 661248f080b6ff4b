"""The bounds of the inbound mail parser, in one place.

Every step of :mod:`referee.mail.parse` works on a bounded part of a mail, so that a
hostile mail costs about what an ordinary one of the same size does: the header block
(:mod:`referee.mail.headers`) is read within the header and address bounds, the body
(:mod:`referee.mail.mime`) within the raw, MIME part and parameter bounds, and the chosen
part's text (:mod:`referee.mail.bodytext`) is cut at :data:`TEXT_LIMIT`. Constants only:
the parser's modules import it, it imports none of them.
"""

from __future__ import annotations

HEADER_LIMIT = 256 * 1024  # bytes of header block read; a larger block is cut at a line end
RAW_LIMIT = 2 * 1024 * 1024  # bytes of the message given to the MIME walker
TEXT_LIMIT = 256 * 1024  # characters of the chosen part's decoded text
ADDRESS_LIMIT = 8 * 1024  # characters of one address header value given to getaddresses
ADDRESS_TOTAL_LIMIT = 2 * ADDRESS_LIMIT  # characters of all values of one address header name
FROM_HEADER_LIMIT = 200  # characters of Headers.from_header
REFERENCES_LIMIT = 100  # message ids kept from References: the first and the latest
MIME_DEPTH_LIMIT = 32  # multipart levels descended into
MIME_PART_LIMIT = 200  # MIME parts (leaves and multiparts) looked at
PARAM_LIMIT = 4 * 1024  # characters of a Content-Type / -Disposition value read for parameters
PARAM_COUNT_LIMIT = 100  # parameters read from one such value
PART_HEADER_LIMIT = 16 * 1024  # bytes of one body part's header block (all of them: HEADER_LIMIT)
