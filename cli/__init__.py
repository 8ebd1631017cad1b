"""The `factprobe` command line (and, later, the HTTP service)."""
