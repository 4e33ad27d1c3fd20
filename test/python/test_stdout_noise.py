"""Native libraries write to stdout at will: the protocol must not share a descriptor with them."""

NOISY = """
def noisy(self, args):
    print("a Python library printing to stdout")
    sys.stdout.flush()
    os.write(1, b"a C library writing to fd 1\\n")
    return {"noisy": True}
PATCHED = {"noisy": noisy}
"""


def test_prints_to_stdout_mid_call_do_not_break_this_call_or_the_next(run_helper):
    replies, stderr = run_helper(NOISY, [{"id": 1, "op": "noisy"}, {"id": 2, "op": "hello"}])
    assert replies == [{"id": 1, "ok": True, "result": {"noisy": True}},
                       {"id": 2, "ok": True, "result": replies[1]["result"]}]
    assert replies[1]["result"]["protocol"] == 1
    # What the libraries wrote is not lost: the operator finds it with the helper's stderr.
    assert "a Python library printing to stdout" in stderr
    assert "a C library writing to fd 1" in stderr
