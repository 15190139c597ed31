"""A GTFS-Realtime endpoint on 127.0.0.1 for the ingest tests: it answers request by
request what its script says (a status and a body), the last answer repeated."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator


class ScriptedFeed(http.server.BaseHTTPRequestHandler):
    script: list[tuple[int, bytes]] = []
    served: list[int] = []

    def do_GET(self):
        status, body = self.script[min(len(self.served), len(self.script) - 1)]
        self.served.append(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(handler: type[ScriptedFeed]) -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
