"""The platform's components, one package per concern; `build.py` composes them into the whole platform.

Nothing is imported here: importing one component does not load the others."""
