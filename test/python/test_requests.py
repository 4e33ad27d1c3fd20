"""Request parsing and error mapping of the helper's serving loop, without a display or a bus."""
import io

import pytest

import uplink_desktop_helper as h
from errors import HelperError

TARGET = {"window": "0x3a00007", "pid": 123, "start_time": 456}


class FakeHelper:
    _x11 = None

    def __init__(self, outcome):
        self.outcome = outcome
        self.seen = None

    def handle(self, op, target, args, interaction):
        self.seen = (op, target, args, interaction)
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def reply(outcome, raw):
    log = io.StringIO()
    helper = FakeHelper(outcome)
    return h.reply_to(helper, raw, log), helper, log.getvalue()


def test_a_well_formed_request_reaches_the_handler_with_args_defaulted():
    out, helper, _ = reply({"done": True}, '{"id": 4, "op": "tree", "target": %s}' % str(TARGET).replace("'", '"'))
    assert out == {"id": 4, "ok": True, "result": {"done": True}}
    assert helper.seen == ("tree", TARGET, {}, None)


@pytest.mark.parametrize("raw, says", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"id": "7", "op": "tree"}', "id must be an integer"),
    ('{"id": true, "op": "tree"}', "id must be an integer"),
    ('{"id": 7}', "op must be a string"),
    ('{"id": 7, "op": "tree", "target": {"window": "0x1", "pid": "1"}}', "target must be"),
    ('{"id": 7, "op": "tree", "args": "x"}', "args must be an object"),
    ('{"id": 7, "op": "type", "args": {"text": "a"}, "interaction": "telepathy"}', "interaction must be"),
    ('{"id": 7, "op": "set-text", "args": {"path": "/0"}}', "set-text needs argument text"),
])
def test_a_malformed_request_is_invalid_and_never_reaches_the_handler(raw, says):
    out, helper, log = reply({"done": True}, raw)
    assert out["ok"] is False and out["error"]["kind"] == "Invalid"
    assert says in out["error"]["message"]
    assert helper.seen is None and log == ""


def test_the_id_comes_back_with_an_invalid_reply_when_it_could_be_read():
    out, _, _ = reply({}, '{"id": 9, "op": 3}')
    assert out["id"] == 9


def test_a_deliberate_helper_error_keeps_its_kind_hint_and_evidence():
    err = HelperError("Rejected", "target changed", hint="list channels again", evidence="pid 1 != 2")
    out, _, log = reply(err, '{"id": 1, "op": "observe", "target": %s}' % str(TARGET).replace("'", '"'))
    assert out == {"id": 1, "ok": False, "error": {"kind": "Rejected", "message": "target changed", "hint": "list channels again", "evidence": "pid 1 != 2"}}
    assert log == ""


@pytest.mark.parametrize("exc", [KeyError("path"), TypeError("bad operand"), ValueError("invalid literal"), RuntimeError("GLib said no")])
def test_any_other_exception_is_an_internal_error_whose_detail_stays_with_the_operator(exc):
    out, _, log = reply(exc, '{"id": 2, "op": "hello"}')
    error = out["error"]
    assert (error["kind"], error["message"]) == ("Upstream", h.INTERNAL_MESSAGE)
    assert str(exc) not in error["message"] + error["hint"]
    assert type(exc).__name__ in error["evidence"] and "Traceback" in error["evidence"]
    assert type(exc).__name__ in log


def test_a_huge_traceback_is_bounded_in_the_evidence():
    out, _, _ = reply(RuntimeError("x" * 100_000), '{"id": 2, "op": "hello"}')
    assert len(out["error"]["evidence"]) <= h.MAX_EVIDENCE


def test_a_broken_x_connection_resets_it_and_says_so():
    class ConnectionClosedError(Exception):
        pass

    class X:
        resets = 0

        def reset(self):
            X.resets += 1

    helper = FakeHelper(ConnectionClosedError("gone"))
    helper._x11 = X()
    out = h.reply_to(helper, '{"id": 3, "op": "windows"}', io.StringIO())
    assert out["error"]["kind"] == "Unavailable" and X.resets == 1
