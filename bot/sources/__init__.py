"""The raise-site index: where vLLM (or any pure-Python package) raises, asserts or logs each error, per release.

Pure (no I/O):
    extract.py   the sites of one module, read with `ast`
    template.py  message templates, and fitting a message to one
    model.py     releases, and sites deduplicated across releases with a line per release
    versions.py  the release a report is about (its version, or the date it was filed)
    index.py     SourceIndex: the word index over templates, and `match(Query) -> Resolution`
    resolve.py   a parsed report's errors as queries; the raise site of its root cause
    store.py     the store's contract (backends: bot/stores/sources/)
Building (I/O):
    sdists.py    where pip looks for packages, listing and downloading sdists with their hash checked
    archive.py   a package's modules inside its sdist
    build.py     which releases to build, and building them in worker processes
"""
