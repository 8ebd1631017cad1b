from __future__ import annotations

import importlib.util
import os
import shutil
import sqlite3
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

# One thread per process, set before torch loads (and inherited by every command, server and
# torchrun rank the tests start): on 2 cores a model's pass with 2 OpenMP threads takes 10 times
# longer as soon as another process wants a core (the threads spin-wait for each other; measured
# 1.07 s against 0.11 s for a 9-token SmolLM2 pass), and the suite runs servers and commands beside
# pytest. OMP_NUM_THREADS=2 in the environment overrides it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "torch" in sys.modules:  # a plugin loaded it first
    sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

from cli_runner import factprobe_cmd, run_cli, run_cli_process  # noqa: E402, F401  (tests import them from here)
from browser import browser  # noqa: E402, F401  (the browser tests' one headless Chromium: tests/browser.py)

FIXTURES = Path(__file__).parent / "fixtures"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exit_reason(returncode: int) -> str:
    """How a process ended, as a person reads it: 'killed by SIGSEGV (exit -11)' or 'exit 1'."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name} (exit {returncode})"
        except ValueError:
            return f"killed by signal {-returncode} (exit {returncode})"
    return f"exit {returncode}"


# Servers started by running_server and still meant to be up: a test that talks to one that died
# sees only "connection refused", so every test is checked afterwards (check_servers_alive) and
# fails naming the server and how it ended.
LIVE_SERVERS: dict[int, tuple[str, subprocess.Popen, Path]] = {}


def server_death(name: str, server: subprocess.Popen, log_path: Path) -> str:
    tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
    return f"{name} died: {exit_reason(server.returncode)}; the end of its log ({log_path}):\n{tail}"


@contextmanager
def running_server(argv: list[str], log_path: Path, is_ready, *, name: str, timeout: float = 30,
                   watch: bool = False):
    """Start a real server on 127.0.0.1, wait until `is_ready()` says so, stop it afterwards.

    The server logs to a file: a pipe nobody reads fills up and stalls a chatty server. A watched
    server that dies while in use fails the test that was running, and the teardown, with its exit
    signal (a server a test stops on purpose is not watched).
    """
    log = open(log_path, "wb")
    server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while not is_ready():
            if server.poll() is not None:
                raise RuntimeError(server_death(name, server, log_path))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not come up in {timeout:.0f} s: "
                                   f"{log_path.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        if watch:
            LIVE_SERVERS[id(server)] = (name, server, log_path)
        yield server
        if watch and server.poll() is not None:
            raise RuntimeError(server_death(name, server, log_path))
    finally:
        LIVE_SERVERS.pop(id(server), None)
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(autouse=True)
def check_servers_alive():
    """Fail the test during which a server the tests started died (a segfaulting llama.cpp build
    would otherwise read as a wall of 'connection refused')."""
    yield
    dead = [server_death(name, server, log) for name, server, log in list(LIVE_SERVERS.values())
            if server.poll() is not None]
    if dead:
        pytest.fail("\n".join(dead), pytrace=False)


# The llama-server tests skip only where llama-cpp-python is not installed on purpose (a user's
# `bash setup.sh`); under CI, which installs it with `setup.sh dev`, its absence fails them.
needs_llama_cpp = (
    pytest.mark.skipif(False, reason="") if os.environ.get("CI") else
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                       reason="llama-cpp-python[server] is not installed (bash setup.sh dev installs it)"))


@contextmanager
def llama_server(log_dir: Path, *, alias: str, key: str, logits_all: bool = False):
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1 serving the SmolLM2 GGUF from its
    PyPI wheel; yields the base URL (".../v1")."""
    import urllib.request

    from factprobe.probes.scoring.specs import shortcut_path

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python[server] is not installed: `bash setup.sh dev` builds it", pytrace=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(shortcut_path("smollm2-135m-instruct")),
            "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port), "--api_key", key,
            "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1", "--seed", "0", *(["--logits_all", "true"] if logits_all else [])]

    def answers() -> bool:
        try:
            request = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {key}"})
            urllib.request.urlopen(request, timeout=2).read()
            return True
        except OSError:
            return False

    with running_server(argv, log_dir / "server.log", answers, name="llama_cpp.server", timeout=120,
                        watch=True):
        yield url


def dump_tables(store: Path) -> dict[str, list[tuple]]:
    """Every row of every content table, sorted, for comparing two stores exactly."""
    conn = sqlite3.connect(store)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        out = {}
        for table in tables:
            if table == "meta":
                rows = conn.execute("SELECT key, value FROM meta WHERE key != 'created'").fetchall()
            elif table == "ingests":
                rows = conn.execute(
                    "SELECT key, source, records_done, position, complete, truncated FROM ingests"
                ).fetchall()
            else:
                rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def content_tables(store: Path) -> dict[str, list[tuple]]:
    """Every content table, without the per-input bookkeeping (whose keys name the input)."""
    return {k: v for k, v in dump_tables(store).items() if k not in ("ingests", "input_digests", "rejects", "dropped")}


def kill_midway(args: list[str], store: Path, *, after: int, timeout: float = 120) -> int:
    """Start `factprobe ARGS --store STORE`, SIGKILL it once more than `after` records are
    committed, and return how many were (asserting it was really killed half way)."""
    proc = subprocess.Popen([*factprobe_cmd(), *args, "--store", str(store)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            conn = sqlite3.connect(store, timeout=0.1)
            row = conn.execute("SELECT records_done FROM ingests").fetchone()
            conn.close()
        except sqlite3.Error:
            row = None
        if row and row[0] > after:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            break
        time.sleep(0.01)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the ingest finished before it could be killed"
    conn = sqlite3.connect(store)
    done, complete = conn.execute("SELECT records_done, complete FROM ingests").fetchone()
    conn.close()
    assert done > 0 and complete == 0
    return done


@pytest.fixture
def wikidata_dump(tmp_path: Path) -> Path:
    target = tmp_path / "dump.json"
    shutil.copy(FIXTURES / "wikidata" / "dump.json", target)
    return target


@pytest.fixture(scope="session", autouse=True)
def models_load_once():
    """Commands run in this process (run_cli) share each model they load from disk, as the
    session's own loads share theirs (scoring_models.real_scorer): a model loads once, not once
    per command."""
    from factprobe.probes.scoring.model_cache import keep_models

    keep_models()
    yield
    keep_models(False)


@pytest.fixture(scope="module")
def toy_method_registered():
    """The `toy` method (tests/toy_method.py: cloze items, one fill-mask call) registered for one
    module's tests only: the registry is global, and tests/test_registry.py registers it too."""
    from factprobe.probes.methods import unregister

    held = sys.modules.pop("toy_method", None)
    import toy_method  # noqa: F401  (registers it)

    yield
    unregister("toy")
    sys.modules.pop("toy_method", None)
    if held is not None:
        sys.modules["toy_method"] = held
