"""Preflight of an adopted cluster: look-ups (`lookup`, `probe`) and checks (`checks`) that run before anything
is registered, on facts (`platform/adopted.py`) the offline plan's mocks can answer."""
