"""Uplink driver SDK for Python: serve a driver over the driver protocol (version 3).

One module, standard library only, Python 3.9 or newer. Declare who the driver is, its channels
and its ops; `run()` speaks line-delimited JSON-RPC on stdin/stdout (docs/driver-protocol.md)::

    from uplink_driver import Driver, DriverError

    driver = Driver("notes", summary="Notes in a directory")

    @driver.channels
    def channels():
        return [{"addr": "todo", "labels": ["todo"]}]

    @driver.op("read", "The note's text", mutating=False,
               params_schema={"type": "object"}, result_schema={"type": "string"})
    def read(call):
        if call.cancelled.is_set():
            raise DriverError("Timeout", "cancelled")
        return "..."

    driver.run()

Each request runs on its own thread, so a slow op does not hold up the others; `call.cancelled`
is set when the hub cancels the call. Anything printed goes to stderr (the driver's log); stdout
carries protocol lines only.
"""
import json
import re
import logging
import sys
import threading
import traceback

__all__ = ["Driver", "DriverError", "Call", "PROTOCOL_VERSION", "ERROR_KINDS"]

PROTOCOL_VERSION = "3"
MAX_LINE_BYTES = 32 * 1024 * 1024
ERROR_KINDS = ("NotFound", "Unavailable", "Rejected", "Timeout", "Upstream", "Invalid")

DRIVER_ERROR = -32000
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
PARSE_ERROR = -32700

log = logging.getLogger("uplink_driver")



# The hub's identifier grammar for op names (the capability id is <driver>.<op>).
_OP_NAME = re.compile(r"^[a-z](?:[./-]?[a-z0-9])*$")

class DriverError(Exception):
    """A failure the agent or the operator can act on: `kind` is one of ERROR_KINDS."""

    def __init__(self, kind, message, hint=None, evidence=None):
        if kind not in ERROR_KINDS:
            raise ValueError("kind must be one of %s, not %r" % (", ".join(ERROR_KINDS), kind))
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint
        self.evidence = evidence

    def to_wire(self):
        wire = {"kind": self.kind, "message": self.message}
        if self.hint is not None:
            wire["hint"] = self.hint
        if self.evidence is not None:
            wire["evidence"] = self.evidence
        return wire


class _BadParams(Exception):
    pass


class Call:
    """One request being served: its channel address, op, args, context and cancellation flag."""

    def __init__(self, addr, op, args, context):
        self.addr = addr
        self.op = op
        self.args = args
        self.context = context or {}
        self.cancelled = threading.Event()

    def raise_if_cancelled(self):
        """Stops the work of a call the hub cancelled (its answer is dropped anyway)."""
        if self.cancelled.is_set():
            raise DriverError("Timeout", "the call was cancelled")


class _Op:
    def __init__(self, name, summary, mutating, params_schema, result_schema, handler, preview=None, precheck=None):
        self.name = name
        self.summary = summary
        self.mutating = mutating
        self.params_schema = params_schema
        self.result_schema = result_schema
        self.handler = handler
        self.preview = preview
        self.precheck = precheck

    def spec(self):
        return {"op": self.name, "summary": self.summary, "mutating": self.mutating,
                "params_schema": self.params_schema, "result_schema": self.result_schema}


def _obj(params, key, optional=False):
    value = params.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        raise _BadParams('"%s" must be an object' % key)
    return value


def _str(params, key):
    value = params.get(key)
    if not isinstance(value, str):
        raise _BadParams('"%s" must be a string' % key)
    return value


class Driver:
    """A driver: its info, channels and ops. Decorate handlers, then call `run()`."""

    def __init__(self, id, summary, kind="capability", tiers=None):
        self.info = {"id": id, "kind": kind, "summary": summary}
        if tiers is not None:
            self.info["tiers"] = tiers
        self._channels = lambda: []
        self._ops = {}
        self._send = None
        self._recv = None
        self._doctor = None
        self._on_shutdown = None
        self._out = None
        self._write_lock = threading.Lock()
        self._calls = {}
        self._calls_lock = threading.Lock()

    # Declaring the driver -------------------------------------------------------------------

    def channels(self, fn):
        """fn() -> list of {"addr", "labels"?, "detail"?}: the driver's channels now."""
        self._channels = fn
        return fn

    def op(self, name, summary, *, mutating, params_schema=None, result_schema=None):
        """Declares an op; the decorated fn(call) returns its JSON result. `mutating` must be said:
        a mutating op waits for the operator's approval, a read-only one does not."""
        if not isinstance(mutating, bool):
            raise TypeError("mutating must be True or False")
        if not _OP_NAME.match(name) or len(name) > 120:
            # The hub refuses a driver offering such a name; say so where it is written.
            raise ValueError("op name %r: use lowercase letters and digits, with single '.', '/' or '-' between them (e.g. wait-for)" % (name,))

        def register(fn):
            self._ops[name] = _Op(name, summary, mutating, params_schema if params_schema is not None else {"type": "object"},
                                  result_schema if result_schema is not None else {}, fn)
            return fn

        return register

    def preview(self, name):
        """fn(call) -> {"text": ...} or None: what the operator's approval prompt shows for op `name`."""
        def register(fn):
            self._ops[name].preview = fn
            return fn
        return register

    def precheck(self, name):
        """fn(call) raises the DriverError op `name` would fail with, before the operator is asked."""
        def register(fn):
            self._ops[name].precheck = fn
            return fn
        return register

    def send(self, fn):
        """fn(addr, message, reply_hint, context) -> {"delivered", "correlation_id", "injected_at", ...}."""
        self._send = fn
        return fn

    def recv(self, fn):
        """fn(cursor or None) -> {"items": [...], "next_cursor": n}."""
        self._recv = fn
        return fn

    def doctor(self, fn):
        """fn() -> (ok, [lines]): the driver's health in words."""
        self._doctor = fn
        return fn

    def on_shutdown(self, fn):
        """fn(): release what the driver holds; runs on `shutdown` and when stdin closes."""
        self._on_shutdown = fn
        return fn

    # Serving --------------------------------------------------------------------------------

    def extensions(self):
        ext = []
        if any(op.preview for op in self._ops.values()):
            ext.append("preview")
        if any(op.precheck for op in self._ops.values()):
            ext.append("precheck")
        ext.append("shutdown")
        return ext

    def run(self, stdin=None, stdout=None):
        """Serves until `shutdown` or the end of stdin. Everything else printed goes to stderr."""
        if stdout is None:
            stdout = sys.stdout.buffer
            sys.stdout = sys.stderr
        if stdin is None:
            stdin = sys.stdin.buffer
        if not logging.getLogger().handlers:
            logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        self._out = stdout
        initialized = False
        while True:
            line = stdin.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES:
                log.error("stopped: the hub wrote a line longer than %d bytes", MAX_LINE_BYTES)
                self._stop()
                return 1
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self._error(None, PARSE_ERROR, "a line that is not JSON")
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
                if not (isinstance(message, dict) and ("result" in message or "error" in message)):
                    self._error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 request")
                continue
            method = message["method"]
            params = message.get("params", {})
            if "id" not in message:
                if method == "cancel" and isinstance(params, dict):
                    with self._calls_lock:
                        call = self._calls.get(params.get("id"))
                    if call is not None:
                        call.cancelled.set()
                continue
            rid = message["id"]
            if isinstance(rid, bool) or not isinstance(rid, (str, int, float)):
                self._error(None, INVALID_REQUEST, "the id must be a number or a string")
                continue
            if method == "initialize":
                if not isinstance(params, dict) or not isinstance(params.get("protocol_version"), str):
                    self._error(rid, INVALID_PARAMS, 'initialize: "protocol_version" must be a string')
                    continue
                initialized = True
                # Always the version this side speaks: a hub that speaks another one declines.
                self._answer(rid, {"protocol_version": PROTOCOL_VERSION, "info": self.info, "extensions": self.extensions()})
            elif not initialized:
                self._error(rid, INVALID_REQUEST, "%s before initialize" % method)
            elif method == "shutdown":
                self._stop()
                self._answer(rid, None)
                return 0
            else:
                call = Call(None, None, None, None)
                with self._calls_lock:
                    busy = rid in self._calls
                    if not busy:
                        self._calls[rid] = call
                if busy:
                    self._error(rid, INVALID_REQUEST, "id %s is already in flight" % json.dumps(rid))
                    continue
                threading.Thread(target=self._serve, args=(rid, method, params, call), daemon=True).start()
        self._stop()
        return 0

    def _stop(self):
        with self._calls_lock:
            for call in self._calls.values():
                call.cancelled.set()
        if self._on_shutdown:
            try:
                self._on_shutdown()
            except Exception:
                log.exception("on_shutdown failed")

    def _serve(self, rid, method, params, call):
        try:
            if not isinstance(params, dict):
                raise _BadParams("params must be an object")
            handler = getattr(self, "_m_" + method, None)
            if handler is None:
                self._error(rid, METHOD_NOT_FOUND, "no method %s" % json.dumps(method))
                return
            self._answer(rid, handler(params, call))
        except _BadParams as e:
            self._error(rid, INVALID_PARAMS, "%s: %s" % (method, e))
        except DriverError as e:
            self._error(rid, DRIVER_ERROR, e.message, e.to_wire())
        except Exception as e:
            log.error("%s failed:\n%s", method, traceback.format_exc())
            message = str(e) or type(e).__name__
            self._error(rid, DRIVER_ERROR, message, {"kind": "Upstream", "message": message})
        finally:
            with self._calls_lock:
                self._calls.pop(rid, None)

    def _write(self, message):
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "replace")
        if len(data) > MAX_LINE_BYTES:
            err = DriverError("Upstream", "the answer is larger than the protocol's %d bytes" % MAX_LINE_BYTES, "ask for less")
            data = (json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": DRIVER_ERROR, "message": err.message, "data": err.to_wire()}}) + "\n").encode()
        with self._write_lock:
            self._out.write(data)
            self._out.flush()

    def _answer(self, rid, result):
        self._write({"jsonrpc": "2.0", "id": rid, "result": result})

    def _error(self, rid, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._write({"jsonrpc": "2.0", "id": rid, "error": error})

    # The protocol's methods -----------------------------------------------------------------

    def _m_info(self, params, call):
        return self.info

    def _m_ops(self, params, call):
        return [op.spec() for op in self._ops.values()]

    def _m_channels(self, params, call):
        entries = []
        for entry in self._channels():
            addr = entry["addr"]
            entries.append({"channel": "%s:%s" % (self.info["id"], addr), "labels": list(entry.get("labels", [])),
                            "detail": entry.get("detail")})
        return entries

    def _op_call(self, params, call, with_context=True):
        name = _str(params, "op")
        op = self._ops.get(name)
        if op is None:
            raise DriverError("NotFound", "no op %s" % json.dumps(name), "list the channel's ops (%s)" % ", ".join(sorted(self._ops)))
        if "args" not in params:
            raise _BadParams('"args" is missing')
        call.addr = _str(params, "addr")
        call.op = name
        call.args = params["args"]
        call.context = (_obj(params, "context", optional=True) if with_context else None) or {}
        return op

    def _m_invoke(self, params, call):
        return self._op_call(params, call).handler(call)

    def _m_preview(self, params, call):
        op = self._op_call(params, call, with_context=False)
        return op.preview(call) if op.preview else None

    def _m_precheck(self, params, call):
        op = self._op_call(params, call)
        if op.precheck:
            op.precheck(call)
        return None

    def _m_send(self, params, call):
        addr = _str(params, "addr")
        request = _obj(params, "request")
        message = _str(request, "message")
        hint = request.get("reply_hint")
        if hint not in ("full", "short", "none"):
            raise _BadParams('"request.reply_hint" must be full, short or none')
        if self._send is None:
            raise DriverError("Invalid", "%s takes no messages" % self.info["id"], "use its ops instead (uplink ops <channel>)")
        return self._send(addr, message, hint, _obj(params, "context", optional=True) or {})

    def _m_recv(self, params, call):
        cursor = params.get("cursor")
        if cursor is not None and (isinstance(cursor, bool) or not isinstance(cursor, (int, float))):
            raise _BadParams('"cursor" must be a number or null')
        if self._recv is None:
            return {"items": [], "next_cursor": cursor or 0}
        return self._recv(cursor)

    def _m_doctor(self, params, call):
        if self._doctor is None:
            return {"driver": self.info["id"], "ok": True, "lines": ["serving %d ops" % len(self._ops)]}
        ok, lines = self._doctor()
        return {"driver": self.info["id"], "ok": bool(ok), "lines": list(lines)}
