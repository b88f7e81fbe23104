"""The virtflow HTTP API process: routers, the spare operations they call through the Temporal
client, and the one mapping of domain errors to status codes (`app.py`)."""
