#!/usr/bin/env python3
"""Serves local directory trees under made-up host names, from 127.0.0.1
only, as an HTTP proxy: a crawler pointed at it (wget with `http_proxy`)
asks for `http://HOST/PATH` and gets the file PATH of the tree mapped to
HOST, so every tree is its own host in the crawl's URLs while nothing is
looked up or fetched from the network. A host not in the map gets a 502.

    scripts/serve_docs.py PORT_FILE HOST=DIR [HOST=DIR ...]

Binds a free port on 127.0.0.1, writes it to PORT_FILE once listening,
and serves until killed. Like a documentation server: directories without
an index.html get a listing page, symbolic links are followed (Debian's
/usr/share/doc has many packages whose directory is a link to another
one's: exact copies under other URLs), HTML is text/html, and other text
files, extensionless ones included (copyright, README), are text/plain.
`NAME.gz` is NAME's type with `Content-Encoding: gzip`, as Apache's
`AddEncoding` serves compressed changelogs. Connections are kept alive
(HTTP/1.1), one thread each.
"""

import email.utils
import html
import mimetypes
import os
import posixpath
import shutil
import socketserver
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOTS = {}
TEXT_EXTENSIONS = {".txt", ".md", ".rst", ".c", ".h", ".pl", ".py", ".sh", ".conf", ".xml", ".json",
                   ".el", ".tex", ".cocci", ".debian", ".cfg", ".ini", ".yml", ".yaml", ".csv"}


def content_type(name):
    """(type, encoding) for a file name, as the server above describes."""
    encoding = None
    if name.endswith(".gz"):
        name, encoding = name[:-3], "gzip"
    base, ext = posixpath.splitext(name)
    ext = ext.lower()
    if ext in (".html", ".htm"):
        return "text/html; charset=utf-8", encoding
    if ext == "" or ext in TEXT_EXTENSIONS or base.endswith(("README", "NEWS", "copyright")):
        return "text/plain; charset=utf-8", encoding
    guessed, _ = mimetypes.guess_type("x" + ext)
    if guessed is None or guessed.startswith("text/") and guessed != "text/css":
        guessed = "text/plain; charset=utf-8"
    if encoding and not guessed.startswith("text/"):
        return "application/gzip", None
    return guessed, encoding


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "docs/1"
    # Headers and body go out in separate writes: without TCP_NODELAY each
    # kept-alive response waits ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def target(self):
        """(host, path) of the request, in absolute form (a proxy request) or origin form."""
        parts = urllib.parse.urlsplit(self.path)
        host = (parts.hostname or self.headers.get("Host", "").split(":")[0]).lower()
        return host, urllib.parse.unquote(parts.path or "/")

    def send(self, status, ctype, body, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        host, path = self.target()
        root = ROOTS.get(host)
        if root is None:
            return self.send(502, "text/plain", b"unknown host\n")
        parts = [p for p in path.split("/") if p not in ("", ".", "..")]
        fs = os.path.join(root, *parts)
        if os.path.isdir(fs):
            if not path.endswith("/"):
                return self.send(301, "text/html", b"", [("Location", f"http://{host}{urllib.parse.quote(path)}/")])
            index = os.path.join(fs, "index.html")
            if os.path.isfile(index):
                fs = index
            else:
                return self.listing(fs, path)
        if not os.path.isfile(fs):
            return self.send(404, "text/html", b"<html><body><h1>404 Not Found</h1></body></html>\n")
        ctype, encoding = content_type(os.path.basename(fs))
        try:
            f = open(fs, "rb")
        except OSError:
            return self.send(403, "text/plain", b"forbidden\n")
        with f:
            st = os.fstat(f.fileno())
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(st.st_size))
            self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
            self.end_headers()
            if self.command != "HEAD":
                shutil.copyfileobj(f, self.wfile)

    def listing(self, fs, path):
        names = sorted(os.listdir(fs))
        title = html.escape(f"Index of {path}")
        rows = []
        for n in names:
            slash = "/" if os.path.isdir(os.path.join(fs, n)) else ""
            rows.append(f'<li><a href="{urllib.parse.quote(n)}{slash}">{html.escape(n)}{slash}</a></li>')
        body = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>"
                f"<body><h1>{title}</h1><ul>\n" + "\n".join(rows) + "\n</ul></body></html>\n").encode()
        self.send(200, "text/html; charset=utf-8", body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    for spec in sys.argv[2:]:
        host, _, root = spec.partition("=")
        ROOTS[host.lower()] = os.path.realpath(root)
    server = Server(("127.0.0.1", 0), Handler)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    socketserver.TCPServer.allow_reuse_address = True
    main()
