"""What every virtflow process shares: the settings, the Temporal connection, telemetry,
logging and the Temporal binaries. Imported by `api`, `cli` and `worker`; imports no process."""
