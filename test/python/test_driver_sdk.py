"""The Python driver SDK, driven as the hub drives a driver: a subprocess speaking the protocol."""
import json
import os
import queue
import subprocess
import sys
import threading

import pytest

SDK_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
sys.path.insert(0, SDK_DIR)

import uplink_driver  # noqa: E402

DRIVER = """
import sys, time
sys.path.insert(0, %r)
from uplink_driver import Driver, DriverError

driver = Driver("demo", summary="a demo driver")

@driver.channels
def channels():
    return [{"addr": "one", "labels": ["first"], "detail": {"n": 1}}]

@driver.op("echo", "echo the args", mutating=False, params_schema={"type": "object"}, result_schema={"type": "object"})
def echo(call):
    print("echo was called")
    return {"addr": call.addr, "args": call.args, "agent": call.context.get("agent")}

@driver.op("sleep", "sleep a while", mutating=False)
def sleep(call):
    time.sleep(call.args["s"])
    return call.args["s"]

@driver.op("hang", "wait until cancelled", mutating=True)
def hang(call):
    while not call.cancelled.wait(0.02):
        pass
    print("hang saw the cancel", file=sys.stderr)
    call.raise_if_cancelled()

@driver.op("refuse", "always refuses", mutating=True)
def refuse(call):
    raise DriverError("Rejected", "not on this channel", hint="ask the operator")

@driver.op("crash", "a bug", mutating=True)
def crash(call):
    return {}["missing"]

@driver.on_shutdown
def bye():
    print("disposed", file=sys.stderr)

driver.run()
""" % SDK_DIR


class Client:
    def __init__(self, code=DRIVER):
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.answers = {}
        self.order = []
        self.junk = []
        self.cond = threading.Condition()
        self.stderr = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_reader = threading.Thread(target=lambda: [self.stderr.put(l) for l in self.proc.stderr], daemon=True)
        self.stderr_reader.start()
        self.next_id = 1

    def _read(self):
        for line in self.proc.stdout:
            try:
                m = json.loads(line)
            except ValueError:
                m = None
            with self.cond:
                if not isinstance(m, dict) or m.get("jsonrpc") != "2.0" or "method" in m:
                    self.junk.append(line)
                else:
                    self.answers[m.get("id")] = m
                    self.order.append(m.get("id"))
                self.cond.notify_all()

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params=None, wait=True):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": {} if params is None else params})
        return self.answer(rid) if wait else rid

    def answer(self, rid, timeout=10):
        with self.cond:
            assert self.cond.wait_for(lambda: rid in self.answers, timeout), "no answer to %r" % rid
            return self.answers[rid]

    def initialize(self):
        return self.request("initialize", {"protocol_version": "3", "uplink_version": "0.1.0"})["result"]

    def stderr_text(self):
        """What the driver logged; all of it once the process has exited."""
        if self.proc.poll() is not None:
            self.stderr_reader.join(10)
        lines = []
        while not self.stderr.empty():
            lines.append(self.stderr.get().decode())
        return "".join(lines)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)
        return self.proc.returncode


@pytest.fixture
def client():
    c = Client()
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def test_initialize_answers_version_info_and_extensions(client):
    assert client.initialize() == {"protocol_version": "3", "info": {"id": "demo", "kind": "capability", "summary": "a demo driver"},
                                   "extensions": ["shutdown"]}


def test_requests_before_initialize_are_refused(client):
    assert client.request("channels")["error"]["code"] == -32600


def test_channels_and_ops_in_wire_shape(client):
    client.initialize()
    assert client.request("channels")["result"] == [{"channel": "demo:one", "labels": ["first"], "detail": {"n": 1}}]
    ops = client.request("ops")["result"]
    assert [(o["op"], o["mutating"]) for o in ops] == [("echo", False), ("sleep", False), ("hang", True), ("refuse", True), ("crash", True)]
    assert ops[0]["params_schema"] == {"type": "object"}


def test_invoke_passes_addr_args_context_and_keeps_stdout_clean(client):
    client.initialize()
    r = client.request("invoke", {"addr": "one", "op": "echo", "args": {"x": 1}, "context": {"agent": "a1"}})
    assert r["result"] == {"addr": "one", "args": {"x": 1}, "agent": "a1"}
    assert client.close() == 0
    assert client.junk == []
    assert "echo was called" in client.stderr_text()


def test_concurrent_requests_answer_as_each_finishes(client):
    client.initialize()
    slow = client.request("invoke", {"addr": "one", "op": "sleep", "args": {"s": 0.5}, "context": {}}, wait=False)
    fast = client.request("invoke", {"addr": "one", "op": "sleep", "args": {"s": 0.01}, "context": {}}, wait=False)
    assert client.answer(slow)["result"] == 0.5
    assert client.answer(fast)["result"] == 0.01
    assert client.order[-2:] == [fast, slow]


def test_cancel_sets_the_calls_flag(client):
    client.initialize()
    rid = client.request("invoke", {"addr": "one", "op": "hang", "args": {}, "context": {}}, wait=False)
    # A request sent after it is answered: the driver reads requests in order, so the hang is in flight.
    assert client.request("invoke", {"addr": "one", "op": "echo", "args": {}, "context": {}})["result"]["addr"] == "one"
    client.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": rid}})
    assert client.answer(rid)["error"]["data"] == {"kind": "Timeout", "message": "the call was cancelled"}


def test_driver_error_and_exception_shapes(client):
    client.initialize()
    refused = client.request("invoke", {"addr": "one", "op": "refuse", "args": {}, "context": {}})
    assert refused["error"] == {"code": -32000, "message": "not on this channel",
                                "data": {"kind": "Rejected", "message": "not on this channel", "hint": "ask the operator"}}
    crashed = client.request("invoke", {"addr": "one", "op": "crash", "args": {}, "context": {}})
    assert crashed["error"] == {"code": -32000, "message": "'missing'", "data": {"kind": "Upstream", "message": "'missing'"}}
    missing = client.request("invoke", {"addr": "one", "op": "nope", "args": {}, "context": {}})
    assert missing["error"]["data"]["kind"] == "NotFound"
    client.close()
    assert "KeyError" in client.stderr_text()


def test_unknown_methods_and_bad_params(client):
    client.initialize()
    assert client.request("frobnicate")["error"]["code"] == -32601
    assert client.request("set_tier", {"addr": "one", "tier": "x"})["error"]["code"] == -32601
    bad = client.request("invoke", {"addr": 5, "op": "echo", "args": {}})
    assert bad["error"] == {"code": -32602, "message": 'invoke: "addr" must be a string'}
    assert client.request("recv", {"cursor": "x"})["error"]["code"] == -32602
    client.send({"jsonrpc": "2.0", "id": [1], "method": "info"})
    client.proc.stdin.write(b"{not json\n")
    client.proc.stdin.flush()
    assert client.request("info")["result"]["id"] == "demo"
    assert [client.answers[None]["error"]["code"]] == [-32700]


def test_defaults_for_send_recv_doctor(client):
    client.initialize()
    sent = client.request("send", {"addr": "one", "request": {"message": "hi", "reply_hint": "none"}})
    assert sent["error"]["data"]["kind"] == "Invalid"
    assert client.request("recv", {"cursor": None})["result"] == {"items": [], "next_cursor": 0}
    assert client.request("doctor")["result"] == {"driver": "demo", "ok": True, "lines": ["serving 5 ops"]}


def test_shutdown_runs_the_hook_answers_null_and_exits(client):
    client.initialize()
    assert client.request("shutdown")["result"] is None
    assert client.proc.wait(10) == 0
    assert "disposed" in client.stderr_text()


def test_an_op_must_say_whether_it_mutates():
    driver = uplink_driver.Driver("x", summary="x")
    with pytest.raises(TypeError):
        driver.op("o", "an op")(lambda call: None)
    with pytest.raises(ValueError):
        uplink_driver.DriverError("Oops", "not a kind")


def test_an_op_name_the_hub_would_refuse_is_refused_where_it_is_declared():
    d = uplink_driver.Driver("demo", summary="names")
    with pytest.raises(ValueError, match="wait-for"):
        d.op("wait_for", "underscore", mutating=False)
    with pytest.raises(ValueError):
        d.op("Read", "capital", mutating=False)
    d.op("wait-for", "fine", mutating=False)(lambda call: None)
    d.op("a.b/c", "fine", mutating=False)(lambda call: None)
