"""`factprobe ARGS` for tests: in this process through click's CliRunner (`run_cli`), or in a new
interpreter (`run_cli_process`) for the few tests that must prove a separate process (a kill,
a signal, a server, torchrun, the console script itself).

A new interpreter costs seconds (torch and transformers import again, a model loads again);
in-process the suite pays that once. Both return a CompletedProcess with the exit status,
stdout and stderr apart, so a test reads the same either way. What a run in this process could
leave behind for the next is put back: the working directory, os.environ, warnings filters, and
logging handlers left holding a captured stream.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path

from click import formatting
from click.testing import CliRunner


def factprobe_cmd() -> list[str]:
    """The installed console script, next to this interpreter."""
    script = Path(sys.executable).with_name("factprobe")
    return [str(script)] if script.exists() else [sys.executable, "-m", "factprobe.cli.main"]


def run_cli_process(*args: str, cwd: Path | None = None, check: bool = False, timeout: float = 300,
                    env: dict | None = None) -> subprocess.CompletedProcess:
    """`factprobe ARGS` in a new interpreter (the console script)."""
    proc = subprocess.run(
        [*factprobe_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"factprobe {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


class _ConsoleRunner(CliRunner):
    """CliRunner that wraps help text as the console script does with no terminal (click forces
    80 columns in tests; a script on a pipe takes 80 less its margin)."""

    @contextmanager
    def isolation(self, *args, **kwargs):
        with super().isolation(*args, **kwargs) as streams:
            formatting.FORCED_WIDTH = None  # put back by the isolation on the way out
            yield streams


# An interpreter's warnings filters with no -W option: what a user of the script sees.
_PYTHON_DEFAULT_FILTERS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def _show_on_stderr(message, category, filename, lineno, file=None, line=None) -> None:
    # pytest records warnings instead of printing them; a script prints them on stderr
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextmanager
def _as_a_new_process(cwd: Path | None):
    """Run the body with a script's warnings, in `cwd`, and put back what it changed."""
    environ = dict(os.environ)
    here = os.getcwd()
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_PYTHON_DEFAULT_FILTERS):
            warnings.filterwarnings(action, category=category, module=module or "")
        warnings.showwarning = _show_on_stderr
        try:
            if cwd is not None:
                os.chdir(cwd)
            yield
        finally:
            os.chdir(here)
            for key in set(os.environ) - set(environ):
                del os.environ[key]
            for key, value in environ.items():
                if os.environ.get(key) != value:
                    os.environ[key] = value
            _unhook_closed_streams()


def _unhook_closed_streams() -> None:
    """A library that set up its logging during a run bound its handler to the run's captured
    stderr, closed now; point it at file descriptor 2, which the next run captures."""
    loggers = [logging.getLogger()] + [l for l in logging.Logger.manager.loggerDict.values()
                                       if isinstance(l, logging.Logger)]
    for logger in loggers:
        for handler in logger.handlers:
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and getattr(stream, "closed", False):
                handler.setStream(sys.__stderr__)


def run_cli(*args: str, cwd: Path | None = None, check: bool = False, timeout: float = 300,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """`factprobe ARGS` in this process: exit status, stdout and stderr as the script gives them
    (an uncaught exception is status 1 and its traceback on stderr). `env` adds to the
    environment (a None value unsets a name); `timeout` is pytest-timeout's job here."""
    from factprobe.cli.main import main

    with _as_a_new_process(cwd):
        result = _ConsoleRunner(capture="fd").invoke(main, [str(a) for a in args], env=env,
                                                     prog_name="factprobe")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))
    proc = subprocess.CompletedProcess(["factprobe", *args], result.exit_code, result.stdout, stderr)
    if check and proc.returncode != 0:
        raise AssertionError(f"factprobe {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def kill_when(args: list, ready, *, timeout: float = 120, poll: float = 0.005) -> subprocess.Popen:
    """Start `factprobe ARGS`, SIGKILL it as soon as `ready(proc)` says so, and return the ended
    process (its returncode says whether the kill landed or it ended first)."""
    import signal
    import time

    proc = subprocess.Popen([*factprobe_cmd(), *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if ready(proc):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(poll)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return proc


# A fresh, small Python forks and waits for the command: Linux starts a child's peak RSS at the
# size of the process it was forked from, so a command forked straight from a pytest worker that
# has loaded models would report the worker's gigabytes, not its own.
_MEASURED = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}")
"""


def peak_rss(argv: list, report: Path, **popen) -> tuple[int, int]:
    """(exit status, peak resident set in bytes) of the command `argv` run to its end; `report`
    is a scratch file; `popen` goes to subprocess.Popen (stdout, stderr, preexec_fn...)."""
    subprocess.run([sys.executable, "-c", _MEASURED, str(report), *map(str, argv)], check=True, **popen)
    code, rss = report.read_text().split()
    return int(code), int(rss)
