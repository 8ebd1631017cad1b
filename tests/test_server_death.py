"""A server the tests start that dies in use is reported with its own exit signal, never as a
wall of 'connection refused' (issue 44 B: a native llama.cpp build segfaulting on AVX-512/AMX)."""

from __future__ import annotations

import sys
import urllib.request

import pytest

from conftest import exit_reason, free_port, needs_llama_cpp, running_server

# A real HTTP server that answers its readiness check and segfaults on its first completion, as
# the native llama.cpp build did.
SEGFAULTS_ON_POST = """
import ctypes, http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def do_POST(self):
        ctypes.string_at(0)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def ready(url: str):
    def answers() -> bool:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return True
        except OSError:
            return False
    return answers


def test_a_watched_server_that_segfaults_fails_with_its_signal(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with pytest.raises(RuntimeError) as raised:
        with running_server([sys.executable, "-c", SEGFAULTS_ON_POST, str(port)], tmp_path / "server.log",
                            ready(url), name="test server", watch=True) as server:
            with pytest.raises(OSError):
                urllib.request.urlopen(urllib.request.Request(url, data=b"{}"), timeout=10).read()
            server.wait(timeout=10)
    assert str(raised.value).startswith("test server died: killed by SIGSEGV (exit -11)")


def test_a_server_that_dies_before_it_answers_says_how(tmp_path):
    with pytest.raises(RuntimeError, match=r"^test server died: exit 3;"):
        with running_server([sys.executable, "-c", "import sys; sys.exit(3)"], tmp_path / "server.log",
                            lambda: False, name="test server"):
            pass


def test_exit_reasons():
    assert exit_reason(-11) == "killed by SIGSEGV (exit -11)"
    assert exit_reason(-9) == "killed by SIGKILL (exit -9)"
    assert exit_reason(1) == "exit 1"


@needs_llama_cpp
def test_llama_cpp_is_built_for_any_x86_64_machine():
    """setup.sh builds llama.cpp for AVX2 with no CPU-native code: a native build from a machine
    with AVX-512/AMX dies with SIGSEGV there and cannot move to one without them."""
    import platform

    import llama_cpp

    if platform.machine() != "x86_64":
        pytest.skip("the portable build flags are for x86-64")
    features = llama_cpp.llama_print_system_info().decode()
    assert "AVX2 = 1" in features
    assert "AVX512" not in features and "AMX" not in features, features
