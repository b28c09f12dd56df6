import sys
from pathlib import Path

# tests/app/pg.py: the PostgreSQL fixture shared with the App's store tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
