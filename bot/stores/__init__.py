"""Durable state, one package per store (see docs/architecture.md, "Stores").

    bot/stores/deliveries/   the delivery queue and what the bot decided and learned per issue
    bot/stores/dupes/        the duplicate index's SQLite and Postgres backends (its contract and in-memory
                             store are part of the pure core: bot/dupes/store.py)

Each store has its SQLite and Postgres backends side by side, each with its own numbered migrations, applied by
bot/stores/migrations.py and recorded per store in `store_versions`. bot/stores/registry.py lists the stores;
`vllm-triage migrate` applies every store's migrations.
"""
