"""Helpers the command modules share."""

from __future__ import annotations

import click

DEFAULT_STORE = "factprobe.sqlite"

store_option = click.option(
    "--store", type=click.Path(dir_okay=False), default=DEFAULT_STORE, show_default=True,
    envvar="FACTPROBE_STORE", help="SQLite file of the graph (env FACTPROBE_STORE).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def with_options(options):
    """Apply a list of click options (or arguments) to a command, in the order listed."""
    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate
