"""The GitHub App: webhook server, durable delivery queue, worker, and the only code that writes to GitHub."""
