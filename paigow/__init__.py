"""The `paigow` command line: one entry point whose subcommands map to the subsystems."""
