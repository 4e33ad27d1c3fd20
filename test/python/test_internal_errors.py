"""A bug inside the helper is an internal error: a fixed Upstream message for the agent, the
traceback only in the operator's evidence and on stderr; deliberate errors keep their kind."""

BUGGY = """
def buggy(self, args):
    return {}["no such key"]
def wrong_type(self, args):
    return len(None)
PATCHED = {"buggy": buggy, "wrong-type": wrong_type}
"""


def test_a_python_bug_is_an_internal_upstream_error_with_the_traceback_only_in_evidence(run_helper):
    replies, stderr = run_helper(BUGGY, [{"id": 1, "op": "buggy"}, {"id": 2, "op": "wrong-type"}, {"id": 3, "op": "hello"}])
    assert [r["id"] for r in replies] == [1, 2, 3]
    for reply, exc in ((replies[0], "KeyError"), (replies[1], "TypeError")):
        error = reply["error"]
        assert error["kind"] == "Upstream"
        assert error["message"] == "the desktop helper failed unexpectedly"
        assert "Traceback" not in error["message"] and exc not in error["message"] and exc not in error["hint"]
        assert "Traceback (most recent call last)" in error["evidence"]
        assert exc in error["evidence"]
        assert exc in stderr
    assert replies[2]["ok"] is True


def test_a_malformed_request_is_invalid_and_names_what_is_wrong(run_helper):
    replies, _ = run_helper("PATCHED = {}", [
        {"id": 1, "op": "click", "target": {"window": "0x1", "pid": 1, "start_time": 1}},
        {"id": 2, "op": 7},
        {"id": 3, "op": "tree", "args": [1]},
    ])
    kinds = [r["error"]["kind"] for r in replies]
    assert kinds == ["Invalid", "Invalid", "Invalid"]
    assert "x" in replies[0]["error"]["message"]
    assert "op" in replies[1]["error"]["message"]
    assert "args" in replies[2]["error"]["message"]
