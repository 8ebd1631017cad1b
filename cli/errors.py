"""Exit codes of the `factprobe` command, and `fail`, the one way a command stops on an error.

Every command exits with one of the codes below; scripts and the pipeline (`factprobe run`)
tell a finished-but-partial result (3) from bad input (2) and a failure (1) by them.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from .terminal import echo

EXIT_OK = 0  # done, and complete
EXIT_FAILURE = 1  # the command failed (also what an uncaught exception exits with)
EXIT_USAGE = 2  # bad usage or unreadable input: click's own code for a usage error
# Done but partial: the command finished and wrote its output, but some input records were
# rejected (each reported on stderr or in the rejects file by file and line) or an input was
# truncated; the output holds everything else. A rerun after fixing the input completes it.
EXIT_PARTIAL = 3
# A reader that stops early (`factprobe kg facts ... | head`) closed our stdout. That is the
# reader's choice, not a failure: the status a shell gives a program a closed pipe ends
# (128 + SIGPIPE), as `seq 1 100000 | head -1` has, not click's 1.
EXIT_CLOSED_PIPE = 141


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print `error: MESSAGE` on stderr and exit with `code`."""
    echo(f"error: {message}", err=True)
    sys.exit(code)


def os_error_line(error: OSError) -> str:
    """An OSError as one line naming its path: "PATH: Permission denied"."""
    if error.filename is None or not error.strerror:
        return str(error)
    return f"{error.filename}: {error.strerror}"
