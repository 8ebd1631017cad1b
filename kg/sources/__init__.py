"""Sources that ingest into the embedded store. Each streams its input in constant memory."""
