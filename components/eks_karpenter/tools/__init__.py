"""Tools built on the components: the offline plan engine, cost, simulate, smoke, migrate and the CLI.

Nothing is imported here: each tool loads only what it uses."""
