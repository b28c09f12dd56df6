"""The raise-site index: where vLLM (or any pure-Python package) raises, asserts or logs each error, per release.

    extract.py   the sites of one module, read with `ast` (pure)
    template.py  message templates and fitting a message to one (pure)
"""
