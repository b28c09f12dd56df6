import os

# The App builds the raise-site index in the background by default (bot/app/sources.py): never from a test, which
# would download vLLM's sdists. A test of the background build sets it for its own App.
os.environ["VLLM_TRIAGE_SOURCES_BUILD"] = "0"
