"""vllm-triage: triage vLLM issue reports."""

__version__ = "0.1.0"
