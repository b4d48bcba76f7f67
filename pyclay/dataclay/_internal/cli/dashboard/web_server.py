"""The dashboard's HTTP(S) server: a few static files and the JSON API under /api/v1/.

Everything but the log-in page's own script and style sheet answers 401 without a live session: the
pages (whose 401 body is the log-in form), the dashboard's script, the chart library and every API
URL. Every answer carries a content security policy that allows only this origin's scripts, styles
and requests (no inline script or style anywhere), and forbids framing. The only requests that
change anything, log-in and log-out, must be JSON POSTs from this origin; the cookie is HttpOnly and
SameSite=Strict (and Secure, with the __Host- prefix, under TLS)."""
from __future__ import annotations

import http.server
import ipaddress
import json
import logging
import pathlib
import socketserver
import ssl
import urllib.parse
from http import HTTPStatus

from dataclay.exceptions import (BackendUnavailableError, DataClayException, DoesNotExistError,
                                 InvalidArgumentError, NotAuthenticatedError, PermissionDeniedError)
from dataclay._internal.cli.dashboard import cluster_views
from dataclay._internal.cli.dashboard.call_history import CallHistory
from dataclay._internal.cli.dashboard.web_sessions import COOKIE, LoginThrottle, SessionTable

LOG = logging.getLogger("dataclay.dashboard")
STATIC = pathlib.Path(__file__).parent / "static"
MAX_BODY = 4096
REQUEST_TIMEOUT = 15.0     # seconds a connection may take to send a request (and a TLS handshake)

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
# What the log-in page needs without a session; everything else is behind it.
PUBLIC_FILES = {"/login.js": ("login.js", "text/javascript"), "/style.css": ("style.css", "text/css")}
PRIVATE_FILES = {"/app.js": ("app.js", "text/javascript"),
                 "/vendor/chart.umd.min.js": ("vendor/chart.umd.min.js", "text/javascript")}
PAGES = ("/", "/index.html")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")


class Dashboard:
    """What every request handler shares: the cluster, the browser sessions, the log-in guard, the call
    history and whether the server speaks TLS."""

    def __init__(self, cluster: cluster_views.Cluster, sessions: SessionTable, history: CallHistory,
                 tls: bool, loopback_only: bool, throttle: LoginThrottle | None = None):
        self.cluster = cluster
        self.sessions = sessions
        self.history = history
        self.tls = tls
        self.loopback_only = loopback_only
        self.throttle = throttle or LoginThrottle()

    @property
    def cookie_name(self) -> str:
        """The session cookie's name: with the __Host- prefix under TLS (the browser then insists on
        Secure, Path=/ and no Domain)."""
        return f"__Host-{COOKIE}" if self.tls else COOKIE


class DashboardServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """A threaded HTTP server; with `context`, every connection's TLS handshake runs in its own
    thread, so a slow client cannot hold up the others."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, dashboard: Dashboard, context: ssl.SSLContext | None):
        self.dashboard = dashboard
        self.context = context
        super().__init__(address, Handler)

    def finish_request(self, request, client_address):
        request.settimeout(REQUEST_TIMEOUT)
        if self.context is not None:
            try:
                request = self.context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                LOG.info("TLS handshake with %s failed: %s", client_address[0], e)
                request.close()
                return
        super().finish_request(request, client_address)


class Handler(http.server.BaseHTTPRequestHandler):
    """One request: static files, pages and the JSON API."""

    server_version = "dataclay-dashboard"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    @property
    def dashboard(self) -> Dashboard:
        return self.server.dashboard

    # ---- dispatch

    def do_GET(self):  # noqa: N802 (http.server's naming)
        if not self._host_allowed():
            return
        url = urllib.parse.urlsplit(self.path)
        if url.path in PUBLIC_FILES:
            return self._file(*PUBLIC_FILES[url.path])
        session, why = self._session()
        if session is None:
            if url.path in PAGES:
                return self._file("login.html", "text/html; charset=utf-8", HTTPStatus.UNAUTHORIZED)
            return self._json(HTTPStatus.UNAUTHORIZED, {"error": _login_needed(why)})
        if url.path in PAGES:
            return self._file("index.html", "text/html; charset=utf-8")
        if url.path in PRIVATE_FILES:
            return self._file(*PRIVATE_FILES[url.path])
        if url.path.startswith("/api/v1/"):
            return self._api(session, url.path[len("/api/v1/"):], urllib.parse.parse_qs(url.query))
        return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {url.path}"})

    def do_POST(self):  # noqa: N802
        if not self._host_allowed():
            return
        path = urllib.parse.urlsplit(self.path).path
        if path == "/api/v1/login":
            return self._login()
        if path == "/api/v1/logout":
            return self._logout()
        session, why = self._session()
        if session is None:
            return self._json(HTTPStatus.UNAUTHORIZED, {"error": _login_needed(why)})
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{path} takes GET"})

    def do_HEAD(self):  # noqa: N802
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use GET"})

    do_PUT = do_DELETE = do_PATCH = do_HEAD

    # ---- the JSON API

    def _api(self, session, name: str, query: dict):
        cluster, token = self.dashboard.cluster, session.token
        try:
            if name == "whoami":
                document = {"user": session.user}
            elif name == "overview":
                document = cluster_views.overview(cluster, token)
            elif name == "calls":
                document = self.dashboard.history.series()
            elif name.startswith("backends/") and name.count("/") == 1:
                document = cluster_views.backend_page(cluster, token, urllib.parse.unquote(name.split("/")[1]))
            elif name == "models":
                document = cluster_views.models(cluster, token)
            elif name == "datasets":
                document = cluster_views.datasets(cluster, token)
            elif name == "sessions":
                document = cluster_views.sessions(cluster, token)
            elif name == "events":
                document = cluster_views.events(cluster, token)
            elif name == "locate":
                document = cluster_views.locate(cluster, token, (query.get("q") or [""])[0])
            else:
                return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such API call: /api/v1/{name}"})
        except NotAuthenticatedError:
            self.dashboard.sessions.close(self._cookie())
            return self._json(HTTPStatus.UNAUTHORIZED, {"error": _login_needed("expired")},
                              self._clear_cookie())
        except DataClayException as e:
            return self._json(_status_of(e), {"error": str(e)})
        self._json(HTTPStatus.OK, document)

    def _login(self):
        address = self.client_address[0]
        body = self._json_body()
        if body is None:
            return
        wait = self.dashboard.throttle.wait(address)
        if wait > 0:
            return self._json(HTTPStatus.TOO_MANY_REQUESTS, {"error": f"too many failed log-ins from {address}; "
                                                             f"try again in {wait:.0f} s"},
                              {"Retry-After": str(int(wait) + 1)})
        user, password = body.get("user"), body.get("password")
        if not isinstance(user, str) or not isinstance(password, str) or not user or not password:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": "give an account name and its password"})
        lm = self.dashboard.cluster.lm(None)
        try:
            record = lm.new_session(user, password, "")
        except (NotAuthenticatedError, PermissionDeniedError, DoesNotExistError, InvalidArgumentError):
            self.dashboard.throttle.failed(address)
            LOG.warning("refused dashboard log-in of %r from %s", user, address)
            return self._json(HTTPStatus.UNAUTHORIZED, {"error": "wrong account name or password"})
        except DataClayException as e:
            return self._json(HTTPStatus.BAD_GATEWAY, {"error": f"the Logic Module could not log you in: {e}"})
        self.dashboard.throttle.succeeded(address)
        if not record.admin:
            _close_quietly(lm.with_token(record.token))
            return self._json(HTTPStatus.FORBIDDEN, {"error": f"the dashboard is for administrators, and {user} is not "
                                                     f"one; `dataclay locate` shows your own objects"})
        cookie = self.dashboard.sessions.open(user, record.token, record.expires_at_ms)
        LOG.info("dashboard log-in of %s from %s", user, address)
        self._json(HTTPStatus.OK, {"user": user}, {"Set-Cookie": self._cookie_header(cookie)})

    def _logout(self):
        if self._json_body() is None:
            return
        closed = self.dashboard.sessions.close(self._cookie())
        if closed is not None:
            _close_quietly(self.dashboard.cluster.lm(closed.token))
        self._json(HTTPStatus.OK, {"logged_out": closed is not None}, self._clear_cookie())

    # ---- checks

    def _host_allowed(self) -> bool:
        """A dashboard bound to loopback answers only requests addressed to a loopback name: a web page
        elsewhere that points its own name at 127.0.0.1 (DNS rebinding) gets nothing."""
        if not self.dashboard.loopback_only:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name in LOOPBACK_NAMES:
            return True
        self._json(HTTPStatus.MISDIRECTED_REQUEST, {"error": "this dashboard answers only on localhost"})
        return False

    def _json_body(self) -> dict | None:
        """The request's JSON object, from this origin; else answers the error and returns None."""
        origin = self.headers.get("Origin")
        if origin is not None and origin != self._origin():
            self._json(HTTPStatus.FORBIDDEN, {"error": "requests from another site are refused"})
            return None
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send application/json"})
            return None
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"a request body is at most {MAX_BODY} bytes"})
            self.close_connection = True
            return None
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict):
            self._json(HTTPStatus.BAD_REQUEST, {"error": "the body must be a JSON object"})
            return None
        return body

    def _origin(self) -> str:
        return f"{'https' if self.dashboard.tls else 'http'}://{self.headers.get('Host', '')}"

    def _cookie(self) -> str | None:
        header = self.headers.get("Cookie")
        if not header:
            return None
        for part in header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.dashboard.cookie_name:
                return value
        return None

    def _session(self):
        return self.dashboard.sessions.find(self._cookie())

    def _cookie_header(self, value: str) -> str:
        secure = "; Secure" if self.dashboard.tls else ""
        return f"{self.dashboard.cookie_name}={value}; Path=/; HttpOnly; SameSite=Strict{secure}"

    def _clear_cookie(self) -> dict:
        return {"Set-Cookie": self._cookie_header("") + "; Max-Age=0"}

    # ---- answers

    def _file(self, name: str, content_type: str, status: HTTPStatus = HTTPStatus.OK):
        self._send(status, (STATIC / name).read_bytes(), content_type)

    def _json(self, status: HTTPStatus, document, headers: dict | None = None):
        self._send(status, json.dumps(document).encode(), "application/json", headers)

    def _send(self, status: HTTPStatus, body: bytes, content_type: str, headers: dict | None = None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        if self.dashboard.tls:
            self.send_header("Strict-Transport-Security", "max-age=31536000")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        """Requests go to the dashboard's log at debug level, without their query strings."""
        LOG.debug("%s %s", self.client_address[0], (format % args).split("?")[0])


def _login_needed(why: str) -> str:
    if why == "expired":
        return "your dashboard session expired; log in again"
    return "log in first: POST /api/v1/login with your account and password"


def _status_of(e: DataClayException) -> HTTPStatus:
    if isinstance(e, InvalidArgumentError):
        return HTTPStatus.BAD_REQUEST
    if isinstance(e, DoesNotExistError):
        return HTTPStatus.NOT_FOUND
    if isinstance(e, PermissionDeniedError):
        return HTTPStatus.FORBIDDEN
    if isinstance(e, BackendUnavailableError):
        return HTTPStatus.SERVICE_UNAVAILABLE
    return HTTPStatus.BAD_GATEWAY


def _close_quietly(lm) -> None:
    try:
        lm.close_session(timeout=5.0)
    except DataClayException as e:
        LOG.info("could not close a Logic Module session: %s", e)


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or name to bind) is this machine only."""
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
