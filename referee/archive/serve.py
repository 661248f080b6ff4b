"""Serving a built archive site from this machine, for a look before publishing it
(``referee archive serve``). The standard library's server, nothing more: the site is
static files, and any web server can serve the same folder in production.
"""

from __future__ import annotations

import functools
import logging
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["make_server", "serve"]

log = logging.getLogger("referee.archive")


class ArchiveHandler(SimpleHTTPRequestHandler):
    """Static files from the site's folder; the feeds as ``application/atom+xml``."""

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".atom": "application/atom+xml",
        ".html": "text/html; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".json": "application/json",
    }

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        log.info("%s %s", self.address_string(), format % args)


def make_server(outdir: Path | str, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``outdir``, bound and ready (``port=0``: any free port, see
    ``server.server_address``); the caller runs ``serve_forever`` and ``shutdown``."""
    handler = functools.partial(ArchiveHandler, directory=str(Path(outdir).resolve()))
    return ThreadingHTTPServer((host, port), handler)


def serve(outdir: Path | str, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``outdir`` until Ctrl-C."""
    server = make_server(outdir, host, port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
