"""The `factprobe` command line, the pipeline runner (`factprobe run`) and the HTTP service (`factprobe serve`)."""
